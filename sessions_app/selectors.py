"""Read queries on sessions and items, for the API and the console alike.

Every read a door makes takes `project_ids`, the ids of the projects the caller may see, and starts from
`Session.objects.for_projects`: another project's session is absent (NotFoundError, a 404 at every
door). List filters are FilterSets (sessions_app.filters) the views apply to `session_list`.
"""

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from django.db.models import CharField, Count, Max, Min, Model, QuerySet, Value

from harness.db import EPOCH, fetch_json_text, id_list, id_list_sql, json_rows, prepared_cursor
from harness.http.auth import CALLER_HOLDS, CALLER_SQL, TokenCheck, caller_params
from harness.http.errors import NotFoundError, ValidationFailed
from harness.models import Project
from harness.tenancy import EndUserScope
from sessions_app.models import Session, SessionItem
from sessions_app.timeline_sources import TimelineSource, timeline_sources


def session_list(*, project_ids: Sequence[int], end_user: EndUserScope | None = None) -> QuerySet[Session]:
    """The caller's sessions: of its projects and, for a token narrowed to one end user, that user's only."""
    sessions = Session.objects.for_projects(project_ids)
    return end_user.sessions(sessions) if end_user is not None else sessions


def session_get(*, project_ids: Sequence[int], session_id: int, end_user: EndUserScope | None = None) -> Session:
    session = (session_list(project_ids=project_ids, end_user=end_user).filter(pk=session_id)
               .select_related("project").first())
    if session is None:
        raise NotFoundError(f"Session {session_id} does not exist.")
    return session


def session_item_list(*, project_ids: Sequence[int], session_id: int, end_user: EndUserScope | None = None
                      ) -> QuerySet[SessionItem]:
    session = session_get(project_ids=project_ids, session_id=session_id, end_user=end_user)
    return SessionItem.objects.filter(session=session)


@dataclass(frozen=True)
class ItemsHeld:
    """The items a session holds now: `last_seq` counts every item ever appended, and a trim, a compaction
    or a retention pass removes the older ones (issue 30: the page said "30 items" where 20 were left)."""

    count: int
    first_seq: int | None
    last_seq: int | None
    ever: int  # the session's last_seq: how many were appended in all

    @property
    def removed(self) -> int:
        return self.ever - self.count


def session_items_held(session: Session) -> ItemsHeld:
    # Count("seq"), not Count("pk"): seq is in session_item_seq_unique (session, seq), so the count is an index-only
    # scan; the id is not, and counting it fetched every item's heap row (~6x slower at 100,000 items, issue 35).
    held = SessionItem.objects.filter(session_id=session.pk).aggregate(
        count=Count("seq"), first_seq=Min("seq"), last_seq=Max("seq"))
    return ItemsHeld(count=held["count"], first_seq=held["first_seq"], last_seq=held["last_seq"],
                     ever=session.last_seq)


def session_reachable(*, project_ids: Sequence[int], session_id: int, end_user: EndUserScope | None) -> None:
    """NotFoundError unless a narrowed caller's end user owns the session (nothing to check for any other caller:
    the operation's own statement scopes it to the project)."""
    if end_user is not None and not session_list(project_ids=project_ids, end_user=end_user).filter(
            pk=session_id).exists():
        raise NotFoundError(f"Session {session_id} does not exist.")


def session_list_page(*, project_ids: Sequence[int]) -> QuerySet[Session]:
    """The console's list: each session with its project and its number of runs, latest first."""
    return (
        session_list(project_ids=project_ids).select_related("project").annotate(run_count=Count("runs"))
        .order_by("-updated_at", "-id")
    )


MAX_LATEST_ITEMS = 500

