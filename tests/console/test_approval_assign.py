"""Assigning a pending approval to a reviewer of its project: audited, shown in the inbox and on its page; an
assignment changes the row, so a bulk decision made on a page from before it is refused, not decided blind."""

import pytest
from django.urls import reverse

from harness.models import AuditEntry
from runs_app.models import ApprovalRequest, ApprovalStatus
from tests import factories
from tests.console.scenario import Scene

pytestmark = pytest.mark.django_db


def _assign(client, scene: Scene, assignee: str, version: int | None = None):  # type: ignore[no-untyped-def]
    return client.post(reverse("runs:approval_assign", args=[scene.approval.pk]),
                       {"assignee": assignee, "version": scene.approval.version if version is None else version})


def test_a_reviewer_assigns_to_a_reviewer_of_the_project(scene: Scene, project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    factories.make_user("ruth", role="reviewer", projects=[project])
    detail = reviewer_client.get(reverse("runs:approval_detail", args=[scene.approval.pk])).content.decode()
    assert 'id="assign-form"' in detail and '<option value="ruth">ruth</option>' in detail
    assert _assign(reviewer_client, scene, "ruth").status_code == 302
    approval = ApprovalRequest.objects.select_related("assigned_to").get(pk=scene.approval.pk)
    assert approval.assigned_to.username == "ruth" and approval.version == scene.approval.version + 1
    assert approval.status == ApprovalStatus.PENDING
    assert AuditEntry.objects.filter(action="approval.assigned", target_id=str(approval.pk)).count() == 1
    inbox = reviewer_client.get(reverse("runs:approval_inbox")).content.decode()
    assert '<td class="assigned">ruth</td>' in inbox
    detail = reviewer_client.get(reverse("runs:approval_detail", args=[approval.pk])).content.decode()
    assert "ruth" in detail.split('id="assigned-to"', 1)[1][:40]


def test_only_a_reviewer_of_the_approvals_project_can_be_assigned(scene: Scene, project, other_project,
                                                                  reviewer_client) -> None:  # type: ignore[no-untyped-def]
    factories.make_user("otto", role="operator", projects=[project])
    factories.make_user("gina", role="reviewer", projects=[other_project])
    for name in ("otto", "gina", "nobody-at-all"):
        response = _assign(reviewer_client, scene, name)
        assert response.status_code == 302
        page = reviewer_client.get(response["Location"]).content.decode()
        assert "is not a reviewer of this project" in page
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).assigned_to is None


def test_an_operator_cannot_assign(scene: Scene, project, operator_client) -> None:  # type: ignore[no-untyped-def]
    factories.make_user("ruth", role="reviewer", projects=[project])
    assert _assign(operator_client, scene, "ruth").status_code == 403
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).assigned_to is None


def test_a_stale_assignment_is_refused(scene: Scene, project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    factories.make_user("ruth", role="reviewer", projects=[project])
    response = _assign(reviewer_client, scene, "ruth", version=scene.approval.version + 5)
    assert "changed or was decided" in reviewer_client.get(response["Location"]).content.decode()
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).assigned_to is None


def test_a_bulk_decision_from_before_an_assignment_is_refused(scene: Scene, project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    factories.make_user("ruth", role="reviewer", projects=[project])
    shown = f"{scene.approval.pk}:{scene.approval.version}:{scene.approval.action_fingerprint}"
    _assign(reviewer_client, scene, "ruth")
    response = reviewer_client.post(reverse("runs:approval_bulk"), {"decision": "approve", "item": [shown]})
    assert 'data-code="version_conflict"' in response.content.decode()
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.PENDING
