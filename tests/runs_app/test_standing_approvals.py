"""Standing approvals (issue 33, part 2): a reviewer's time-boxed rule approves the requests it covers and no other;
its K uses approve K requests, then a person decides again; revoked between the approval and the resume, the
approved action is not run and a person is asked again; and it never stands for an always-ask tool, a quorum, an
agent, or the rule's author's own request. The resume runs in-process here (worker.pipeline); the real worker
process is tests/worker/test_standing_approval_worker.py."""

import datetime as dt
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from demo.scenario import DEMO_ACTION, demo_scenario_create
from harness.actors import Actor
from harness.audit import audit_chain_verify
from harness.http.errors import ConflictError, Forbidden, NotFoundError, ValidationFailed
from harness.models import AuditEntry, Project
from runs_app.models import (
    ApprovalOutcome,
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalStatus,
    ExternalEffect,
    ReviewerGroup,
    Run,
    RunStatus,
    StandingApproval,
)
from runs_app.services import approval_decide, approval_request_create, run_transition
from runs_app.services.standing_approvals import standing_approval_create, standing_approval_revoke
from tests import factories
from tests.worker.support import events
from worker.pipeline import resume_run_by_id

pytestmark = pytest.mark.django_db
OWNER = "worker:test:standing"
HOUR = dt.timedelta(hours=1)


@pytest.fixture
def project() -> Project:
    return factories.make_project("novelforge")


@pytest.fixture
def rita(project: Project) -> User:
    return factories.make_user("rita", role="reviewer", projects=[project])


def _rule(project: Project, user: User, **kwargs: Any) -> StandingApproval:
    kwargs.setdefault("tool", "publish_chapter")
    kwargs.setdefault("max_uses", 5)
    kwargs.setdefault("expires_in", HOUR)
    return standing_approval_create(project=project, actor=Actor.for_user(user), **kwargs)


def _ask(project: Project, **kwargs: Any) -> Run:
    """The demo's run (one per project: demo.scenario) asks to publish chapter 3, as the agent writer-1; its resume
    runs the demo's plan to the end."""
    return demo_scenario_create(project=project, **kwargs)


def _request(project: Project, *, asker: str = "writer-1", session: Any = None) -> ApprovalRequest:
    """Another run asks for the demo's action (no plan to resume: for what the request itself gets)."""
    run = factories.make_run(project, **({"session": session} if session is not None else {}))
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(project=project, run_id=run.pk, tool="publish_chapter",
                                   arguments=dict(DEMO_ACTION), idempotency_key=f"publish-{run.pk}",
                                   actor=Actor.for_agent(asker))


def _approval(run: Run) -> ApprovalRequest:
    return ApprovalRequest.objects.get(pk=Run.objects.get(pk=run.pk).pending_approval_id)


def test_a_rule_approves_the_request_it_covers_and_names_itself(project: Project, rita: User) -> None:
    rule = _rule(project, rita, agent="writer-1", match_arguments={"chapter": 3}, reason="chapter 3 is ready")

    run = _ask(project)

    approval = _approval(run)
    assert approval.status == ApprovalStatus.APPROVED
    assert (approval.standing_approval_id, approval.decided_by_id) == (rule.pk, rita.pk)
    assert approval.approved_fingerprint == approval.action_fingerprint
    assert approval.decision_reason == f"standing approval {rule.pk}: chapter 3 is ready"
    rule.refresh_from_db()
    assert rule.uses == 1
    entry = AuditEntry.objects.get(target_type="approvalrequest", target_id=str(approval.pk),
                                   action="approval.approved")
    assert entry.actor == "user:rita" and entry.data["standing_approval"] == rule.pk
    assert AuditEntry.objects.filter(action="standing_approval.created", target_id=str(rule.pk)).exists()
    assert not any(report.breaks for report in audit_chain_verify(project_ids=[project.pk]))
    assert [e.data.get("standing_approval") for e in events(run.pk, "approval.approved")] == [rule.pk]

    # The resume re-checks everything a person's decision gets, and the tool runs once.
    assert resume_run_by_id(run.pk, owner=OWNER) == "done"
    assert Run.objects.get(pk=run.pk).status == RunStatus.SUCCEEDED
    assert ExternalEffect.objects.filter(run=run).count() == 1


@pytest.mark.parametrize("narrowing", [
    {"match_arguments": {"chapter": 4}},
    {"match_schema": {"type": "object", "properties": {"title": {"const": "Another title"}}}},
    {"agent": "editor-2"},
    {"tool": "send_newsletter"},
])
def test_a_rule_leaves_a_request_it_does_not_cover_to_a_person(project: Project, rita: User,
                                                               narrowing: dict[str, Any]) -> None:
    rule = _rule(project, rita, **narrowing)
    approval = _approval(_ask(project))
    assert approval.status == ApprovalStatus.PENDING and approval.standing_approval_id is None
    assert StandingApproval.objects.get(pk=rule.pk).uses == 0


