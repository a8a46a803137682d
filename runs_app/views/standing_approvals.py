"""The standing approvals page (issue 33, part 2): every rule of the user's projects, the ones that could approve
now first, with what they cover, their uses and time left, and who wrote them; a reviewer revokes one here at once
(runs_app.services.standing_approvals, the service the API and the admin call too). Rules are written from an
approval's page ("Approve and don't ask again") or through the API."""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from harness.actors import Actor
from harness.http.errors import DomainError, NotFoundError
from harness.http.views import ConsoleRequest, console_page, project_ids, render_page, role_required
from harness.tenancy import Role, role_project_ids
from runs_app.selectors.standing_approvals import standing_approval_get, standing_approval_list
from runs_app.services.standing_approvals import standing_approval_revoke


@require_GET
@console_page
def standing_approval_list_view(request: ConsoleRequest) -> HttpResponse:
    ids = project_ids(request)
    context = {
        "live": list(standing_approval_list(project_ids=ids, live=True)),
        "ended": list(standing_approval_list(project_ids=ids, live=False)[:100]),
        # Revoke buttons only where the service will allow them.
        "revocable": set(role_project_ids(request.user, Role.REVIEWER, ids)),
    }
    return render_page(request, "runs/standing_approvals.html", context)


@require_POST
@console_page
@role_required(Role.REVIEWER)
def standing_approval_revoke_view(request: ConsoleRequest, rule_id: int) -> HttpResponse:
    rule = standing_approval_get(project_ids=project_ids(request), rule_id=rule_id)
    if rule is None:
        raise NotFoundError(f"Standing approval {rule_id} does not exist.")
    try:
        standing_approval_revoke(project=rule.project_id, rule_id=rule.pk, actor=Actor.of(request.user))
    except DomainError as exc:
        messages.error(request, exc.detail)
    else:
        messages.success(request, f"Revoked standing approval #{rule.pk} ({rule.tool}): it approves nothing more.")
    return redirect(reverse("runs:standing_approval_list") + f"#rule-{rule.pk}")
