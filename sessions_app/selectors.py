"""Read queries on sessions and items, always scoped to the caller's projects."""

import datetime as dt

from django.db.models import QuerySet

from harness.errors import NotFoundError
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
