"""The approval policies page (issue 33): each tool's governing policy and its earlier versions, the reviewer
groups and who is in them; an operator publishes a new version here (runs_app.services.approval_policies, the
service the API and the admin call too)."""

import datetime as dt
from decimal import Decimal

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from harness.actors import Actor
from harness.http.errors import DomainError
from harness.http.views import ConsoleRequest, console_page, project_ids, render_page, role_required, visible_projects
from harness.tenancy import Role, role_project_ids
from runs_app.forms import PolicyPublishForm
from runs_app.selectors import approval_policies as policies_sel
from runs_app.services.approval_policies import approval_policy_publish


def _hours(value: Decimal | None) -> dt.timedelta | None:
    return dt.timedelta(hours=float(value)) if value else None


def _publish_form(request: ConsoleRequest, data: object = None) -> PolicyPublishForm | None:
    """The publish form over the projects where the user is an operator; None where they are nowhere."""
    operated = set(role_project_ids(request.user, Role.OPERATOR, project_ids(request)))
    if not operated:
        return None
    projects = [p for p in visible_projects(request) if p.pk in operated]
    groups = policies_sel.reviewer_group_list(project_ids=sorted(operated))
    return PolicyPublishForm(data, projects=projects, groups=groups)


def _page(request: ConsoleRequest, form: PolicyPublishForm | None, *, status: int = 200,
          error: str = "") -> HttpResponse:
    ids = project_ids(request)
    context = {
        "tools": policies_sel.policies_by_tool(list(policies_sel.approval_policy_list(project_ids=ids))),
        "groups": policies_sel.reviewer_group_list(project_ids=ids),
        "form": form,
        "publish_error": error,
    }
    return render_page(request, "runs/policies.html", context, status=status)


@require_GET
@console_page
def policy_list(request: ConsoleRequest) -> HttpResponse:
    return _page(request, _publish_form(request))


@require_POST
@console_page
@role_required(Role.OPERATOR)
def policy_publish(request: ConsoleRequest) -> HttpResponse:
    form = _publish_form(request, request.POST)
    if form is None or not form.is_valid():
        return _page(request, form, status=400)
    given = form.cleaned_data
    try:
        published = approval_policy_publish(
            project=int(given["project"]), tool=given["tool"], actor=Actor.of(request.user),
            required_approvals=given["required_approvals"],
            eligible_groups=[int(pk) for pk in given["eligible_groups"]],
            expires_after=_hours(given["expires_after_hours"]), on_expiry=given["on_expiry"],
            escalate_to=int(given["escalate_to"]) if given["escalate_to"] else None,
            escalation_expires_after=_hours(given["escalation_expires_after_hours"]),
            always_ask=given["always_ask"], reject_options=given["reject_options"])
    except DomainError as exc:
        return _page(request, form, status=exc.http_status, error=exc.detail)
    messages.success(request, f"Published {published}.")
    return redirect("runs:policy_list")
