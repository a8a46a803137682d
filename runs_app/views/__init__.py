"""The runs app's console pages, one module per entity (approvals, runs and the actions on them, tasks, effects,
lineage, forks, handoffs; urls.py: their URLs). Each reads through runs_app.selectors, builds what it shows with
runs_app.presentation, and writes only through runs_app.services."""
