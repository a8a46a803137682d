"""Read queries on runs and what they own, for the API and the console alike.

Every read a door makes takes `project_ids`, the ids of the projects the caller may see (the API's
`harness.http.api_base.scope`, the console's `harness.http.views.project_ids`), and starts from the model's
`for_projects`: another project's object is simply absent (NotFoundError: a 404 at every door). List
filters are FilterSets (runs_app.filters) the views apply to what these return. Each list is a fixed
number of queries whatever its length (select_related, no per-row lookups).
"""

import datetime as dt
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.db import connection
from django.db.models import Count, Model, Q, QuerySet, Sum, TextField, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from harness.db import (
    EPOCH,
    api_time_sql,
    columns,
    fetch_instance,
    fetch_json_text,
    id_list,
    id_list_sql,
    json_rows,
)
from harness.http.auth import CALLER_HOLDS, CALLER_SQL, TokenCheck, caller_params
from harness.http.errors import NotFoundError
from harness.models import Project
from harness.tenancy import EndUserScope
from runs_app.models import (
    ApprovalRequest,
    ApprovalStatus,
    Checkpoint,
    ExternalEffect,
    FailureCategory,
    Handoff,
    NodeExecution,
    Run,
    RunEvent,
    RunStatus,
    Task,
    TaskStateVersion,
)
from runs_app.resume import RESUME_CHECKS, StepState
from sessions_app.models import SessionItem
from sessions_app.trimming import APPROVAL_PAGE_ITEMS

MAX_LINEAGE = 1000

# --- runs and events -----------------------------------------------------------------------


def run_list(*, project_ids: Sequence[int], end_user: EndUserScope | None = None) -> QuerySet[Run]:
    """The caller's runs: of its projects and, for a token narrowed to one end user, those of that user's
    sessions only (harness.tenancy.EndUserScope)."""
    runs = Run.objects.for_projects(project_ids).select_related("project")
    return end_user.hanging_off(runs, "session") if end_user is not None else runs


def run_get(*, project_ids: Sequence[int], run_id: int, end_user: EndUserScope | None = None) -> Run:
    run = run_list(project_ids=project_ids, end_user=end_user).filter(pk=run_id).first()
    if run is None:
        raise NotFoundError(f"Run {run_id} does not exist.")
    return run


def run_reachable(*, project_ids: Sequence[int], run_id: int, end_user: EndUserScope | None) -> None:
    """NotFoundError unless a narrowed caller's end user owns the run's session (nothing to check for any other
    caller: the operation's own statement scopes it to the project). A door that writes to a run checks this
    first; the run's session and that session's end user never change, so the answer holds for the request."""
    if end_user is not None and not run_list(project_ids=project_ids, end_user=end_user).filter(
            pk=run_id).exists():
        raise NotFoundError(f"Run {run_id} does not exist.")


def run_inspect(*, project_ids: Sequence[int], run_id: int) -> Run:
    """A run with what its inspector page shows beside it (session, task, latest checkpoint, approval)."""
    run = (
        Run.objects.for_projects(project_ids).filter(pk=run_id)
        .select_related("project", "session", "task", "last_checkpoint", "pending_approval")
        .first()
    )
    if run is None:
        raise NotFoundError(f"Run {run_id} does not exist.")
    return run


def run_event_list(*, project_ids: Sequence[int], run_id: int) -> QuerySet[RunEvent]:
    run = run_get(project_ids=project_ids, run_id=run_id)
    return RunEvent.objects.filter(run=run)

# --- checkpoints ---------------------------------------------------------------------------


def checkpoint_list(*, project_ids: Sequence[int]) -> QuerySet[Checkpoint]:
    return Checkpoint.objects.for_projects(project_ids)


def checkpoint_get(*, project_ids: Sequence[int], checkpoint_id: int) -> Checkpoint:
    checkpoint = checkpoint_list(project_ids=project_ids).filter(pk=checkpoint_id).first()
    if checkpoint is None:
        raise NotFoundError(f"Checkpoint {checkpoint_id} does not exist.")
    return checkpoint


def checkpoint_detail(*, project_ids: Sequence[int], checkpoint_id: int) -> Checkpoint:
    """A checkpoint with its owners, parent and approval, for its page and the diff."""
    checkpoint = (
        checkpoint_list(project_ids=project_ids).filter(pk=checkpoint_id)
        .select_related("project", "run", "task", "parent", "approval")
        .first()
    )
    if checkpoint is None:
        raise NotFoundError(f"Checkpoint {checkpoint_id} does not exist.")
    return checkpoint


def checkpoint_children(*, project_ids: Sequence[int], checkpoint: Checkpoint) -> QuerySet[Checkpoint]:
    """The checkpoints whose parent is `checkpoint`, in any run of the project: its successor and its forks."""
    return (Checkpoint.objects.for_projects(project_ids).filter(parent=checkpoint)
            .only("id", "label", "run_id", "task_id", "depth", "created_at").order_by("id")[:100])


def checkpoint_latest(*, project: Project | int, run_id: int) -> Checkpoint | None:
    """The run's newest checkpoint through its `last_checkpoint` pointer: two primary-key lookups, in one
    statement, however long the run's history (None for a run with no checkpoint yet)."""
    project_id = project if isinstance(project, int) else project.pk
    # The row straight into the model (what raw() does, minus its per-query column mapping: a third of
    # this read's CPU).
    checkpoint = fetch_instance(Checkpoint, _LATEST_CHECKPOINT_SQL.format(columns=columns(Checkpoint, "c")),
                                {"run": run_id, "project": project_id})
    if checkpoint is None and not Run.objects.filter(project_id=project_id, pk=run_id).exists():
        raise NotFoundError(f"Run {run_id} does not exist.")
    return checkpoint


_LATEST_CHECKPOINT_SQL = """
SELECT {columns} FROM runs_app_run r JOIN runs_app_checkpoint c ON c.id = r.last_checkpoint_id
 WHERE r.id = %(run)s AND r.project_id = %(project)s
"""


# The API's checkpoint fields (runs_app.api.CheckpointOutSerializer) in its order, each with its column.
LINEAGE_FIELDS = (
    ("id", "id"), ("run", "run_id"), ("task", "task_id"), ("parent", "parent_id"), ("depth", "depth"),
    ("label", "label"), ("cursor", "cursor"), ("state", "state"), ("artifact_fingerprints", "artifact_fingerprints"),
    ("authority_ref", "authority_ref"), ("pending_gate", "pending_gate"), ("approval", "approval_id"),
    ("resume_policy", "resume_policy"), ("schema_version", "schema_version"), ("content_hash", "content_hash"),
)

