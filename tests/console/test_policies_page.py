"""The approval policies page (issue 33): what governs each tool, the groups, and an operator's publish form."""

import pytest
from django.test import Client
from django.urls import reverse

from harness.actors import Actor
from harness.http.errors import Forbidden
from harness.models import AuditEntry
from runs_app.models import ApprovalPolicy, ReviewerGroup
from runs_app.services.approval_policies import approval_policy_publish
from tests import factories

pytestmark = pytest.mark.django_db


def _publish(client: Client, project_id: int, **fields: object) -> object:
    data = {"project": project_id, "tool": "wire_money", "required_approvals": 2, "on_expiry": "reject",
            "reject_options": "", **fields}
    return client.post(reverse("runs:policy_publish"), data)


def test_an_operator_publishes_versions_and_the_page_shows_the_current_one(  # type: ignore[no-untyped-def]
        project, operator_client, operator) -> None:
    group = ReviewerGroup.objects.create(project=project, name="finance")
    first = _publish(operator_client, project.pk, eligible_groups=[group.pk], expires_after_hours="4",
                     reject_options="too_big | The amount is over budget | Ask for a smaller amount")
    assert first.status_code == 302, first.content.decode()[:2000]
    second = _publish(operator_client, project.pk, required_approvals=3)
    assert second.status_code == 302
    policies = list(ApprovalPolicy.objects.filter(project=project, tool="wire_money").order_by("version"))
    assert [(p.version, p.required_approvals) for p in policies] == [(1, 2), (2, 3)]
    assert list(policies[0].eligible_groups.all()) == [group]
    assert policies[0].reject_options == [{"name": "too_big", "reviewer_text": "The amount is over budget",
                                           "agent_text": "Ask for a smaller amount"}]
    assert str(policies[0].expires_after) == "4:00:00"
    assert AuditEntry.objects.filter(action="approval_policy.published", actor=f"user:{operator.username}").count() == 2
    page = operator_client.get(reverse("runs:policy_list")).content.decode()
    assert 'data-tool="wire_money"' in page and "v2" in page and "3 distinct reviewers" in page
    assert "1 earlier version" in page and "finance" in page


def test_a_reviewer_sees_policies_but_cannot_publish(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    ApprovalPolicy.objects.create(project=project, tool="deploy", version=1, required_approvals=2)
    page = reviewer_client.get(reverse("runs:policy_list")).content.decode()
    assert 'data-tool="deploy"' in page and 'id="publish-button"' not in page
    assert _publish(reviewer_client, project.pk).status_code == 403  # type: ignore[attr-defined]
    assert not ApprovalPolicy.objects.filter(tool="wire_money").exists()


def test_another_projects_policies_are_not_shown_nor_publishable(  # type: ignore[no-untyped-def]
        project, other_project, operator_client) -> None:
    ApprovalPolicy.objects.create(project=other_project, tool="secret_tool", version=1)
    ReviewerGroup.objects.create(project=other_project, name="their-group")
    page = operator_client.get(reverse("runs:policy_list")).content.decode()
    assert "secret_tool" not in page and "their-group" not in page
    refused = _publish(operator_client, other_project.pk)
    assert refused.status_code == 400  # type: ignore[attr-defined]
    assert not ApprovalPolicy.objects.filter(project=other_project, tool="wire_money").exists()


def test_a_malformed_reject_option_is_a_field_error(project, operator_client) -> None:  # type: ignore[no-untyped-def]
    response = _publish(operator_client, project.pk, reject_options="just a name")
    assert response.status_code == 400  # type: ignore[attr-defined]
    assert "name | reviewer text | agent text" in response.content.decode()  # type: ignore[attr-defined]
    assert not ApprovalPolicy.objects.exists()


def test_publishing_needs_the_csrf_token(project, operator) -> None:  # type: ignore[no-untyped-def]
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    assert _publish(client, project.pk).status_code == 403  # type: ignore[attr-defined]
    assert not ApprovalPolicy.objects.exists()


def test_only_an_operator_of_the_project_publishes_through_the_service(project) -> None:  # type: ignore[no-untyped-def]
    reviewer = factories.make_user("rev", role="reviewer", projects=[project])
    for actor in (Actor.for_agent("coder"), Actor.for_user(reviewer)):
        with pytest.raises(Forbidden) as refused:
            approval_policy_publish(project=project, tool="deploy", actor=actor, required_approvals=2)
        assert refused.value.code == "not_an_operator"
    assert not ApprovalPolicy.objects.exists()
