"""LangGraph threads stored as this service's runs and checkpoints (the client's `HarnessSaver`).

The mapping, and why:

- A LangGraph `thread_id` is a Run of the token's project found by its `ref` (the thread id itself, at most
  64 characters; refs are unique per project). The first write to an unknown thread creates it: a session
  (role `other`, memory policy `checkpoint_only`: the checkpoint's state is what the graph resumes from)
  and a run in it (`task_mode` "langgraph"), moved to `running` (a graph that checkpoints is running; an
  interrupt can then ask for an approval on it). So a thread's lineage, forks, approvals and audit are
  the console's run pages.
- A LangGraph checkpoint is a Checkpoint of that run: `ns` is its checkpoint_ns ("" for the root graph),
  `external_id` its checkpoint_id (unique per run and ns), `parent_external_id` its parent's id as given,
  and `parent` the stored checkpoint with that id in the same run and ns (lineage, forks, diffs). `state`
  holds its channel values (JSON where a value is JSON, the serializer's typed bytes otherwise: the client
  decides, see harness_client.langgraph), `cursor` the rest of the LangGraph checkpoint (versions, versions
  seen, timestamps), `metadata` its metadata (filterable by jsonb containment), `label` "<source> <step>".
  Checkpoints stay immutable: the same id written again with the same content is answered as before,
  with different content it is a 409 `checkpoint_exists` (LangGraph never rewrites one; PostgresSaver would
  overwrite it).
- Pending writes are CheckpointWrite rows keyed by (run, ns, checkpoint id, task id, idx), as PostgresSaver
  keys them: a graph saves a step's writes in the background and they may arrive before their checkpoint.
  When every write of a call is to a special channel (negative idx: error, scheduled, interrupt, resume)
  they replace what is stored under the same key; otherwise what is stored is kept (PostgresSaver's rule).
- A thread serves one end user when its session is tagged with one (`end_user`, set when the thread is created,
  never changed). A token narrowed to an end user (harness_client's `for_user`, `HarnessSaver(end_user=...)`)
  passes its `EndUserScope` as `reach`: the threads it creates are tagged with its user (and made in its one
  session, when the token names one), and it reaches no thread of another user's session. Reading one is
  reading an absent thread (404 `checkpoint_not_found`, an empty list, nothing deleted); writing one is 409
  `thread_ref_taken` (a thread id is unique in its project, so a create cannot hide that the id is taken; the
  answer names no run, session or user).
- Deleting a thread deletes its LangGraph checkpoints and pending writes (and the run's own checkpoints
  descended from them: the resume worker's, after an approval the graph asked for), audited; the run, its
  session, events, approvals and effects stay (they are history), the run keeps its ref, so the thread id
  can be used again and starts from nothing.

The reads build the API's JSON in PostgreSQL, one statement each, and return its text (issue 14).
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from harness.actors import Actor
from harness.audit import audit_record
from harness.canonical import digest
from harness.db import prepared_cursor
from harness.http.errors import ConflictError, NotFoundError, ValidationFailed
from harness.http.idempotency import Claim, KeyTaken, claim_params, claim_sql, execute_claimed
from harness.models import Project
from harness.tenancy import EndUserScope
from runs_app.fencing import UNFENCED, LeaseOwner, lease_lost
from runs_app.models import Checkpoint, Run, RunStatus
from runs_app.services.checkpoints import LANGGRAPH_THREAD_MODE, ExternalWrite, checkpoint_write_external
from runs_app.services.runs import run_create, run_event_append, run_transition
from sessions_app.models import MemoryPolicy, Session, SessionRole
from sessions_app.services import session_create

THREAD_TASK_MODE = LANGGRAPH_THREAD_MODE  # "langgraph"
MAX_THREAD_ID = 64  # Run.ref
MAX_NAME = 1000  # a namespace, a checkpoint id, a task id or path, a channel


@dataclass(frozen=True)
class ThreadCheckpoint:
    """A stored LangGraph checkpoint: the harness checkpoint's id and its run."""

    id: int
    run_id: int
    content_hash: str
    created: bool


