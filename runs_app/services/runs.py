"""Write operations on runs, their events and their node executions.

Every status change goes through `harness.transitions.cas_transition` with the machine declared in
`runs_app.machines`; the API, the console, the admin and the resume worker all call these functions.
"""

import datetime as dt
import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import F, Func, JSONField, QuerySet, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Now
from django.utils import timezone

from harness.actors import Actor
from harness.db import api_time_sql, fetch_instance, prepared_cursor, returning
from harness.http.errors import ConflictError, NotFoundError, ValidationFailed
from harness.http.idempotency import Claim, claim_params, claim_sql, execute_claimed
from harness.models import Project
from harness.refs import create_with_ref
from harness.transitions import cas_transition_row
from runs_app.fencing import UNFENCED, LeaseOwner, lease_fence_params, lease_fence_q, lease_fence_sql, lease_lost
from runs_app.limits import limit_exceeded
from runs_app.machines import RUN_MACHINE
from runs_app.models import Checkpoint, FailureCategory, NodeExecution, Run, RunEvent, RunStatus, Task
from runs_app.resume_due import RETRY_MARK
from runs_app.services.checkpoints import checkpoint_waiting
from sessions_app.models import Session


def _runs(project: Project | int) -> QuerySet[Run]:
    return Run.objects.filter(project=project)


# --- runs ---------------------------------------------------------------------------------


def run_create(
    *,
    project: Project,
    session_id: int,
    task_id: int | None = None,
    ref: str = "",
    task_mode: str = "",
    active_agent: str = "",
    current_node: str = "",
    cursor: dict[str, Any] | None = None,
    deadline: dt.datetime | None = None,
    token_budget: int | None = None,
    cost_budget: Decimal | None = None,
) -> Run:
    with transaction.atomic():
        if not Session.objects.filter(project=project, pk=session_id).exists():
            raise NotFoundError(f"Session {session_id} does not exist.")
        if task_id is not None and not Task.objects.filter(project=project, pk=task_id).exists():
            raise NotFoundError(f"Task {task_id} does not exist.")
        # A `ref` the project has already: 409 already_exists with that run's id.
        run = create_with_ref(Run, lambda: Run.objects.create(
            project=project,
            session_id=session_id,
            task_id=task_id,
            ref=ref,
            task_mode=task_mode,
            active_agent=active_agent,
            current_node=current_node,
            cursor=cursor or {},
            deadline=deadline,
            token_budget=token_budget,
            cost_budget=cost_budget,
        ), project_id=project.pk, ref=ref, constraint="run_ref_unique")
        run_event_append(project=project, run_id=run.pk, kind="run.created", data={})
        return run


_WAITING = frozenset({RunStatus.WAITING_APPROVAL, RunStatus.WAITING_EXTERNAL})
_GOING_ON = frozenset({RunStatus.RUNNING, RunStatus.SUCCEEDED, *_WAITING})