def test_a_schema_narrower_than_the_tool_s_covers_what_it_admits(project: Project, rita: User) -> None:
    _rule(project, rita, match_schema={"type": "object", "properties": {"chapter": {"maximum": 5}},
                                       "required": ["chapter"]})
    assert _approval(_ask(project)).status == ApprovalStatus.APPROVED  # chapter 3 <= 5


def test_a_rule_for_a_session_or_a_run_covers_only_it(project: Project, rita: User) -> None:
    session = factories.make_session(project)
    _rule(project, rita, session_id=session.pk)
    assert _request(project).status == ApprovalStatus.PENDING  # another session's run
    assert _request(project, session=session).status == ApprovalStatus.APPROVED
    ran = _request(project)  # pending: no rule for its run
    _rule(project, rita, run_id=ran.run_id)
    assert _request(project).status == ApprovalStatus.PENDING


def test_k_uses_approve_k_requests_then_a_person_decides(project: Project, rita: User) -> None:
    rule = _rule(project, rita, max_uses=2)
    statuses = [_request(project).status for _ in range(3)]
    assert statuses == [ApprovalStatus.APPROVED, ApprovalStatus.APPROVED, ApprovalStatus.PENDING]
    assert StandingApproval.objects.get(pk=rule.pk).uses == 2


def test_an_expired_or_revoked_rule_approves_nothing(project: Project, rita: User) -> None:
    expired = _rule(project, rita)
    StandingApproval.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    assert _request(project).status == ApprovalStatus.PENDING
    revoked = _rule(project, rita)
    standing_approval_revoke(project=project, rule_id=revoked.pk, actor=Actor.for_user(rita))
    assert _request(project).status == ApprovalStatus.PENDING


def test_revoked_between_the_approval_and_the_resume_the_run_waits_for_a_person(project: Project,
                                                                                rita: User) -> None:
    rule = _rule(project, rita)
    run = _ask(project)
    first = _approval(run)
    assert first.status == ApprovalStatus.APPROVED
    sam = factories.make_user("sam", role="reviewer", projects=[project])
    standing_approval_revoke(project=project, rule_id=rule.pk, actor=Actor.for_user(sam))

    assert resume_run_by_id(run.pk, owner=OWNER) == "stopped"

    run.refresh_from_db()
    assert run.status == RunStatus.WAITING_APPROVAL
    assert not ExternalEffect.objects.filter(run=run).exists()  # nothing was run
    first.refresh_from_db()
    assert first.status == ApprovalStatus.APPROVED  # the decision stays final ...
    assert first.outcome == ApprovalOutcome.NOT_RUN  # ... and says it was not acted on, and why
    assert f"standing approval {rule.pk} was revoked" in first.outcome_reason
    again = _approval(run)
    assert again.pk != first.pk and again.status == ApprovalStatus.PENDING
    assert (again.action_fingerprint, again.idempotency_key) == (first.action_fingerprint, first.idempotency_key)
    assert again.standing_approval_id is None
    assert run.last_checkpoint.approval_id == again.pk  # the run's waiting checkpoint is bound to the new request
    assert [e.data["previous"] for e in events(run.pk, "approval.asked_again")] == [first.pk]
    assert AuditEntry.objects.filter(action="approval.asked_again", target_id=str(again.pk)).exists()
    lapsed = [e for e in events(run.pk, "resume.authority_lease") if not e.data["ok"]]
    assert lapsed[0].data["code"] == "standing_approval_lapsed"

    # A person decides the new request; the action runs once.
    approval_decide(project=project.pk, approval_id=again.pk, actor=Actor.for_user(sam), decision="approve")
    assert resume_run_by_id(run.pk, owner=OWNER) == "done"
    assert Run.objects.get(pk=run.pk).status == RunStatus.SUCCEEDED
    assert ExternalEffect.objects.filter(run=run).count() == 1
    assert not any(report.breaks for report in audit_chain_verify(project_ids=[project.pk]))


