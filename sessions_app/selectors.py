"""Read queries on sessions and items, always scoped to the caller's projects."""

import datetime as dt
from typing import Any

from django.db.models import QuerySet

from harness.db import json_rows, prepared_cursor
from harness.errors import NotFoundError, ValidationFailed
from harness.models import Project
from sessions_app.models import Session, SessionItem


def session_list(
    *,
    projects: QuerySet[Project],
    status: str | None = None,
    role: str | None = None,
    updated_since: dt.datetime | None = None,
) -> QuerySet[Session]:
    sessions = Session.objects.filter(project__in=projects)
    if status:
        sessions = sessions.filter(status=status)
    if role:
        sessions = sessions.filter(role=role)
    if updated_since:
        sessions = sessions.filter(updated_at__gte=updated_since)
    return sessions


def session_get(*, projects: QuerySet[Project], session_id: int) -> Session:
    session = Session.objects.filter(project__in=projects, pk=session_id).first()
    if session is None:
        raise NotFoundError(f"Session {session_id} does not exist.")
    return session


def session_item_list(*, projects: QuerySet[Project], session_id: int) -> QuerySet[SessionItem]:
    session = session_get(projects=projects, session_id=session_id)
    return SessionItem.objects.filter(session=session)


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