def run_transition(
    *,
    project: Project | int,
    run_id: int,
    to: str,
    expected_version: int | None,
    lease_owner: LeaseOwner = UNFENCED,
    error: dict[str, Any] | None = None,
    blocked_step: str = "",
    actor: Actor | None = None,
    updates: dict[str, Any] | None = None,
    events: list[tuple[str, dict[str, Any]]] | None = None,
    failure_category: str | None = None,
) -> Run:
    """Move a run through RUN_MACHINE with a compare-and-set on its version.

    1. One conditional UPDATE (status, version, and the lease fence of runs_app.fencing: a lease holder's
       `lease_owner`, or None for a caller that holds none, which a leased run refuses; UNFENCED for a person's
       or the server's own move) from the sources RUN_MACHINE opens to the caller: its worker-only edge
       (waiting_approval -> running) only for the worker (an `actor` of kind worker). A terminal or waiting
       state releases the lease in the same UPDATE. A fenced-off write is 409 `lease_lost` whatever version
       it sent, as every other fenced door answers.
    2. In the same statement, append `events` (the caller's, in order) and then a `status.<to>` event,
       with the next gap-free seqs: the run's row is written once.
    """
    fields: dict[str, Any] = dict(updates or {})
    if error is not None:
        fields["error"] = error
    if failure_category is not None:
        if failure_category and failure_category not in FailureCategory.values:
            raise ValidationFailed(f"failure_category is one of {', '.join(FailureCategory.values)}.",
                                   code="invalid")
        fields["failure_category"] = failure_category
    if to == RunStatus.BLOCKED:
        fields["blocked_step"] = blocked_step or "unspecified"
        if "error" not in fields:
            # A new block is a person's to decide afresh: an operator's retry of an earlier one (RETRY_MARK) must
            # not make the worker resume it (jsonb `-` drops the key; only a block writes the column this way).
            fields["error"] = Func(F("error"), Value(RETRY_MARK), function="", arg_joiner=" - ",
                                   output_field=JSONField())
    elif "blocked_step" not in fields:
        fields["blocked_step"] = ""
    if to in _GOING_ON and "failure_category" not in fields:
        fields["failure_category"] = ""  # a run that goes on is not failing any more; a failed one keeps why
    if to in RUN_MACHINE.terminal or to in _WAITING:
        # A finished run holds no lease, and neither does a waiting one (DESIGN.md: "a waiting state
        # releases the lease in the same write"): whoever continues it claims it afresh.
        fields.update(lease_owner="", lease_expires_at=None)
    lease_guard = lease_fence_q(lease_owner)
    data: dict[str, Any] = {}
    if error:
        data["error"] = error
    if to == RunStatus.BLOCKED:
        data["step"] = fields["blocked_step"]
    appended = [*(events or []), (f"status.{to}", data)]
    if any(not kind or len(kind) > 64 for kind, _ in appended):
        raise ValidationFailed("An event kind is 1 to 64 characters.", code="invalid")
    fields["last_event_seq"] = F("last_event_seq") + len(appended)
    def move() -> Run:
        return cas_transition_row(
            _runs(project), pk=run_id, machine=RUN_MACHINE, to=to, expected_version=expected_version,
            extra_filter=lease_guard, updates=fields, actor=actor.kind if actor is not None else None,
            wrap=_with_events(appended),
            extra_refusal=lambda status, version: lease_lost(lease_owner, current_status=status,
                                                             current_version=version),
        )

    if to != RunStatus.WAITING_EXTERNAL:
        # One statement, atomic by itself: a refused compare-and-set wrote nothing (no event either), so a
        # caller's transaction goes on, and outside one no BEGIN/COMMIT round trips are needed.
        return move()
    # A run that starts waiting for an external result is checkpointed with the move (seed 002, section 06).
    with transaction.atomic():
        run = move()
        checkpoint = checkpoint_waiting(project=run.project_id, run=run, waits_for="an external result",
                                        pending_gate={"external": True, "cursor": run.cursor})
        if checkpoint is not None:
            run.last_checkpoint_id = checkpoint.pk
        return run


def run_bind_result(
    *, project: Project | int, run_id: int, owner: str, bound_result: dict[str, Any], clear_approval: bool,
    hand_back: bool, metrics: dict[str, Any] | None, events: list[tuple[str, dict[str, Any]]],
) -> Run:
    """The resume's binding move (worker.pipeline): the run, leased by the worker `owner`, goes back to `running`
    with `bound_result` set, in one prepared statement, as `run_transition` would move it (the same table,
    the worker's edge, the lease guard, `events` then `status.running` appended with the next seqs).

    `clear_approval`: the pending approval is answered (pending_approval = NULL). `hand_back`: the lease is
    released in the same write (the agent continues). `metrics`: figures merged into `Run.metrics`, with
    `steps` (the run's succeeded node executions) counted by the statement. A refused move takes
    `run_transition`'s path, which says why (404, 409 illegal, lease lost).
    """
    project_id = project if isinstance(project, int) else project.pk
    appended = [*events, (f"status.{RunStatus.RUNNING}", {})]
    if any(not kind or len(kind) > 64 for kind, _ in appended):
        raise ValidationFailed("An event kind is 1 to 64 characters.", code="invalid")
    now = timezone.now()
    run = fetch_instance(Run, _BIND_SQL, {
        "to": RunStatus.RUNNING, "bound": json.dumps(bound_result), "clear": clear_approval, "release": hand_back,
        "figures": None if metrics is None else json.dumps(metrics), "succeeded": NodeExecution.Status.SUCCEEDED,
        "n": len(appended), "now": now, "rid": run_id, "pid": project_id, "owner": owner,
        "sources": sorted(RUN_MACHINE.sources_of(RunStatus.RUNNING, "worker")),
        "events": events_json(appended),
    })
    if run is not None:
        return run
    updates: dict[str, Any] = {"bound_result": bound_result}
    if clear_approval:
        updates["pending_approval"] = None
    if hand_back:
        updates.update(lease_owner="", lease_expires_at=None)
    if metrics is not None:
        merged = (NodeExecution.Status.SUCCEEDED, json.dumps(metrics))
        updates["metrics"] = RawSQL(_METRICS_STEPS_SQL, merged)  # noqa: S611 - a constant statement, bound values
    return run_transition(project=project_id, run_id=run_id, to=RunStatus.RUNNING, expected_version=None,
                          lease_owner=owner, actor=Actor.for_worker(owner), updates=updates, events=events)


