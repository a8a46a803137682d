"""The agent API for runs and what they own, one module per entity: runs, events, checkpoints, approvals, effects,
tasks, LangGraph threads, forks, handoffs and a project's retention policy (urls.py: their URLs under /api/v1/).

One view per operation, each thin: validate an input serializer (which names only what a client may
set, so server-owned fields are never writable, and refuses any other field: harness.http.body), call one
service, render an output serializer.
"""