def test_a_rule_that_ran_out_of_time_before_the_resume_asks_a_person_again(project: Project, rita: User) -> None:
    rule = _rule(project, rita)
    run = _ask(project)
    StandingApproval.objects.filter(pk=rule.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    assert resume_run_by_id(run.pk, owner=OWNER) == "stopped"
    assert _approval(run).status == ApprovalStatus.PENDING
    assert "ran out of time" in ApprovalRequest.objects.get(standing_approval=rule).outcome_reason


def test_the_rule_s_author_s_own_request_is_not_approved_by_it(project: Project, rita: User) -> None:
    _rule(project, rita)
    assert _approval(_ask(project, requested_by=Actor.for_user(rita))).status == ApprovalStatus.PENDING


def test_a_rule_whose_author_no_longer_reviews_approves_nothing(project: Project, rita: User) -> None:
    _rule(project, rita)
    rita.groups.clear()  # the reviewer role goes (factories.make_user grants it by group)
    assert _approval(_ask(project)).status == ApprovalStatus.PENDING


def test_policy_groups_bind_the_rule_s_author(project: Project, rita: User) -> None:
    editors = ReviewerGroup.objects.create(project=project, name="editors")
    policy = ApprovalPolicy.objects.create(project=project, tool="publish_chapter", version=1)
    policy.eligible_groups.set([editors])
    with pytest.raises(Forbidden) as refused:
        _rule(project, rita)
    assert refused.value.code == "not_eligible"
    editors.members.add(rita)
    rule = _rule(project, rita)
    editors.members.remove(rita)  # left the group after writing the rule: it no longer approves for them
    assert _approval(_ask(project)).status == ApprovalStatus.PENDING
    assert StandingApproval.objects.get(pk=rule.pk).uses == 0


@pytest.mark.parametrize(("policy", "code"), [({"always_ask": True}, "always_ask"),
                                              ({"required_approvals": 2}, "quorum_policy")])
def test_never_for_an_always_ask_tool_nor_a_quorum(project: Project, rita: User, policy: dict[str, Any],
                                                   code: str) -> None:
    ApprovalPolicy.objects.create(project=project, tool="publish_chapter", version=1, **policy)
    with pytest.raises(ConflictError) as refused:
        _rule(project, rita)
    assert refused.value.code == code


def test_a_policy_published_after_the_rule_wins(project: Project, rita: User) -> None:
    rule = _rule(project, rita)
    ApprovalPolicy.objects.create(project=project, tool="publish_chapter", version=1, always_ask=True)
    assert _approval(_ask(project)).status == ApprovalStatus.PENDING
    assert StandingApproval.objects.get(pk=rule.pk).uses == 0


def test_only_a_reviewer_of_the_project_writes_or_revokes_rules(project: Project, rita: User) -> None:
    with pytest.raises(Forbidden) as agent:
        standing_approval_create(project=project, actor=Actor.for_agent("writer-1"), tool="publish_chapter",
                                 max_uses=1, expires_in=HOUR)
    assert agent.value.code == "not_a_person"
    viewer = factories.make_user("vic", role="viewer", projects=[project])
    with pytest.raises(Forbidden) as not_reviewer:
        _rule(project, viewer)
    assert not_reviewer.value.code == "not_a_reviewer"
    stranger = factories.make_user("stan", role="reviewer", projects=[factories.make_project("elsewhere")])
    with pytest.raises(NotFoundError):
        _rule(project, stranger)
    rule = _rule(project, rita)
    with pytest.raises(NotFoundError):
        standing_approval_revoke(project=project, rule_id=rule.pk, actor=Actor.for_user(stranger))
    standing_approval_revoke(project=project, rule_id=rule.pk, actor=Actor.for_user(rita))
    with pytest.raises(ConflictError) as twice:
        standing_approval_revoke(project=project, rule_id=rule.pk, actor=Actor.for_user(rita))
    assert twice.value.code == "already_revoked"


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"max_uses": 0}, "max_uses"),
    ({"max_uses": 1001}, "max_uses"),
    ({"expires_in": -HOUR}, "expires_at"),
    ({"expires_in": dt.timedelta(days=31)}, "expires_at"),
    ({"match_schema": {"type": "object", "properties": {"chapter": {"type": "nonsense"}}}}, "match_schema"),
    ({"match_arguments": ["chapter"]}, "match_arguments"),
    ({"tool": "  "}, "tool"),
])
def test_a_rule_is_time_boxed_and_well_formed(project: Project, rita: User, kwargs: dict[str, Any],
                                              field: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        _rule(project, rita, **kwargs)
    assert (refused.value.code, refused.value.extra.get("field")) == ("invalid", field)
    assert not StandingApproval.objects.exists()




def test_the_admin_lists_rules_and_revokes_through_the_service(client: Any, project: Project, rita: User) -> None:
    rule = _rule(project, rita)
    admin = User.objects.create_superuser("root", "root@example.com", "pw-123456")
    client.force_login(admin)
    assert client.get(f"/admin/runs_app/standingapproval/{rule.pk}/change/").status_code == 200
    client.post("/admin/runs_app/standingapproval/", {"action": "revoke", "_selected_action": [rule.pk]})
    rule.refresh_from_db()
    assert rule.revoked_by == admin
    assert AuditEntry.objects.filter(action="standing_approval.revoked", actor="user:root").exists()
    assert _request(project).status == ApprovalStatus.PENDING