# The run's metrics with `figures` merged in and its succeeded node executions counted as `steps`.
_METRICS_STEPS_SQL = """metrics || jsonb_build_object('steps', (
    SELECT count(*) FROM runs_app_nodeexecution n WHERE n.run_id = runs_app_run.id AND n.status = %s)) || %s::jsonb"""
_BIND_SQL = """
WITH t AS (
UPDATE runs_app_run
   SET status = %(to)s, version = version + 1, bound_result = %(bound)s::jsonb,
       pending_approval_id = CASE WHEN %(clear)s THEN NULL ELSE pending_approval_id END,
       blocked_step = '', failure_category = '',
       lease_owner = CASE WHEN %(release)s THEN '' ELSE lease_owner END,
       lease_expires_at = CASE WHEN %(release)s THEN NULL ELSE lease_expires_at END,
       metrics = CASE WHEN %(figures)s::jsonb IS NULL THEN metrics ELSE metrics || jsonb_build_object('steps', (
           SELECT count(*) FROM runs_app_nodeexecution n WHERE n.run_id = runs_app_run.id AND n.status = %(succeeded)s
       )) || %(figures)s::jsonb END,
       last_event_seq = last_event_seq + %(n)s, updated_at = %(now)s
 WHERE id = %(rid)s AND project_id = %(pid)s AND status = ANY(%(sources)s)
   AND lease_owner = %(owner)s AND lease_expires_at > statement_timestamp()
""" + returning(Run) + """
), e AS (
    INSERT INTO runs_app_runevent (run_id, seq, kind, data, created_at)
    SELECT t.id, t.last_event_seq - %(n)s + e.ord, e.ev->>0, e.ev->1, now()
      FROM t, jsonb_array_elements(%(events)s::jsonb) WITH ORDINALITY AS e(ev, ord)
)
SELECT * FROM t
"""  # noqa: S608 - the RETURNING list is the model's columns (harness.db.returning); every value is bound


def run_reblock(
    *, project: Project | int, run_id: int, owner: str, blocked_step: str, error: dict[str, Any],
    failure_category: str = "", events: list[tuple[str, dict[str, Any]]] | None = None,
) -> None:
    """A run the worker resumed from `blocked` (a person decided what blocked it: worker.steps.load) that fails
    a check again stays blocked, at the new step: not a transition (the table has no blocked -> blocked), so
    the status is the write's condition and is not written. Its lease is released and the events (then a
    `status.blocked` one, as a block writes) appended; a lost lease refuses it (409 lease_lost)."""
    with transaction.atomic():
        updated = _runs(project).filter(
            pk=run_id, status=RunStatus.BLOCKED, lease_owner=owner, lease_expires_at__gt=Now(),
        ).update(blocked_step=blocked_step, error=error, failure_category=failure_category, lease_owner="",
                 lease_expires_at=None, version=F("version") + 1, updated_at=timezone.now())
        if not updated:
            raise ConflictError("The lease is lost.", code="lease_lost")
        run_events_append(project=project, run_id=run_id, events=[
            *(events or []), (f"status.{RunStatus.BLOCKED}", {"error": error, "step": blocked_step})])


def events_json(events: list[tuple[str, dict[str, Any]]]) -> str:
    """Events (kind, data) as one JSON array of [kind, data] pairs, the parameter the statements that append them
    unnest with `jsonb_array_elements(...) WITH ORDINALITY` (`e.ev->>0` the kind, `e.ev->1` the data).

    One `json.dumps` and one text parameter: two `text[]` parameters (the kinds, each event's JSON) made psycopg
    escape every element with a regular expression, about 170 substitutions per resume (bench/README.md)."""
    return json.dumps([[kind, data or {}] for kind, data in events])


