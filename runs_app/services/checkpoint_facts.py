"""What a checkpoint write must know before it can hash: the run's task and the parent's hash and depth.

These facts never change once written: a run's project and task are set when it is created (read-only
in every door) and checkpoints are append-only. So each process remembers the facts it read or wrote,
outside any transaction that could still roll back, and a chain's next checkpoint needs no lookup
first. The cache is only a hint: the write statement checks the facts it was given (the parent's id
and hash, the run's project and task) and refuses if they do not hold; then the caller forgets them
and reads them again (`runs_app.services.checkpoints.checkpoint_create`).
"""

import threading
from collections import OrderedDict
from typing import Generic, NamedTuple, TypeVar

from django.db import connection, transaction

from harness.db import prepared_cursor
from runs_app.models import Checkpoint

CACHE_SIZE = 4096


class Facts(NamedTuple):
    run_found: bool
    run_task_id: int | None
    parent_hash: str | None
    parent_depth: int | None
    parent_run_id: int | None
    parent_task_id: int | None
    parent_found: bool


_K = TypeVar("_K")
_V = TypeVar("_V")


class _Lru(Generic[_K, _V]):
    """A bounded map, least recently used out first; one lock (gunicorn's gthread workers share it)."""

    def __init__(self, size: int) -> None:
        self.size, self.data, self.lock = size, OrderedDict[_K, _V](), threading.Lock()

    def get(self, key: _K) -> _V | None:
        with self.lock:
            value = self.data.get(key)
            if value is not None:
                self.data.move_to_end(key)
            return value

    def put(self, key: _K, value: _V) -> None:
        with self.lock:
            self.data[key] = value
            self.data.move_to_end(key)
            while len(self.data) > self.size:
                self.data.popitem(last=False)

    def pop(self, key: _K) -> None:
        with self.lock:
            self.data.pop(key, None)

    def clear(self) -> None:
        with self.lock:
            self.data.clear()


_Key = tuple[int, int | None]  # (project, run) or (project, checkpoint)
_runs = _Lru[_Key, tuple[int | None]](CACHE_SIZE)  # (project, run) -> (task,)
# (project, checkpoint) -> (hash, depth, run, task)
_checkpoints = _Lru[_Key, tuple[str | None, int | None, int | None, int | None]](CACHE_SIZE)

_FACTS_SQL = """
SELECT r.found, r.task_id, p.content_hash, p.depth, p.run_id, p.task_id, p.id IS NOT NULL
  FROM (SELECT count(*) > 0 AS found, max(task_id) AS task_id
          FROM runs_app_run WHERE id = %(run)s AND project_id = %(project)s) r
  LEFT JOIN runs_app_checkpoint p ON p.id = %(parent)s AND p.project_id = %(project)s
"""


def checkpoint_facts(project_id: int, run_id: int | None, parent_id: int | None) -> tuple[Facts, bool]:
    """The facts, and whether they came from memory (then the write must still check them)."""
    run = _runs.get((project_id, run_id)) if run_id is not None else (None,)
    parent = _checkpoints.get((project_id, parent_id)) if parent_id is not None else (None, None, None, None)
    if run is not None and parent is not None:
        return Facts._make((run_id is not None, run[0], *parent, parent_id is not None)), True
    facts = _read(project_id, run_id, parent_id)
    if not connection.in_atomic_block:  # read in autocommit: committed, so it stays true
        if facts.run_found:
            _runs.put((project_id, run_id), (facts.run_task_id,))
        if facts.parent_found:
            _checkpoints.put((project_id, parent_id), (facts.parent_hash, facts.parent_depth, facts.parent_run_id,
                                                       facts.parent_task_id))
    return facts, False


def remember_written(checkpoint: Checkpoint) -> None:
    """A checkpoint this process just wrote is the next one's parent, once it is committed: at once outside a
    transaction, at the commit inside one (a rollback forgets it)."""
    facts = (checkpoint.content_hash, checkpoint.depth, checkpoint.run_id, checkpoint.task_id)
    key = (checkpoint.project_id, checkpoint.pk)
    if not connection.in_atomic_block:
        _checkpoints.put(key, facts)
    else:
        transaction.on_commit(lambda: _checkpoints.put(key, facts))


def forget(project_id: int, run_id: int | None, parent_id: int | None) -> None:
    _runs.pop((project_id, run_id))
    _checkpoints.pop((project_id, parent_id))


def forget_all() -> None:
    _runs.clear()
    _checkpoints.clear()


def _read(project_id: int, run_id: int | None, parent_id: int | None) -> Facts:
    with prepared_cursor() as cursor:
        cursor.execute(_FACTS_SQL, {"run": run_id, "project": project_id, "parent": parent_id})
        return Facts._make(cursor.fetchone())  # one row always: an aggregate, left-joined
