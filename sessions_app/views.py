"""Console pages for sessions: the list, a session's timeline of items and runs, and trimming its history."""

from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from harness.actors import Actor
from harness.http.errors import DomainError
from harness.http.views import (
    ConsoleRequest,
    console_page,
    project_ids,
    project_roles,
    render_page,
    require_project_role,
    role_required,
)
from harness.tenancy import Role
from sessions_app import selectors as sel
from sessions_app import trimming
from sessions_app.filters import SessionListFilter
from sessions_app.forms import CompactForm, TrimForm
from sessions_app.presentation import conversation_message


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
    return _timeline(request, session)


def _timeline(request: ConsoleRequest, session: Any, *, status: int = 200, **forms: Any) -> HttpResponse:
    page = sel.session_timeline(session, after=request.GET.get("after"), before=request.GET.get("before"))
    rows = [
        (entry, [conversation_message(entry.obj.content, role=entry.obj.role, seq=entry.obj.seq)]
         if entry.kind == "item" else [])
        for entry in page.entries
    ]
    # The forms carry the last_seq the operator saw: a trim refuses if items arrived since (seq_conflict).
    initial = {"expected_last_seq": session.last_seq}
    context = {"session": session, "held": sel.session_items_held(session), "page": page, "rows": rows,
               "roles": project_roles(request, session.project_id),
               "trim_form": forms.get("trim_form") or TrimForm(initial=initial),
               "compact_form": forms.get("compact_form") or CompactForm(initial=initial),
               "trim_error": forms.get("error", "")}
    return render_page(request, "sessions/session_timeline.html", context, partials=("timeline",), status=status)


@require_POST
@console_page
@role_required(Role.OPERATOR)
def session_trim(request: ConsoleRequest, session_id: int) -> HttpResponse:
    """Keep the newest N items (sessions_app.trimming, the same service as the API's)."""
    session = sel.session_get(project_ids=project_ids(request), session_id=session_id)
    require_project_role(request, Role.OPERATOR, session.project_id)
    form = TrimForm(request.POST)
    if not form.is_valid():
        return _timeline(request, session, status=400, trim_form=form)
    try:
        trimmed = trimming.session_items_trim(
            project=session.project, session_id=session.pk, actor=Actor.of(request.user),
            keep_last=form.cleaned_data["keep_last"], expected_last_seq=form.cleaned_data["expected_last_seq"],
        )
    except DomainError as exc:
        return _timeline(request, session, status=409, trim_form=form, error=exc.detail)
    messages.success(request, f"{trimmed.removed} item(s) removed" + (
        f" (seq {trimmed.first_seq}..{trimmed.last_seq}, sha256 {trimmed.replaced_hash[:12]}…)."
        if trimmed.removed else "."))
    return redirect("sessions:session_timeline", session.pk)


@require_POST
@console_page
@role_required(Role.OPERATOR)
def session_compact(request: ConsoleRequest, session_id: int) -> HttpResponse:
    """Replace a seq range with a summary item (sessions_app.trimming, the same service as the API's)."""
    session = sel.session_get(project_ids=project_ids(request), session_id=session_id)
    require_project_role(request, Role.OPERATOR, session.project_id)
    form = CompactForm(request.POST)
    if not form.is_valid():
        return _timeline(request, session, status=400, compact_form=form)
    given = form.cleaned_data
    try:
        trimmed = trimming.session_items_compact(
            project=session.project, session_id=session.pk, actor=Actor.of(request.user),
            first_seq=given["first_seq"], last_seq=given["last_seq"], summary=given["summary"], role=given["role"],
            expected_last_seq=given["expected_last_seq"],
        )
    except DomainError as exc:
        return _timeline(request, session, status=409 if exc.http_status == 409 else 400, compact_form=form,
                         error=exc.detail)
    messages.success(request, f"{trimmed.removed} item(s) replaced by a summary at seq "
                              f"{trimmed.summary.seq if trimmed.summary else '?'}.")
    return redirect("sessions:session_timeline", session.pk)
