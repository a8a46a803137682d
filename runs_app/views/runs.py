"""The run pages: the runs list (paged by seeking, filtered, with status counts) and the run inspector (events,
timeline, effects, approvals, handoffs and the panels apps above register), and the console's actions on a run or
on its pending approval: each GET previews, its POST does it.

The preview is `run_action_plan` / `approval_action_plan`, the code the action itself runs, on the row as it
is; its form carries the version it showed, and the POST is refused (409, nothing done) when the row has moved
on since. Operators act on runs, reviewers on approvals; anyone else gets 403 (and sees no buttons).
"""

import re
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpResponse, QueryDict
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.datastructures import MultiValueDict
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from harness.actors import Actor
from harness.http.errors import ConflictError, DomainError, Forbidden
from harness.http.views import (
    ConsoleRequest,
    asked_part,
    console_page,
    project_ids,
    project_roles,
    render_page,
    role_required,
    visible_projects,
)
from harness.tenancy import Role
from runs_app import inspector_panels
from runs_app.filters import RunListFilter
from runs_app.forms import ApprovalExtendForm, RunActionForm
from runs_app.machines import RUN_MACHINE
from runs_app.models import ApprovalRequest, Run, RunStatus
from runs_app.presentation.events import events_shown
from runs_app.presentation.json_text import pretty
from runs_app.presentation.run_heading import run_heading
from runs_app.presentation.timeline import family as event_family
from runs_app.presentation.timeline import run_timeline
from runs_app.resume_due import UNKNOWN_EFFECT, resume_due
from runs_app.selectors import approvals as approvals_sel
from runs_app.selectors import effects as effects_sel
from runs_app.selectors import handoffs as handoffs_sel
from runs_app.selectors import live as live_sel
from runs_app.selectors import paging as paging_sel
from runs_app.selectors import runs as runs_sel
from runs_app.selectors import threads as thread_sel
from runs_app.services import (
    ApprovalAction,
    RunAction,
    approval_action_plan,
    approval_cancel,
    approval_extend,
    run_act,
    run_action_plan,
)
from runs_app.services.run_actions import declared_repair, started_by_worker
from runs_app.views.common import query_without_page
from runs_app.views.live import poll_of, unchanged


def _run_filters(data: QueryDict, *, drop: set[str]) -> RunListFilter:
    """The list's filters without those named in `drop` (a range filter's `_after`/`_before` too)."""
    kept = MultiValueDict({key: values for key, values in data.lists()
                           if key not in drop and key.rsplit("_", 1)[0] not in drop})
    filters = RunListFilter(kept)
    filters.is_valid()  # what is left is valid: every bad filter was dropped
    return filters


RUN_SORT_LABELS = (("-created", "newest first"), ("created", "oldest first"), ("-updated", "recently updated"),
                   ("updated", "least recently updated"))


