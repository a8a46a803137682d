"""Reads of runs and their events: one run for the API or its inspector, the runs list by seeking, its
filters' choices and status counts, and a run's events, node executions and timeline window.

Every read a door makes takes `project_ids`, the ids of the projects the caller may see (the API's
`harness.http.api_base.scope`, the console's `harness.http.views.project_ids`), and starts from the model's
`for_projects`: another project's object is simply absent (NotFoundError: a 404 at every door).
"""

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import DurationField, ExpressionWrapper, F, Q, QuerySet, Value
from django.db.models.functions import Coalesce, Now

from harness.http.errors import NotFoundError
from harness.tenancy import EndUserScope
from runs_app.models import NodeExecution, Run, RunEvent, RunStatus
from runs_app.resume_due import WORKER_OWNER_PREFIX
from runs_app.selectors.paging import COUNT_CAP, MAX_SEEK_BRANCHES, parse_seek_cursor, seek_window


def run_list(*, project_ids: Sequence[int], end_user: EndUserScope | None = None) -> QuerySet[Run]:
    """The caller's runs: of its projects and, for a token narrowed to one end user, those of that user's
    sessions only (harness.tenancy.EndUserScope)."""
    runs = Run.objects.for_projects(project_ids).select_related("project")
    return end_user.hanging_off(runs, "session") if end_user is not None else runs


def stale_runs(runs: QuerySet[Run], *, now: dt.datetime | Now) -> QuerySet[Run]:
    """The runs of `runs` that are stale at `now`: running, with an agent's lease that expired before it (the
    agent stopped renewing it). A running run that holds no lease is not stale: nobody claimed to drive it; nor is
    one whose resume worker's lease ran out, which the recovery pass resumes again (runs_app.resume_due)."""
    return runs.filter(status=RunStatus.RUNNING, lease_expires_at__lt=now).exclude(lease_owner="").exclude(
        lease_owner__startswith=WORKER_OWNER_PREFIX)


def run_is_stale(run: Run, *, now: dt.datetime) -> bool:
    """`stale_runs` for one run already read (a page's badge costs no query); the two say the same."""
    return (run.status == RunStatus.RUNNING and run.lease_expires_at is not None and run.lease_expires_at < now
            and run.lease_owner != "" and not run.lease_owner.startswith(WORKER_OWNER_PREFIX))


def stale_past_grace(runs: QuerySet[Run]) -> QuerySet[Run]:
    """The runs of `runs` stale for longer than their project's grace (its `stale_run_grace_seconds`, else
    HARNESS_STALE_RUN_GRACE), at the database's clock as every lease decision is; each annotated with
    `grace_seconds`. The recovery pass blocks them (worker.recovery.agent_leases_expired_block)."""
    grace = Coalesce(F("project__stale_run_grace_seconds"), Value(settings.HARNESS_STALE_RUN_GRACE))
    window = ExpressionWrapper(F("grace_seconds") * Value(dt.timedelta(seconds=1)), output_field=DurationField())
    return stale_runs(runs, now=Now()).annotate(grace_seconds=grace).filter(lease_expires_at__lt=Now() - window)


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


def run_fork_origin(run: Run) -> dict[str, Any] | None:
    """The `run.forked` event's data when `run` is a fork (its first checkpoint's source, who, why), else None."""
    event = RunEvent.objects.filter(run_id=run.pk, kind="run.forked").only("data").order_by("seq").first()
    return event.data if event is not None and isinstance(event.data, dict) else None


def run_event_list(*, project_ids: Sequence[int], run_id: int) -> QuerySet[RunEvent]:
    run = run_get(project_ids=project_ids, run_id=run_id)
    return RunEvent.objects.filter(run=run)


def run_events(run: Run) -> QuerySet[RunEvent]:
    return RunEvent.objects.filter(run=run).order_by("-seq")


def run_node_executions(run: Run, limit: int = 200) -> list[NodeExecution]:
    return list(NodeExecution.objects.filter(run=run).order_by("-started_at", "-id")[:limit])


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