def _with_events(events: list[tuple[str, dict[str, Any]]]) -> Callable[[str, list[Any]], tuple[str, list[Any]]]:
    """Wrap a run's `UPDATE ... RETURNING` (which moved `last_event_seq` on by len(events)) in a statement that
    also inserts the events with the seqs it reserved, and answers the run's row."""
    def wrap(update: str, params: list[Any]) -> tuple[str, list[Any]]:
        # `update` is the statement Django compiled, its values bound in `params`: nothing is interpolated.
        return (f"WITH t AS ({update}), e AS ({_TRANSITION_EVENTS_SQL}) SELECT * FROM t",  # noqa: S608
                [*params, len(events), events_json(events)])
    return wrap


_TRANSITION_EVENTS_SQL = """
    INSERT INTO runs_app_runevent (run_id, seq, kind, data, created_at)
    SELECT t.id, t.last_event_seq - %s + e.ord, e.ev->>0, e.ev->1, now()
      FROM t, jsonb_array_elements(%s::jsonb) WITH ORDINALITY AS e(ev, ord)
"""


def run_claim(*, project: Project | int, run_id: int, owner: str, lease_seconds: int) -> Run:
    """Take the run's lease if it is free, expired, or already ours. Of racing claimers one wins.

    One conditional UPDATE decides; on PostgreSQL it returns the claimed row, so a claim is a single
    statement. Only a refused claim reads the row again, to say who holds it.
    """
    return _run_claim(project, run_id, owner=owner, lease_seconds=lease_seconds, count_attempt=False)


def run_claim_attempt(*, project: Project | int, run_id: int, owner: str, lease_seconds: int) -> Run:
    """`run_claim` for a resume attempt: the same claim, and `metrics.attempts` + 1 in the same write.

    On PostgreSQL the claim and the count are one statement, so an attempt is counted exactly when the
    lease is taken (a refused claim counts nothing).
    """
    return _run_claim(project, run_id, owner=owner, lease_seconds=lease_seconds, count_attempt=True)


def _run_claim(project: Project | int, run_id: int, *, owner: str, lease_seconds: int, count_attempt: bool) -> Run:
    if not owner or len(owner) > 200:
        raise ValidationFailed("A lease needs an owner of 1 to 200 characters.", code="invalid")
    if not 1 <= lease_seconds <= 3600:
        raise ValidationFailed("lease_seconds must be between 1 and 3600.", code="invalid")
    project_id = project if isinstance(project, int) else project.pk
    claimed = fetch_instance(Run, _CLAIM_ATTEMPT_SQL if count_attempt else _CLAIM_SQL, {
        "owner": owner, "lease": dt.timedelta(seconds=lease_seconds), "rid": run_id, "pid": project_id,
        "terminal": list(RUN_MACHINE.terminal),
    })
    if claimed is not None:
        return claimed
    run = _runs(project_id).filter(pk=run_id).first()
    if run is None:
        raise NotFoundError(f"Run {run_id} does not exist.")
    if run.status in RUN_MACHINE.terminal:
        raise ConflictError(
            "A finished run cannot be claimed.", code="run_finished",
            current_status=run.status, current_version=run.version,
        )
    # Read after the refused claim: a lease released in between has no expiry left to name.
    until = f" until {run.lease_expires_at.isoformat()}" if run.lease_expires_at is not None else ""
    raise ConflictError(
        f"The run is leased by {run.lease_owner}{until}.",
        code="lease_held",
        current_status=run.status,
        current_version=run.version,
        lease_owner=run.lease_owner,
    )


# Every lease time is the database's clock (DESIGN.md: "Lease times are the database's clock, never a process's"):
# a claim, a heartbeat and the guards compare and set `lease_expires_at` against statement_timestamp(), so a
# worker whose clock runs fast cannot take a live lease, nor one whose clock runs slow keep an expired one.
_CLAIM_SQL = """
UPDATE runs_app_run
   SET lease_owner = %(owner)s, lease_expires_at = statement_timestamp() + %(lease)s, version = version + 1,
       updated_at = statement_timestamp()
 WHERE id = %(rid)s AND project_id = %(pid)s AND status <> ALL(%(terminal)s)
   AND (lease_owner = '' OR lease_expires_at <= statement_timestamp() OR lease_owner = %(owner)s)
""" + returning(Run) + """
"""
_CLAIM_ATTEMPT_SQL = _CLAIM_SQL.replace(
    "updated_at = statement_timestamp()",
    "updated_at = statement_timestamp(),\n       metrics = jsonb_set(metrics, '{attempts}', "
    "to_jsonb(COALESCE((metrics->>'attempts')::numeric::bigint, 0) + 1))",
)


