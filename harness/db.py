"""Database helpers for the few statements every request or resume runs.

Django keeps psycopg's prepared statements off and binds parameters on the client, so a statement is
parsed and planned by PostgreSQL on every execution. For the hand-written hot statements (a CTE that
appends an item, writes a checkpoint, claims a run) planning cost as much as running: about 1 ms of a
2 ms checkpoint write. `prepared_cursor()` gives such a statement a server-binding cursor that
prepares it once per connection; it is still a Django cursor, so query logging, `execute_wrapper`
and the test suite's query counts see it.
"""

from typing import Any

import psycopg
from django.db import connection
from django.db.backends.utils import CursorWrapper


class _PreparingCursor(psycopg.Cursor):
    """Server-side binding; every statement is prepared on first use (when the connection allows it)."""

    def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: bool | None = None
                ) -> "_PreparingCursor":
        return super().execute(query, params, prepare=True if prepare is None else prepare, binary=binary)


def prepared_cursor() -> CursorWrapper:
    """A cursor (use it as a context manager) whose statements are prepared once per connection.

    On SQLite it is an ordinary cursor; with DATABASE_PREPARED_STATEMENTS=0 its parameters are still
    bound on the server but nothing is prepared.
    """
    if connection.vendor != "postgresql":
        return connection.cursor()
    connection.ensure_connection()
    raw = _PreparingCursor(connection.connection)
    return connection.make_debug_cursor(raw) if connection.queries_logged else connection.make_cursor(raw)
