"""`executor="agent"` in the resume pipeline, in-process: expiry, repeated approvals in one run, the
re-validation that still stands, and the worker-only edge."""

import datetime as dt

import pytest
from django.test import override_settings
from django.utils import timezone

from harness.actors import Actor
from harness.http.errors import ConflictError
from harness.models import AuditEntry
from runs_app.models import ApprovalRequest, ApprovalStatus, ExternalEffect, Run, RunStatus
from runs_app.services import approval_decide, approval_request_create, run_claim, run_transition
from tests import factories
from tests.worker.support import reviewer
from worker.pipeline import resume_run_by_id

OWNER = "worker:test:1"
AGENT = "agent:1"


def _asking_run(project, *, expires_at: dt.datetime | None = None, key: str = "") -> tuple[Run, ApprovalRequest]:  # type: ignore[no-untyped-def]
    run = factories.make_run(project)
    run_claim(project=project, run_id=run.pk, owner=AGENT, lease_seconds=600)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None, lease_owner=AGENT)
    return run, _ask(run, expires_at=expires_at, key=key)


def _ask(run: Run, *, expires_at: dt.datetime | None = None, key: str = "") -> ApprovalRequest:
    return approval_request_create(project=run.project, run_id=run.pk, tool="send_invoice", arguments={"n": 1},
                                   idempotency_key=key or f"k-{run.pk}", actor=Actor.for_agent(AGENT),
                                   executor="agent", expires_at=expires_at)


@pytest.fixture
def project(db):  # type: ignore[no-untyped-def]
    return factories.make_project("agentpipe")


def test_asking_releases_the_lease_in_the_same_write(project) -> None:  # type: ignore[no-untyped-def]
    run = factories.make_run(project)
    run_claim(project=project, run_id=run.pk, owner=AGENT, lease_seconds=600)
    before = run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None,
                            lease_owner=AGENT)
    assert before.lease_owner == AGENT

    approval = _ask(before)

    asked = Run.objects.get(pk=run.pk)
    assert (asked.status, asked.lease_owner, asked.lease_expires_at, asked.pending_approval_id) == (
        RunStatus.WAITING_APPROVAL, "", None, approval.pk)
    # The move and the release in one write; then the waiting checkpoint's pointer (issue 16, section 5).
    assert asked.version == before.version + 2


def test_a_waiting_external_state_releases_the_lease_too(project) -> None:  # type: ignore[no-untyped-def]
    run = factories.make_run(project)
    run_claim(project=project, run_id=run.pk, owner=AGENT, lease_seconds=600)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None, lease_owner=AGENT)
    waiting = run_transition(project=project, run_id=run.pk, to=RunStatus.WAITING_EXTERNAL, expected_version=None,
                             lease_owner=AGENT)
    assert (waiting.status, waiting.lease_owner, waiting.lease_expires_at) == (RunStatus.WAITING_EXTERNAL, "", None)


def test_an_expired_agent_approval_is_bound_as_expired_and_handed_back(project) -> None:  # type: ignore[no-untyped-def]
    run, approval = _asking_run(project, expires_at=timezone.now() - dt.timedelta(seconds=1))

    assert resume_run_by_id(run.pk, owner=OWNER) == "done"

    run.refresh_from_db()
    assert (run.status, run.lease_owner, run.pending_approval_id) == (RunStatus.RUNNING, "", None)
    assert run.bound_result == {"decision": "expired", "approval": approval.pk, "executor": "agent",
                                "tool": "send_invoice", "idempotency_key": f"k-{run.pk}", "by": "",
                                "reason": "the approval expired before a decision"}
    assert ApprovalRequest.objects.get(pk=approval.pk).status == ApprovalStatus.EXPIRED
    assert not ExternalEffect.objects.exists()


def test_an_overdue_agent_approval_whose_policy_escalates_is_escalated_not_expired(project) -> None:  # type: ignore[no-untyped-def]
    """The resume is a second door where a request's time runs out: it escalates as the recovery pass does."""
    from runs_app.models import ApprovalPolicy, ExpiryAction, ReviewerGroup

    managers = ReviewerGroup.objects.create(project=project, name="managers")
    ApprovalPolicy.objects.create(project=project, tool="send_invoice", version=1, on_expiry=ExpiryAction.ESCALATE,
                                  escalate_to=managers, escalation_expires_after=dt.timedelta(hours=4))
    run, approval = _asking_run(project, expires_at=timezone.now() - dt.timedelta(seconds=1))

    resume_run_by_id(run.pk, owner=OWNER)

    escalated = ApprovalRequest.objects.get(pk=approval.pk)
    assert (escalated.status, escalated.routed_group_id) == (ApprovalStatus.PENDING, managers.pk)
    assert escalated.expires_at > timezone.now()
    assert Run.objects.get(pk=run.pk).status == RunStatus.WAITING_APPROVAL
    assert AuditEntry.objects.filter(action="approval.escalated").count() == 1


def test_a_worker_approval_that_expired_still_blocks(project) -> None:  # type: ignore[no-untyped-def]
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    approval_request_create(project=project, run_id=run.pk, tool="send_invoice", arguments={}, idempotency_key="w",
                            actor=Actor.for_agent(AGENT), expires_at=timezone.now() - dt.timedelta(seconds=1))

    assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"
    assert Run.objects.get(pk=run.pk).blocked_step == "approval_preconditions"


def test_a_forged_decision_still_blocks_an_agent_approval(project) -> None:  # type: ignore[no-untyped-def]
    """The row says approved, the audit log (written by the real decision) says rejected."""
    run, approval = _asking_run(project)
    approval_decide(project=project.pk, approval_id=approval.pk, actor=Actor.for_user(reviewer(project)),
                    decision="reject", reason="no")
    ApprovalRequest.objects.filter(pk=approval.pk).update(status=ApprovalStatus.APPROVED, approved_arguments={"n": 1},
                                                          approved_fingerprint=approval.action_fingerprint)

    assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"
    run.refresh_from_db()
    assert run.blocked_step == "approval_preconditions" and run.bound_result is None
    assert AuditEntry.objects.filter(target_id=str(approval.pk)).count() == 1


@override_settings(HARNESS_RESUME_MAX_ATTEMPTS=3)
def test_a_run_asks_and_resumes_more_often_than_the_attempt_limit(project) -> None:  # type: ignore[no-untyped-def]
    """Each finished resume settles its start and attempt: the limits count a stuck resume's, not the run's life."""
    rita = reviewer(project)
    run, approval = _asking_run(project, key="k-0")
    for n in range(1, 6):
        approval_decide(project=project.pk, approval_id=approval.pk, actor=Actor.for_user(rita), decision="approve")
        assert resume_run_by_id(run.pk, owner=OWNER) == "done", Run.objects.get(pk=run.pk).error
        run_claim(project=project, run_id=run.pk, owner=AGENT, lease_seconds=600)
        approval = _ask(Run.objects.get(pk=run.pk), key=f"k-{n}")
    run.refresh_from_db()
    assert (run.metrics["attempts"], run.metrics["settled_attempts"]) == (5, 5)


def test_the_agent_still_cannot_move_its_waiting_run_on_itself(project) -> None:  # type: ignore[no-untyped-def]
    run, approval = _asking_run(project)
    approval_decide(project=project.pk, approval_id=approval.pk, actor=Actor.for_user(reviewer(project)),
                    decision="approve")
    with pytest.raises(ConflictError) as refused:
        run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None,
                       actor=Actor.for_agent(AGENT))
    assert refused.value.code == "worker_only_transition"