def run_heartbeat(*, project: Project | int, run_id: int, owner: str, lease_seconds: int) -> Run:
    """Extend a lease we still hold; once it is lost (expired or taken) this fails."""
    # One statement: the renewed row comes back with the write; only a lost lease reads it again.
    renewed = fetch_instance(Run, _HEARTBEAT_SQL, {
        "lease": dt.timedelta(seconds=lease_seconds), "rid": run_id, "owner": owner,
        "pid": project if isinstance(project, int) else project.pk,
    })
    if renewed is not None:
        return renewed
    run = _runs(project).filter(pk=run_id).first()
    if run is None:
        raise NotFoundError(f"Run {run_id} does not exist.")
    raise ConflictError(
        "The lease is lost.", code="lease_lost", current_status=run.status, current_version=run.version
    )


_HEARTBEAT_SQL = """
UPDATE runs_app_run SET lease_expires_at = statement_timestamp() + %(lease)s, updated_at = statement_timestamp()
 WHERE id = %(rid)s AND project_id = %(pid)s AND lease_owner = %(owner)s AND lease_expires_at > statement_timestamp()
""" + returning(Run) + """
"""


def run_release(*, project: Project | int, run_id: int, owner: str) -> bool:
    """Give the lease up if `owner` holds it; whether it did (a lease taken over meanwhile is not ours to free)."""
    # Hand-written: compiling the ORM update was most of a release's CPU on the claim/release path.
    with prepared_cursor() as cursor:
        cursor.execute(_RELEASE_SQL, {"rid": run_id, "owner": owner,
                                      "pid": project if isinstance(project, int) else project.pk})
        released: int = cursor.rowcount
    return released > 0


_RELEASE_SQL = """
UPDATE runs_app_run SET lease_owner = '', lease_expires_at = NULL, version = version + 1,
       updated_at = statement_timestamp()
 WHERE id = %(rid)s AND project_id = %(pid)s AND lease_owner = %(owner)s
"""


def run_metrics_merge(
    *, project: Project | int, run_id: int, metrics: dict[str, Any], increment: dict[str, int] | None = None
) -> dict[str, Any]:
    """Merge keys into `Run.metrics` (and add to counters); returns the merged metrics."""
    if not increment:
        # A plain merge is one statement: jsonb `||` merges top-level keys as the dict merge below does.
        with prepared_cursor() as cursor:
            cursor.execute(_METRICS_MERGE_SQL, {"metrics": json.dumps(metrics), "now": timezone.now(), "rid": run_id,
                                                "pid": project if isinstance(project, int) else project.pk})
            row = cursor.fetchone()
        if row is None:
            raise NotFoundError(f"Run {run_id} does not exist.")
        return row[0] if isinstance(row[0], dict) else json.loads(row[0])
    with transaction.atomic():
        current = _runs(project).select_for_update().filter(pk=run_id).values_list("metrics", flat=True).first()
        if current is None:
            raise NotFoundError(f"Run {run_id} does not exist.")
        merged = {**(current or {}), **metrics}
        for key, amount in (increment or {}).items():
            merged[key] = int(merged.get(key) or 0) + amount
        _runs(project).filter(pk=run_id).update(metrics=merged, updated_at=timezone.now())
        return merged


_METRICS_MERGE_SQL = """
UPDATE runs_app_run SET metrics = metrics || %(metrics)s::jsonb, updated_at = %(now)s
 WHERE id = %(rid)s AND project_id = %(pid)s
RETURNING metrics
"""


