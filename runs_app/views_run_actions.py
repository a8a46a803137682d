"""Console pages that act on a run or on its pending approval: each GET previews, its POST does it.

The preview is `run_action_plan` / `approval_action_plan`, the code the action itself runs, on the row as it
is; its form carries the version it showed, and the POST is refused (409, nothing done) when the row has moved
on since. Operators act on runs, reviewers on approvals; anyone else gets 403 (and sees no buttons).
"""

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from harness.actors import Actor
from harness.http.errors import ConflictError, DomainError, Forbidden
from harness.http.views import ConsoleRequest, console_page, project_ids, project_roles, render_page, role_required
from harness.tenancy import Role
from runs_app.forms import ApprovalExtendForm, RunActionForm
from runs_app.machines import RUN_MACHINE
from runs_app.models import ApprovalRequest, Run, RunStatus
from runs_app.resume_due import UNKNOWN_EFFECT, resume_due
from runs_app.selectors import approvals as approvals_sel
from runs_app.selectors import runs as runs_sel
from runs_app.services import (
    ApprovalAction,
    RunAction,
    approval_action_plan,
    approval_cancel,
    approval_extend,
    run_act,
    run_action_plan,
)
from runs_app.services.run_actions import declared_repair

ACTION_LABELS: dict[str, str] = {
    RunAction.CANCEL: "Cancel the run",
    RunAction.RETRY: "Retry from the blocked step",
    RunAction.REPAIR: "Route to the repair node",
    RunAction.FAIL: "Fail the run",
    RunAction.REQUEUE: "Re-queue the resume",
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


# --- runs ----------------------------------------------------------------------------------


def _run_page(request: ConsoleRequest, run_id: int, action: str, *, form: RunActionForm | None = None,
              status: int = 200, conflict: str = "", error: str = "") -> HttpResponse:
    run = runs_sel.run_inspect(project_ids=project_ids(request), run_id=run_id)
    plan = run_action_plan(run=run, action=action)
    context: dict[str, Any] = {
        "run": run, "plan": plan, "label": ACTION_LABELS[action], "conflict": conflict, "error": error,
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
    elif resume_due(Run.objects.filter(pk=run.pk)):
        offered.insert(0, RunAction.REQUEUE)
    return [(action, ACTION_LABELS[action], reverse(f"runs:run_{action}", args=[run.pk])) for action in offered]