def _json_member(name: str, column: str, kind: str) -> str:
    value = {"int": f"c.{column}::text", "text": f"to_json(c.{column})::text", "json": f"c.{column}::text"}[kind]
    return f"""'"{name}":' || coalesce({value}, 'null')"""


_LINEAGE_KINDS = {"label": "text", "authority_ref": "text", "resume_policy": "text", "content_hash": "text",
                  "cursor": "json", "state": "json", "artifact_fingerprints": "json", "pending_gate": "json"}

# The walk up the parents (primary key) and the rows in one statement, each row written as the JSON
# object the API returns (the json columns as their text, concatenated: aggregating with json_agg and
# json_build_object cost the server three times as much) so that one json.loads decodes the chain. The
# columns are json, not jsonb (harness.fields.TextJSONField, migration 0024): a json value's text is a copy,
# where jsonb's is written out again (-28% of this statement's server time for 1,000 ~1 KB states).
# Building 1,000 model instances and decoding their 4,000 JSON values one by one cost three times
# the CPU. The time comes apart, as epoch microseconds: parsing 1,000 timestamps was another third.
# The start must be in the caller's projects and the walk stays in its project: no separate lookup of
# the start first. S608: the text put in is this module's constant column list (LINEAGE_FIELDS); every
# value is a bound parameter.
_LINEAGE_WALK = f"""
WITH RECURSIVE {CALLER_SQL}, chain(id, parent_id, project_id, hops) AS (
    SELECT id, parent_id, project_id, 0 FROM runs_app_checkpoint
     WHERE id = %(start)s AND project_id = ANY({id_list_sql('pids')}) AND {CALLER_HOLDS}
    UNION ALL
    SELECT c.id, c.parent_id, c.project_id, chain.hops + 1
      FROM runs_app_checkpoint c JOIN chain ON c.id = chain.parent_id AND c.project_id = chain.project_id
     WHERE chain.hops < %(hops)s
)
"""  # noqa: S608 - harness.http.auth's own SQL; every value is a bound parameter
_LINEAGE_MEMBERS = " || ',' || ".join(
    _json_member(name, column, _LINEAGE_KINDS.get(name, "int")) for name, column in LINEAGE_FIELDS)
_LINEAGE_SQL = _LINEAGE_WALK + f"""
SELECT '{{' || {_LINEAGE_MEMBERS} || '}}', (extract(epoch FROM c.created_at) * 1000000)::bigint
  FROM chain JOIN runs_app_checkpoint c ON c.id = chain.id
 ORDER BY c.depth DESC, c.id DESC
"""  # noqa: S608
# For the API: the whole answer as one JSON text, `created_at` rendered as DRF renders it, which the view sends
# as it comes (no decode, no encode in Python: issue 14). The array's brackets are pieces of the aggregate (the
# start's object begins with '[', a last piece ']' has no separator before it) rather than concatenated around
# the megabyte-long result, which copied it twice more (9% of the statement's server time). The pieces are in
# the walk's order (`hops`), newest first: a child's depth is its parent's plus one, so it is the order of
# depth DESC. NULL when the start is not found (no chain, no closing piece).
_LINEAGE_JSON_SQL = _LINEAGE_WALK + """
SELECT string_agg(piece, separator ORDER BY hops) FROM (
    SELECT CASE WHEN chain.hops = 0 THEN '[{{' ELSE '{{' END || {members} || ',"created_at":' || {created} || '}}'
           AS piece, ',' AS separator, chain.hops
      FROM chain JOIN runs_app_checkpoint c ON c.id = chain.id
    UNION ALL
    SELECT ']', '', 2147483647 WHERE EXISTS (SELECT 1 FROM chain)
) pieces
""".format(members=_LINEAGE_MEMBERS, created=api_time_sql("c.created_at"))  # noqa: S608 - the module's own SQL


def checkpoint_lineage(*, project_ids: Sequence[int], checkpoint_id: int) -> list[dict[str, Any]]:
    """The checkpoint and its ancestors, newest first (capped at MAX_LINEAGE), as dicts shaped like the
    API's checkpoints (`created_at` a datetime)."""
    with connection.cursor() as cursor:
        cursor.execute(_LINEAGE_SQL, _lineage_params(project_ids, checkpoint_id, None))
        rows = cursor.fetchall()
    if not rows:
        raise NotFoundError(f"Checkpoint {checkpoint_id} does not exist.")
    return json_rows(rows)


def _lineage_params(project_ids: Sequence[int], checkpoint_id: int, caller: TokenCheck | None) -> dict[str, Any]:
    return {"start": checkpoint_id, "pids": id_list(project_ids), "hops": MAX_LINEAGE - 1, **caller_params(caller)}


def checkpoint_lineage_json(*, project_ids: Sequence[int], checkpoint_id: int, caller: TokenCheck | None = None
                            ) -> bytes:
    """`checkpoint_lineage` as the API's JSON text (created_at rendered), written by PostgreSQL. With a `caller` (the
    plain path's harness.http.auth.TokenCheck), NotFoundError also when the caller's token does not hold."""
    body = fetch_json_text(_LINEAGE_JSON_SQL, _lineage_params(project_ids, checkpoint_id, caller))
    if body is None:
        raise NotFoundError(f"Checkpoint {checkpoint_id} does not exist.")
    return body


# --- approvals -----------------------------------------------------------------------------


def approval_list(*, project_ids: Sequence[int], end_user: EndUserScope | None = None
                  ) -> QuerySet[ApprovalRequest]:
    """The caller's approval requests: of its projects and, for a narrowed token, of its end user's runs only."""
    approvals = ApprovalRequest.objects.for_projects(project_ids).select_related("project", "decided_by")
    return end_user.hanging_off(approvals, "run__session") if end_user is not None else approvals


def approval_get(*, project_ids: Sequence[int], approval_id: int, end_user: EndUserScope | None = None
                 ) -> ApprovalRequest:
    approval = approval_list(project_ids=project_ids, end_user=end_user).filter(pk=approval_id).first()
    if approval is None:
        raise NotFoundError(f"Approval {approval_id} does not exist.")
    return approval