def run_count_start(
    *, run_id: int, owner: str, statuses: tuple[str, ...], blocked_steps: tuple[str, ...] = ()
) -> Run | None:
    """Count one resume start (`metrics.starts` + 1) unless the run is not in `statuses` (a blocked run:
    blocked at one of `blocked_steps`, a block a person decides and the resume then binds, or one an operator
    retries: RETRY_MARK in its error) or another
    owner's lease on it is live; return the run (project, status, version, lease, metrics) or None.

    The resume worker knows only the run's id here: this runs before the run is loaded, so that a
    start that dies while loading is still counted. It is one conditional UPDATE.
    """
    return fetch_instance(Run, _COUNT_START_SQL, {"rid": run_id, "owner": owner, "statuses": list(statuses),
                                                  "blocked": RunStatus.BLOCKED, "steps": list(blocked_steps),
                                                  "retry": RETRY_MARK})


_COUNT_START_SQL = """
UPDATE runs_app_run
   SET metrics = jsonb_set(metrics, '{starts}', to_jsonb(COALESCE((metrics->>'starts')::numeric::bigint, 0) + 1)),
       updated_at = statement_timestamp()
 WHERE id = %(rid)s AND status = ANY(%(statuses)s)
   AND (status <> %(blocked)s OR blocked_step = ANY(%(steps)s) OR (error -> %(retry)s) IS NOT NULL)
   AND NOT (lease_owner <> '' AND lease_owner <> %(owner)s AND lease_expires_at IS NOT NULL
            AND lease_expires_at > statement_timestamp())
RETURNING id, project_id, status, version, lease_owner, lease_expires_at, metrics
"""


def run_set_current_node(
    *, project: Project | int, run_id: int, owner: str, node: str, cursor: dict[str, Any] | None = None
) -> None:
    """Record the node the lease holder is working on (and its cursor, when given); a lost lease refuses it."""
    fields: dict[str, Any] = {"current_node": node, "updated_at": timezone.now()}
    if cursor is not None:
        fields["cursor"] = cursor
    updated = _runs(project).filter(pk=run_id, lease_owner=owner, lease_expires_at__gt=Now()).update(**fields)
    if not updated:
        raise ConflictError("The lease is lost.", code="lease_lost")


def run_record_usage(*, project: Project | int, run_id: int, tokens: int = 0, cost: Decimal = Decimal(0)) -> None:
    _runs(project).filter(pk=run_id).update(
        tokens_used=F("tokens_used") + tokens, cost_used=F("cost_used") + cost, updated_at=timezone.now()
    )


MAX_TOKENS_PER_CALL = 10**12
MAX_COST_PER_CALL = Decimal("99999999.9999")  # cost_used's 12 digits, 4 after the point
_MAX_TOKENS_USED, _MAX_COST_USED = 2**63 - 1, MAX_COST_PER_CALL  # what the columns hold: a sum past them is refused


def run_usage_report(
    *, project: Project | int, run_id: int, tokens: int, cost: Decimal, model: str = "", call_id: str = "",
    lease_owner: LeaseOwner = UNFENCED,
) -> Run:
    """Add one model call's tokens and cost to the run; a run that reaches a limit is stopped right there.

    1. One statement: `tokens_used` and `cost_used` advance by the call's (an addition in the UPDATE, so
       concurrent reports never lose one) and a `usage.reported` event is appended with the next seq; the
       run's row comes back. A finished run takes no report (409 run_finished); it is fenced as every lease
       holder's write (runs_app.fencing: 409 lease_lost).
    2. If the run has now reached its token or cost budget, or is past its deadline (runs_app.limits), and
       can be blocked, it is blocked at `budget` or `deadline` (a transition of its own), so its next model
       or tool call is refused: the answer shows the blocked run.
    """
    if not 0 <= tokens <= MAX_TOKENS_PER_CALL:
        raise ValidationFailed(f"tokens is 0 to {MAX_TOKENS_PER_CALL}.", code="invalid")
    cost = Decimal(cost)
    if not Decimal(0) <= cost <= MAX_COST_PER_CALL:
        raise ValidationFailed(f"cost is 0 to {MAX_COST_PER_CALL}.", code="invalid")
    project_id = project if isinstance(project, int) else project.pk
    now = timezone.now()
    data = {"tokens": tokens, "cost": str(cost), **({"model": model} if model else {}),
            **({"call_id": call_id} if call_id else {})}
    run = fetch_instance(Run, _USAGE_SQL, {
        "tokens": tokens, "cost": cost, "now": now, "rid": run_id, "pid": project_id, **lease_fence_params(lease_owner),
        "terminal": list(RUN_MACHINE.terminal), "data": json.dumps(data), "max_tokens": _MAX_TOKENS_USED,
        "max_cost": _MAX_COST_USED,
    })
    if run is None:
        current = _runs(project_id).filter(pk=run_id).values("status", "version", "tokens_used", "cost_used").first()
        if current is None:
            raise NotFoundError(f"Run {run_id} does not exist.")
        if current["status"] in RUN_MACHINE.terminal:
            raise ConflictError("A finished run takes no usage report.", code="run_finished",
                                current_status=current["status"], current_version=current["version"])
        if current["tokens_used"] > _MAX_TOKENS_USED - tokens or current["cost_used"] > _MAX_COST_USED - cost:
            raise ValidationFailed("The run's totals cannot hold this report.", code="usage_overflow")
        raise lease_lost(lease_owner, current_status=current["status"], current_version=current["version"])
    exceeded = limit_exceeded(run, now=now)
    if exceeded is not None and RUN_MACHINE.can(run.status, RunStatus.BLOCKED):
        run = run_transition(
            project=project_id, run_id=run_id, to=RunStatus.BLOCKED, expected_version=run.version,
            blocked_step=exceeded.step, failure_category=exceeded.category,
            error={"step": exceeded.step, "reason": exceeded.reason, "category": exceeded.category},
            updates={"lease_owner": "", "lease_expires_at": None},
        )
    return run


