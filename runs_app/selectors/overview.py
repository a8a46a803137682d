"""What the console's overview and navigation read of runs and approvals: the counts (pending approvals,
blocked runs, failures by category), the blocked runs, and the charts' windows.

Every read a door makes takes `project_ids`, the ids of the projects the caller may see (the API's
`harness.http.api_base.scope`, the console's `harness.http.views.project_ids`), and starts from the model's
`for_projects`: another project's object is simply absent (NotFoundError: a 404 at every door).
"""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Count, QuerySet, Sum, TextField, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from runs_app.models import (
    ApprovalStatus,
    ExternalEffect,
    FailureCategory,
    NodeExecution,
    Run,
    RunStatus,
)
from runs_app.selectors import approvals
from runs_app.selectors.runs import run_list


def pending_approval_count(*, project_ids: Sequence[int]) -> int:
    """The inbox's own count (approvals.pending_count) over these projects: never a query of its own."""
    return approvals.pending_count(project_ids=project_ids)


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
