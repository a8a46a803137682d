"""What a session's moves tell the apps built on sessions, without sessions_app importing them.

runs_app depends on sessions_app, never the reverse (tests/test_architecture.py): a move that other apps must
answer in the same transaction is announced here, and they connect to it in their AppConfig.ready.
"""

from django.dispatch import Signal

# Sent inside the transaction that moves a session to `awaiting_user`, with `project_id` and `session` (the
# moved row). A receiver's writes commit or roll back with the move, and an exception a receiver raises undoes
# it: runs_app checkpoints the session's running run there (seed 002 section 06, runs_app.apps).
session_awaiting_user = Signal()
