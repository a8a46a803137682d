"""The resume pipeline in-process: each step's decision, the trace it leaves, and the outcomes."""

import datetime as dt
from pathlib import Path

import pytest
from django.test import override_settings
from django.utils import timezone

from harness.actors import Actor
from memory_app.models import ContextSnapshot
from runs_app.models import (
    ApprovalRequest,
    ApprovalStatus,
    EffectStatus,
    ExternalEffect,
    NodeExecution,
    Run,
    RunStatus,
    Task,
)
from runs_app.services import (
    approval_decide,
    approval_request_create,
    checkpoint_create,
    run_claim,
    run_metrics_merge,
    run_transition,
)
from tests import factories
from tests.worker.support import approve, demo_run, events, reviewer
from worker.pipeline import resume_run_by_id
from worker.recovery import recovery_candidates
from worker.registry import STEP_NAMES
from worker.state import Resume, StepFailed
from worker.steps import approval_preconditions, artifact_fingerprints, capability, compatibility, load, sparse_context

OWNER = "worker:test:1"


@pytest.fixture
def r101(db):  # type: ignore[no-untyped-def]
    run = demo_run()
    return run, reviewer(run.project)


def _state(run: Run) -> Resume:
    r = Resume(run_id=run.pk, owner=OWNER, lease_seconds=30)
    load.run(r)
    return r


def test_approved_demo_run_publishes_once_then_summarizes_and_succeeds(r101) -> None:
    run, rita = r101
    approve(run, rita)

    assert resume_run_by_id(run.pk, owner=OWNER) == "done"

    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED
    assert run.bound_result["decision"] == "approved"
    assert run.bound_result["result"]["url"] == "/novelforge/chapters/3"
    task = Task.objects.get(pk=run.task_id)
    assert task.completed_nodes == ["outline", "draft", "publish", "summarize"]
    assert task.status == "completed"
    assert "/novelforge/chapters/3" in task.artifact_refs["summarize"]["content"]
    effect = ExternalEffect.objects.get(run=run)
    assert (effect.status, effect.attempts) == (EffectStatus.CONSUMED, 1)
    assert run.bound_result["receipt"] == effect.receipt
    assert [e.node for e in NodeExecution.objects.filter(run=run)] == ["publish", "summarize"]
    assert all(e.checkpoint_id for e in NodeExecution.objects.filter(run=run, node="summarize"))
    traced = [e.kind for e in events(run.pk, "resume.")]
    assert traced == [f"resume.{name}" for name in STEP_NAMES]
    assert all(e.data["ok"] for e in events(run.pk, "resume."))
    assert run.metrics["attempts"] == 1
    assert run.metrics["failure_type"] == ""
    assert {"steps", "tokens", "cost", "latency_ms"} <= set(run.metrics)


def test_a_second_resume_of_a_finished_run_does_nothing(r101) -> None:
    run, rita = r101
    approve(run, rita)
    resume_run_by_id(run.pk, owner=OWNER)
    before = events(run.pk)

    assert resume_run_by_id(run.pk, owner="worker:test:2") == "stopped"

    assert events(run.pk) == before
    assert ExternalEffect.objects.get(run=run).attempts == 1


def test_an_undecided_approval_is_not_resumed(r101) -> None:
    run, _ = r101
    assert resume_run_by_id(run.pk, owner=OWNER) == "stopped"
    assert Run.objects.get(pk=run.pk).status == RunStatus.WAITING_APPROVAL
    assert events(run.pk, "resume.") == []


def test_a_run_leased_by_another_worker_is_left_to_it(r101) -> None:
    run, rita = r101
    approve(run, rita)
    run_claim(project=run.project_id, run_id=run.pk, owner="worker:other:9", lease_seconds=60)

    assert resume_run_by_id(run.pk, owner=OWNER) == "stopped"

    run.refresh_from_db()
    assert run.status == RunStatus.WAITING_APPROVAL and run.lease_owner == "worker:other:9"
    lease = events(run.pk, "resume.authority_lease")
    assert [(e.data["ok"], e.data["reason"]) for e in lease] == [(False, "lease_held")]
    assert not ExternalEffect.objects.filter(run=run).exists()


def test_rejection_binds_the_reason_executes_nothing_and_fails_the_worker_plan(r101) -> None:
    run, rita = r101
    approval_decide(project=run.project_id, approval_id=run.pending_approval_id, actor=Actor.for_user(rita),
                    decision="reject",
                    reason="Chapter 3 needs another pass")

    resume_run_by_id(run.pk, owner=OWNER)

    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.bound_result == {"decision": "rejected", "approval": run.bound_result["approval"],
                                "reason": "Chapter 3 needs another pass", "by": "rita"}
    assert not ExternalEffect.objects.filter(run=run).exists()
    assert "publish" not in Task.objects.get(pk=run.task_id).completed_nodes