def approval_for_decision(*, project_ids: Sequence[int], approval_id: int) -> ApprovalRequest:
    """An approval with what a reviewer decides on: its run, session, latest checkpoint and task."""
    approval = (
        ApprovalRequest.objects.for_projects(project_ids).filter(pk=approval_id)
        .select_related("project", "run", "run__session", "run__last_checkpoint", "run__task", "decided_by",
                        "assigned_to")
        .first()
    )
    if approval is None:
        raise NotFoundError(f"Approval {approval_id} does not exist.")
    return approval


# --- effects and tasks ---------------------------------------------------------------------


def effect_list(*, project_ids: Sequence[int]) -> QuerySet[ExternalEffect]:
    return ExternalEffect.objects.for_projects(project_ids)


def effect_get(*, project_ids: Sequence[int], effect_id: int) -> ExternalEffect:
    effect = effect_list(project_ids=project_ids).filter(pk=effect_id).first()
    if effect is None:
        raise NotFoundError(f"Effect {effect_id} does not exist.")
    return effect


def effect_detail(*, project_ids: Sequence[int], effect_id: int) -> ExternalEffect:
    """An effect for its console page, with its run and approval (one query)."""
    effect = (ExternalEffect.objects.for_projects(project_ids).select_related("project", "run", "approval")
              .filter(pk=effect_id).first())
    if effect is None:
        raise NotFoundError(f"Effect {effect_id} does not exist.")
    return effect


def task_list(*, project_ids: Sequence[int]) -> QuerySet[Task]:
    return Task.objects.for_projects(project_ids).select_related("project")


def task_get(*, project_ids: Sequence[int], task_id: int) -> Task:
    task = task_list(project_ids=project_ids).filter(pk=task_id).first()
    if task is None:
        raise NotFoundError(f"Task {task_id} does not exist.")
    return task


# --- the console's pages ------------------------------------------------------------------

# What the resume worker re-checks before it continues (DESIGN.md "Resume"), shown to a reviewer: RESUME_CHECKS,
# runs_app.resume.ResumeStep's names and labels, the list the worker's registry must match (worker.registry);
# each step writes `resume.<key>`.


@dataclass(frozen=True)
class StepProgress:
    key: str
    text: str
    state: StepState
    reason: str


def resume_progress(trace: Sequence[RunEvent]) -> list[StepProgress]:
    """Each resume check with what the trace says about it (the latest event of each step wins)."""
    latest: dict[str, dict[str, Any]] = {}  # each step's event data: the JSON the worker wrote
    for event in trace:
        if event.kind.startswith("resume."):
            latest[event.kind.removeprefix("resume.")] = event.data or {}
    progress = []
    for key, text in RESUME_CHECKS:
        data = latest.get(key)
        state = StepState.WAITING if data is None else (StepState.PASSED if data.get("ok") else StepState.FAILED)
        progress.append(StepProgress(key, text, state, str((data or {}).get("reason", ""))))
    return progress


COUNT_CAP = 1000


def capped_count(qs: QuerySet[Model], cap: int = COUNT_CAP) -> int:
    """How many rows, counting at most `cap + 1`: a number above `cap` reads as "cap+".

    An exact total of a large list is a scan of all of it on every page view; a LIMIT'ed subquery
    stops at the cap, so the cost does not grow with the table.
    """
    return qs.order_by().values("pk")[: cap + 1].count()


def pending_approval_count(*, project_ids: Sequence[int]) -> int:
    return capped_count(ApprovalRequest.objects.for_projects(project_ids).filter(status=ApprovalStatus.PENDING))


def blocked_run_count(*, project_ids: Sequence[int]) -> int:
    return Run.objects.for_projects(project_ids).filter(status=RunStatus.BLOCKED).count()


@dataclass(frozen=True)
class FailureCount:
    category: str
    runs: int
    node_executions: int
    effects: int


def failure_counts(*, project_ids: Sequence[int]) -> list[FailureCount]:
    """How many runs, node executions and effects failed in each category (seed 000, section 10), one
    grouped query each; the categories no row has are left out."""
    def grouped(qs: QuerySet[Any]) -> dict[str, int]:
        rows = qs.exclude(failure_category="").order_by().values_list("failure_category").annotate(n=Count("pk"))
        return dict(rows)

    runs = grouped(Run.objects.for_projects(project_ids))
    nodes = grouped(NodeExecution.objects.filter(run__project_id__in=project_ids))
    effects = grouped(ExternalEffect.objects.for_projects(project_ids))
    return [FailureCount(category, runs.get(category, 0), nodes.get(category, 0), effects.get(category, 0))
            for category in FailureCategory.values
            if category in runs or category in nodes or category in effects]


def blocked_runs(*, project_ids: Sequence[int], limit: int = 20) -> list[Run]:
    """Runs a failed resume check stopped, newest first: each names its step for a person to decide."""
    return list(
        run_list(project_ids=project_ids).filter(status=RunStatus.BLOCKED).order_by("-updated_at", "-id")[:limit]
    )


# --- the approval inbox --------------------------------------------------------------------

Refine = Callable[[QuerySet[ApprovalRequest]], QuerySet[ApprovalRequest]]


def approval_inbox_unfiltered(queryset: QuerySet[ApprovalRequest]) -> QuerySet[ApprovalRequest]:
    return queryset


def approval_inbox(
    *, project_ids: Sequence[int], refine: Refine = approval_inbox_unfiltered
) -> QuerySet[ApprovalRequest]:
    """Pending approvals, oldest first (the one waiting longest is the most urgent), narrowed by
    `refine` (the page's ApprovalInboxFilter)."""
    pending = ApprovalRequest.objects.for_projects(project_ids).filter(status=ApprovalStatus.PENDING)
    return refine(pending).select_related("project", "run", "run__session", "assigned_to").order_by("created_at", "id")


INBOX_PAGE_SIZE = 50
MAX_SEEK_BRANCHES = 50  # beyond this many projects one sorted statement is cheaper than the UNION


def seek_cursor(created_at: dt.datetime, pk: int) -> str:
    """A (created_at, id) position as URL text: epoch microseconds and the id."""
    delta = created_at - EPOCH
    return f"{(delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds}.{pk}"


def parse_seek_cursor(text: str | None) -> tuple[dt.datetime, int] | None:
    match = re.fullmatch(r"(-?\d{1,20})\.(\d{1,20})", text or "")
    if match is None:
        return None
    return EPOCH + dt.timedelta(microseconds=int(match[1])), int(match[2])


Row = TypeVar("Row", bound=Model)


