"""Approvals whose tool the agent runs itself (`executor="agent"`), over the live API and a real worker.

The agent asks through HarnessClient against pytest-django's live server; a reviewer decides with a
personal token; a real `celery worker` process (tests.worker.support.Workers) resumes the run. The tool
named here has no adapter in the worker, so a resume that tried to resolve one would block at
`capability`, and the fake service's request count shows that nothing was called.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from harness_client import HarnessClient, RetryPolicy

from harness.models import Project
from runs_app.models import ApprovalRequest, ExternalEffect, Run, RunEvent, RunStatus
from tests import factories
from tests.worker.support import FakeService, Workers
from worker.registry import STEP_NAMES

pytestmark = [pytest.mark.worker]

FAST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)
AGENT = "invoice-agent:1"
TOOL = "send_invoice"  # no adapter is configured for it in the worker
ARGUMENTS = {"customer": "acme", "amount": 120}
WAIT = {"timeout": 60.0, "poll_interval": 0.1, "max_poll_interval": 0.5}


@dataclass
class Live:
    url: str
    project: Project
    agent: HarnessClient
    reviewer: HarnessClient


@pytest.fixture
def live(live_server: Any, workers: Workers, settings: Any) -> Iterator[Live]:  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    project = factories.make_project("agentexec")
    _, agent_token = factories.make_agent_token(project, name="invoice-agent")
    reviewer = factories.make_user("agent-exec-reviewer", role="reviewer", projects=[project])
    _, reviewer_token = factories.make_personal_token(reviewer)
    workers.start("w")
    with HarnessClient(live_server.url, agent_token, retry=FAST_RETRY) as agent, \
            HarnessClient(live_server.url, reviewer_token, retry=FAST_RETRY) as reviewing:
        yield Live(url=live_server.url, project=project, agent=agent, reviewer=reviewing)


def _agent_asks(hc: HarnessClient, *, executor: str = "agent", lease_seconds: int = 600) -> tuple[int, int, str]:
    """The agent's run, claimed and running, asks for approval; returns (run id, approval id, key)."""
    session = hc.create_session(role="writer")
    run = hc.create_run(session=session.id, active_agent=AGENT, cursor={"node": "invoice"})
    run = hc.claim_run(run.id, owner=AGENT, lease_seconds=lease_seconds)
    run = hc.transition_run(run.id, "running", expected_version=run.version, lease_owner=AGENT)
    key = f"invoice-{run.id}"
    approval = hc.request_approval(run.id, tool=TOOL, arguments=ARGUMENTS, idempotency_key=key,
                                   executor=executor, reason="over the auto-approve limit",
                                   lease_owner=AGENT)  # type: ignore[arg-type]
    assert approval.executor == executor and approval.status == "pending"
    # The request released the agent's lease in the same write that moved the run to waiting_approval.
    asked = hc.get_run(run.id)
    assert (asked.status, asked.lease_owner, asked.lease_expires_at) == ("waiting_approval", "", None)
    # Two writes of the run: the move with the release, then the waiting checkpoint's pointer (issue 16, section 5).
    assert asked.version == run.version + 2
    return run.id, approval.id, key


def _decide(hc: HarnessClient, approval_id: int, decision: str, **kwargs: Any) -> None:
    """The reviewer decides the approval at the version it read."""
    version = hc.get_approval(approval_id).version
    hc.decide_approval(approval_id, decision, expected_version=version, **kwargs)  # type: ignore[arg-type]


def _resumed(hc: HarnessClient, run_id: int, approval_id: int) -> Any:
    decided = hc.wait_for_approval(approval_id, until_resumed=True, **WAIT)
    assert decided.decided
    run = hc.get_run(run_id)
    assert run.status == "running", (run.status, run.blocked_step, run.error)
    assert (run.lease_owner, run.lease_expires_at, run.pending_approval) == ("", None, None)
    return run


def _trace(run_id: int) -> list[RunEvent]:
    return list(RunEvent.objects.filter(run_id=run_id, kind__startswith="resume.").order_by("seq"))