@require_GET
@console_page
def run_list(request: ConsoleRequest) -> HttpResponse:
    """Runs across the user's projects, filtered by the URL's query (shareable), paged by seeking.

    A bad value in a filter is shown beside the form and that filter is not applied (the others are).
    """
    filters = RunListFilter(request.GET)
    errors = {} if filters.is_valid() else filters.errors
    applied = _run_filters(request.GET, drop=set(errors))
    slug = request.GET.get("project", "")
    ids = [p.pk for p in visible_projects(request) if not slug or p.slug == slug]
    sort = request.GET.get("sort", "-created")
    sort = sort if sort in runs_sel.RUN_SORTS else "-created"
    page = runs_sel.run_page(project_ids=ids, refine=applied.filter_queryset, sort=sort,
                        after=request.GET.get("after"), before=request.GET.get("before"))
    # Each status's count under the other filters: a click on a count narrows the list to it.
    counts = runs_sel.run_status_counts(project_ids=ids,
                                   refine=_run_filters(request.GET, drop={*errors, "status"}).filter_queryset)
    query = query_without_page(request)
    now = timezone.now()
    without_status = request.GET.copy()
    for key in ("status", "page", "part", "after", "before"):
        without_status.pop(key, None)
    context = {
        "form": filters.form,
        "errors": errors,
        "page": page,
        "query": query,
        "status_counts": [(status, counts.get(status, 0)) for status in RunStatus.values],
        "status_query": without_status.urlencode(),
        "count_cap": paging_sel.COUNT_CAP,
        "selected_statuses": request.GET.getlist("status"),
        "sort": sort,
        "sorts": RUN_SORT_LABELS,
        "project": slug,
        "agents": runs_sel.run_agents(project_ids=ids),
        "blocked_steps": runs_sel.run_blocked_steps(project_ids=ids),
        "statuses": RunStatus.values,
        # Running past an expired lease: the "stale" badge beside the status (issue 32, part 5).
        "stale_ids": {run.pk for run in page.object_list if runs_sel.run_is_stale(run, now=now)},
    }
    return render_page(request, "runs/run_list.html", context, partials=("run-table",))


INSPECTOR_PARTIALS = ("events", "timeline")


@require_GET
@console_page
def run_inspector(request: ConsoleRequest, run_id: int) -> HttpResponse:
    # The page polls itself (runs_app.views.live): 204 after one statement while the run, its row and its events
    # are as the page was drawn; else the whole page, of which htmx swaps in #run-page.
    version = live_sel.run_version(project_ids=project_ids(request), run_id=run_id)
    if version != live_sel.GONE and (answer := unchanged(request, version)) is not None:
        return answer
    run = runs_sel.run_inspect(project_ids=project_ids(request), run_id=run_id)
    part = asked_part(request, INSPECTOR_PARTIALS)
    context: dict[str, Any] = {"run": run, "live": poll_of(request, version),
                               "heading": run_heading(run, runs_sel.run_fork_origin(run)),
                               "starts_with_worker": run.status == RunStatus.CREATED and started_by_worker(run)}
    if part != "timeline":
        events = Paginator(runs_sel.run_events(run), 100).get_page(request.GET.get("page"))
        context.update(events=events, events_shown=events_shown(list(events.object_list)))
    if part != "events":
        family = request.GET.get("kind", "")
        family = family if re.fullmatch(r"[\w-]{1,64}", family) else ""
        node_executions = runs_sel.run_node_executions(run)
        window = runs_sel.run_timeline_events(run, family=family)
        # The service's own families, and whatever an agent named its events (`note`, `tool.call`, ...).
        families = sorted({*runs_sel.EVENT_FAMILIES, *(event_family(e.kind) for e in window),
                           *([family] if family else [])})
        context.update(
            timeline=run_timeline(window, sorted(node_executions, key=lambda n: (n.started_at, n.pk)),
                                  families=families, show_nodes=family in ("", "node")),
            timeline_family=family, timeline_limit=runs_sel.TIMELINE_EVENTS, node_executions=node_executions,
        )
    if not part:
        context.update(
            cursor_pretty=pretty(run.cursor),
            error_pretty=pretty(run.error) if run.error else "",
            bound_result_pretty=pretty(run.bound_result) if run.bound_result is not None else "",
            metrics_pretty=pretty(run.metrics),
            effects=effects_sel.run_effects(run),
            approvals=approvals_sel.run_approvals(run),
            handoffs=handoffs_sel.run_handoffs(run),
            run_actions=offered_run_actions(request, run),
            thread_ttl=thread_sel.thread_ttl_card(run),
            **inspector_panels.panels(run),  # the context snapshots (memory_app), registered from above
        )
    return render_page(request, "runs/run_inspector.html", context, partials=INSPECTOR_PARTIALS)


# --- the console's actions on a run ----------------------------------------------------------