def _agent_run(project, *, arguments=None):  # type: ignore[no-untyped-def]
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None,
                   updates={"current_node": "send"})
    approval_request_create(project=project, run_id=run.pk, tool="publish_chapter",
                            arguments=arguments or {"chapter": 1, "title": "One"}, idempotency_key=f"k-{run.pk}",
                            actor=Actor.for_agent("a"))
    return Run.objects.get(pk=run.pk)


def test_an_agent_driven_run_returns_to_running_with_the_result_bound_and_its_lease_free(project) -> None:
    run = _agent_run(project)
    approve(run, reviewer(project))

    assert resume_run_by_id(run.pk, owner=OWNER) == "done"

    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    assert run.bound_result["result"]["chapter"] == 1
    assert (run.lease_owner, run.lease_expires_at, run.pending_approval_id) == ("", None, None)
    # The agent can take it from here.
    assert run_claim(project=project, run_id=run.pk, owner="agent:a", lease_seconds=30).lease_owner == "agent:a"


def test_an_agent_driven_rejection_returns_to_running_with_the_rejection_bound(project) -> None:
    run = _agent_run(project)
    approval_decide(project=project, approval_id=run.pending_approval_id, actor=Actor.for_user(reviewer(project)),
                    decision="reject", reason="no")

    resume_run_by_id(run.pk, owner=OWNER)

    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.bound_result["decision"] == "rejected"
    assert not ExternalEffect.objects.exists()


def test_each_step_is_callable_on_its_own(r101) -> None:
    run, rita = r101
    approve(run, rita)
    r = _state(run)
    assert r.mode == "approval" and r.checkpoint is not None
    assert compatibility.run(r)["checkpoint_schema"] == 1
    assert artifact_fingerprints.run(r) == {"verified": 2}
    assert approval_preconditions.run(r)["decision"] == "approved"
    assert capability.run(r)["adapter"] == "PythonAdapter"
    recorded = sparse_context.run(r)
    assert ContextSnapshot.objects.filter(pk=recorded["snapshot"], run=run).exists()
    assert r.context["state"]["pending_action"]["tool"] == "publish_chapter"


def test_artifact_fingerprint_step_names_the_changed_artifact(r101) -> None:
    run, rita = r101
    approve(run, rita)
    task = Task.objects.get(pk=run.task_id)
    Task.objects.filter(pk=task.pk).update(artifact_refs={**task.artifact_refs, "draft": {"sha256": "0" * 64}})
    with pytest.raises(StepFailed, match="draft"):
        artifact_fingerprints.run(_state(run))


def test_compatibility_step_refuses_an_unknown_checkpoint_schema(r101) -> None:
    run, rita = r101
    approve(run, rita)
    checkpoint_create(project=run.project_id, run_id=run.pk, schema_version=99)
    with pytest.raises(StepFailed, match="schema_version 99"):
        compatibility.run(_state(run))


def test_compatibility_step_refuses_a_checkpoint_of_an_older_plan(r101) -> None:
    run, rita = r101
    approve(run, rita)
    Task.objects.filter(pk=run.task_id).update(plan_version=2)
    with pytest.raises(StepFailed, match="plan_version"):
        compatibility.run(_state(run))


def test_approval_step_refuses_a_tampered_approved_action(r101) -> None:
    run, rita = r101
    approve(run, rita)
    ApprovalRequest.objects.filter(pk=run.pending_approval_id).update(approved_arguments={"chapter": 4})
    with pytest.raises(StepFailed, match="fingerprint"):
        approval_preconditions.run(_state(run))


def test_approval_step_refuses_an_expired_approval(r101) -> None:
    run, _ = r101
    ApprovalRequest.objects.filter(pk=run.pending_approval_id).update(
        expires_at=timezone.now() - dt.timedelta(seconds=1)
    )
    with pytest.raises(StepFailed, match="expired"):
        approval_preconditions.run(_state(run))


@override_settings(HARNESS_TOOL_ADAPTERS={})
def test_capability_step_refuses_a_tool_without_adapter(r101) -> None:
    run, rita = r101
    approve(run, rita)
    with pytest.raises(StepFailed, match="no adapter"):
        capability.run(_state(run))