def seek_window(rows: list[Row], *, size: int, backwards: bool, came_from: tuple[dt.datetime, int] | None,
                position: Callable[[Row], tuple[dt.datetime, int]]) -> tuple[list[Row], str | None, str | None]:
    """A seek's rows (`size` + 1 fetched from the cursor `came_from`, walking back when `backwards`) as a
    window in the list's order, with the cursor onward along that order and the one back towards its
    start (None: nothing there). The extra row says there is more in the direction of travel; a cursor,
    that there is something on the side it came from."""
    more = len(rows) > size
    rows = rows[:size]
    if backwards:
        rows.reverse()
    first = seek_cursor(*position(rows[0])) if rows else None
    last = seek_cursor(*position(rows[-1])) if rows else None
    has_back = more if backwards else came_from is not None
    has_onward = came_from is not None if backwards else more
    return rows, last if has_onward else None, first if has_back else None


@dataclass(frozen=True)
class InboxPage:
    """A window of the inbox with the cursors of its neighbours (None: nothing there)."""

    object_list: list[ApprovalRequest]
    newer: str | None
    older: str | None


def _seek(qs: QuerySet[ApprovalRequest], cursor: tuple[dt.datetime, int] | None, backwards: bool
          ) -> QuerySet[ApprovalRequest]:
    if cursor is not None:
        op = "<" if backwards else ">"
        # A row comparison the ORM cannot spell. S610: the operator is one of two literals, the values bound.
        qs = qs.extra(  # noqa: S610
            where=[f"(runs_app_approvalrequest.created_at, runs_app_approvalrequest.id) {op} (%s, %s)"],
            params=list(cursor))
    return qs.order_by(*(("-created_at", "-id") if backwards else ("created_at", "id")))


def inbox_page(
    *, project_ids: Sequence[int], refine: Refine = approval_inbox_unfiltered, after: str | None = None,
    before: str | None = None,
) -> InboxPage:
    """One window of INBOX_PAGE_SIZE pending approvals (`approval_inbox` with `refine`), by seeking.

    The list is oldest first: `after` is the next (newer) window, `before` the previous (older) one.
    1. Per project, seek in the (project, created_at, id) index of pending approvals from the cursor
       for one row more than a window (`project_id IN (a, b)` cannot be read from that index in
       time order: PostgreSQL would sort every pending approval of those projects).
    2. Merge those in one UNION statement; fetch the window's rows with their run and session.
    3. The extra row says whether there is more in the direction of travel; a cursor says there is
       something on the side it came from.
    """
    backwards = before is not None and after is None
    cursor = parse_seek_cursor(before if backwards else after)
    limit = INBOX_PAGE_SIZE + 1
    order = ("-created_at", "-id") if backwards else ("created_at", "id")
    if not project_ids or len(project_ids) > MAX_SEEK_BRANCHES:
        rows = list(_seek(approval_inbox(project_ids=project_ids, refine=refine), cursor, backwards)[:limit])
    else:
        # Each branch names its own project (not the IN list), so its row estimate is that project's.
        branches = [_seek(approval_inbox(project_ids=[p], refine=refine), cursor, backwards)
                    .values_list("id", "created_at")[:limit] for p in project_ids]
        picked = list(branches[0].union(*branches[1:], all=True).order_by(*order)[:limit]
                      if len(branches) > 1 else branches[0])
        found = approval_inbox(project_ids=project_ids, refine=refine).in_bulk([pk for pk, _ in picked])
        rows = [found[pk] for pk, _ in picked if pk in found]
    rows, newer, older = seek_window(rows, size=INBOX_PAGE_SIZE, backwards=backwards, came_from=cursor,
                                     position=lambda a: (a.created_at, a.pk))
    return InboxPage(rows, newer, older)


def inbox_agents(*, project_ids: Sequence[int]) -> list[str]:
    return list(
        Run.objects.for_projects(project_ids).filter(approvals__status=ApprovalStatus.PENDING).exclude(active_agent="")
        .values_list("active_agent", flat=True).distinct().order_by("active_agent")[:200]
    )


def session_recent_items(session_id: int, limit: int = APPROVAL_PAGE_ITEMS) -> list[SessionItem]:
    # Trimming refuses to remove these while an approval of the session is pending (sessions_app.trimming).
    items = list(SessionItem.objects.filter(session_id=session_id).order_by("-seq")[:limit])
    items.reverse()
    return items


def resume_trace(approval: ApprovalRequest, limit: int = 200) -> list[RunEvent]:
    """The run's events from this approval's decision on: the resume, step by step."""
    if approval.status == ApprovalStatus.PENDING:
        return []
    decision = (
        RunEvent.objects.filter(run_id=approval.run_id, kind=f"approval.{approval.status}", data__approval=approval.pk)
        .values_list("seq", flat=True)
        .first()
    )
    events = RunEvent.objects.filter(run_id=approval.run_id)
    if decision is not None:
        events = events.filter(seq__gte=decision)
    elif approval.decided_at is not None:
        events = events.filter(created_at__gte=approval.decided_at)
    return with_data_json(list(events.order_by("seq")[:limit]))


def with_data_json(events: Sequence[RunEvent]) -> list[RunEvent]:
    """Give each event a compact JSON rendering of its data for the page (templates print repr otherwise)."""
    for event in events:
        event.data_json = json.dumps(event.data, sort_keys=True, ensure_ascii=False, default=str)  # type: ignore[attr-defined]
    return list(events)


def resume_in_progress(run: Run) -> bool:
    """Whether the decision page should keep polling: the worker has not finished with the run yet."""
    return run.status == RunStatus.WAITING_APPROVAL or bool(run.lease_owner)


def run_events(run: Run) -> QuerySet[RunEvent]:
    return RunEvent.objects.filter(run=run).order_by("-seq")


def run_node_executions(run: Run, limit: int = 200) -> list[NodeExecution]:
    return list(NodeExecution.objects.filter(run=run).order_by("-started_at", "-id")[:limit])


def run_effects(run: Run, limit: int = 200) -> list[ExternalEffect]:
    return list(ExternalEffect.objects.filter(run=run).order_by("-created_at", "-id")[:limit])


def run_approvals(run: Run, limit: int = 200) -> list[ApprovalRequest]:
    return list(ApprovalRequest.objects.filter(run=run).select_related("decided_by").order_by("-created_at")[:limit])


# --- lineage -------------------------------------------------------------------------------

