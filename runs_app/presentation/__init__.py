"""What the console's pages build for display from the rows runs_app.selectors reads: the resume checklist,
the lineage picture's layout, a checkpoint diff, a run's timeline, events with their data as JSON text, a task's
plan and state history, JSON written out for a page. No queries: a function here takes rows and returns small
frozen dataclasses (a row beside its display fields), never sets attributes on a model instance.
"""