ACTION_LABELS: dict[str, str] = {
    RunAction.CANCEL: "Cancel the run",
    RunAction.RETRY: "Retry from the blocked step",
    RunAction.REPAIR: "Route to the repair node",
    RunAction.FAIL: "Fail the run",
    RunAction.REQUEUE: "Re-queue the resume",
    RunAction.START: "Start the run",
}


APPROVAL_LABELS: dict[str, str] = {
    ApprovalAction.CANCEL: "Cancel the approval",
    ApprovalAction.EXTEND: "Extend the approval",
}


PANEL = ("action-panel",)


def _done(request: ConsoleRequest, url: str, notice: str) -> HttpResponse:
    messages.success(request, notice)
    # htmx would swap the page into the panel: it is told to load the whole page instead.
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _run_page(request: ConsoleRequest, run_id: int, action: str, *, form: RunActionForm | None = None,
              status: int = 200, conflict: str = "", error: str = "") -> HttpResponse:
    run = runs_sel.run_inspect(project_ids=project_ids(request), run_id=run_id)
    plan = run_action_plan(run=run, action=action)
    context: dict[str, Any] = {
        "run": run, "plan": plan, "label": start_label(run) if action == RunAction.START else ACTION_LABELS[action],
        "conflict": conflict, "error": error, "heading": run_heading(run, runs_sel.run_fork_origin(run)),
        "action_url": reverse(f"runs:run_{action}", args=[run.pk]),
        # A refused form keeps the reason typed; the version is always the one this preview shows.
        "form": RunActionForm(initial={"version": run.version, "reason": form["reason"].value() if form else ""}),
        "form_errors": form.errors if form is not None else {},
    }
    return render_page(request, "runs/run_action.html", context, partials=PANEL, status=status)


def _run_action(action: str) -> Callable[..., HttpResponse]:
    @require_http_methods(["GET", "POST"])
    @console_page
    @role_required(Role.OPERATOR)
    def view(request: ConsoleRequest, run_id: int) -> HttpResponse:
        if request.method == "GET":
            return _run_page(request, run_id, action)
        run = runs_sel.run_inspect(project_ids=project_ids(request), run_id=run_id)  # 404 outside the user's projects
        form = RunActionForm(request.POST)
        if not form.is_valid():
            return _run_page(request, run_id, action, form=form, status=400)
        try:
            run_act(project=run.project_id, run_id=run.pk, actor=Actor.of(request.user), action=action,
                    reason=form.cleaned_data["reason"], expected_version=form.cleaned_data["version"])
        except Forbidden as exc:
            raise PermissionDenied(exc.detail) from None
        except ConflictError as exc:
            return _run_page(request, run_id, action, form=form, status=409, conflict=exc.detail)
        except DomainError as exc:
            return _run_page(request, run_id, action, form=form, status=400, error=exc.detail)
        return _done(request, reverse("runs:run_inspector", args=[run_id]), f"{ACTION_LABELS[action]}: done.")

    view.__name__ = view.__qualname__ = f"run_{action}"
    return view


run_cancel = _run_action(RunAction.CANCEL)


run_retry = _run_action(RunAction.RETRY)


run_repair = _run_action(RunAction.REPAIR)


run_fail = _run_action(RunAction.FAIL)


run_requeue = _run_action(RunAction.REQUEUE)


run_start = _run_action(RunAction.START)


# --- pending approvals ---------------------------------------------------------------------


def _approval(request: ConsoleRequest, approval_id: int) -> ApprovalRequest:
    return approvals_sel.approval_for_decision(project_ids=project_ids(request), approval_id=approval_id)


def _hours(request: ConsoleRequest) -> int:
    value = (request.POST if request.method == "POST" else request.GET).get("hours", "24")
    return int(value) if value.isdigit() and len(value) < 6 else 0