# How many checkpoints the lineage page draws: the newest ones (the head and its recent ancestors
# and siblings); older ones are a link away, so the page costs the same however long the history.
LINEAGE_WINDOW = 200
_DX, _DY, _PAD = 150, 64, 30


@dataclass
class LineageNode:
    checkpoint: Checkpoint
    x: int = 0
    y: int = 0
    children: list["LineageNode"] = field(default_factory=list)
    is_fork: bool = False
    parent_x: int | None = None
    parent_y: int | None = None


@dataclass
class Lineage:
    nodes: list[LineageNode]
    width: int
    height: int
    truncated: bool
    older: int | None = None  # the id to page back from when older checkpoints are not drawn

    @property
    def edges(self) -> list[LineageNode]:
        return [n for n in self.nodes if n.parent_x is not None]


def lineage_checkpoints(
    *, project_ids: Sequence[int], run: Run | None = None, task: Task | None = None, before: int | None = None
) -> QuerySet[Checkpoint]:
    """The owner's checkpoints newest first (served by the (run, -id) and (task, -id) indexes);
    `before`: only those older than that id, for the page's "older" link."""
    qs = Checkpoint.objects.for_projects(project_ids)
    qs = qs.filter(run=run) if run is not None else qs.filter(task=task)
    if before is not None:
        qs = qs.filter(id__lt=before)
    return qs.only("id", "parent_id", "label", "depth", "created_at", "run_id", "task_id").order_by("-id")


_LINEAGE_WINDOW_SQL = """
WITH RECURSIVE up(id, parent_id, n) AS (
    SELECT c.id, c.parent_id, 1 FROM runs_app_checkpoint c
     WHERE c.id = COALESCE(%(anchor)s::bigint, (
               SELECT l.id FROM runs_app_checkpoint l WHERE l.{owner} = %(owner)s ORDER BY l.id DESC LIMIT 1))
       AND c.{owner} = %(owner)s AND c.project_id = ANY(%(projects)s)
    UNION ALL
    SELECT c.id, c.parent_id, up.n + 1 FROM runs_app_checkpoint c JOIN up ON c.id = up.parent_id
     WHERE up.n < %(size)s AND c.{owner} = %(owner)s
), top AS (
    SELECT id, parent_id, n FROM up ORDER BY n DESC LIMIT 1
), down(id) AS (
    SELECT id FROM top
    UNION ALL
    -- LATERAL with a LIMIT is not flattened into a join: each step probes the parent index for
    -- one node's children instead of hashing all of the owner's checkpoints on every step. The
    -- children in id order: without it, which siblings fill the window depended on the plan.
    SELECT k.id FROM down, LATERAL (
        SELECT c.id FROM runs_app_checkpoint c WHERE c.parent_id = down.id AND c.{owner} = %(owner)s
         ORDER BY c.id LIMIT %(size)s) AS k
)
SELECT c.id, c.run_id, c.task_id, c.parent_id, c.label, c.depth, c.created_at,
       (SELECT CASE WHEN top.n >= %(size)s THEN top.parent_id END FROM top) AS older
  FROM runs_app_checkpoint c
 WHERE c.id IN (SELECT id FROM up UNION SELECT id FROM (SELECT id FROM down LIMIT %(size)s) AS d)
 ORDER BY c.id
"""


def lineage_window(
    *, project_ids: Sequence[int], run: Run | None = None, task: Task | None = None, before: int | None = None,
    size: int | None = None,
) -> tuple[list[Checkpoint], int | None]:
    """A bounded window of the owner's checkpoint tree, anchored at its head, in one statement.

    1. Walk up from the anchor (`before`, else the run's latest-checkpoint pointer, else its newest
       checkpoint) through the parents, at most `size` steps: primary-key lookups only.
    2. Walk down from the topmost of those through the children (the parent index), at most `size`
       more, so the branches that fork inside the window are drawn too.
    3. Return the window in id order and, when the walk up stopped at `size`, the id to continue
       from for older checkpoints (None: the window reaches the root).
    The cost follows `size`, not the length of the history.
    """
    size = size or LINEAGE_WINDOW
    owner, owner_id = ("run_id", run.pk) if run is not None else ("task_id", task.pk if task else None)
    anchor = before if before is not None else (run.last_checkpoint_id if run is not None else None)
    params = {"anchor": anchor, "owner": owner_id, "projects": list(project_ids), "size": size}
    rows = list(Checkpoint.objects.raw(_LINEAGE_WINDOW_SQL.format(owner=owner), params))
    older: int | None = getattr(rows[0], "older", None) if rows else None
    return rows, older


def lineage_layout(checkpoints: Sequence[Checkpoint], *, truncated: bool = False, older: int | None = None) -> Lineage:
    """Lay the checkpoint tree out for an SVG picture: depth down, siblings across.

    1. Link each checkpoint to its parent when the parent is in the set (else it is a root).
    2. Walk the forest depth-first in id order; each leaf takes the next column, each inner node
       sits above its first child, so a fork spreads its branches side by side.
    3. Record each node's parent position so the template draws the edges.
    """
    by_id = {c.pk: LineageNode(checkpoint=c) for c in sorted(checkpoints, key=lambda c: c.pk)}
    roots: list[LineageNode] = []
    for node in by_id.values():
        parent = by_id.get(node.checkpoint.parent_id) if node.checkpoint.parent_id else None
        (parent.children if parent else roots).append(node)
    column = 0
    ordered: list[LineageNode] = []
    # An explicit stack, not recursion: a long linear chain would exceed Python's recursion limit.
    stack: list[tuple[LineageNode, int, bool]] = [(root, 0, False) for root in reversed(roots)]
    while stack:
        node, level, done = stack.pop()
        if done:
            node.x = node.children[0].x if node.children else node.x
            continue
        node.y = _PAD + level * _DY
        node.is_fork = len(node.children) > 1
        ordered.append(node)
        if not node.children:
            node.x = _PAD + column * _DX
            column += 1
            continue
        stack.append((node, level, True))
        for child in reversed(node.children):
            stack.append((child, level + 1, False))
    for node in ordered:
        for child in node.children:
            child.parent_x, child.parent_y = node.x, node.y
    depth = max((n.y for n in ordered), default=_PAD)
    return Lineage(
        nodes=ordered, width=_PAD * 2 + max(column - 1, 0) * _DX + 120, height=depth + _PAD + 20, truncated=truncated,
        older=older,
    )


# --- diff ----------------------------------------------------------------------------------

