"""The console's doors to standing approvals (issue 33, part 2): "Approve and don't ask again" on an approval's page
(the approval and the rule written together, or neither), the standing approvals page and its revoke button, and
the same role and project scoping as every page."""

import datetime as dt

import pytest
from django.test import Client
from django.urls import reverse

from harness.actors import Actor
from runs_app.models import ApprovalPolicy, ApprovalRequest, ApprovalStatus, RunStatus, StandingApproval
from runs_app.services import approval_request_create, run_transition
from runs_app.services.standing_approvals import standing_approval_create
from tests import factories
from tests.console.scenario import Scene

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def _push_again(scene: Scene, branch: str = "fix/login") -> ApprovalRequest:
    """Another run of the scene's session asks for the scene's action (git.push), as the same agent."""
    run = factories.make_run(scene.project, scene.session)
    run_transition(project=scene.project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(project=scene.project, run_id=run.pk, tool="git.push",
                                   arguments={"branch": branch, "remote": "origin", "force": False},
                                   idempotency_key=f"push-{run.pk}", actor=Actor.for_agent("coder"))


def _approve_standing(client: Client, approval: ApprovalRequest, **fields: object) -> object:
    data = {"version": approval.version, "standing": "1", "standing_scope": "agent", "standing_match": "exact",
            "standing_hours": 8, "standing_uses": 2, **fields}
    return client.post(reverse("runs:approval_approve", args=[approval.pk]), data)


def test_approve_and_don_t_ask_again_writes_the_rule_beside_the_approval(  # type: ignore[no-untyped-def]
        scene: Scene, reviewer_client, reviewer) -> None:
    page = reviewer_client.get(reverse("runs:approval_detail", args=[scene.approval.pk])).content.decode()
    assert 'id="approve-standing"' in page

    response = _approve_standing(reviewer_client, scene.approval)

    assert response.status_code == 302
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.APPROVED
    rule = StandingApproval.objects.get()
    assert (rule.tool, rule.agent, rule.created_by, rule.max_uses, rule.uses) == ("git.push", "agent:coder",
                                                                                 reviewer, 2, 0)
    assert rule.match_arguments == scene.approval.arguments
    # The next identical request is approved by it; a different one waits for a person.
    again = _push_again(scene)
    assert (again.status, again.standing_approval_id) == (ApprovalStatus.APPROVED, rule.pk)
    assert _push_again(scene, branch="main").status == ApprovalStatus.PENDING
    decided = reviewer_client.get(reverse("runs:approval_detail", args=[again.pk])).content.decode()
    assert f"standing approval #{rule.pk}" in decided and 'id="decided-by-rule"' in decided


def test_a_refused_rule_leaves_the_approval_undecided_too(  # type: ignore[no-untyped-def]
        scene: Scene, reviewer_client) -> None:
    ApprovalPolicy.objects.create(project=scene.project, tool="git.push", version=1, always_ask=True)
    asked = _push_again(scene)  # governed by the always-ask policy
    page = reviewer_client.get(reverse("runs:approval_detail", args=[asked.pk])).content.decode()
    assert 'id="approve-standing"' not in page and "always ask" in page

    response = _approve_standing(reviewer_client, asked)

    assert response.status_code == 409
    assert ApprovalRequest.objects.get(pk=asked.pk).status == ApprovalStatus.PENDING
    assert not StandingApproval.objects.exists()


def test_the_page_lists_rules_and_a_reviewer_revokes_one(  # type: ignore[no-untyped-def]
        scene: Scene, reviewer_client, reviewer, operator_client) -> None:
    rule = standing_approval_create(project=scene.project, actor=Actor.for_user(reviewer), tool="git.push",
                                    max_uses=3, expires_in=dt.timedelta(hours=2))
    page = reviewer_client.get(reverse("runs:standing_approval_list")).content.decode()
    assert f'id="rule-{rule.pk}"' in page and f'id="revoke-{rule.pk}"' in page and "0 of 3" in page
    operator_page = operator_client.get(reverse("runs:standing_approval_list")).content.decode()
    assert f'id="rule-{rule.pk}"' in operator_page and f'id="revoke-{rule.pk}"' not in operator_page
    assert operator_client.post(reverse("runs:standing_approval_revoke", args=[rule.pk])).status_code == 403

    response = reviewer_client.post(reverse("runs:standing_approval_revoke", args=[rule.pk]))

    assert response.status_code == 302
    assert StandingApproval.objects.get(pk=rule.pk).revoked_by == reviewer
    after = reviewer_client.get(reverse("runs:standing_approval_list")).content.decode()
    assert "rule-revoked" in after and f'id="revoke-{rule.pk}"' not in after
    assert _push_again(scene).status == ApprovalStatus.PENDING


def test_another_project_s_rules_are_neither_shown_nor_revocable(  # type: ignore[no-untyped-def]
        scene: Scene, other_project, reviewer_client) -> None:
    theirs = standing_approval_create(
        project=other_project, tool="their_tool", max_uses=1, expires_in=dt.timedelta(hours=1),
        actor=Actor.for_user(factories.make_user("gus", role="reviewer", projects=[other_project])))
    assert "their_tool" not in reviewer_client.get(reverse("runs:standing_approval_list")).content.decode()
    assert reviewer_client.post(reverse("runs:standing_approval_revoke", args=[theirs.pk])).status_code == 404
    assert StandingApproval.objects.get(pk=theirs.pk).revoked_at is None


def test_revoking_needs_the_csrf_token(scene: Scene, reviewer) -> None:  # type: ignore[no-untyped-def]
    rule = standing_approval_create(project=scene.project, actor=Actor.for_user(reviewer), tool="git.push",
                                    max_uses=1, expires_in=dt.timedelta(hours=1))
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(reviewer)
    assert strict.post(reverse("runs:standing_approval_revoke", args=[rule.pk])).status_code == 403
    assert StandingApproval.objects.get(pk=rule.pk).revoked_at is None