_USAGE_SQL = """
WITH r AS (
    UPDATE runs_app_run
       SET tokens_used = tokens_used + %(tokens)s, cost_used = cost_used + %(cost)s,
           last_event_seq = last_event_seq + 1, updated_at = %(now)s
     WHERE id = %(rid)s AND project_id = %(pid)s AND status <> ALL(%(terminal)s)
       AND """ + lease_fence_sql() + """
       AND tokens_used <= %(max_tokens)s - %(tokens)s AND cost_used <= %(max_cost)s - %(cost)s
    """ + returning(Run) + """
), e AS (
    INSERT INTO runs_app_runevent (run_id, seq, kind, data, created_at)
    SELECT r.id, r.last_event_seq, 'usage.reported', %(data)s::jsonb, now() FROM r
)
SELECT * FROM r
"""  # noqa: S608 - the RETURNING list is the model's columns (harness.db.returning); every value is bound


# --- run events ----------------------------------------------------------------------------

_EVENT_SQL = f"""
WITH bumped AS (
    UPDATE runs_app_run SET last_event_seq = last_event_seq + 1
     WHERE id = %(rid)s AND project_id = %(pid)s AND {lease_fence_sql()}
 RETURNING last_event_seq
)
INSERT INTO runs_app_runevent (run_id, seq, kind, data, created_at)
SELECT %(rid)s, bumped.last_event_seq, %(kind)s, %(data)s::jsonb, now() FROM bumped
RETURNING id, seq, created_at
"""  # noqa: S608 - the text put in is runs_app.fencing's own SQL; every value is a bound parameter


# The API's reply to an event append (runs_app.api.EventOutSerializer), as a claimed key records it.
_EVENT_REPLY = f"""
SELECT jsonb_build_object('id', ins.id, 'run', ins.run_id, 'seq', ins.seq, 'kind', ins.kind, 'data', ins.data,
                          'created_at', ({api_time_sql("ins.created_at")})::jsonb)
  FROM ins"""  # noqa: S608 - the text put in is harness's own SQL
# The same append with the reply recorded under the request's Idempotency-Key in the same statement
# (harness.http.idempotency.Claim): a keyed event is two round trips (the token, this), and the event and its
# stored reply commit together or not at all.
_EVENT_CLAIMED_SQL = f"""
WITH bumped AS (
    UPDATE runs_app_run SET last_event_seq = last_event_seq + 1
     WHERE id = %(rid)s AND project_id = %(pid)s AND {lease_fence_sql()}
 RETURNING last_event_seq
), ins AS (
    INSERT INTO runs_app_runevent (run_id, seq, kind, data, created_at)
    SELECT %(rid)s, bumped.last_event_seq, %(kind)s, %(data)s::jsonb, now() FROM bumped
    RETURNING id, run_id, seq, kind, data, created_at
), claim AS ({claim_sql(_EVENT_REPLY)})
SELECT id, seq, created_at FROM ins
"""  # noqa: S608 - as above; every value is a bound parameter


