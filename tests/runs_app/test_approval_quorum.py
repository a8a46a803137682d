"""Quorum approvals and eligible reviewers (issue 33, part 1): a request records the policy it is governed by; N
distinct eligible reviewers approve the same action before it is approved (each earlier one a vote, audited, the
run still waiting, no resume queued), one rejection rejects, the asker and an agent never count, an edit is another
action with its own count, and a reviewer outside the policy's groups is refused 403 not_eligible."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from harness.actors import Actor
from harness.audit import audit_chain_verify
from harness.http.errors import ConflictError, Forbidden
from harness.models import AuditEntry, Project
from runs_app.models import (
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalStatus,
    ApprovalVote,
    ReviewerGroup,
    Run,
    RunEvent,
    RunStatus,
)
from runs_app.services import approval_decide, approval_request_create, run_transition
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from worker import tasks

    runs: list[int] = []
    monkeypatch.setattr(tasks, "enqueue_resume", runs.append)
    return runs


def _policy(project: Project, *, tool: str = "wire_money", quorum: int = 2,
            groups: tuple[ReviewerGroup, ...] = ()) -> ApprovalPolicy:
    version = ApprovalPolicy.objects.filter(project=project, tool=tool).count() + 1
    policy = ApprovalPolicy.objects.create(project=project, tool=tool, version=version, required_approvals=quorum)
    policy.eligible_groups.set(groups)
    return policy


def _ask(project: Project, *, tool: str = "wire_money", asker: Actor | None = None) -> ApprovalRequest:
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(project=project, run_id=run.pk, tool=tool, arguments={"amount": 900, "to": "ACME"},
                                   idempotency_key=f"key-{run.pk}", actor=asker or Actor.for_agent("payer"))


def _reviewers(project: Project, *names: str) -> list[User]:
    return [factories.make_user(name, role="reviewer", projects=[project]) for name in names]


def _decide(approval: ApprovalRequest, user: User, decision: str = "approve", **kwargs: Any) -> ApprovalRequest:
    current = ApprovalRequest.objects.get(pk=approval.pk)
    kwargs.setdefault("reason", "checked the invoice")
    return approval_decide(project=current.project_id, approval_id=current.pk, actor=Actor.for_user(user),
                           decision=decision, expected_version=current.version, **kwargs)


def test_a_request_records_the_policy_version_that_governs_it(project: Project) -> None:
    _policy(project, tool="", quorum=1)  # the project's default
    own = _policy(project, quorum=2)
    newer = _policy(project, quorum=3)
    asked = _ask(project)
    assert (asked.policy_id, asked.policy_version, asked.approvals_required) == (newer.pk, 2, 3)
    assert own.version == 1
    other_tool = _ask(project, tool="send_mail")  # the project's default governs a tool without its own
    assert (other_tool.policy_version, other_tool.approvals_required) == (1, 1)
    assert factories.make_project("no-policies") and _ask(factories.make_project("no-policies")).policy_id is None


def test_two_reviewers_approve_before_the_run_goes_on_and_each_vote_is_audited(
        project: Project, queued: list[int], django_capture_on_commit_callbacks: Any) -> None:
    _policy(project)
    asked = _ask(project)
    ann, bob = _reviewers(project, "ann", "bob")

    with django_capture_on_commit_callbacks(execute=True):
        first = _decide(asked, ann)
    assert (first.status, first.version) == (ApprovalStatus.PENDING, asked.version + 1)
    assert Run.objects.get(pk=asked.run_id).status == RunStatus.WAITING_APPROVAL
    assert queued == []  # a vote resumes nothing
    vote = AuditEntry.objects.get(action="approval.vote", target_id=str(asked.pk))
    assert (vote.actor, vote.data["votes"], vote.data["required"]) == ("user:ann", ["ann"], 2)
    with pytest.raises(ConflictError) as twice:
        _decide(asked, ann)
    assert twice.value.code == "already_voted"

    with django_capture_on_commit_callbacks(execute=True):
        decided = _decide(asked, bob)
    assert (decided.status, decided.decided_by, decided.approved_fingerprint) == (
        ApprovalStatus.APPROVED, bob, asked.action_fingerprint)
    assert queued == [asked.run_id]
    approved = AuditEntry.objects.get(action="approval.approved", target_id=str(asked.pk))
    assert approved.data["votes"] == ["ann", "bob"]
    assert list(RunEvent.objects.filter(run_id=asked.run_id, kind__startswith="approval.").order_by("seq")
                .values_list("kind", flat=True)) == ["approval.requested", "approval.vote", "approval.approved"]
    assert not any(report.breaks for report in audit_chain_verify(project_ids=[project.pk]))


def test_the_asker_does_not_count_and_a_version_read_before_a_vote_is_stale(project: Project) -> None:
    _policy(project)
    ann, bob, cat = _reviewers(project, "ann", "bob", "cat")
    asked = _ask(project, asker=Actor.for_user(ann))  # a person asked, and reviews in the project
    with pytest.raises(Forbidden) as own:
        _decide(asked, ann)
    assert own.value.code == "self_approval"
    _decide(asked, bob)
    with pytest.raises(ConflictError) as stale:  # bob's vote moved the version cat's page was read at
        approval_decide(project=project, approval_id=asked.pk, actor=Actor.for_user(cat), decision="approve",
                        reason="ok", expected_version=asked.version)
    assert stale.value.code == "version_conflict"
    assert _decide(asked, cat).status == ApprovalStatus.APPROVED
    assert set(ApprovalVote.objects.filter(approval=asked).values_list("user__username", flat=True)) == {"bob", "cat"}


def test_one_rejection_rejects_after_a_vote(project: Project) -> None:
    _policy(project)
    ann, bob = _reviewers(project, "ann", "bob")
    asked = _ask(project)
    _decide(asked, ann)
    rejected = _decide(asked, bob, "reject", reason="wrong account")
    assert (rejected.status, rejected.decision_reason) == (ApprovalStatus.REJECTED, "wrong account")


def test_an_edit_is_another_action_with_its_own_count(project: Project) -> None:
    _policy(project)
    ann, bob, cat = _reviewers(project, "ann", "bob", "cat")
    asked = _ask(project)
    _decide(asked, ann)  # a vote for the requested action
    edit = {"amount": 90, "to": "ACME"}
    after_edit = _decide(asked, bob, edited_arguments=edit, reason="the invoice says 90")
    assert after_edit.status == ApprovalStatus.PENDING  # ann's vote was for 900: it does not approve 90
    decided = _decide(asked, cat, edited_arguments=edit, reason="90 it is")
    assert (decided.status, decided.approved_arguments) == (ApprovalStatus.APPROVED, edit)
    assert AuditEntry.objects.get(action="approval.approved", target_id=str(asked.pk)).data["votes"] == ["bob", "cat"]


def test_only_the_policys_groups_may_decide(project: Project) -> None:
    finance = ReviewerGroup.objects.create(project=project, name="finance")
    _policy(project, quorum=1, groups=(finance,))
    ann, bob = _reviewers(project, "ann", "bob")
    finance.members.add(bob)
    asked = _ask(project)
    for decision in ("approve", "reject"):
        with pytest.raises(Forbidden) as refused:
            _decide(asked, ann, decision)
        assert refused.value.code == "not_eligible"
    assert _decide(asked, bob).status == ApprovalStatus.APPROVED


def test_the_api_answers_a_vote_with_the_count_and_refuses_the_ineligible_403(project: Project) -> None:
    finance = ReviewerGroup.objects.create(project=project, name="finance")
    _policy(project, groups=(finance,))
    ann, bob, eve = _reviewers(project, "ann", "bob", "eve")
    finance.members.add(ann, bob)
    asked = _ask(project)
    client = Client()

    def post(user: User, version: int) -> Any:
        client.force_login(user)
        return client.post(f"/api/v1/approvals/{asked.pk}/decision/", {
            "decision": "approve", "reason": "ok", "expected_version": version}, content_type="application/json",
            headers={"Idempotency-Key": f"decide-{user.username}-{version}"})

    refused = post(eve, asked.version)
    assert (refused.status_code, refused.json()["code"]) == (403, "not_eligible"), refused.content
    voted = post(ann, asked.version)
    assert voted.status_code == 200, voted.content
    body = voted.json()
    assert (body["status"], body["approvals_required"], body["policy_version"]) == ("pending", 2, 1)
    assert [v["by"] for v in body["votes"]] == ["ann"]
    decided = post(bob, body["version"]).json()
    assert decided["status"] == "approved" and [v["by"] for v in decided["votes"]] == ["ann", "bob"]


def test_a_policy_change_is_the_next_version_audited_and_the_admin_publishes_through_the_service(
        project: Project, other_project: Project) -> None:
    from runs_app.services.approval_policies import approval_policy_publish

    admin_user = User.objects.create_superuser("root-policy", password="pw-123456")
    finance = ReviewerGroup.objects.create(project=project, name="finance")
    first = approval_policy_publish(project=project, tool="wire_money", actor=Actor.for_user(admin_user),
                                    required_approvals=2, eligible_groups=[finance])
    client = Client()
    client.force_login(admin_user)
    response = client.post("/admin/runs_app/approvalpolicy/add/", {
        "project": project.pk, "tool": "wire_money", "required_approvals": "3", "eligible_groups": [finance.pk],
        "on_expiry": "reject", "reject_options": "[]"})
    assert response.status_code == 302, response.content.decode()[:3000]
    second = ApprovalPolicy.objects.get(project=project, tool="wire_money", version=2)
    assert (first.version, second.required_approvals, list(second.eligible_groups.all())) == (1, 3, [finance])
    assert AuditEntry.objects.filter(action="approval_policy.published", project=project).count() == 2
    assert _ask(project).approvals_required == 3
    elsewhere = ReviewerGroup.objects.create(project=other_project, name="theirs")
    from harness.http.errors import ValidationFailed
    with pytest.raises(ValidationFailed):  # another project's group
        approval_policy_publish(project=project, tool="wire_money", actor=Actor.for_user(admin_user),
                                eligible_groups=[elsewhere])
