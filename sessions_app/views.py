"""Console pages for sessions: the list and a session's timeline of items and runs."""

import json

from django.core.paginator import Paginator
from django.http import HttpResponse
from django.views.decorators.http import require_GET

from harness.views import ConsoleRequest, console_page, project_ids, render_page
from sessions_app import console_selectors as sel
from sessions_app.forms import SessionFilterForm


def _pretty(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


@require_GET
@console_page
def session_list(request: ConsoleRequest) -> HttpResponse:
    form = SessionFilterForm(request.GET or None)
    filters = form.cleaned_data if form.is_valid() else {}
    page = Paginator(sel.session_list(project_ids(request), **{k: v for k, v in filters.items() if v}), 50).get_page(
        request.GET.get("page")
    )
    return render_page(request, "sessions/session_list.html", {"form": form, "page": page}, partials=("session-table",))


@require_GET
@console_page
def session_timeline(request: ConsoleRequest, session_id: int) -> HttpResponse:
    session = sel.session_get(project_ids(request), session_id)
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