DIFF_FIELDS = (
    "cursor", "state", "artifact_fingerprints", "pending_gate", "authority_ref", "resume_policy",
    "schema_version", "label", "content_hash",
)


@dataclass(frozen=True)
class DiffLine:
    path: str
    kind: str  # added | removed | changed
    before: str
    after: str


def _flatten(value: Any, prefix: str, out: dict[str, str]) -> None:
    if isinstance(value, dict) and value:
        for key in sorted(value):
            _flatten(value[key], f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            _flatten(item, f"{prefix}[{index}]", out)
    else:
        out[prefix] = json.dumps(value, sort_keys=True, ensure_ascii=False)


def checkpoint_diff(a: Checkpoint, b: Checkpoint) -> list[DiffLine]:
    """Every leaf value that differs between two checkpoints, by its path (`state.files[2]`)."""
    left: dict[str, str] = {}
    right: dict[str, str] = {}
    for name in DIFF_FIELDS:
        _flatten(getattr(a, name), name, left)
        _flatten(getattr(b, name), name, right)
    lines = []
    for path in sorted(left.keys() | right.keys()):
        if path not in right:
            lines.append(DiffLine(path, "removed", left[path], ""))
        elif path not in left:
            lines.append(DiffLine(path, "added", "", right[path]))
        elif left[path] != right[path]:
            lines.append(DiffLine(path, "changed", left[path], right[path]))
    return lines


# --- handoffs ------------------------------------------------------------------------------


def handoff_list(*, project_ids: Sequence[int]) -> QuerySet[Handoff]:
    return Handoff.objects.for_projects(project_ids).select_related("project")


def handoff_get(*, project_ids: Sequence[int], handoff_id: int, receiver_token_id: int | None = None) -> Handoff:
    """One handoff in the caller's projects; for a handoff receiver's token (`receiver_token_id`), only the
    handoff it was issued for: any other is absent to it (404), as another project's is."""
    handoffs = handoff_list(project_ids=project_ids)
    if receiver_token_id is not None:
        handoffs = handoffs.filter(receiver_token_id=receiver_token_id)
    handoff = handoffs.select_related("origin_run", "receiver_session", "receiver_run").filter(pk=handoff_id).first()
    if handoff is None:
        raise NotFoundError(f"Handoff {handoff_id} does not exist.")
    return handoff


def run_handoffs(run: Run, limit: int = 200) -> list[Handoff]:
    """The handoffs the run issued and the one it works on as a receiver, newest first (the run inspector)."""
    mine = Handoff.objects.filter(project_id=run.project_id).filter(Q(origin_run=run) | Q(receiver_run=run))
    return list(mine.select_related("receiver_session").order_by("-created_at", "-id")[:limit])


# --- the runs list -------------------------------------------------------------------------

RUN_PAGE_SIZE = 50
# The sorts a runs list may ask for: each a column the keyset seeks on, with the id as tie-break.
RUN_SORTS = {
    "-created": ("created_at", True), "created": ("created_at", False),
    "-updated": ("updated_at", True), "updated": ("updated_at", False),
}
RunRefine = Callable[[QuerySet[Run]], QuerySet[Run]]


def run_list_unfiltered(queryset: QuerySet[Run]) -> QuerySet[Run]:
    return queryset


@dataclass(frozen=True)
class RunPage:
    """A window of the runs list with the cursors of its neighbours (None: nothing there)."""

    object_list: list[Run]
    next: str | None  # further along the sort order
    previous: str | None  # back towards its start


def _seek_runs(qs: QuerySet[Run], column: str, descending: bool, cursor: tuple[dt.datetime, int] | None
               ) -> QuerySet[Run]:
    if cursor is not None:
        # A row comparison the ORM cannot spell; PostgreSQL reads its leading column as an index bound.
        # S610: the column is one of RUN_SORTS' and the operator one of two literals; the values are bound.
        qs = qs.extra(  # noqa: S610
            where=[f"(runs_app_run.{column}, runs_app_run.id) {'<' if descending else '>'} (%s, %s)"],
            params=list(cursor))
    return qs.order_by(*((f"-{column}", "-id") if descending else (column, "id")))


def run_page(
    *, project_ids: Sequence[int], refine: RunRefine = run_list_unfiltered, sort: str = "-created",
    after: str | None = None, before: str | None = None,
) -> RunPage:
    """One window of RUN_PAGE_SIZE runs in `sort` order, by seeking (keyset): the cost of a page does
    not grow with the number of runs.

    1. `after` walks on along the sort order, `before` back: walking back is the same seek in the
       opposite order, its rows reversed afterwards.
    2. Per project, seek from the cursor for one row more than a window: each branch is one range of
       an index that leads with the project ((project, -created_at, -id), (project, status,
       -created_at), ...); `project_id IN (a, b)` cannot be read from such an index in order, so
       PostgreSQL would sort every run of those projects. Merge the branches in one UNION statement.
    3. Fetch the window's rows with their project, session and task; the extra row says whether there
       is more in the direction of travel, a cursor that there is something on the side it came from.
    """
    column, descending = RUN_SORTS.get(sort, RUN_SORTS["-created"])
    backwards = before is not None and after is None
    cursor = parse_seek_cursor(before if backwards else after)
    walk = descending != backwards
    limit = RUN_PAGE_SIZE + 1
    base = refine(run_list(project_ids=project_ids)).select_related("session", "task")
    if not project_ids or len(project_ids) > MAX_SEEK_BRANCHES:
        rows = list(_seek_runs(base, column, walk, cursor)[:limit])
    else:
        branches = [_seek_runs(refine(Run.objects.filter(project_id=p)), column, walk, cursor)
                    .values_list("id", column)[:limit] for p in project_ids]
        order = (f"-{column}", "-id") if walk else (column, "id")
        picked = list(branches[0].union(*branches[1:], all=True).order_by(*order)[:limit]
                      if len(branches) > 1 else branches[0])
        found = base.in_bulk([pk for pk, _ in picked])
        rows = [found[pk] for pk, _ in picked if pk in found]
    rows, onward, back = seek_window(rows, size=RUN_PAGE_SIZE, backwards=backwards, came_from=cursor,
                                     position=lambda r: (getattr(r, column), r.pk))
    return RunPage(rows, onward, back)


def run_status_counts(*, project_ids: Sequence[int], refine: RunRefine = run_list_unfiltered,
                      cap: int = COUNT_CAP) -> dict[str, int]:
    """How many runs of each status the list's other filters leave, each counted up to `cap + 1`
    (a number above `cap` reads as "cap+"), in one statement.

    Each count is a LIMIT'ed range of the (project, status, -created_at) index, so an unfiltered
    count costs the same at a thousand runs as at a million; a filter that matches few of a status's
    runs reads that status's runs until it has counted `cap + 1` or seen them all.
    """
    if not project_ids:
        return dict.fromkeys(RunStatus.values, 0)
    base = refine(run_list(project_ids=project_ids)).select_related(None)
    parts: list[str] = []
    params: list[Any] = []
    for status in RunStatus.values:
        sql, sub_params = base.filter(status=status).order_by().values("pk")[: cap + 1].query.sql_with_params()
        parts.append(f"SELECT %s, (SELECT count(*) FROM ({sql}) AS counted)")  # noqa: S608 - the ORM's SQL
        params += [status, *sub_params]
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        return dict(cursor.fetchall())


def run_blocked_steps(*, project_ids: Sequence[int]) -> list[str]:
    """The steps runs are blocked at now (the `run_blocked_step` index holds only those runs)."""
    return list(
        Run.objects.for_projects(project_ids).exclude(blocked_step="").values_list("blocked_step", flat=True)
        .distinct().order_by("blocked_step")[:100]
    )


def run_agents(*, project_ids: Sequence[int]) -> list[str]:
    """The agents that runs name, for the list's agent filter: a skip scan of the `run_named_agent`
    index per project (each next name is one index probe), so a million runs by a few agents cost a
    few probes, where DISTINCT would read every entry."""
    with connection.cursor() as cursor:
        cursor.execute(_RUN_AGENTS_SQL, {"projects": list(project_ids), "limit": 200})
        return [agent for (agent,) in cursor.fetchall()]


_RUN_AGENTS_SQL = """
SELECT DISTINCT found.agent FROM unnest(%(projects)s::bigint[]) AS p(id), LATERAL (
    WITH RECURSIVE named(agent) AS (
        (SELECT r.active_agent FROM runs_app_run r WHERE r.project_id = p.id AND r.active_agent <> ''
          ORDER BY r.active_agent LIMIT 1)
        UNION ALL
        SELECT (SELECT r.active_agent FROM runs_app_run r
                 WHERE r.project_id = p.id AND r.active_agent <> '' AND r.active_agent > named.agent
                 ORDER BY r.active_agent LIMIT 1)
          FROM named WHERE named.agent IS NOT NULL
    )
    SELECT agent FROM named WHERE agent IS NOT NULL LIMIT %(limit)s
) AS found ORDER BY found.agent LIMIT %(limit)s
"""


# --- tasks ---------------------------------------------------------------------------------

TASK_STATE_FIELDS = ("objective", "constraints", "plan", "plan_version", "completed_nodes", "pending_nodes",
                     "artifact_refs", "schema_version")


def task_durable_state(task_ids: Sequence[int]) -> dict[int, dict[str, list[dict[str, Any]]]]:
    """Each task's `pending_approvals` and `effect_records` (seed 001, DurableTaskState), derived from the real
    ApprovalRequest and ExternalEffect rows of its runs, never written by a client: two statements for any number
    of tasks (a page of the API's list)."""
    state: dict[int, dict[str, list[dict[str, Any]]]] = {
        task_id: {"pending_approvals": [], "effect_records": []} for task_id in task_ids}
    if not state:
        return state
    approvals = (ApprovalRequest.objects.filter(run__task_id__in=state, status=ApprovalStatus.PENDING)
                 .order_by("pk").values("pk", "run_id", "run__task_id", "tool", "action_fingerprint", "risk",
                                        "executor", "expires_at", "created_at"))
    for a in approvals:
        state[a["run__task_id"]]["pending_approvals"].append({
            "id": a["pk"], "run": a["run_id"], "tool": a["tool"], "action_fingerprint": a["action_fingerprint"],
            "risk": a["risk"], "executor": a["executor"], "created_at": a["created_at"].isoformat(),
            "expires_at": a["expires_at"].isoformat() if a["expires_at"] else None})
    effects = (ExternalEffect.objects.filter(run__task_id__in=state).order_by("pk")
               .values("pk", "run_id", "run__task_id", "approval_id", "tool", "idempotency_key", "status", "receipt",
                       "result_hash", "created_at"))
    for e in effects:
        state[e["run__task_id"]]["effect_records"].append({
            "id": e["pk"], "run": e["run_id"], "approval": e["approval_id"], "tool": e["tool"],
            "idempotency_key": e["idempotency_key"], "status": e["status"], "receipt": e["receipt"],
            "result_hash": e["result_hash"], "created_at": e["created_at"].isoformat()})
    return state


def task_inspect(*, project_ids: Sequence[int], task_id: int) -> Task:
    task = task_list(project_ids=project_ids).select_related("latest_checkpoint").filter(pk=task_id).first()
    if task is None:
        raise NotFoundError(f"Task {task_id} does not exist.")
    return task


@dataclass(frozen=True)
class PlanNode:
    name: str
    state: str  # completed | current | pending | planned (in the plan, in neither list)
    execution: NodeExecution | None  # its latest execution, if the worker drove it


def _node_name(node: Any) -> str:
    return node if isinstance(node, str) else json.dumps(node, sort_keys=True, ensure_ascii=False, default=str)


def task_plan(task: Task, limit: int = 500) -> list[PlanNode]:
    """The plan in order, each node with its state and its latest execution (one query)."""
    completed = {_node_name(n) for n in task.completed_nodes or []}
    pending = [_node_name(n) for n in task.pending_nodes or []]
    latest: dict[str, NodeExecution] = {}
    for execution in NodeExecution.objects.filter(task=task).order_by("started_at", "id")[:limit]:
        latest[execution.node] = execution
    nodes = []
    for name in (_node_name(n) for n in task.plan or []):
        if name in completed:
            state = "completed"
        elif pending and name == pending[0]:
            state = "current"
        elif name in pending:
            state = "pending"
        else:
            state = "planned"
        nodes.append(PlanNode(name, state, latest.get(name)))
    return nodes


@dataclass(frozen=True)
class StateChange:
    version: TaskStateVersion
    changed: list[tuple[str, str]]  # (field, its new value as JSON) against the version before it
    state_json: str


def task_state_history(task: Task, limit: int = 50) -> list[StateChange]:
    """The task's saved states, newest first, each with what it changed against the one before it."""
    rows = list(TaskStateVersion.objects.filter(task=task).order_by("-id")[: limit + 1])
    changes = []
    for index, row in enumerate(rows[:limit]):
        before = rows[index + 1].state if index + 1 < len(rows) else {}
        changed = [(name, json.dumps(row.state.get(name), ensure_ascii=False, sort_keys=True, default=str))
                   for name in TASK_STATE_FIELDS if row.state.get(name) != before.get(name) or not before]
        changes.append(StateChange(row, changed, json.dumps(row.state, indent=2, ensure_ascii=False,
                                                             sort_keys=True, default=str)))
    return changes


def task_runs(task: Task, limit: int = 100) -> list[Run]:
    return list(Run.objects.filter(project_id=task.project_id, task=task).select_related("session")
                .order_by("-created_at", "-id")[:limit])


def task_checkpoints(task: Task, run_ids: Sequence[int], limit: int = 50) -> list[Checkpoint]:
    """The task's own checkpoints and its runs', newest first (the (task, -id) and (run, -id) indexes)."""
    return list(Checkpoint.objects.filter(project_id=task.project_id).filter(Q(task=task) | Q(run_id__in=run_ids))
                .only("id", "run_id", "task_id", "parent_id", "label", "depth", "created_at").order_by("-id")[:limit])


def task_effects(task: Task, run_ids: Sequence[int], limit: int = 100) -> list[ExternalEffect]:
    return list(ExternalEffect.objects.filter(project_id=task.project_id, run_id__in=run_ids)
                .order_by("-created_at", "-id")[:limit])


def task_approvals(task: Task, run_ids: Sequence[int], limit: int = 100) -> list[ApprovalRequest]:
    return list(ApprovalRequest.objects.filter(project_id=task.project_id, run_id__in=run_ids)
                .select_related("decided_by").order_by("-created_at", "-id")[:limit])


# --- a run's timeline ----------------------------------------------------------------------

TIMELINE_EVENTS = 300
EVENT_FAMILIES = ("run", "approval", "resume", "node", "effect", "handoff", "thread")


def run_timeline_events(run: Run, *, family: str = "", limit: int = TIMELINE_EVENTS) -> list[RunEvent]:
    """The run's latest `limit` events of one family (`resume`, `approval`, an agent's own `note`, ...;
    "" for all), in seq
    order: the newest stretch of its history, read backwards along the (run, seq) index."""
    events = RunEvent.objects.filter(run=run)
    if family:
        events = events.filter(Q(kind=family) | Q(kind__startswith=f"{family}."))
    window = list(events.order_by("-seq")[:limit])
    window.reverse()
    return window


# --- the overview's charts -----------------------------------------------------------------
# Each reads a window of recent rows through an index that leads with the project, so the cost
# follows the window's rows, not the table's.

CHART_DAYS = 14


def chart_window_start(days: int = CHART_DAYS) -> dt.datetime:
    """Local midnight `days - 1` days ago: the window is today and the days before it."""
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    return today - dt.timedelta(days=days - 1)


def runs_per_day(*, project_ids: Sequence[int], since: dt.datetime) -> list[Any]:
    """Runs created per local day and (current) status, with their tokens and cost: `day, status, runs,
    tokens, cost` rows ((project, -created_at, -id) index)."""
    return list(
        Run.objects.for_projects(project_ids).filter(created_at__gte=since)
        .annotate(day=TruncDate("created_at")).values("day", "status")
        .annotate(runs=Count("id"), tokens=Sum("tokens_used"), cost=Sum("cost_used")).order_by("day", "status")
    )


def usage_per_agent(*, project_ids: Sequence[int], since: dt.datetime, limit: int = 10) -> list[Any]:
    """Tokens and cost of the runs created in the window, per agent, the heaviest first."""
    return list(
        Run.objects.for_projects(project_ids).filter(created_at__gte=since)
        .values("active_agent").annotate(tokens=Sum("tokens_used"), cost=Sum("cost_used"), runs=Count("id"))
        .order_by("-tokens", "-cost", "active_agent")[:limit]
    )


def resume_outcomes(*, project_ids: Sequence[int], since: dt.datetime) -> list[tuple[str, int]]:
    """The last resume outcome of each run created in the window that was resumed (the worker's
    `metrics.failure_type`: empty when the resume went through, else the step that blocked it or
    why it stopped), most frequent first."""
    rows = (
        Run.objects.for_projects(project_ids).filter(created_at__gte=since, metrics__has_key="latency_ms")
        .annotate(outcome=Coalesce(KT("metrics__failure_type"), Value(""), output_field=TextField())).values("outcome")
        .annotate(runs=Count("id")).order_by("-runs", "outcome")
    )
    return [(row["outcome"] or "went through", row["runs"]) for row in rows]


def blocked_by_step(*, project_ids: Sequence[int], limit: int = 12) -> list[tuple[str, int]]:
    """Runs blocked now, per step (the `run_blocked_step` index holds only them)."""
    rows = (Run.objects.for_projects(project_ids).exclude(blocked_step="").values("blocked_step")
            .annotate(runs=Count("id")).order_by("-runs", "blocked_step")[:limit])
    return [(row["blocked_step"], row["runs"]) for row in rows]


# Approvals decided in the window, by the local day of the decision; the created_at bound (an approval
# asked at most 30 days before the window) lets the (project, status, -created_at) index bound the read.
_APPROVAL_WAIT_SQL = """
SELECT (decided_at AT TIME ZONE %(tz)s)::date AS day,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM decided_at - created_at)),
       percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM decided_at - created_at)),
       count(*)
  FROM runs_app_approvalrequest
 WHERE project_id = ANY(%(projects)s) AND status = ANY(%(decided)s)
   AND created_at >= %(since)s - interval '30 days' AND decided_at >= %(since)s
 GROUP BY 1 ORDER BY 1
"""


def approval_wait_per_day(*, project_ids: Sequence[int], since: dt.datetime) -> list[tuple[dt.date, float, float, int]]:
    """Per local day, how long decided approvals waited for their reviewer: p50 and p95 in seconds."""
    with connection.cursor() as cursor:
        cursor.execute(_APPROVAL_WAIT_SQL, {
            "tz": timezone.get_current_timezone_name(), "projects": list(project_ids), "since": since,
            "decided": [ApprovalStatus.APPROVED, ApprovalStatus.REJECTED]})
        return [(day, float(p50), float(p95), n) for day, p50, p95, n in cursor.fetchall()]
