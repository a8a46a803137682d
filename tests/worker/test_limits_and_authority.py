"""Issue 16, sections 3 and 5, in the resume worker: a run over its budget or past its deadline makes no further
tool call or node; the authority an approval was decided under is checked again at resume; an agent whose lease
ran out is noticed; runs that start waiting are checkpointed."""

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.test import override_settings
from django.utils import timezone

from harness.actors import Actor
from harness.models import ApiToken
from memory_app.context import context_project
from runs_app.models import ApprovalRequest, Checkpoint, ExternalEffect, NodeExecution, Run, RunEvent, RunStatus
from runs_app.services import (
    approval_request_create,
    checkpoint_create,
    run_claim,
    run_create,
    run_record_usage,
    run_transition,
)
from sessions_app.services import session_items_append
from tests import factories
from tests.worker.support import FakeService, approve, demo_run, keyed_adapters, reviewer
from worker import faults
from worker.pipeline import resume_run_by_id
from worker.recovery import recovery_pass

OWNER = "worker:test:1"
pytestmark = pytest.mark.django_db


@pytest.fixture
def service() -> Iterator[FakeService]:
    fake = FakeService().start()
    yield fake
    fake.stop()


def _key(run: Run) -> str:
    return run.pending_approval.idempotency_key


# --- budgets and deadlines -----------------------------------------------------------------------------


def test_an_approved_run_over_its_token_budget_makes_no_tool_call(service) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    key = _key(run)
    Run.objects.filter(pk=run.pk).update(token_budget=1000, tokens_used=1000)
    approve(run, reviewer(run.project))

    with override_settings(HARNESS_TOOL_ADAPTERS=keyed_adapters(service)):
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

    run.refresh_from_db()
    assert (run.status, run.blocked_step, run.failure_category, run.lease_owner) == (
        RunStatus.BLOCKED, "budget", "permission", "")
    assert service.requests[key] == 0
    effect = ExternalEffect.objects.get(run=run)
    assert (effect.status, effect.attempts) == ("intended", 0)  # intended, never dispatched
    assert run.metrics["failure_type"] == "budget"


def test_an_approved_run_past_its_deadline_makes_no_tool_call(service) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    key = _key(run)
    Run.objects.filter(pk=run.pk).update(deadline=timezone.now() - dt.timedelta(minutes=1))
    approve(run, reviewer(run.project))

    with override_settings(HARNESS_TOOL_ADAPTERS=keyed_adapters(service)):
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

    run.refresh_from_db()
    assert (run.blocked_step, run.error["step"]) == ("deadline", "deadline")
    assert service.requests[key] == 0


def test_a_worker_plan_that_reaches_its_cost_budget_runs_no_further_node(service) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    key = _key(run)
    Run.objects.filter(pk=run.pk).update(cost_budget=Decimal("0.5000"))
    approve(run, reviewer(run.project))
    # The publish's model calls are recorded once it is bound, before the plan's next node (summarize).
    faults.install(lambda name: run_record_usage(project=run.project_id, run_id=run.pk, tokens=10,
                                                 cost=Decimal("0.5000")) if name == "after_commit" else None)
    try:
        with override_settings(HARNESS_TOOL_ADAPTERS=keyed_adapters(service)):
            assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"
    finally:
        faults.install(None)

    run.refresh_from_db()
    assert (run.status, run.blocked_step, run.lease_owner) == (RunStatus.BLOCKED, "budget", "")
    assert service.requests[key] == 1  # the approved call, made once before the budget was reached
    assert not NodeExecution.objects.filter(run=run, node="summarize").exists()


def test_the_recovery_pass_blocks_runs_past_their_deadline(project) -> None:  # type: ignore[no-untyped-def]
    late = factories.make_run(project, deadline=timezone.now() - dt.timedelta(seconds=1))
    run_transition(project=project, run_id=late.pk, to=RunStatus.RUNNING, expected_version=None)
    on_time = factories.make_run(project, deadline=timezone.now() + dt.timedelta(hours=1))
    run_transition(project=project, run_id=on_time.pk, to=RunStatus.RUNNING, expected_version=None)

    passed = recovery_pass(enqueue=lambda run_id: None)

    assert passed["deadline_blocked"] == [late.pk]
    late.refresh_from_db()
    assert (late.status, late.blocked_step, late.failure_category) == (RunStatus.BLOCKED, "deadline", "permission")
    assert Run.objects.get(pk=on_time.pk).status == RunStatus.RUNNING


# --- authority at resume -------------------------------------------------------------------------------


def test_a_reviewer_who_lost_the_role_after_approving_does_not_authorize_the_call(service) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    key = _key(run)
    rita = reviewer(run.project)
    approve(run, rita)
    rita.groups.remove(Group.objects.get(name="reviewer"))

    with override_settings(HARNESS_TOOL_ADAPTERS=keyed_adapters(service)):
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

    run.refresh_from_db()
    assert (run.blocked_step, run.failure_category) == ("authority_lease", "permission")
    assert "no longer holds the reviewer role" in run.error["reason"]
    assert service.requests[key] == 0 and not ExternalEffect.objects.filter(run=run).exists()


def test_a_revoked_token_that_asked_does_not_authorize_the_call(service, project) -> None:  # type: ignore[no-untyped-def]
    token, _ = factories.make_agent_token(project, name="writer-1")
    run = demo_run(project)
    approval = run.pending_approval
    ApprovalRequest.objects.filter(pk=approval.pk).update(requested_by_token=token)
    approve(run, reviewer(project))
    ApiToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())

    with override_settings(HARNESS_TOOL_ADAPTERS=keyed_adapters(service)):
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

    run.refresh_from_db()
    assert run.blocked_step == "authority_lease" and "revoked" in run.error["reason"]
    assert service.requests[approval.idempotency_key] == 0