def _text(value: Any, name: str, *, allow_empty: bool = True, max_length: int = MAX_NAME) -> str:
    if not isinstance(value, str) or (not value and not allow_empty) or len(value) > max_length or "\x00" in value:
        raise ValidationFailed(f"`{name}` must be a string of at most {max_length} characters"
                               f"{'' if allow_empty else ', not empty'}, without NUL.", code=f"invalid_{name}")
    return value


def thread_id_valid(thread_id: Any) -> str:
    return _text(thread_id, "thread_id", allow_empty=False, max_length=MAX_THREAD_ID)


def _object(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValidationFailed(f"`{name}` must be a JSON object.", code=f"invalid_{name}")
    return value


# --- writes -------------------------------------------------------------------------------------------


def thread_ensure(*, project: Project, thread_id: str, end_user: str = "", reach: EndUserScope | None = None,
                  agent: str = "") -> Run:
    """The run of this thread, created (with its session, moved to running) if there is none.

    `end_user` tags a new thread's session with the end user it serves; `reach` (a narrowed caller's scope) tags it
    with the scope's user instead and puts the run in the scope's one session when it names one. An existing thread
    must be the named user's (409 `thread_ref_taken` otherwise: the id serves another end user).
    `agent` (the graph's name) names the run's `active_agent`: set on a new thread, and on one that has none yet.
    """
    wanted = reach.end_user if reach is not None else end_user.strip()
    run = _thread_run(project.pk, thread_id)
    if run is None:
        try:
            with transaction.atomic():
                if reach is not None and reach.session_id is not None:
                    session_id = reach.session_id  # its user's (checked when the token was minted)
                else:
                    session_id = session_create(project=project, role=SessionRole.OTHER,
                                                memory_policy=MemoryPolicy.CHECKPOINT_ONLY,
                                                metadata={"langgraph_thread": thread_id}, end_user=wanted).pk
                created = run_create(project=project, session_id=session_id, ref=thread_id,
                                     task_mode=THREAD_TASK_MODE, active_agent=agent[:120])
                return run_transition(project=project, run_id=created.pk, to=RunStatus.RUNNING,
                                      expected_version=None)
        except ConflictError as exc:  # created meanwhile by another request of the same thread (the ref is unique)
            if exc.code != "already_exists":
                raise
            run = _thread_run(project.pk, thread_id)
            if run is None:
                raise
    if reach is not None:
        if not _reached(run, reach):
            raise _ref_taken_by_another(thread_id)
    elif wanted and Session.objects.filter(pk=run.session_id).values_list("end_user", flat=True).get() != wanted:
        raise ConflictError(f"Thread {thread_id!r} serves another end user; use another thread id.",
                            code="thread_ref_taken")
    if agent and not run.active_agent:
        # A thread first written by a saver that did not name its graph: named now, once (never renamed).
        Run.objects.filter(pk=run.pk, active_agent="").update(active_agent=agent[:120])
        run.active_agent = agent[:120]
    return run


def _reached(run: Run, reach: EndUserScope) -> bool:
    return reach.hanging_off(Run.objects.filter(pk=run.pk), "session").exists()


def _ref_taken_by_another(thread_id: str) -> ConflictError:
    # What a narrowed caller hears of a thread id another end user's thread holds: that the id is taken (the create
    # it asked for cannot hide it), nothing about whose it is or what it holds.
    return ConflictError(f"Thread id {thread_id!r} is taken in this project; use another thread id.",
                         code="thread_ref_taken")


def _reach_thread(project: Project, thread_id: str, reach: EndUserScope | None, *, create: bool) -> None:
    """Before a narrowed caller's write to a thread: the thread is its user's, or is created now tagged with its
    user (`create`; else 404 `thread_not_found` for a thread that does not exist), so the write's statement, which
    finds the thread by its id in the project, finds this caller's. Nothing to do for any other caller."""
    if reach is None:
        return
    run = _thread_run(project.pk, thread_id)
    if run is None and not create:
        raise NotFoundError(f"Thread {thread_id!r} does not exist.", code="thread_not_found")
    if run is None:
        thread_ensure(project=project, thread_id=thread_id, reach=reach)
    elif not _reached(run, reach):
        raise _ref_taken_by_another(thread_id)


def _thread_run(project_id: int, thread_id: str) -> Run | None:
    run = Run.objects.filter(project_id=project_id, ref=thread_id).exclude(ref="").first()
    if run is not None and run.task_mode != THREAD_TASK_MODE:
        raise _ref_taken(thread_id)
    return run


def _ref_taken(thread_id: str) -> ConflictError:
    # A run of the project that is not a LangGraph thread has this ref: its checkpoints, cursor and task
    # pointer are not the graph's to write.
    return ConflictError(f"Run {thread_id!r} of this project is not a LangGraph thread; use another thread id.",
                         code="thread_ref_taken")


def thread_checkpoint_put(
    *, project: Project, thread_id: str, checkpoint_ns: str, checkpoint_id: str, parent_checkpoint_id: str | None,
    checkpoint: Any, channel_values: Any, metadata: Any, lease_owner: LeaseOwner = UNFENCED, claim: Claim | None = None,
    reach: EndUserScope | None = None,
) -> ThreadCheckpoint:
    """Store one LangGraph checkpoint of a thread (see the module's docstring for the mapping).

    One statement (runs_app.services.checkpoints.checkpoint_write_external) when the thread exists; its first
    checkpoint creates it first. It is fenced on the run's lease as every lease holder's write (runs_app.fencing:
    the owner holding it right now, or None while the run holds none). With a
    `claim` (the API's Idempotency-Key) the statement records the reply under the key (KeyTaken: the key is
    another request's, or this one's already done; nothing written). A narrowed caller's `reach` confines it to
    its user's threads (`_reach_thread`).
    """
    thread_id = thread_id_valid(thread_id)
    ns = _text(checkpoint_ns, "checkpoint_ns")
    external_id = _text(checkpoint_id, "checkpoint_id", allow_empty=False)
    parent = _text(parent_checkpoint_id or "", "parent_checkpoint_id")
    cursor = {k: v for k, v in _object(checkpoint, "checkpoint").items() if k != "channel_values"}
    state = _object(channel_values, "channel_values")
    metadata = _object(metadata, "metadata")
    body = {"thread": thread_id, "ns": ns, "id": external_id, "parent": parent, "checkpoint": cursor,
            "channel_values": state, "metadata": metadata}
    body_digest = digest(body)
    step = metadata.get("step")
    label = f"{metadata.get('source', 'langgraph')} {step}"[:120] if step is not None else "langgraph"
    run_cursor = {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": external_id, "step": step}

    def write() -> ExternalWrite:
        return checkpoint_write_external(
            project_id=project.pk, thread=thread_id, ns=ns, external_id=external_id, parent_external_id=parent,
            label=label, cursor=cursor, state=state, metadata=metadata, body_digest=body_digest,
            run_cursor=run_cursor if isinstance(step, int | None) else {**run_cursor, "step": None},
            lease_owner=lease_owner, claim=claim,
        )

    _reach_thread(project, thread_id, reach, create=lease_owner is None or lease_owner is UNFENCED)
    written = write()
    # A new thread (a leased one must exist already).
    if written.run_id is None and (lease_owner is None or lease_owner is UNFENCED):
        thread_ensure(project=project, thread_id=thread_id)
        written = write()
    run_id = written.run_id
    if run_id is not None and not written.thread:
        raise _ref_taken(thread_id)
    if written.checkpoint_id is None and claim is not None and claim.taken():
        # A retry of a put that was done (its reply lost): the first reply, not what the retry finds now.
        raise KeyTaken(claim)
    if run_id is None:
        raise NotFoundError(f"Thread {thread_id!r} does not exist.", code="thread_not_found")
    if not written.leased:
        current = Run.objects.filter(pk=run_id).values("status", "version").get()
        raise lease_lost(lease_owner, current_status=current["status"], current_version=current["version"])
    if written.checkpoint_id is None:
        return _already_stored(run_id, ns, external_id, body, thread_id)
    return ThreadCheckpoint(written.checkpoint_id, run_id, str(written.content_hash), True)


def _already_stored(run_id: int, ns: str, external_id: str, body: dict[str, Any], thread_id: str) -> ThreadCheckpoint:
    stored = (Checkpoint.objects.filter(run_id=run_id, ns=ns, external_id=external_id).exclude(external_id="")
              .values("pk", "parent_external_id", "cursor", "state", "metadata", "content_hash").get())
    same = {**body, "parent": stored["parent_external_id"], "checkpoint": stored["cursor"],
            "channel_values": stored["state"], "metadata": stored["metadata"]}
    if digest(same) != digest(body):
        raise ConflictError(f"Checkpoint {external_id!r} of thread {thread_id!r} is stored already, with other "
                            "content; checkpoints are immutable.", code="checkpoint_exists")
    return ThreadCheckpoint(stored["pk"], run_id, stored["content_hash"], False)


# The API's reply (runs_app.api.threads), recorded under a claimed Idempotency-Key; NULL with no thread.
_WRITES_REPLY = "SELECT jsonb_build_object('written', count(*)) FROM ins HAVING EXISTS (SELECT 1 FROM run)"
_WRITES_SQL = """
WITH run AS (
    SELECT id FROM runs_app_run
     WHERE project_id = %(project)s AND ref = %(thread)s::text AND ref <> '' AND task_mode = 'langgraph'
), ins AS (
    INSERT INTO runs_app_checkpointwrite (project_id, run_id, ns, checkpoint_external_id, task_id, task_path, idx,
                                          channel, value, created_at)
    SELECT %(project)s, run.id, %(ns)s::text, %(checkpoint)s::text, %(task)s::text, %(path)s::text, w.idx, w.channel,
           w.value::jsonb, now()
      FROM run, unnest(%(idxs)s::int[], %(channels)s::text[], %(values)s::text[]) AS w(idx, channel, value)
        ON CONFLICT (run_id, ns, checkpoint_external_id, task_id, idx)
        DO UPDATE SET channel = EXCLUDED.channel, value = EXCLUDED.value WHERE %(replace)s::boolean
    RETURNING 1
), claim AS (""" + claim_sql(_WRITES_REPLY) + """)
SELECT (SELECT id FROM run), (SELECT count(*) FROM ins)
"""  # noqa: S608 - the text put in is harness.http.idempotency's and this module's; every value is a bound parameter


def thread_writes_put(
    *, project: Project, thread_id: str, checkpoint_ns: str, checkpoint_id: str, task_id: str, task_path: str,
    writes: Sequence[tuple[int, str, Any]], claim: Claim | None = None, reach: EndUserScope | None = None,
) -> int:
    """Store a task's pending writes `(idx, channel, value)` for a thread's checkpoint; how many were written.

    All to special channels (idx < 0): each replaces the one stored under its key. Otherwise a key already
    stored keeps its first write. One statement; the thread is created if it is new. A narrowed caller's `reach`
    confines it to its user's threads (`_reach_thread`).
    """
    thread_id = thread_id_valid(thread_id)
    ns = _text(checkpoint_ns, "checkpoint_ns")
    checkpoint_id = _text(checkpoint_id, "checkpoint_id", allow_empty=False)
    task_id = _text(task_id, "task_id")
    task_path = _text(task_path, "task_path")
    replace = all(idx < 0 for idx, _, _ in writes)
    by_idx: dict[int, tuple[str, Any]] = {}
    for idx, channel, value in writes:
        if replace or idx not in by_idx:  # one statement may not touch a row twice: the last (or first) wins
            by_idx[idx] = (_text(channel, "channel", allow_empty=False), value)
    if not by_idx:
        raise ValidationFailed("`writes` is empty.", code="invalid_writes")
    params: dict[str, Any] = {
        "project": project.pk, "thread": thread_id, "ns": ns, "checkpoint": checkpoint_id, "task": task_id,
        "path": task_path, "idxs": list(by_idx), "channels": [c for c, _ in by_idx.values()],
        "values": [json.dumps(v) for _, v in by_idx.values()], "replace": replace, **claim_params(claim),
    }
    _reach_thread(project, thread_id, reach, create=True)
    for _attempt in (1, 2):
        with prepared_cursor() as cur:
            execute_claimed(cur, _WRITES_SQL, params, claim)
            run_id, count = cur.fetchone()
        if run_id is not None:
            return int(count)
        thread_ensure(project=project, thread_id=thread_id)
    raise NotFoundError(f"Thread {thread_id!r} does not exist.", code="thread_not_found")


# The retention keep rules a thread's run may be needed by (runs_app migration 0033): the retention pass's own.
_NEEDED_SQL = "SELECT kept_by FROM harness_retention_needed_runs(%s) WHERE id = %s ORDER BY kept_by DESC LIMIT 1"


def thread_kept_by(project_id: int, run_id: int) -> str | None:
    """The retention keep rule that needs this thread's run (`shown_by_pending_approval`: its session has a pending
    approval; `effect_not_consumed`: it has an effect not consumed, refused or abandoned), or None. The same SQL
    function the retention pass's `runs` rules read (harness_retention_needed_runs)."""
    with connection.cursor() as cur:
        cur.execute(_NEEDED_SQL, [project_id, run_id])
        row = cur.fetchone()
    return str(row[0]) if row else None


def thread_delete(*, project: Project, thread_id: str, actor: Actor, reach: EndUserScope | None = None,
                  expired: bool = False) -> dict[str, int]:
    """Delete a thread's LangGraph checkpoints and pending writes, audited (see the module's docstring).

    A thread that does not exist (or has nothing), or that a narrowed caller's `reach` does not reach, is deleted
    already: nothing happens, no error. A thread a retention keep rule needs (`thread_kept_by`) is refused: 409
    `thread_kept`, naming the rule. `expired`: the TTL pass's deletion (audited `thread.expired`).
    """
    thread_id = thread_id_valid(thread_id)
    with transaction.atomic():
        runs = Run.objects.select_for_update(of=("self",)).filter(project=project, ref=thread_id).exclude(ref="")
        run = (reach.hanging_off(runs, "session") if reach is not None else runs).first()
        if run is None:
            return {"checkpoints": 0, "writes": 0}
        rule = thread_kept_by(project.pk, run.pk)
        if rule is not None:
            raise ConflictError(f"Thread {thread_id!r} is kept by the retention rule {rule!r}: decide its pending "
                                "approval (or let its effect be consumed) first.", code="thread_kept", rule=rule)
        with connection.cursor() as cur:
            cur.execute(_DELETE_SQL, {"run": run.pk})
            checkpoints, writes, _ = cur.fetchone()
            cur.execute(_DELETE_CHECKPOINTS_SQL, {"run": run.pk})
        if checkpoints or writes:
            data = {"thread_id": thread_id, "checkpoints": checkpoints, "writes": writes}
            audit_record(project=project, actor=actor, action="thread.expired" if expired else "thread.delete",
                         target=run, data=data)
            run_event_append(project=project, run_id=run.pk, kind="thread.expired" if expired else "thread.deleted",
                             data=data)
    return {"checkpoints": checkpoints, "writes": writes}


# What a thread's deletion removes: its LangGraph checkpoints, and the run's own checkpoints descended from
# them (the resume worker's, written after an approval the graph asked for: their parent is the thread's).
_GONE = """
WITH RECURSIVE gone(id) AS (
    SELECT id FROM runs_app_checkpoint WHERE run_id = %(run)s AND external_id <> ''
    UNION
    SELECT c.id FROM runs_app_checkpoint c JOIN gone ON c.parent_id = gone.id
)"""
# The pointers to them are cleared first (SET NULL, as the models declare), with the writes; then the
# checkpoints go in one statement (their parent links point inside the deleted set).
_DELETE_SQL = _GONE + """, run_ptr AS (
    UPDATE runs_app_run SET last_checkpoint_id = NULL, version = version + 1, updated_at = now()
     WHERE id = %(run)s AND last_checkpoint_id IN (SELECT id FROM gone) RETURNING 1
), task_ptr AS (
    UPDATE runs_app_task SET latest_checkpoint_id = NULL, version = version + 1, updated_at = now()
     WHERE latest_checkpoint_id IN (SELECT id FROM gone) RETURNING 1
), node_ptr AS (
    UPDATE runs_app_nodeexecution SET checkpoint_id = NULL WHERE checkpoint_id IN (SELECT id FROM gone) RETURNING 1
), writes AS (
    DELETE FROM runs_app_checkpointwrite WHERE run_id = %(run)s RETURNING 1
)
SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM writes),
       (SELECT count(*) FROM run_ptr) + (SELECT count(*) FROM task_ptr) + (SELECT count(*) FROM node_ptr)
"""  # noqa: S608 - constants only; the run is a bound parameter
_DELETE_CHECKPOINTS_SQL = _GONE + " DELETE FROM runs_app_checkpoint WHERE id IN (SELECT id FROM gone)"  # noqa: S608


# --- reads: the API's JSON, written by PostgreSQL --------------------------------------------------------

# One LangGraph checkpoint tuple as the API's JSON object; `c` a checkpoint, `r` its run.
_TUPLE_JSON = (
    """'{"id":' || c.id || ',"run":' || c.run_id || ',"thread_id":' || to_json(r.ref)::text"""
    """ || ',"checkpoint_ns":' || to_json(c.ns)::text || ',"checkpoint_id":' || to_json(c.external_id)::text"""
    """ || ',"parent_checkpoint_id":' || coalesce(to_json(nullif(c.parent_external_id, ''))::text, 'null')"""
    """ || ',"checkpoint":' || c.cursor::text || ',"channel_values":' || c.state::text"""
    """ || ',"metadata":' || c.metadata::text || ',"content_hash":"' || c.content_hash || '"'"""
    """ || ',"pending_writes":' || coalesce((
        SELECT json_agg(json_build_array(w.task_id, w.channel, w.value, w.task_path, w.idx)
                        ORDER BY w.task_path, w.task_id, w.idx)::text
          FROM runs_app_checkpointwrite w
         WHERE w.run_id = c.run_id AND w.ns = c.ns AND w.checkpoint_external_id = c.external_id
           AND w.project_id = c.project_id), '[]') || '}'"""
)

# The thread's run is looked up first (a scalar): then (run, ns, external_id) are an equality, an equality and
# the order of checkpoint_external_id_unique, which PostgreSQL reads backwards from the newest and stops: the
# newest of a 100,000-deep thread costs what the newest of a 10-deep one does. (Joined instead, the planner
# took every checkpoint of the run and sorted them.)
_THREAD_RUN = """(SELECT id FROM runs_app_run
           WHERE project_id = ANY(%(projects)s) AND ref = %(thread)s::text AND ref <> '' {confine}
           ORDER BY id LIMIT 1)"""
_GET_SQL = f"""
SELECT {_TUPLE_JSON}
  FROM runs_app_checkpoint c JOIN runs_app_run r ON r.id = c.run_id AND r.project_id = c.project_id
 WHERE c.run_id = {_THREAD_RUN} AND c.project_id = ANY(%(projects)s) AND c.ns = %(ns)s::text AND c.external_id <> ''
       {{where}}
 ORDER BY c.ns DESC, c.external_id DESC LIMIT 1
"""  # noqa: S608 - the text put in is this module's constants; every value is a bound parameter

# A narrowed caller's reads (`reach`): only runs of its end user's sessions (of its one session, if it names one).
# Added to a statement on runs_app_run (the thread's run) or, for a list of every thread, on the checkpoints' runs.
_USERS_SESSIONS = "SELECT id FROM sessions_app_session WHERE end_user = %(end_user)s::text"
_ONE_SESSION = " AND id = %(session)s"
# A list of every thread a narrowed caller reaches: the checkpoints of its user's runs.
_USERS_THREADS = "AND c.run_id IN (SELECT id FROM runs_app_run WHERE project_id = ANY(%(projects)s) {confine})"


def _confine(reach: EndUserScope | None, params: dict[str, Any]) -> str:
    """The SQL that confines a run (`session_id`) to `reach`, its parameters put in `params`; "" without one."""
    if reach is None:
        return ""
    params["end_user"] = reach.end_user
    sessions = _USERS_SESSIONS
    if reach.session_id is not None:
        params["session"] = reach.session_id
        sessions += _ONE_SESSION
    return f"AND session_id IN ({sessions})"


def thread_checkpoint_json(
    *, project_ids: Sequence[int], thread_id: str, checkpoint_ns: str = "", checkpoint_id: str | None = None,
    reach: EndUserScope | None = None,
) -> bytes:
    """One checkpoint tuple of a thread as JSON (by id, or its newest by id), with its pending writes; of a thread
    of `reach`'s end user only, for a narrowed caller."""
    thread_id = thread_id_valid(thread_id)
    params: dict[str, Any] = {"projects": list(project_ids), "thread": thread_id,
                              "ns": _text(checkpoint_ns, "checkpoint_ns")}
    where = ""
    if checkpoint_id:
        params["id"] = _text(checkpoint_id, "checkpoint_id")
        where = "AND c.external_id = %(id)s::text"
    with prepared_cursor() as cur:
        cur.execute(_GET_SQL.replace("{where}", where).replace("{confine}", _confine(reach, params)), params)
        row = cur.fetchone()
    if row is None:
        raise NotFoundError(f"Thread {thread_id!r} has no such checkpoint.", code="checkpoint_not_found")
    return str(row[0]).encode()


_LIST_SQL = f"""
SELECT '[' || coalesce(string_agg(t.tuple, ',' ORDER BY t.external_id DESC), '') || ']'
  FROM (SELECT {_TUPLE_JSON} AS tuple, c.external_id
          FROM runs_app_checkpoint c JOIN runs_app_run r ON r.id = c.run_id
         WHERE c.project_id = ANY(%(projects)s) AND c.external_id <> '' {{where}}
         ORDER BY c.external_id DESC {{limit}}) t
"""  # noqa: S608 - the text put in is this module's constants; every value is a bound parameter


def thread_checkpoints_json(
    *, project_ids: Sequence[int], thread_id: str | None, checkpoint_ns: str | None = None,
    checkpoint_id: str | None = None, metadata_filter: dict[str, Any] | None = None, before: str | None = None,
    limit: int | None = None, reach: EndUserScope | None = None,
) -> bytes:
    """A JSON array of checkpoint tuples, newest first by checkpoint id, as LangGraph's `list()` reads them:
    of one thread (every thread of the caller's projects when None; of `reach`'s end user, for a narrowed
    caller), of one namespace (all when None), one checkpoint id, metadata containing `metadata_filter`, ids
    before `before`, at most `limit`."""
    params: dict[str, Any] = {"projects": list(project_ids)}
    where: list[str] = []
    confine = _confine(reach, params)
    if thread_id is not None:
        params["thread"] = thread_id_valid(thread_id)
        where.append(f"AND c.run_id = {_THREAD_RUN.replace('{confine}', confine)}")
    elif confine:
        where.append(_USERS_THREADS.replace("{confine}", confine))
    if checkpoint_ns is not None:
        params["ns"] = _text(checkpoint_ns, "checkpoint_ns")
        where.append("AND c.ns = %(ns)s::text")
    if checkpoint_id:
        params["id"] = _text(checkpoint_id, "checkpoint_id")
        where.append("AND c.external_id = %(id)s::text")
    if metadata_filter:
        params["filter"] = json.dumps(_object(metadata_filter, "filter"))
        where.append("AND c.metadata @> %(filter)s::jsonb")
    if before is not None:
        params["before"] = _text(before, "before")
        where.append("AND c.external_id < %(before)s::text")
    limit_sql = ""
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValidationFailed("`limit` must be an integer >= 0.", code="invalid_limit")
        params["limit"] = limit
        limit_sql = "LIMIT %(limit)s"
    with prepared_cursor() as cur:
        cur.execute(_LIST_SQL.replace("{where}", " ".join(where)).replace("{limit}", limit_sql), params)
        row = cur.fetchone()
    return str(row[0]).encode()
