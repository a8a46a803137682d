"""Console pages for sessions: the list and a session's timeline of items and runs."""

import json

from django.core.paginator import Paginator
from django.http import HttpResponse
from django.views.decorators.http import require_GET

from harness.views import ConsoleRequest, console_page, project_ids, render_page
from sessions_app import selectors as sel
from sessions_app.filters import SessionListFilter


def _pretty(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


@require_GET
@console_page
def session_list(request: ConsoleRequest) -> HttpResponse:
    filters = SessionListFilter(request.GET or None)
    sessions = sel.session_list_page(project_ids=project_ids(request))
    if filters.is_bound and filters.is_valid():  # a bad value in any filter shows the whole list
        sessions = filters.filter_queryset(sessions)
    page = Paginator(sessions, 50).get_page(request.GET.get("page"))
    return render_page(request, "sessions/session_list.html", {"form": filters.form, "page": page},
                       partials=("session-table",))


@require_GET
@console_page
def session_timeline(request: ConsoleRequest, session_id: int) -> HttpResponse:
    session = sel.session_get(project_ids=project_ids(request), session_id=session_id)
    page = sel.session_timeline(session, after=request.GET.get("after"), before=request.GET.get("before"))
    rows = [
        (entry, _pretty(entry.obj.content) if entry.kind == "item" else "")
        for entry in page.entries
    ]
    return render_page(
        request,
        "sessions/session_timeline.html",
        {"session": session, "page": page, "rows": rows},
        partials=("timeline",),
    )
