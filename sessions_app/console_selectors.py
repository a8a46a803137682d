"""Read queries for the console's session pages, scoped to the projects the viewer may see."""

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import CharField, Count, QuerySet, Value
from django.http import Http404

from harness.db import EPOCH
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


@dataclass(frozen=True)
class TimelinePage:
    """One window of the timeline and the keyset cursors of its neighbours (None: nothing there)."""

    entries: list[TimelineEntry]
    earlier: str | None
    later: str | None


def timeline_cursor(created_at: dt.datetime, pk: int) -> str:
    """A position in the timeline as text for a URL: epoch microseconds and the id."""
    delta = created_at - EPOCH
    return f"{(delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds}.{pk}"


def parse_timeline_cursor(text: str | None) -> tuple[dt.datetime, int] | None:
    match = re.fullmatch(r"(-?\d{1,20})\.(\d{1,20})", text or "")
    if match is None:
        return None
    return EPOCH + dt.timedelta(microseconds=int(match[1])), int(match[2])


def _seek(qs: QuerySet, cursor: tuple[dt.datetime, int] | None, *, backwards: bool) -> QuerySet:
    # A row comparison, so the (session, created_at, id) index seeks to the cursor instead of
    # counting past an OFFSET: each window costs the same wherever it is in the history.
    if cursor is not None:
        qs = qs.extra(where=[f"(created_at, id) {'<' if backwards else '>'} (%s, %s)"], params=list(cursor))
    order = ("-created_at", "-id") if backwards else ("created_at", "id")
    return qs.order_by(*order)[: TIMELINE_PAGE_SIZE + 1]


def session_timeline(session: Session, *, after: str | None = None, before: str | None = None) -> TimelinePage:
    """Items and runs of a session in time order, one window of TIMELINE_PAGE_SIZE, in three queries.

    1. Seek in each table from the cursor (`after`: the next window; `before`: the previous one;
       neither: the start) for one row more than a window, and merge both in one UNION statement.
    2. Fetch the window's items and runs by id, then lay them out in time order.
    3. The extra row says whether there is more in the direction of travel; a cursor says there is
       something on the side it came from.
    """
    backwards = before is not None and after is None
    cursor = parse_timeline_cursor(before if backwards else after)
    items = _seek(SessionItem.objects.filter(session=session), cursor, backwards=backwards).values_list(
        Value("item", output_field=CharField()), "id", "created_at"
    )
    runs = _seek(Run.objects.filter(session=session), cursor, backwards=backwards).values_list(
        Value("run", output_field=CharField()), "id", "created_at"
    )
    order = ("-created_at", "-id") if backwards else ("created_at", "id")
    rows = list(items.union(runs, all=True).order_by(*order)[: TIMELINE_PAGE_SIZE + 1])
    more = len(rows) > TIMELINE_PAGE_SIZE
    rows = rows[:TIMELINE_PAGE_SIZE]
    if backwards:
        rows.reverse()
    item_ids = [r[1] for r in rows if r[0] == "item"]
    run_ids = [r[1] for r in rows if r[0] == "run"]
    found_items = SessionItem.objects.in_bulk(item_ids) if item_ids else {}
    found_runs = Run.objects.select_related("task").in_bulk(run_ids) if run_ids else {}
    entries = [
        TimelineEntry("item", found_items[r[1]]) if r[0] == "item" else TimelineEntry("run", found_runs[r[1]])
        for r in rows
        if (found_items if r[0] == "item" else found_runs).get(r[1]) is not None
    ]
    first = timeline_cursor(rows[0][2], rows[0][1]) if rows else None
    last = timeline_cursor(rows[-1][2], rows[-1][1]) if rows else None
    has_earlier = more if backwards else cursor is not None
    has_later = cursor is not None if backwards else more
    return TimelinePage(entries, first if has_earlier else None, last if has_later else None)