@override_settings(HARNESS_TOOL_ADAPTERS={"publish_chapter": {"kind": "http", "url": "http://127.0.0.1:9/x",
                                                               "timeout": 1, "connect_timeout": 1,
                                                               "honours_idempotency_key": True}})
def test_an_unreachable_tool_that_honours_keys_leaves_the_effect_unknown_and_the_run_waiting_for_a_retry(r101
                                                                                                      ) -> None:
    run, rita = r101
    approve(run, rita)

    assert resume_run_by_id(run.pk, owner=OWNER) == "retry"

    run.refresh_from_db()
    assert run.status == RunStatus.WAITING_APPROVAL and run.lease_owner == ""
    effect = ExternalEffect.objects.get(run=run)
    assert (effect.status, effect.attempts) == (EffectStatus.UNKNOWN, 1)
    assert run.metrics["failure_type"] == "tool_unreachable"


def test_a_failed_step_blocks_the_run_naming_it_and_releases_the_lease(r101) -> None:
    run, rita = r101
    approve(run, rita)
    ApprovalRequest.objects.filter(pk=run.pending_approval_id).update(approved_arguments={"chapter": 4})

    assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

    run.refresh_from_db()
    assert (run.status, run.blocked_step, run.lease_owner) == (RunStatus.BLOCKED, "approval_preconditions", "")
    assert run.error["step"] == "approval_preconditions"
    assert run.metrics["failure_type"] == "approval_preconditions"
    failed = events(run.pk, "resume.approval_preconditions")[-1]
    assert failed.data["ok"] is False and "fingerprint" in failed.data["reason"]
    assert not ExternalEffect.objects.filter(run=run).exists()
    assert ApprovalRequest.objects.get(pk=run.error["approval"]).status == ApprovalStatus.APPROVED


def test_the_load_demo_scenario_runs_to_the_end_once_r101_is_approved(db) -> None:  # type: ignore[no-untyped-def]
    import io

    from django.contrib.auth.models import User
    from django.core.management import call_command

    call_command("load_demo", "--with-users", stdout=io.StringIO())
    run = Run.objects.get(project__slug="novelforge", ref="R-101")
    approve(run, User.objects.get(username="reviewer"))

    assert resume_run_by_id(run.pk, owner=OWNER) == "done"

    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    task = Task.objects.get(pk=run.task_id)
    assert task.completed_nodes == ["outline", "draft", "publish", "summarize"]
    assert "/novelforge/chapters/3" in task.artifact_refs["summarize"]["content"]


@override_settings(HARNESS_EFFECT_MAX_ATTEMPTS=1,
                   HARNESS_TOOL_ADAPTERS={"publish_chapter": {"kind": "http", "url": "http://127.0.0.1:9/x",
                                                              "timeout": 1, "connect_timeout": 1,
                                                              "honours_idempotency_key": True}})
def test_a_tool_that_stays_unreachable_blocks_the_run_at_bind_result_after_the_attempt_limit(r101) -> None:
    run, rita = r101
    approve(run, rita)
    assert resume_run_by_id(run.pk, owner=OWNER) == "retry"

    assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

    run.refresh_from_db()
    assert (run.status, run.blocked_step) == (RunStatus.BLOCKED, "bind_result")
    assert ExternalEffect.objects.get(run=run).attempts == 1


def test_a_tool_that_refuses_the_call_ends_its_effect_refused_with_the_answer_and_blocks_the_run(r101) -> None:
    from tests.worker.support import FakeService

    service = FakeService().start()
    service.status = 422
    try:
        with override_settings(HARNESS_TOOL_ADAPTERS={"publish_chapter": {"kind": "http", "url": service.url}}):
            run, rita = r101
            approve(run, rita)
            assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"
    finally:
        service.stop()

    run.refresh_from_db()
    assert (run.status, run.blocked_step, run.failure_category) == (RunStatus.BLOCKED, "bind_result", "invalid_input")
    assert "HTTP 422" in run.error["reason"]
    effect = ExternalEffect.objects.get(run=run)
    # A definite no (issue 16, section 4): terminal, with the tool's answer, never re-sent.
    assert (effect.status, effect.failure_category, effect.answer["status"]) == (
        EffectStatus.REFUSED, "invalid_input", 422)
    assert effect.answer["body"] == '{"error": "no"}'
    assert [e.data["category"] for e in events(run.pk, "effect.refused")] == ["invalid_input"]
    assert service.requests[effect.idempotency_key] == 1