def _approval_page(request: ConsoleRequest, approval_id: int, action: str, *, form: RunActionForm | None = None,
                   status: int = 200, conflict: str = "", error: str = "") -> HttpResponse:
    approval = _approval(request, approval_id)
    hours = _hours(request)
    plan = approval_action_plan(approval=approval, action=action, hours=hours)
    form_class = ApprovalExtendForm if action == ApprovalAction.EXTEND else RunActionForm
    context: dict[str, Any] = {
        "approval": approval, "run": approval.run, "plan": plan, "label": APPROVAL_LABELS[action],
        "conflict": conflict, "error": error, "extend": action == ApprovalAction.EXTEND,
        "action_url": reverse(f"runs:approval_{action}", args=[approval.pk]),
        "form": form_class(initial={"version": approval.version, "hours": hours or 24,
                                    "reason": form["reason"].value() if form else ""}),
        "form_errors": form.errors if form is not None else {},
    }
    return render_page(request, "runs/approval_action.html", context, partials=PANEL, status=status)


def _approval_action(action: str) -> Callable[..., HttpResponse]:
    @require_http_methods(["GET", "POST"])
    @console_page
    @role_required(Role.REVIEWER)
    def view(request: ConsoleRequest, approval_id: int) -> HttpResponse:
        if request.method == "GET":
            return _approval_page(request, approval_id, action)
        approval = _approval(request, approval_id)
        form = (ApprovalExtendForm if action == ApprovalAction.EXTEND else RunActionForm)(request.POST)
        if not form.is_valid():
            return _approval_page(request, approval_id, action, form=form, status=400)
        data, actor = form.cleaned_data, Actor.of(request.user)
        try:
            if action == ApprovalAction.EXTEND:
                approval_extend(project=approval.project_id, approval_id=approval.pk, actor=actor,
                                reason=data["reason"], hours=data["hours"], expected_version=data["version"])
            else:
                approval_cancel(project=approval.project_id, approval_id=approval.pk, actor=actor,
                                reason=data["reason"], expected_version=data["version"])
        except Forbidden as exc:
            raise PermissionDenied(exc.detail) from None
        except ConflictError as exc:
            return _approval_page(request, approval_id, action, form=form, status=409, conflict=exc.detail)
        except DomainError as exc:
            return _approval_page(request, approval_id, action, form=form, status=400, error=exc.detail)
        return _done(request, reverse("runs:run_inspector", args=[approval.run_id]),
                     f"{APPROVAL_LABELS[action]}: done.")

    view.__name__ = view.__qualname__ = f"approval_{action}"
    return view


approval_cancel_view = _approval_action(ApprovalAction.CANCEL)


approval_extend_view = _approval_action(ApprovalAction.EXTEND)


def offered_run_actions(request: ConsoleRequest, run: Run) -> list[tuple[str, str, str]]:
    """The actions the run inspector offers an operator (action, label, preview URL): those whose preview
    would not refuse outright. The preview itself, on a click, is the plan's word."""
    if not project_roles(request, run.project_id)[Role.OPERATOR] or run.status in RUN_MACHINE.terminal:
        return []
    offered = [RunAction.CANCEL]
    if run.status == RunStatus.BLOCKED:
        offered[:0] = [RunAction.RETRY] if run.blocked_step != UNKNOWN_EFFECT else []
        offered[1:1] = [RunAction.REPAIR] if declared_repair(run) else []
        offered.append(RunAction.FAIL)
    elif run.status == RunStatus.CREATED:
        offered.insert(0, RunAction.START)
    elif resume_due(Run.objects.filter(pk=run.pk)):
        offered.insert(0, RunAction.REQUEUE)
    return [(action, start_label(run) if action == RunAction.START else ACTION_LABELS[action],
             reverse(f"runs:run_{action}", args=[run.pk])) for action in offered]


def start_label(run: Run) -> str:
    """What starting a created run (a console fork) hands it to, said on the button."""
    return "Run with the worker" if started_by_worker(run) else "Start and notify the agent (webhook)"