def test_a_checkpoint_taken_under_another_framework_major_version_is_not_resumed(service, project) -> None:  # type: ignore[no-untyped-def]
    run = factories.make_run(project, cursor={"node": "publish"})
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    checkpoint_create(project=project, run_id=run.pk, label="before publish", state={"framework_version": "2.3"})
    approval = approval_request_create(project=project, run_id=run.pk, tool="publish_chapter",
                                       arguments={"chapter": 1, "title": "One"}, idempotency_key="fw-1",
                                       actor=Actor.for_agent("a"))
    approve(Run.objects.get(pk=run.pk), reviewer(project))

    with override_settings(HARNESS_TOOL_ADAPTERS=keyed_adapters(service), HARNESS_FRAMEWORK_VERSION="1.4"):
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

    run.refresh_from_db()
    assert (run.blocked_step, run.failure_category) == ("compatibility", "semantic")
    assert "framework version 2.3" in run.error["reason"]
    assert service.requests[approval.idempotency_key] == 0


def test_an_expired_token_that_asked_does_not_authorize_the_call(service, project) -> None:  # type: ignore[no-untyped-def]
    token, _ = factories.make_agent_token(project, name="writer-1")
    run = demo_run(project)
    approval = run.pending_approval
    ApprovalRequest.objects.filter(pk=approval.pk).update(requested_by_token=token)
    approve(run, reviewer(project))
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))

    with override_settings(HARNESS_TOOL_ADAPTERS=keyed_adapters(service)):
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

    run.refresh_from_db()
    assert run.blocked_step == "authority_lease" and "expired" in run.error["reason"]
    assert service.requests[approval.idempotency_key] == 0


# --- checkpoints when a run starts waiting -------------------------------------------------------------


def test_a_run_that_starts_waiting_is_checkpointed_with_what_it_waits_for(project) -> None:  # type: ignore[no-untyped-def]
    run = factories.make_run(project, cursor={"node": "send"})
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    approval = approval_request_create(project=project, run_id=run.pk, tool="send_invoice", arguments={"n": 1},
                                       idempotency_key="inv-1", actor=Actor.for_agent("a"))
    run.refresh_from_db()
    waiting = Checkpoint.objects.get(pk=run.last_checkpoint_id)
    assert (waiting.approval_id, waiting.cursor, waiting.label) == (approval.pk, {"node": "send"},
                                                                     "waiting for approval of send_invoice")
    assert waiting.pending_gate == {"tool": "send_invoice", "fingerprint": approval.action_fingerprint,
                                    "approval": approval.pk}

    other = factories.make_run(project, cursor={"node": "poll"})
    run_transition(project=project, run_id=other.pk, to=RunStatus.RUNNING, expected_version=None)
    first = checkpoint_create(project=project, run_id=other.pk, label="x", state={"plan_version": 2})
    moved = run_transition(project=project, run_id=other.pk, to=RunStatus.WAITING_EXTERNAL, expected_version=None)
    external = Checkpoint.objects.get(pk=moved.last_checkpoint_id)
    assert (external.parent_id, external.state, external.pending_gate["external"]) == (first.pk, {"plan_version": 2},
                                                                                        True)
    assert Run.objects.get(pk=other.pk).last_checkpoint_id == external.pk


# --- an agent that went away ---------------------------------------------------------------------------


def test_an_agents_expired_lease_is_noticed_and_a_new_run_in_the_session_starts_clean(project) -> None:  # type: ignore[no-untyped-def]
    session = factories.make_session(project, memory_policy="session")
    session_items_append(project=project, session_id=session.pk, items=[
        {"role": "user", "content": "Fix the login bug"}, {"role": "assistant", "content": "Looking at auth.py"}])
    dead = factories.make_run(project, session)
    run_transition(project=project, run_id=dead.pk, to=RunStatus.RUNNING, expected_version=None,
                   updates={"current_node": "edit auth.py"})
    run_claim(project=project, run_id=dead.pk, owner="agent-7", lease_seconds=30)
    # Stale for longer than the grace (tests/runs_app/test_stale_runs.py holds the grace's edges).
    Run.objects.filter(pk=dead.pk).update(
        lease_expires_at=timezone.now() - dt.timedelta(seconds=settings.HARNESS_STALE_RUN_GRACE + 60))
    alive = factories.make_run(project, session)
    run_transition(project=project, run_id=alive.pk, to=RunStatus.RUNNING, expected_version=None)
    run_claim(project=project, run_id=alive.pk, owner="agent-8", lease_seconds=30)

    passed = recovery_pass(enqueue=lambda run_id: None)

    assert passed["agent_lease_expired"] == [dead.pk]
    dead.refresh_from_db()
    assert (dead.status, dead.blocked_step, dead.lease_owner) == (RunStatus.BLOCKED, "agent_lease_expired", "")
    noticed = RunEvent.objects.filter(run=dead, kind="status.blocked").get()
    assert "agent-7" in noticed.data["error"]["reason"]
    assert Run.objects.get(pk=alive.pk).status == RunStatus.RUNNING
    # Reopening the session: a new run, with the session's items in its context and none of the dead run's node.
    reopened = run_create(project=project, session_id=session.pk)
    assert reopened.current_node == "" and reopened.status == RunStatus.CREATED
    snapshot = context_project(project=project.pk, run_id=reopened.pk, budget_chars=4000)
    assert sorted(snapshot.item_seqs) == [1, 2]
    assert "edit auth.py" not in str(snapshot.content)