# The hot read an agent makes before every model call: its session's newest items. One statement on
# the (session, seq) unique index; the project check is inside it. Each row comes written as the
# API's item (the jsonb content as its text), so `json_rows` decodes the page at once instead of one
# value per row; the time comes apart, as epoch microseconds (parsing 50 timestamptz values in
# Python was half of this read's CPU).
_LATEST_SQL = """
SELECT '{"id":' || i.id || ',"session":' || i.session_id || ',"seq":' || i.seq
       || ',"role":' || to_json(i.role)::text || ',"content":' || i.content::text
       || ',"run":' || coalesce(i.run_id::text, 'null') || '}',
       (extract(epoch FROM i.created_at) * 1000000)::bigint
  FROM sessions_app_sessionitem i
 WHERE i.session_id = (SELECT s.id FROM sessions_app_session s WHERE s.id = %(sid)s AND s.project_id = %(pid)s)
 ORDER BY i.seq DESC
 LIMIT %(limit)s
"""


def session_items_latest(*, project: Project | int, session_id: int, limit: int = 50) -> list[dict[str, Any]]:
    """The newest `limit` items of a session, oldest first, as dicts shaped like the API's items."""
    if not 1 <= limit <= MAX_LATEST_ITEMS:
        raise ValidationFailed(f"limit is between 1 and {MAX_LATEST_ITEMS}.", code="invalid_limit")
    project_id = project if isinstance(project, int) else project.pk
    with prepared_cursor() as cursor:
        cursor.execute(_LATEST_SQL, {"sid": session_id, "pid": project_id, "limit": limit})
        rows = cursor.fetchall()
    if not rows and not Session.objects.filter(project_id=project_id, pk=session_id).exists():
        raise NotFoundError(f"Session {session_id} does not exist.")
    rows.reverse()
    return json_rows(rows)


# The same read as the API answers it, written whole by PostgreSQL: `{"session", "last_seq", "items"}`, each
# item in sessions_app.api.item_out's shape (created_at as DRF renders it: UTC, ISO 8601 with a `Z`,
# microseconds only when there are any). One statement, one row (none: no such session in the caller's
# projects); the view sends its text as it comes, never decoding it. The newest `limit` rows come off the
# (session, seq) unique index backwards and string_agg puts them back in seq order. `last_seq` is read in the
# same snapshot as the items, so a client's cursor and the page always agree. Each object is concatenated
# from its columns (the jsonb content as its text, the role through to_json for its quoting) rather than
# built with json_build_object/json_agg: for the newest 50 of 10,000 ~1 KB items that took 0.90 ms of the
# server's time per read, this 0.39 ms (prepared, PostgreSQL 18).
_API_TIME = """to_char(i.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
           || CASE to_char(i.created_at AT TIME ZONE 'UTC', 'US') WHEN '000000' THEN ''
                   ELSE '.' || to_char(i.created_at AT TIME ZONE 'UTC', 'US') END"""
# S608: the one piece put in is this module's constant _API_TIME; every value is a bound parameter.
_LATEST_JSON_SQL = f"""
WITH {CALLER_SQL}
SELECT '{{"session":' || s.id || ',"last_seq":' || s.last_seq || ',"items":[' || coalesce((
           SELECT string_agg(x.item, ',' ORDER BY x.seq)
             FROM (SELECT i.seq,
                          '{{"id":' || i.id || ',"session":' || i.session_id || ',"seq":' || i.seq
                          || ',"role":' || to_json(i.role)::text || ',"content":' || i.content::text
                          || ',"run":' || coalesce(i.run_id::text, 'null')
                          || ',"created_at":"' || {_API_TIME} || 'Z"}}' AS item
                     FROM sessions_app_sessionitem i
                    WHERE i.session_id = s.id
                    ORDER BY i.seq DESC
                    LIMIT %(limit)s) x
       ), '') || ']}}'
  FROM sessions_app_session s
 WHERE s.id = %(sid)s AND s.project_id = ANY({id_list_sql('pids')}) AND {CALLER_HOLDS}
"""  # noqa: S608


