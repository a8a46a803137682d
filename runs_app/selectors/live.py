"""The console's live pages ask "has anything changed since I was drawn?" every few seconds: each answer here is
one statement that reads no row the page shows, only a version of what it shows (runs_app.views.live).

A version is an opaque string; a poll that carries the one its page was drawn with and gets the same back is
answered 204 (htmx swaps nothing), so an open page that nothing touches costs one statement per poll beyond
the session's own reads (docs/operations/scaling.md has the figure).
"""

from collections.abc import Sequence

from django.db.models import Count, Max, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce

from runs_app.models import ApprovalRequest, ApprovalStatus, Run, RunEvent


def inbox_version(*, project_ids: Sequence[int]) -> str:
    """The pending approvals of these projects as (how many, the newest id, the sum of their versions).

    A new approval raises the newest id; a decision, expiry or cancellation takes one out (the count drops, or,
    with a new one at once, the newest id moves); an assignment or an extension bumps a version (the sum). It is
    read from the partial index of pending approvals per project (runs_app.models.ApprovalRequest.Meta).
    """
    row = (ApprovalRequest.objects.for_projects(project_ids).filter(status=ApprovalStatus.PENDING).order_by()
           .aggregate(n=Count("id"), newest=Coalesce(Max("id"), 0), versions=Coalesce(Sum("version"), 0)))
    return f"{row['n']}.{row['newest']}.{row['versions']}"


GONE = "gone"


def run_version(*, project_ids: Sequence[int], run_id: int) -> str:
    """A run's version (bumped by every transition and lease change), when its row last changed (metrics, budget)
    and its last event's seq, in one statement;
    GONE for a run the caller cannot see (never answered 204: the page's own read then answers 404)."""
    last_event = RunEvent.objects.filter(run_id=OuterRef("pk")).order_by("-seq").values("seq")[:1]
    row = (Run.objects.for_projects(project_ids).filter(pk=run_id)
           .values_list("version", "updated_at", Subquery(last_event)).first())
    if row is None:
        return GONE
    version, updated_at, seq = row
    return f"{version}.{updated_at.timestamp():.6f}.{seq or 0}"
