"""Read queries on runs and what they own, for the API and the console alike: one module per entity (runs and
their events, checkpoints, approvals, effects, tasks, handoffs), the console overview's counts and charts, and the
keyset paging they share. Queries only: what a page builds from the rows for display is runs_app.presentation.

Every read a door makes takes `project_ids`, the ids of the projects the caller may see (the API's
`harness.http.api_base.scope`, the console's `harness.http.views.project_ids`), and starts from the model's
`for_projects`: another project's object is simply absent (NotFoundError: a 404 at every door). List
filters are FilterSets (runs_app.filters) the views apply to what these return. Each list is a fixed
number of queries whatever its length (select_related, no per-row lookups).
"""
