"""The database flush after each transactional test (pytest-django's `transactional_db`, `live_server`,
`django_db(transaction=True)`): DELETE FROM every table instead of Django's one `TRUNCATE` of all of them.

A TRUNCATE gives each of the schema's ~50 tables (and their indexes and TOAST tables) new files and drops the old
ones' buffers, and commits that with a WAL flush: 1.3-3 s on this machine's shared PostgreSQL, after each of the
suite's few hundred transactional tests, while a test leaves a handful of rows behind. DELETE FROM the same tables
empties them in ~0.2 s. The rows go either way; nothing a test sees afterwards differs (neither resets sequences
here: Django flushes with reset_sequences=False, and a flush that asks for it keeps Django's TRUNCATE).

`session_replication_role = replica` for the flush's transaction only: row triggers do not fire, so the append-only
triggers (harness_refuse_rewrite) do not refuse the DELETE, just as they never see a TRUNCATE, and the foreign keys'
triggers are off, so the tables can go in any order (TRUNCATE of all of them at once needs none either). Setting it
takes a superuser, which the suite's PostgreSQL role is (tests/template_db.py creates databases); a role that is
not keeps Django's TRUNCATE.
"""

from collections.abc import Iterator
from functools import cache

import pytest
from django.db import connections
from django.db.backends.postgresql.operations import DatabaseOperations


@cache
def _superuser(alias: str) -> bool:
    with connections[alias].cursor() as cursor:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        row = cursor.fetchone()
    return bool(row and row[0])


def delete_flush(truncate_flush):  # type: ignore[no-untyped-def]
    """Wraps DatabaseOperations.sql_flush (Django's TRUNCATE) into the DELETE form described above."""

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):  # type: ignore[no-untyped-def]
        if not tables or reset_sequences or not _superuser(self.connection.alias):
            return truncate_flush(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        # execute_sql_flush runs the list in one transaction, so SET LOCAL covers exactly these statements.
        return ["SET LOCAL session_replication_role = replica;",
                *(f"DELETE FROM {self.quote_name(table)};" for table in tables)]  # noqa: S608 - model tables

    return sql_flush


@pytest.fixture(autouse=True, scope="session")
def _flush_by_delete() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DatabaseOperations, "sql_flush", delete_flush(DatabaseOperations.sql_flush))
        yield
