"""Side effects across forks (issue 20, part 3), with real workers and the counting tool server: a fork that
reaches an action whose idempotency key was consumed gets the stored result bound, never a second call; the
same action with changed arguments is refused under that key and needs a new key and a new approval."""

import pytest
from django.db import transaction

from demo.scenario import DEMO_ACTION
from harness.actors import Actor
from harness.http.errors import ConflictError
from runs_app.models import ApprovalRequest, ApprovalStatus, Checkpoint, ExternalEffect, Run, RunStatus
from runs_app.services import approval_request_create, checkpoint_fork, run_create, run_transition
from tests.worker.support import approve, demo_run, events, reviewer, wait_status

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
AGENT = Actor.for_agent("writer-1")


def _ask(run: Run, key: str, arguments: dict) -> ApprovalRequest:
    """What the agent driving the fork does when it reaches the publish step again. One transaction: a run left
    running without a lease would be the workers' recovery pass's to drive."""
    with transaction.atomic():
        run_transition(project=run.project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None,
                       updates={"current_node": "publish"})
        return approval_request_create(project=run.project, run_id=run.pk, tool="publish_chapter",
                                       arguments=arguments, idempotency_key=key, actor=AGENT)


def test_a_fork_that_repeats_a_consumed_action_gets_the_stored_result_and_a_changed_one_a_new_approval(
    workers, fake_service
) -> None:  # type: ignore[no-untyped-def]
    original = demo_run()
    key = ApprovalRequest.objects.get(run=original).idempotency_key
    workers.start("a")
    rita = reviewer(original.project)
    approve(original, rita)
    wait_status(original.pk, RunStatus.SUCCEEDED)
    assert fake_service.requests[key] == 1
    receipt = ExternalEffect.objects.get(idempotency_key=key).receipt
    before_publish = Checkpoint.objects.get(run=original, label="before publish")

    # 1. Time travel to before the publish step, state unchanged: the same action under the same key.
    same = checkpoint_fork(project=original.project, checkpoint_id=before_publish.pk, actor=AGENT,
                           reason="replay from before publish").run
    approve(Run.objects.get(pk=_ask(same, key, dict(DEMO_ACTION)).run_id), rita)
    replayed = wait_status(same.pk, RunStatus.SUCCEEDED)

    assert fake_service.requests[key] == 1  # the stored result was bound: no second call
    assert replayed.bound_result["receipt"] == receipt and replayed.bound_result["forked_from_run"] == original.pk
    [bound] = events(same.pk, "resume.bind_result")
    assert (bound.data["executed"], bound.data["forked_from_run"]) == (False, original.pk)
    assert ExternalEffect.objects.filter(idempotency_key=key).count() == 1

    # A run that was not forked from the original gets no such pass, even on the same task (whose checkpoint
    # chain it continues): the key is another run's, it blocks.
    stranger = run_create(project=original.project, session_id=original.session_id, task_id=original.task_id)
    approve(Run.objects.get(pk=_ask(stranger, key, dict(DEMO_ACTION)).run_id), rita)
    blocked = wait_status(stranger.pk, RunStatus.BLOCKED)
    assert blocked.blocked_step == "bind_result" and fake_service.requests[key] == 1

    # 2. A fork with edited state leads the agent to other arguments: under the consumed key they are refused.
    edited = checkpoint_fork(project=original.project, checkpoint_id=before_publish.pk, actor=AGENT,
                             reason="a better title", state={**before_publish.state, "title": "The Lamp"}).run
    changed = {**DEMO_ACTION, "title": "The Lamp"}
    with pytest.raises(ConflictError) as reused:
        _ask(edited, key, changed)
    assert reused.value.code == "idempotency_key_reused"
    assert Run.objects.get(pk=edited.pk).status == RunStatus.CREATED  # nothing was asked, nothing runs

    # ... under a new key it is a new action: it waits for its own approval before any call.
    new_key = f"{key}:fork-{edited.pk}"
    approval = _ask(edited, new_key, changed)
    assert approval.status == ApprovalStatus.PENDING
    assert Run.objects.get(pk=edited.pk).status == RunStatus.WAITING_APPROVAL
    assert fake_service.requests[new_key] == 0
    approve(Run.objects.get(pk=edited.pk), rita)
    wait_status(edited.pk, RunStatus.SUCCEEDED)
    assert fake_service.requests[new_key] == 1 and fake_service.requests[key] == 1
    assert [e.data["reason"] for e in events(edited.pk, "run.forked")] == ["a better title"]
