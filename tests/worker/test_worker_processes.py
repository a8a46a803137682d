"""Real `celery -A config worker` processes on PostgreSQL and Redis: crashes, races, restarts.

Every wait is bounded (support.wait_for polls the database until a deadline). Leases are 3 seconds
and the recovery pass runs every second, so a dead worker's run is picked up within a few seconds.
"""

import datetime as dt
import time

import pytest
from django.utils import timezone

from harness.actors import Actor
from harness.http.errors import ConflictError
from runs_app.models import ApprovalRequest, EffectStatus, ExternalEffect, NodeExecution, Run, RunStatus
from runs_app.services import checkpoint_create, effect_resolve, run_claim
from tests.worker.support import approve, demo_run, events, reviewer, run_status, wait_for, wait_status
from worker.tasks import enqueue_resume

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _key(run: Run) -> str:
    return ApprovalRequest.objects.get(run=run).idempotency_key


def _assert_published_once_and_finished(run: Run, fake_service) -> ExternalEffect:  # type: ignore[no-untyped-def]
    key = _key(run)
    assert fake_service.executions[key] == 1
    effect = ExternalEffect.objects.get(run=run)
    assert effect.status == EffectStatus.CONSUMED
    publish = NodeExecution.objects.filter(run=run, node="publish")
    assert [e.status for e in publish] == ["succeeded"]
    summarize = NodeExecution.objects.filter(run=run, node="summarize", status="succeeded")
    assert summarize.count() == 1
    run.refresh_from_db()
    assert run.bound_result["receipt"] == effect.receipt
    return effect


def test_seed_case_the_tool_succeeded_the_worker_died_before_the_next_step_and_is_not_called_again(
    workers, fake_service
) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    first = workers.start("a", crash_at="node:summarize")
    approve(run, reviewer(run.project))

    assert first.exited() == -9
    key = _key(run)
    assert fake_service.requests[key] == 1
    assert Run.objects.get(pk=run.pk).status == RunStatus.RUNNING

    workers.start("b")
    wait_status(run.pk, RunStatus.SUCCEEDED)

    assert fake_service.requests[key] == 1
    _assert_published_once_and_finished(run, fake_service)
    attempts = list(NodeExecution.objects.filter(run=run, node="summarize").values_list("attempt", "status"))
    assert attempts == [(1, "failed"), (2, "succeeded")]


@pytest.mark.parametrize(
    ("crash_at", "requests_seen"),
    [
        ("before_call", 1),  # dispatched, never sent: the retry is the first request
        ("after_call", 2),  # sent and done, result never recorded: retried under the same key, deduplicated
        ("after_deliver", 1),  # result recorded, not consumed: bound from the record
        ("after_commit", 1),  # consumed and bound: the next worker only continues the plan
    ],
)
def test_kill_9_at_each_point_of_a_resume_then_a_new_worker_the_effect_happens_once(
    workers, fake_service, crash_at: str, requests_seen: int
) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    first = workers.start("a", crash_at=crash_at)
    approve(run, reviewer(run.project))
    assert first.exited() == -9

    workers.start("b")
    wait_status(run.pk, RunStatus.SUCCEEDED)

    assert fake_service.requests[_key(run)] == requests_seen
    effect = _assert_published_once_and_finished(run, fake_service)
    assert effect.attempts == (2 if crash_at in ("before_call", "after_call") else 1)
    run.refresh_from_db()
    assert run.metrics["attempts"] == 2


def test_kill_9_after_a_non_idempotent_call_blocks_at_unknown_effect_and_nothing_is_re_sent_until_a_person_decides(
    workers, fake_service
) -> None:  # type: ignore[no-untyped-def]
    """Issue 16, section 4: a tool that does not say it honours idempotency keys is never called twice on a guess."""
    workers.adapters["publish_chapter"]["honours_idempotency_key"] = False
    run = demo_run()
    rita = reviewer(run.project)
    first = workers.start("a", crash_at="after_call")
    approve(run, rita)
    assert first.exited() == -9
    key = _key(run)
    assert fake_service.requests[key] == 1

    workers.start("b")
    blocked = wait_status(run.pk, RunStatus.BLOCKED)
    assert (blocked.blocked_step, blocked.failure_category) == ("unknown_effect", "irreversible")
    # Another resume message and more recovery passes: the run stays blocked, the tool is not called.
    starts = blocked.metrics["starts"]
    enqueue_resume(run.pk)
    wait_for(lambda: Run.objects.get(pk=run.pk).metrics["starts"] > starts, what="another start of the resume")
    assert (fake_service.requests[key], run_status(run.pk)) == (1, RunStatus.BLOCKED)

    effect = ExternalEffect.objects.get(run=run)
    effect_resolve(project=run.project_id, effect_id=effect.pk, actor=Actor.for_user(rita), decision="retry",
                   reason="the publisher deduplicates by key")
    wait_status(run.pk, RunStatus.SUCCEEDED)

    assert (fake_service.requests[key], fake_service.executions[key]) == (2, 1)
    effect = _assert_published_once_and_finished(run, fake_service)
    assert (effect.attempts, effect.resolution["decision"]) == (2, "retry")