def run_event_append(
    *, project: Project | int, run_id: int, kind: str, data: dict[str, Any] | None = None, claim: Claim | None = None,
    lease_owner: LeaseOwner = UNFENCED,
) -> RunEvent:
    """Append one event with the next gap-free seq (one statement), fenced on the lease (runs_app.fencing: an
    agent's append names its lease owner; the server's own events are UNFENCED). With the request's `claim`, the
    statement also records the reply under its key, or raises KeyTaken (harness.http.idempotency) and writes nothing.
    A fenced-off append writes nothing (409 lease_lost)."""
    project_id = project if isinstance(project, int) else project.pk
    payload = data or {}
    if not kind or len(kind) > 64:
        raise ValidationFailed("An event kind is 1 to 64 characters.", code="invalid")
    params: dict[str, Any] = {"rid": run_id, "pid": project_id, "kind": kind, "data": json.dumps(payload),
                              **lease_fence_params(lease_owner)}
    # One statement is atomic by itself: no savepoint round trips when called inside a transaction.
    with prepared_cursor() as cursor:
        if claim is None:
            cursor.execute(_EVENT_SQL, params)
        else:
            execute_claimed(cursor, _EVENT_CLAIMED_SQL, {**params, **claim_params(claim)}, claim)
        row = cursor.fetchone()
    if row is None:
        current = _runs(project_id).filter(pk=run_id).values("status", "version").first()
        if current is None:
            raise NotFoundError(f"Run {run_id} does not exist.")
        raise lease_lost(lease_owner, current_status=current["status"], current_version=current["version"])
    return RunEvent(id=row[0], run_id=run_id, seq=row[1], kind=kind, data=payload, created_at=row[2])


_EVENTS_SQL = """
WITH bumped AS (
    UPDATE runs_app_run SET last_event_seq = last_event_seq + %(n)s
     WHERE id = %(rid)s AND project_id = %(pid)s
 RETURNING last_event_seq - %(n)s AS base
)
INSERT INTO runs_app_runevent (run_id, seq, kind, data, created_at)
SELECT %(rid)s, bumped.base + e.ord, e.ev->>0, e.ev->1, now()
  FROM bumped, jsonb_array_elements(%(events)s::jsonb) WITH ORDINALITY AS e(ev, ord)
RETURNING id, seq, created_at
"""


def run_events_append(
    *, project: Project | int, run_id: int, events: list[tuple[str, dict[str, Any]]]
) -> list[RunEvent]:
    """Append several events in order with the next gap-free seqs (one statement).

    The run's `last_event_seq` moves by n once and the n rows take the seqs after it, so a batch
    is one write where n `run_event_append` calls would be n.
    """
    project_id = project if isinstance(project, int) else project.pk
    if not events:
        return []
    if any(not kind or len(kind) > 64 for kind, _ in events):
        raise ValidationFailed("An event kind is 1 to 64 characters.", code="invalid")
    with prepared_cursor() as cursor:
        cursor.execute(_EVENTS_SQL, {
            "rid": run_id, "pid": project_id, "n": len(events), "events": events_json(events),
        })
        rows = sorted(cursor.fetchall(), key=lambda row: row[1])
    if not rows:
        raise NotFoundError(f"Run {run_id} does not exist.")
    return [RunEvent(id=pk, run_id=run_id, seq=seq, kind=kind, data=data or {}, created_at=created)
            for (pk, seq, created), (kind, data) in zip(rows, events, strict=True)]


# --- node executions -----------------------------------------------------------------------


def node_execution_start(*, run: Run, node: str) -> NodeExecution:
    attempt = NodeExecution.objects.filter(run=run, node=node).count() + 1
    return NodeExecution.objects.create(run=run, task_id=run.task_id, node=node, attempt=attempt)


def node_execution_finish(
    *, execution: NodeExecution, ok: bool, output: Any = None, error: str = "", checkpoint: Checkpoint | None = None,
    failure_category: str = "",
) -> None:
    NodeExecution.objects.filter(pk=execution.pk).update(
        status=NodeExecution.Status.SUCCEEDED if ok else NodeExecution.Status.FAILED,
        output=output, error=error, checkpoint=checkpoint, finished_at=timezone.now(),
        failure_category="" if ok else failure_category,
    )