def test_approved_the_worker_binds_the_decision_calls_nothing_and_the_agent_runs_the_tool_under_the_key(
    live: Live, fake_service: FakeService
) -> None:
    run_id, approval_id, key = _agent_asks(live.agent)
    _decide(live.reviewer, approval_id, "approve")

    run = _resumed(live.agent, run_id, approval_id)

    approval = ApprovalRequest.objects.get(pk=approval_id)
    assert run.bound_result == {
        "decision": "approved", "approval": approval_id, "executor": "agent", "tool": TOOL, "idempotency_key": key,
        "by": "agent-exec-reviewer", "arguments": ARGUMENTS, "fingerprint": approval.approved_fingerprint,
        "edited": False,
    }
    assert approval.approved_fingerprint == approval.action_fingerprint
    # Re-validated step by step, each traced ok; nothing resolved, nothing called, nothing executed.
    trace = _trace(run_id)
    assert [e.kind for e in trace] == [f"resume.{name}" for name in STEP_NAMES]
    assert all(e.data["ok"] for e in trace)
    by_step = {e.kind: e.data for e in trace}
    assert by_step["resume.capability"]["executor"] == "agent"
    assert by_step["resume.bind_result"] == {**by_step["resume.bind_result"], "executed": False,
                                             "decision": "approved"}
    assert not ExternalEffect.objects.filter(run_id=run_id).exists()
    assert sum(fake_service.requests.values()) == 0

    # The agent claims the run it asked from and goes on: it runs the tool under the approval's key.
    claimed = live.agent.claim_run(run_id, owner=AGENT, lease_seconds=60)
    assert claimed.lease_owner == AGENT and claimed.bound_result["decision"] == "approved"
    effect = live.agent.intend_effect(idempotency_key=key, tool=TOOL, arguments=claimed.bound_result["arguments"],
                                      run=run_id, approval=approval_id)
    delivery = live.agent.deliver_effect(idempotency_key=key, result={"invoice": "INV-7"})
    assert delivery.outcome == "consumed" and delivery.effect.id == effect.id
    done = live.agent.transition_run(run_id, "succeeded", expected_version=claimed.version, lease_owner=AGENT)
    assert done.status == "succeeded"


def test_edited_the_agent_is_handed_the_edited_arguments_and_their_fingerprint(live: Live) -> None:
    run_id, approval_id, _ = _agent_asks(live.agent)
    edited = {"customer": "acme", "amount": 100}
    _decide(live.reviewer, approval_id, "approve", edited_arguments=edited, reason="cap at 100")

    run = _resumed(live.agent, run_id, approval_id)

    approval = ApprovalRequest.objects.get(pk=approval_id)
    assert approval.approved_fingerprint != approval.action_fingerprint
    assert (run.bound_result["decision"], run.bound_result["arguments"], run.bound_result["fingerprint"],
            run.bound_result["edited"]) == ("approved", edited, approval.approved_fingerprint, True)
    assert not ExternalEffect.objects.filter(run_id=run_id).exists()
    assert live.agent.claim_run(run_id, owner=AGENT).lease_owner == AGENT


def test_rejected_the_rejection_and_its_reason_are_bound_and_the_agent_goes_on(
    live: Live, fake_service: FakeService
) -> None:
    run_id, approval_id, key = _agent_asks(live.agent)
    _decide(live.reviewer, approval_id, "reject", reason="not this customer")

    run = _resumed(live.agent, run_id, approval_id)

    assert run.bound_result == {"decision": "rejected", "approval": approval_id, "executor": "agent", "tool": TOOL,
                                "idempotency_key": key, "by": "agent-exec-reviewer", "reason": "not this customer"}
    assert "arguments" not in run.bound_result
    assert not ExternalEffect.objects.filter(run_id=run_id).exists() and sum(fake_service.requests.values()) == 0
    claimed = live.agent.claim_run(run_id, owner=AGENT)
    assert claimed.status == "running" and claimed.lease_owner == AGENT


def test_a_worker_approval_asked_under_a_long_lease_resumes_at_once(live: Live, fake_service: FakeService) -> None:
    """Issue 19, item 3: the asking agent's lease (an hour here) would have held the resume off at
    `authority_lease` (`lease_held`) until it expired; released by the request, it does not."""
    session = live.agent.create_session(role="writer")
    run = live.agent.create_run(session=session.id, active_agent=AGENT, cursor={"node": "publish"})
    run = live.agent.claim_run(run.id, owner=AGENT, lease_seconds=3600)
    run = live.agent.transition_run(run.id, "running", expected_version=run.version, lease_owner=AGENT)
    approval = live.agent.request_approval(run.id, tool="publish_chapter", arguments={"chapter": 1},
                                           idempotency_key=f"publish-{run.id}", lease_owner=AGENT)
    assert approval.executor == "worker"
    _decide(live.reviewer, approval.id, "approve")

    resumed = _resumed(live.agent, run.id, approval.id)

    assert resumed.bound_result["decision"] == "approved" and resumed.bound_result["receipt"]
    assert fake_service.requests[f"publish-{run.id}"] == 1
    leases = [e.data for e in _trace(run.id) if e.kind == "resume.authority_lease"]
    assert [d["ok"] for d in leases] == [True]
    assert Run.objects.get(pk=run.id).status == RunStatus.RUNNING
