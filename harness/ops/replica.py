"""An optional read replica for the console's heavy pages (DATABASE_REPLICA_URL), and the router that uses it.

A replica lags its primary, so it serves only what no write depends on: the GET pages named in
settings.HARNESS_REPLICA_PAGES (lineage, checkpoints, the run inspector, timelines, lists), and only the feature
apps' rows (runs, sessions, memory). Everything else reads the primary: every API call, every form and decision
(a POST re-reads what it decides on), the worker, the session and the user (a login just written must be seen),
any read inside a transaction, and the hand-written hot statements (harness.db, on the default connection).
Without DATABASE_REPLICA_URL there is no router and nothing changes.
"""

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model

REPLICA = "replica"
# The apps whose rows a console page may read from the replica; auth, sessions and the kernel stay on the primary.
REPLICA_APPS = frozenset({"runs_app", "sessions_app", "memory_app"})
_reading_replica: contextvars.ContextVar[bool] = contextvars.ContextVar("harness_replica_reads", default=False)


@contextmanager
def replica_reads() -> Iterator[None]:
    """Let the ORM's reads in this block go to the replica (harness.http.views.console_page opens it for the pages
    in HARNESS_REPLICA_PAGES)."""
    token = _reading_replica.set(True)
    try:
        yield
    finally:
        _reading_replica.reset(token)


class ReplicaRouter:
    def db_for_read(self, model: type[Model], **hints: Any) -> str | None:
        if (_reading_replica.get() and model._meta.app_label in REPLICA_APPS
                and not connections[DEFAULT_DB_ALIAS].in_atomic_block):
            return REPLICA
        return None

    def db_for_write(self, model: type[Model], **hints: Any) -> str | None:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Model, obj2: Model, **hints: Any) -> bool:
        return True  # the same rows on both: a replica is a copy of the primary

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS
