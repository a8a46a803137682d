"""A LangGraph thread's life past its writes (issue 34): copied (a fork), pruned, deleted by LangGraph run, and
expired by its time to live. The rest of the checkpointer contract is runs_app.services.threads.

- **The keep rules.** A thread whose run a pending approval or an unconsumed effect needs (the retention rules
  `shown_by_pending_approval` and `effect_not_consumed`, read from the one SQL function the retention pass reads
  too, `harness_retention_needed_runs`) loses nothing here: a deletion of it is refused (409 `thread_kept`), a
  prune or a LangGraph run's deletion skips it and says so (`kept`), the TTL pass skips it until the approval is
  decided and the effect consumed. A checkpoint that another checkpoint descends from which is not one of the
  thread's own (the resume worker's, a console fork's) stays, with its ancestors (`lineage_of_kept`).
- **Rows stay immutable.** Checkpoints refuse UPDATE, and a kept checkpoint's parent may be one that goes (a
  prune keeps the newest, whose parent goes). Such a checkpoint and those below it are written again, the same
  content (its LangGraph ids, values, metadata, hash and time), under its nearest kept ancestor (or none), and
  the old rows go; the run's and its task's pointers and node executions follow the new rows. Pending writes are
  keyed by the LangGraph id, so a kept checkpoint keeps its writes.
- **A copy is a fork.** `thread_copy` makes the target thread (a new run of the project, in a new session like
  the source's) with every checkpoint and pending write of the source, in every namespace, under the same ids.
  The copy's rows are its own (deleting or pruning the source leaves it whole); the branch is recorded as a fork
  is (runs_app.services.forks): `thread.copied` on the new run, `thread.copy_made` on the source run, and the
  audit entry `thread.copied`, which the lineage pages read to show where a thread came from and went.
- **Time to live.** `thread_ttl_set` sets a thread's own TTL (days since its last change; None: its project's
  `RetentionPolicy.thread_ttl_days`). The retention pass (runs_app.retention) calls `thread_ttl_pass`: every
  thread older than its TTL loses its checkpoints and writes through `thread_delete`'s door, audited; its run,
  events and approvals stay, as a deletion leaves them.
"""

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_record
from harness.http.errors import ConflictError, NotFoundError, ValidationFailed
from harness.models import Project
from harness.tenancy import EndUserScope
from runs_app.models import Run, RunStatus
from runs_app.selectors.threads import expired_threads
from runs_app.services.runs import run_create, run_event_append, run_transition
from runs_app.services.threads import (
    THREAD_TASK_MODE,
    thread_delete,
    thread_id_valid,
    thread_kept_by,
)
from sessions_app.models import Session
from sessions_app.services import session_create

MAX_THREADS = 1000  # thread ids (or LangGraph run ids) one prune (or deletion) names
MAX_TTL_DAYS = 36500
STRATEGIES = ("keep_latest", "delete")


@dataclass
class Pruned:
    """What a prune (or a LangGraph run's deletion) removed, and the threads it left as they were, with why."""

    checkpoints: int = 0
    writes: int = 0
    kept: list[dict[str, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"checkpoints": self.checkpoints, "writes": self.writes, "kept": self.kept}


# --- the rewrite: remove some of a thread's checkpoints, keep the rest whole ------------------------------

_ROWS_SQL = """
SELECT c.id, c.parent_id, c.ns, c.external_id, c.metadata->>'run_id'
  FROM runs_app_checkpoint c WHERE c.run_id = %(run)s AND c.external_id <> ''
"""
# The thread's checkpoints that a checkpoint which is not one of the thread's own has as its parent.
_FOREIGN_PARENTS_SQL = """
SELECT DISTINCT c.parent_id FROM runs_app_checkpoint c
 WHERE c.parent_id IN (SELECT id FROM runs_app_checkpoint WHERE run_id = %(run)s AND external_id <> '')
   AND (c.run_id IS DISTINCT FROM %(run)s OR c.external_id = '')
"""
_COLUMNS = ("project_id, task_id, label, cursor, state, artifact_fingerprints, authority_ref, pending_gate, "
            "approval_id, resume_policy, schema_version, content_hash, created_at, ns, external_id, "
            "parent_external_id, metadata")
_INSERT_SQL = f"""
INSERT INTO runs_app_checkpoint (run_id, parent_id, depth, {_COLUMNS})
SELECT %(run)s, %(parent)s, %(depth)s, {_COLUMNS.replace("task_id", "%(task)s")} FROM {{source}} WHERE id = %(id)s
RETURNING id
"""  # noqa: S608 - constants only; every value is a bound parameter
_DELETE_WRITES_SQL = """
DELETE FROM runs_app_checkpointwrite w USING unnest(%(ns)s::text[], %(ids)s::text[]) AS g(ns, id)
 WHERE w.run_id = %(run)s AND w.ns = g.ns AND w.checkpoint_external_id = g.id
"""


def _rewrite(run: Run, doomed: set[int], rows: dict[int, tuple[int | None, str, str]]) -> tuple[int, int, bool]:
    """Delete the checkpoints `doomed` (of `rows`, the thread's own: id -> (parent, ns, LangGraph id)) and their
    pending writes; write again the kept ones below them. Inside the caller's transaction. (checkpoints, writes,
    whether `lineage_of_kept` kept some of `doomed`)."""
    with connection.cursor() as cur:
        cur.execute(_FOREIGN_PARENTS_SQL, {"run": run.pk})
        anchors = {row[0] for row in cur.fetchall()}
    # lineage_of_kept: what a checkpoint that is not the thread's own descends from stays, with its ancestors.
    for anchor in list(anchors):
        node: int | None = anchor
        while node is not None and node in rows:
            anchors.add(node)
            node = rows[node][0]
    blocked = bool(doomed & anchors)
    doomed = doomed - anchors
    if not doomed:
        return 0, 0, blocked

    def below_doomed(cid: int) -> bool:
        parent = rows[cid][0]
        while parent is not None and parent in rows:
            if parent in doomed:
                return True
            parent = rows[parent][0]
        return False

    moved = [cid for cid in rows if cid not in doomed and below_doomed(cid)]
    depth: dict[int, int] = {}

    def depth_of(cid: int) -> int:  # depth among the thread's rows, for writing parents before children
        if cid not in depth:
            parent = rows[cid][0]
            depth[cid] = 0 if parent is None or parent not in rows else depth_of(parent) + 1
        return depth[cid]

    moved.sort(key=depth_of)
    gone = doomed | set(moved)
    new_ids: dict[int, int] = {}
    with connection.cursor() as cur:
        if moved:
            cur.execute("CREATE TEMP TABLE harness_thread_moved ON COMMIT DROP AS "
                        "SELECT * FROM runs_app_checkpoint WHERE id = ANY(%s)", [moved])
        # The old rows go first (the foreign keys are deferred; a (run, ns, id) is unique), then the kept ones
        # come back under their nearest kept ancestor.
        cur.execute("DELETE FROM runs_app_checkpoint WHERE id = ANY(%s)", [list(gone)])
        new_depth: dict[int, int] = {}
        for cid in moved:
            parent = rows[cid][0]
            while parent is not None and parent in doomed:
                parent = rows[parent][0]
            new_parent = new_ids.get(parent, parent) if parent is not None else None
            d = 0 if new_parent is None else new_depth.get(new_parent, _stored_depth(new_parent)) + 1
            cur.execute(_INSERT_SQL.replace("{source}", "harness_thread_moved"),
                        {"run": run.pk, "parent": new_parent, "depth": d, "task": run.task_id, "id": cid})
            new_ids[cid] = cur.fetchone()[0]
            new_depth[new_ids[cid]] = d
        if moved:
            cur.execute("DROP TABLE harness_thread_moved")
        _repoint(cur, run, gone, new_ids)
        cur.execute(_DELETE_WRITES_SQL, {"run": run.pk, "ns": [rows[c][1] for c in doomed],
                                         "ids": [rows[c][2] for c in doomed]})
        writes = cur.rowcount
    return len(doomed), writes, blocked


def _stored_depth(checkpoint_id: int) -> int:
    with connection.cursor() as cur:
        cur.execute("SELECT depth FROM runs_app_checkpoint WHERE id = %s", [checkpoint_id])
        return int(cur.fetchone()[0])


# The pointers at rows that went: to the row written again in their place (`m`), or none.
_REPOINT_SQL = """
WITH m(o, n) AS (SELECT * FROM unnest(%(olds)s::bigint[], %(news)s::bigint[])),
run_ptr AS (
    UPDATE runs_app_run SET last_checkpoint_id = (SELECT n FROM m WHERE o = last_checkpoint_id),
           version = version + 1, updated_at = now()
     WHERE id = %(run)s AND last_checkpoint_id = ANY(%(gone)s) RETURNING 1
), task_ptr AS (
    UPDATE runs_app_task SET latest_checkpoint_id = (SELECT n FROM m WHERE o = latest_checkpoint_id),
           version = version + 1, updated_at = now()
     WHERE latest_checkpoint_id = ANY(%(gone)s) RETURNING 1
), node_ptr AS (
    UPDATE runs_app_nodeexecution SET checkpoint_id = (SELECT n FROM m WHERE o = checkpoint_id)
     WHERE checkpoint_id = ANY(%(gone)s) RETURNING 1
)
SELECT (SELECT count(*) FROM run_ptr) + (SELECT count(*) FROM task_ptr) + (SELECT count(*) FROM node_ptr)
"""


def _repoint(cur: Any, run: Run, gone: set[int], new_ids: dict[int, int]) -> None:
    """The run's and its task's latest-checkpoint pointers and node executions: to the row written again, or
    none for a row that went."""
    cur.execute(_REPOINT_SQL, {"gone": list(gone), "olds": list(new_ids), "news": list(new_ids.values()),
                               "run": run.pk})


def _thread_rows(run: Run) -> tuple[dict[int, tuple[int | None, str, str]], dict[int, str | None]]:
    with connection.cursor() as cur:
        cur.execute(_ROWS_SQL, {"run": run.pk})
        fetched = cur.fetchall()
    return ({r[0]: (r[1], r[2], r[3]) for r in fetched}, {r[0]: r[4] for r in fetched})


def _locked_thread(project: Project, thread_id: str, reach: EndUserScope | None) -> Run | None:
    runs = (Run.objects.select_for_update(of=("self",))
            .filter(project=project, ref=thread_id, task_mode=THREAD_TASK_MODE).exclude(ref=""))
    return (reach.hanging_off(runs, "session") if reach is not None else runs).first()


def _ids(values: Any, name: str) -> list[str]:
    if not isinstance(values, list) or len(values) > MAX_THREADS:
        raise ValidationFailed(f"`{name}` must be a list of at most {MAX_THREADS} ids.", code=f"invalid_{name}")
    if name == "thread_ids":
        return list(dict.fromkeys(thread_id_valid(v) for v in values))
    if not all(isinstance(v, str) and v and len(v) <= 1000 and "\x00" not in v for v in values):
        raise ValidationFailed(f"`{name}` must be a list of non-empty strings.", code=f"invalid_{name}")
    return list(dict.fromkeys(values))


def _record(project: Project, run: Run, actor: Actor, action: str, data: dict[str, Any]) -> None:
    audit_record(project=project, actor=actor, action=f"thread.{action}", target=run, data=data)
    run_event_append(project=project, run_id=run.pk, kind=f"thread.{action}", data=data)


# --- prune --------------------------------------------------------------------------------------------


def thread_prune(*, project: Project, thread_ids: Any, strategy: str, actor: Actor,
                 reach: EndUserScope | None = None) -> Pruned:
    """LangGraph's `prune(thread_ids, strategy)`: `keep_latest` keeps each namespace's newest checkpoint (by id)
    and its pending writes, `delete` removes every checkpoint and write. One transaction; each thread audited
    (`thread.pruned`). A thread the keep rules need is skipped and listed in `kept`; an unknown one (or one a
    narrowed caller does not reach) has nothing to prune."""
    ids = _ids(thread_ids, "thread_ids")
    if strategy not in STRATEGIES:
        raise ValidationFailed(f"`strategy` is one of {', '.join(STRATEGIES)}.", code="invalid_strategy")
    pruned = Pruned()
    with transaction.atomic():
        for thread_id in ids:
            run = _locked_thread(project, thread_id, reach)
            if run is None:
                continue
            rule = thread_kept_by(project.pk, run.pk)
            if rule is not None:
                pruned.kept.append({"thread_id": thread_id, "rule": rule})
                continue
            rows, _ = _thread_rows(run)
            if strategy == "delete":
                doomed = set(rows)
            else:
                newest: dict[str, tuple[str, int]] = {}
                for cid, (_, ns, ext) in rows.items():
                    if ns not in newest or ext > newest[ns][0]:
                        newest[ns] = (ext, cid)
                doomed = set(rows) - {cid for _, cid in newest.values()}
            checkpoints, writes, blocked = _rewrite(run, doomed, rows)
            if blocked:
                pruned.kept.append({"thread_id": thread_id, "rule": "lineage_of_kept"})
            if strategy == "delete":
                with connection.cursor() as cur:  # writes of checkpoints never stored go too
                    cur.execute("DELETE FROM runs_app_checkpointwrite WHERE run_id = %s", [run.pk])
                    writes += cur.rowcount
            if checkpoints or writes:
                _record(project, run, actor, "pruned", {"thread_id": thread_id, "strategy": strategy,
                                                        "checkpoints": checkpoints, "writes": writes})
            pruned.checkpoints += checkpoints
            pruned.writes += writes
    return pruned


# --- delete by LangGraph run --------------------------------------------------------------------------

_THREADS_OF_RUNS_SQL = """
SELECT DISTINCT c.run_id FROM runs_app_checkpoint c
 WHERE c.project_id = %(project)s AND c.external_id <> '' AND c.metadata->>'run_id' = ANY(%(runs)s)
"""


def thread_delete_for_runs(*, project: Project, run_ids: Any, actor: Actor,
                           reach: EndUserScope | None = None) -> Pruned:
    """LangGraph's `delete_for_runs(run_ids)`: every checkpoint of the project's threads whose metadata names
    one of these LangGraph run ids (`metadata.run_id`), with its pending writes; the rest of each thread stays
    whole. One transaction; each thread audited (`thread.runs_deleted`); a thread the keep rules need skipped
    (`kept`)."""
    runs = _ids(run_ids, "run_ids")
    pruned = Pruned()
    if not runs:
        return pruned
    with transaction.atomic():
        with connection.cursor() as cur:
            cur.execute(_THREADS_OF_RUNS_SQL, {"project": project.pk, "runs": runs})
            thread_runs = sorted(row[0] for row in cur.fetchall())
        locked = Run.objects.select_for_update(of=("self",)).filter(project=project, pk__in=thread_runs,
                                                                   task_mode=THREAD_TASK_MODE)
        for run in (reach.hanging_off(locked, "session") if reach is not None else locked).order_by("pk"):
            rule = thread_kept_by(project.pk, run.pk)
            if rule is not None:
                pruned.kept.append({"thread_id": run.ref, "rule": rule})
                continue
            rows, lg_runs = _thread_rows(run)
            wanted = set(runs)
            checkpoints, writes, blocked = _rewrite(run, {cid for cid in rows if lg_runs[cid] in wanted}, rows)
            if blocked:
                pruned.kept.append({"thread_id": run.ref, "rule": "lineage_of_kept"})
            if checkpoints or writes:
                _record(project, run, actor, "runs_deleted", {"thread_id": run.ref, "run_ids": runs,
                                                              "checkpoints": checkpoints, "writes": writes})
            pruned.checkpoints += checkpoints
            pruned.writes += writes
    return pruned


# --- copy (a fork) ------------------------------------------------------------------------------------

_COPY_WRITES_SQL = """
INSERT INTO runs_app_checkpointwrite (project_id, run_id, ns, checkpoint_external_id, task_id, task_path, idx,
                                      channel, value, created_at)
SELECT project_id, %(target)s, ns, checkpoint_external_id, task_id, task_path, idx, channel, value, created_at
  FROM runs_app_checkpointwrite WHERE run_id = %(source)s
"""


@dataclass(frozen=True)
class ThreadCopy:
    thread_id: str
    run: Run
    source_run: Run
    checkpoints: int
    writes: int


def thread_copy(*, project: Project, source_thread_id: str, target_thread_id: str, actor: Actor,
                reach: EndUserScope | None = None) -> ThreadCopy:
    """LangGraph's `copy_thread(source, target)`: the target thread, new, with every checkpoint (every
    namespace, same ids, parents, values, metadata and order) and pending write of the source; a fork recorded
    as forks are (see the module's docstring). One transaction.

    404 `thread_not_found` for a source this caller does not have; 409 `thread_exists` for a target id that a
    run of the project holds already (a copy never writes into a thread that exists)."""
    source_id = thread_id_valid(source_thread_id)
    target_id = thread_id_valid(target_thread_id)
    if source_id == target_id:
        raise ValidationFailed("A thread is copied to another thread id.", code="invalid_target_thread_id")
    with transaction.atomic():
        source = _locked_thread(project, source_id, reach)
        if source is None:
            raise NotFoundError(f"Thread {source_id!r} does not exist.", code="thread_not_found")
        rows, _ = _thread_rows(source)
        if not rows:
            raise NotFoundError(f"Thread {source_id!r} has no checkpoint to copy.", code="thread_not_found")
        if Run.objects.filter(project=project, ref=target_id).exists():
            raise ConflictError(f"Thread {target_id!r} exists already; copy to a new thread id.",
                                code="thread_exists")
        model = Session.objects.get(pk=source.session_id)
        session_id = (reach.session_id if reach is not None and reach.session_id is not None else session_create(
            project=project, role=model.role, memory_policy=model.memory_policy,
            metadata={"langgraph_thread": target_id, "copied_from_thread": source_id}, end_user=model.end_user).pk)
        created = run_create(project=project, session_id=session_id, ref=target_id, task_mode=THREAD_TASK_MODE,
                             active_agent=source.active_agent)
        run = run_transition(project=project, run_id=created.pk, to=RunStatus.RUNNING, expected_version=None)
        new_ids: dict[int, int] = {}
        depth: dict[int, int] = {}

        def depth_of(cid: int) -> int:
            if cid not in depth:
                parent = rows[cid][0]
                depth[cid] = 0 if parent is None or parent not in rows else depth_of(parent) + 1
            return depth[cid]

        with connection.cursor() as cur:
            for cid in sorted(rows, key=lambda c: (depth_of(c), c)):
                parent = rows[cid][0]
                cur.execute(_INSERT_SQL.replace("{source}", "runs_app_checkpoint"),
                            {"run": run.pk, "parent": new_ids.get(parent) if parent is not None else None,
                             "depth": depth_of(cid), "task": run.task_id, "id": cid})
                new_ids[cid] = cur.fetchone()[0]
            cur.execute(_COPY_WRITES_SQL, {"source": source.pk, "target": run.pk})
            writes = cur.rowcount
            last = new_ids.get(source.last_checkpoint_id) if source.last_checkpoint_id else None
            cur.execute("UPDATE runs_app_run SET last_checkpoint_id = %s, cursor = %s::jsonb, version = version + 1,"
                        " updated_at = now() WHERE id = %s",
                        [last, _cursor_json(source, target_id), run.pk])
        record = {"from_thread": source_id, "from_run": source.pk, "to_thread": target_id, "to_run": run.pk,
                  "by": actor.label, "checkpoints": len(rows), "writes": writes}
        run_event_append(project=project, run_id=run.pk, kind="thread.copied", data=record)
        run_event_append(project=project, run_id=source.pk, kind="thread.copy_made", data=record)
        audit_record(project=project, actor=actor, action="thread.copied", target=source, data=record)
        return ThreadCopy(target_id, Run.objects.get(pk=run.pk), source, len(rows), writes)


def _cursor_json(source: Run, target_id: str) -> str:
    cursor = dict(source.cursor or {})
    if cursor.get("thread_id"):
        cursor["thread_id"] = target_id
    return json.dumps(cursor)


# --- time to live ---------------------------------------------------------------------------------------


def thread_ttl_set(*, project: Project, thread_id: str, ttl_days: Any, actor: Actor,
                   reach: EndUserScope | None = None) -> Run:
    """Set a thread's own TTL (days since its last change; None: its project's default), audited
    (`thread.ttl_set`). 404 `thread_not_found` for a thread this caller does not have."""
    thread_id = thread_id_valid(thread_id)
    if ttl_days is not None and (isinstance(ttl_days, bool) or not isinstance(ttl_days, int)
                                 or not 0 < ttl_days <= MAX_TTL_DAYS):
        raise ValidationFailed(f"`ttl_days` is a whole number of days from 1 to {MAX_TTL_DAYS}, or null.",
                               code="invalid_ttl_days")
    with transaction.atomic():
        run = _locked_thread(project, thread_id, reach)
        if run is None:  # another user's thread reads as absent
            raise NotFoundError(f"Thread {thread_id!r} does not exist.", code="thread_not_found")
        before = run.thread_ttl_days
        Run.objects.filter(pk=run.pk).update(thread_ttl_days=ttl_days)
        run.thread_ttl_days = ttl_days
        audit_record(project=project, actor=actor, action="thread.ttl_set", target=run,
                     data={"thread_id": thread_id, "before": before, "after": ttl_days})
    return run


def thread_ttl_pass(*, project: Project, actor: Actor, now: datetime | None = None,
                    limit: int = 1000) -> dict[str, int]:
    """Delete the checkpoints and writes of every thread of the project unchanged for longer than its TTL
    (`expired_threads`: the dry run lists the same), each through `thread_delete`, audited `thread.expired`, at
    most `limit` threads; a thread a keep rule needs stays (until a later pass). Counts: `threads` expired,
    `kept` by a rule."""
    counts = {"threads": 0, "kept": 0}
    for _run, thread_id, rule in expired_threads(project_id=project.pk, now=now or timezone.now(), limit=limit):
        if rule is not None:
            counts["kept"] += 1
            continue
        try:
            deleted = thread_delete(project=project, thread_id=thread_id, actor=actor, expired=True)
        except ConflictError as exc:  # needed since the listing (an approval asked meanwhile): the next pass
            if exc.code != "thread_kept":
                raise
            counts["kept"] += 1
            continue
        if deleted["checkpoints"] or deleted["writes"]:
            counts["threads"] += 1
    return counts
