"""Read queries for the console's session pages, scoped to the projects the viewer may see."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import CharField, Count, QuerySet, Value
from django.http import Http404

from runs_app.models import Run
from sessions_app.models import Session, SessionItem

TIMELINE_PAGE_SIZE = 50


def session_list(project_ids: Sequence[int], *, project: str = "", status: str = "") -> QuerySet[Session]:
    qs = Session.objects.filter(project_id__in=project_ids)
    if project:
        qs = qs.filter(project__slug=project)
    if status:
        qs = qs.filter(status=status)
    return qs.select_related("project").annotate(run_count=Count("runs")).order_by("-updated_at", "-id")


def session_get(project_ids: Sequence[int], session_id: int) -> Session:
    session = Session.objects.filter(project_id__in=project_ids, pk=session_id).select_related("project").first()
    if session is None:
        raise Http404("No such session.")
    return session


@dataclass(frozen=True)
class TimelineEntry:
    kind: str  # "item" | "run"
    obj: Any


def session_timeline(session: Session, page_number: Any) -> tuple[Page, list[TimelineEntry]]:
    """Items and runs of a session in time order, one page at a time, in four queries.

    1. Page over a UNION of (kind, id, created_at) rows of both tables.
    2. Fetch the page's items and runs by id, then lay them out in the page's order.
    """
    items = SessionItem.objects.filter(session=session).values_list(
        Value("item", output_field=CharField()), "id", "created_at", "seq"
    )
    runs = Run.objects.filter(session=session).values_list(
        Value("run", output_field=CharField()), "id", "created_at", Value(0)
    )
    union = items.union(runs, all=True).order_by("created_at", "id")
    page = Paginator(union, TIMELINE_PAGE_SIZE).get_page(page_number)
    rows = list(page.object_list)
    item_ids = [r[1] for r in rows if r[0] == "item"]
    run_ids = [r[1] for r in rows if r[0] == "run"]
    found_items = SessionItem.objects.in_bulk(item_ids) if item_ids else {}
    found_runs = Run.objects.select_related("task").in_bulk(run_ids) if run_ids else {}
    entries = [
        TimelineEntry("item", found_items[r[1]]) if r[0] == "item" else TimelineEntry("run", found_runs[r[1]])
        for r in rows
        if (found_items if r[0] == "item" else found_runs).get(r[1]) is not None
    ]
    return page, entries