def test_a_run_left_running_under_a_workers_lease_without_a_task_is_blocked_not_crashed(project) -> None:  # type: ignore[no-untyped-def]
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    Run.objects.filter(pk=run.pk).update(lease_owner="worker:gone:1",
                                         lease_expires_at=timezone.now() - dt.timedelta(seconds=1))

    assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

    run.refresh_from_db()
    assert (run.status, run.blocked_step) == (RunStatus.BLOCKED, "capability")
    assert "no task" in run.error["reason"]


@override_settings(HARNESS_RESUME_MAX_ATTEMPTS=2)
def test_a_run_attempted_up_to_the_limit_ends_blocked_for_a_person_never_failed(r101) -> None:
    """Issue 19, defect 8: DESIGN.md has a failed resume check stop the run in `blocked`, naming it, where a person
    decides (blocked -> running | failed | cancelled); `failed` is terminal and would take that decision away.
    The README said `failed`; the code, the docs' resume page and this test now say `blocked`."""
    run, rita = r101
    approve(run, rita)
    run_metrics_merge(project=run.project_id, run_id=run.pk, metrics={}, increment={"attempts": 2})

    assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

    run.refresh_from_db()
    assert (run.status, run.blocked_step) == (RunStatus.BLOCKED, "authority_lease")
    assert "attempted 2 times" in run.error["reason"]
    assert not ExternalEffect.objects.filter(run=run).exists()
    page = (Path(__file__).resolve().parents[2] / "docs" / "concepts" / "resume.md").read_text()
    row = next(line for line in page.splitlines() if line.startswith("| `HARNESS_RESUME_MAX_ATTEMPTS`"))
    assert "`blocked` at `authority_lease`" in row and "as failed" not in row


def test_a_recovery_pass_on_a_fast_clock_does_not_take_a_live_lease_for_expired(
    r101, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19, defect 4: the recovery pass's "expired" is the database's clock, as the claim's is."""
    run, rita = r101
    approve(run, rita)
    run_claim(project=run.project_id, run_id=run.pk, owner="worker:live:1:a", lease_seconds=10)
    real = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: real() + dt.timedelta(seconds=30))

    assert run.pk not in recovery_candidates()
    assert resume_run_by_id(run.pk, owner="worker:fast:2:b", lease_seconds=10) == "stopped"

    run.refresh_from_db()
    assert (run.status, run.lease_owner) == (RunStatus.WAITING_APPROVAL, "worker:live:1:a")


def test_the_resume_blocks_when_the_schema_version_the_approval_named_refuses_its_arguments(db) -> None:
    """Step `argument_schema` (issue 32): the approved arguments are checked against the version the approval was
    validated against; here that version's row says chapter 3 is out of range, so nothing is executed."""
    from demo.tools import PUBLISH_CHAPTER_SCHEMA
    from runs_app.models import ToolSchema
    from runs_app.services import tool_schema_register

    project = factories.make_project("schema-block")
    named, _ = tool_schema_register(project=project, tool="publish_chapter", schema=PUBLISH_CHAPTER_SCHEMA,
                                    actor=Actor.for_agent("a"))
    run = demo_run(project)
    approval = ApprovalRequest.objects.get(pk=run.pending_approval_id)
    assert (approval.tool_schema_id, approval.tool_schema_version) == (named.pk, 1)
    # A newer version accepting anything changes nothing: the named one is the judge.
    tool_schema_register(project=project, tool="publish_chapter", schema={"type": "object"},
                         actor=Actor.for_agent("a"))
    stricter = {**PUBLISH_CHAPTER_SCHEMA, "properties": {**PUBLISH_CHAPTER_SCHEMA["properties"],
                                                         "chapter": {"type": "integer", "maximum": 2}}}
    ToolSchema.objects.filter(pk=named.pk).update(schema=stricter)
    approve(run, reviewer(project))

    assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

    run.refresh_from_db()
    assert (run.status, run.blocked_step) == (RunStatus.BLOCKED, "argument_schema")
    failed = events(run.pk, "resume.argument_schema")
    assert [e.data["ok"] for e in failed] == [False] and "chapter" in failed[0].data["reason"]
    assert not ExternalEffect.objects.filter(run=run).exists()  # nothing executed


def test_an_approval_with_a_schema_passes_the_argument_schema_step(r101) -> None:
    run, rita = r101
    approve(run, rita)
    assert resume_run_by_id(run.pk, owner=OWNER) == "done"
    step = events(run.pk, "resume.argument_schema")
    assert step[0].data["ok"] and step[0].data["checked"] is False  # the demo's R-101 here names no schema