def session_items_latest_json(*, project_ids: Sequence[int], session_id: int, limit: int = 50,
                              caller: TokenCheck | None = None) -> bytes:
    """The API's answer to `GET sessions/<id>/items/latest/?limit=N` as JSON text (UTF-8), built by PostgreSQL:
    `{"session": id, "last_seq": n, "items": [the newest `limit` items, oldest first]}`.

    NotFoundError when the session is not in `project_ids` (or, with a `caller`, the plain path's
    harness.http.auth.TokenCheck, when the caller's token does not hold: the plain path then asks why). Items
    removed by a pop or a clear leave gaps in `seq`; `last_seq` is the highest seq ever assigned, not the
    newest item's (seqs are never reused).
    """
    if not 1 <= limit <= MAX_LATEST_ITEMS:
        raise ValidationFailed(f"limit is between 1 and {MAX_LATEST_ITEMS}.", code="invalid_limit")
    body = fetch_json_text(_LATEST_JSON_SQL, {"sid": session_id, "pids": id_list(project_ids), "limit": limit,
                                              **caller_params(caller)})
    if body is None:
        raise NotFoundError(f"Session {session_id} does not exist.")
    return body


# --- the console's timeline ---------------------------------------------------------------

TIMELINE_PAGE_SIZE = 50


@dataclass(frozen=True)
class TimelineEntry:
    kind: str  # "item", or a registered source's kind ("run": sessions_app.timeline_sources)
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


_M = TypeVar("_M", bound=Model)


def _seek(qs: QuerySet[_M], cursor: tuple[dt.datetime, int] | None, *, backwards: bool) -> QuerySet[_M]:
    # A row comparison, so the (session, created_at, id) index seeks to the cursor instead of
    # counting past an OFFSET: each window costs the same wherever it is in the history.
    if cursor is not None:
        # S610: the operator is one of two literals, the values bound.
        qs = qs.extra(where=[f"(created_at, id) {'<' if backwards else '>'} (%s, %s)"],  # noqa: S610
                      params=list(cursor))
    order = ("-created_at", "-id") if backwards else ("created_at", "id")
    return qs.order_by(*order)[: TIMELINE_PAGE_SIZE + 1]


def session_timeline(session: Session, *, after: str | None = None, before: str | None = None) -> TimelinePage:
    """Items and runs of a session in time order, one window of TIMELINE_PAGE_SIZE, in three queries.

    1. Seek in each table from the cursor (`after`: the next window; `before`: the previous one;
       neither: the start) for one row more than a window, and merge them in one UNION statement. The runs
       are a source runs_app registers (sessions_app.timeline_sources): this app does not import it.
    2. Fetch the window's items and runs by id, then lay them out in time order.
    3. The extra row says whether there is more in the direction of travel; a cursor says there is
       something on the side it came from.
    """
    backwards = before is not None and after is None
    cursor = parse_timeline_cursor(before if backwards else after)
    items = TimelineSource("item", lambda s: SessionItem.objects.filter(session=s), SessionItem.objects.in_bulk)
    sources = {source.kind: source for source in (items, *timeline_sources())}
    seeks = [_seek(source.rows(session), cursor, backwards=backwards).values_list(
        Value(kind, output_field=CharField()), "id", "created_at") for kind, source in sources.items()]
    order = ("-created_at", "-id") if backwards else ("created_at", "id")
    merged = seeks[0].union(*seeks[1:], all=True).order_by(*order) if len(seeks) > 1 else seeks[0]
    rows = list(merged[: TIMELINE_PAGE_SIZE + 1])
    more = len(rows) > TIMELINE_PAGE_SIZE
    rows = rows[:TIMELINE_PAGE_SIZE]
    if backwards:
        rows.reverse()
    found: dict[str, dict[int, Any]] = {}
    for kind, source in sources.items():
        ids = [r[1] for r in rows if r[0] == kind]
        found[kind] = source.fetch(ids) if ids else {}
    entries = [TimelineEntry(r[0], found[r[0]][r[1]]) for r in rows if r[1] in found[r[0]]]
    first = timeline_cursor(rows[0][2], rows[0][1]) if rows else None
    last = timeline_cursor(rows[-1][2], rows[-1][1]) if rows else None
    has_earlier = more if backwards else cursor is not None
    has_later = cursor is not None if backwards else more
    return TimelinePage(entries, first if has_earlier else None, last if has_later else None)