def test_two_workers_resume_the_same_run_at_once_one_does_it_the_other_finds_it_owned(
    workers, fake_service
) -> None:  # type: ignore[no-untyped-def]
    fake_service.delay = 2.0
    run = demo_run()
    a = workers.start("a", lease_seconds=8, wait=False)
    b = workers.start("b", lease_seconds=8, wait=False)
    a.wait_ready()
    b.wait_ready()

    approve(run, reviewer(run.project))
    enqueue_resume(run.pk)
    wait_status(run.pk, RunStatus.SUCCEEDED)

    assert fake_service.requests[_key(run)] == 1
    _assert_published_once_and_finished(run, fake_service)
    leases = [(e.data["ok"], e.data.get("reason", ""), e.data["owner"])
              for e in events(run.pk, "resume.authority_lease")]
    winners = [owner for ok, _, owner in leases if ok]
    losers = [owner for ok, reason, owner in leases if not ok and reason == "lease_held"]
    assert len(winners) == 1 and losers
    assert {w.split(":")[1].split("-")[0] for w in winners + losers} == {"a", "b"}


def test_a_tool_call_longer_than_the_lease_keeps_its_lease_and_no_second_worker_takes_the_run(
    workers, fake_service
) -> None:  # type: ignore[no-untyped-def]
    """Issue 19, defect 5: the call takes 2.5 leases; the lease is renewed while it runs, so neither the second
    worker (its recovery pass looks for expired leases every second) nor a claim from here takes the run."""
    lease = 3
    fake_service.delay = 7.5
    run = demo_run()
    a = workers.start("a", lease_seconds=lease, wait=False)
    b = workers.start("b", lease_seconds=lease, wait=False)
    a.wait_ready()
    b.wait_ready()
    approve(run, reviewer(run.project))
    key = _key(run)

    wait_for(lambda: fake_service.requests[key] >= 1, what="the slow call to reach the tool")
    time.sleep(lease + 1)  # the call is still running (7.5 s): the lease taken before it would be over now
    with pytest.raises(ConflictError) as held:
        run_claim(project=run.project_id, run_id=run.pk, owner="worker:probe:0:x", lease_seconds=lease)
    assert held.value.code == "lease_held"

    wait_status(run.pk, RunStatus.SUCCEEDED)
    assert fake_service.requests[key] == 1
    _assert_published_once_and_finished(run, fake_service)
    claims = [e.data["owner"] for e in events(run.pk, "resume.authority_lease") if e.data["ok"]]
    assert len(claims) == 1
    bound = events(run.pk, "resume.bind_result")[-1].data
    assert bound["lease_renewals"] >= 2 and bound["lease_lost"] == ""


def test_a_service_restart_while_r101_waits_then_approval_resumes_it(workers, fake_service) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    first = workers.start("a")
    wait_for(lambda: "recovery" in first.log(), what="a recovery pass on the first worker")
    first.stop()
    assert first.exited() == 0
    assert Run.objects.get(pk=run.pk).status == RunStatus.WAITING_APPROVAL

    workers.start("b")
    approve(run, reviewer(run.project))

    wait_status(run.pk, RunStatus.SUCCEEDED)
    _assert_published_once_and_finished(run, fake_service)


def test_an_approval_whose_message_was_lost_while_no_worker_ran_is_resumed_at_worker_start(
    workers, fake_service, broker
) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    approve(run, reviewer(run.project))
    broker.flushdb()  # the message is gone: only the database remembers the approval

    workers.start("a")

    wait_status(run.pk, RunStatus.SUCCEEDED)
    _assert_published_once_and_finished(run, fake_service)


def _tamper_approved_action(run: Run) -> None:
    approve(run, reviewer(run.project))
    ApprovalRequest.objects.filter(run=run).update(approved_arguments={"chapter": 4, "title": "Another"})


def _expire(run: Run) -> None:
    ApprovalRequest.objects.filter(run=run).update(expires_at=timezone.now() - dt.timedelta(seconds=1))


def _stale_checkpoint(run: Run) -> None:
    checkpoint_create(project=run.project_id, run_id=run.pk, parent_id=run.last_checkpoint_id, schema_version=99)
    approve(run, reviewer(run.project))


def _changed_artifact(run: Run) -> None:
    from runs_app.models import Task

    task = Task.objects.get(pk=run.task_id)
    Task.objects.filter(pk=task.pk).update(artifact_refs={**task.artifact_refs, "draft": {"sha256": "0" * 64}})
    approve(run, reviewer(run.project))


@pytest.mark.parametrize(
    ("arrange", "adapters", "step", "reason"),
    [
        (_tamper_approved_action, None, "approval_preconditions", "fingerprint"),
        (lambda run: approve(run, reviewer(run.project)), {"publish_chapter": None}, "capability", "no adapter"),
        (_expire, None, "approval_preconditions", "expired"),
        (_stale_checkpoint, None, "compatibility", "schema_version 99"),
        (_changed_artifact, None, "artifact_fingerprints", "draft"),
    ],
    ids=["changed_fingerprint", "missing_adapter", "expired_approval", "stale_version", "changed_artifact"],
)
def test_each_revalidation_failure_blocks_the_run_naming_the_step_and_executes_nothing(
    workers, fake_service, arrange, adapters, step: str, reason: str
) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    arrange(run)
    if adapters is not None:
        workers.adapters = adapters

    workers.start("a")
    blocked = wait_status(run.pk, RunStatus.BLOCKED)

    assert blocked.blocked_step == step
    assert reason in blocked.error["reason"]
    assert blocked.lease_owner == ""
    assert not fake_service.requests
    assert not ExternalEffect.objects.filter(run=run).exists()
    assert not NodeExecution.objects.filter(run=run).exists()
    failed = events(run.pk, f"resume.{step}")[-1]
    assert failed.data["ok"] is False
