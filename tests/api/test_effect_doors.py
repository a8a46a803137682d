"""Issue 30, section 6: the effect doors that answered yes where they must say no.

- An effect whose outcome could not be proven (`unknown`) is a person's decision: an agent's delivery used to
  settle it (200 `consumed`), leaving the run blocked at `unknown_effect` and the effect's page with no decision
  to offer. Now it is 403 `not_a_person` and nothing changes, at every door that could try: the API (with and
  without an Idempotency-Key), the service's one-statement path (`_effect_deliver_fast`), the admin; only the
  worker with the tool's own answer and a reviewer on the effect's page settle it.
- A run that may not act may not declare an action: `POST effects/` used to record a new intent (201) for a run
  blocked at its budget or already finished. Now it is 409 `run_not_acting` naming the run's status, for every
  status but running (runs_app.machines.run_acting_statuses).
"""

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from harness.actors import Actor
from harness.http.errors import ConflictError, Forbidden
from harness.models import IdempotentRequest
from runs_app.machines import RUN_MACHINE, run_acting_statuses
from runs_app.models import EffectStatus, ExternalEffect, Run, RunEvent, RunStatus
from runs_app.services import (
    effect_deliver,
    effect_dispatch,
    effect_intend,
    effect_mark_unknown,
    run_transition,
)
from tests import factories
from tests.api.conftest import ApiClient, World

pytestmark = pytest.mark.django_db

RESULT = {"paid": True, "ref": "T-9"}


def _unknown_effect(world: World, key: str = "pay-1") -> ExternalEffect:
    """A run blocked at unknown_effect, as the worker leaves it for a tool that cannot be asked again."""
    run = factories.make_run(world.project, world.session)
    run_transition(project=world.project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    effect, _ = effect_intend(project=world.project, idempotency_key=key, tool="send_payment",
                              arguments={"eur": 5}, run_id=run.pk)
    effect_dispatch(project=world.project, effect_id=effect.pk)
    effect = effect_mark_unknown(project=world.project, effect_id=effect.pk)
    run_transition(project=world.project, run_id=run.pk, to=RunStatus.BLOCKED, expected_version=None,
                   blocked_step="unknown_effect", failure_category="irreversible")
    return effect


def _as_it_was(effect: ExternalEffect) -> tuple[Any, ...]:
    effect = ExternalEffect.objects.get(pk=effect.pk)
    run = Run.objects.get(pk=effect.run_id)
    return (effect.status, effect.version, effect.result, effect.receipt, effect.resolution, run.status,
            run.version, run.blocked_step, RunEvent.objects.filter(run_id=run.pk).count())


def _reviewer(world: World) -> Client:
    client = Client()
    client.force_login(factories.make_user("rita", role="reviewer", projects=[world.project]))
    return client


# --- an unknown effect is settled by a person, not by an agent's delivery -----------------------------------


@pytest.mark.parametrize("keyed", [False, True], ids=["no-key", "idempotency-key"])
def test_an_agent_cannot_settle_an_unknown_effect_and_nothing_changes(world: World, keyed: bool) -> None:
    effect = _unknown_effect(world)
    before = _as_it_was(effect)
    headers = {"HTTP_IDEMPOTENCY_KEY": f"deliver-{uuid.uuid4()}"} if keyed else {}

    response = world.agent.post("/api/v1/effects/deliver/", {"idempotency_key": effect.idempotency_key,
                                                             "result": RESULT}, **headers)

    assert response.status_code == 403, response.json()
    body = response.json()
    assert (body["code"], body["effect"], body["effect_status"], body["run"]) == (
        "not_a_person", effect.pk, "unknown", effect.run_id)
    assert f"/effects/{effect.pk}/" in body["detail"]
    assert _as_it_was(effect) == before
    # The page still offers the reviewer the three decisions, and the run is still blocked where it was.
    page = _reviewer(world).get(reverse("runs:effect_detail", args=[effect.pk])).content.decode()
    for button in ('id="mark-delivered"', 'id="retry"', 'id="abandon"'):
        assert button in page
    assert 'id="blocked-step">unknown_effect<' in page


def test_an_agent_cannot_settle_an_unknown_effect_a_reviewer_allowed_to_retry(world: World) -> None:
    """Retry allowed, not yet sent: still unknown, still not the agent's to settle."""
    effect = _unknown_effect(world)
    reviewer = _reviewer(world)
    assert reviewer.post(reverse("runs:effect_retry", args=[effect.pk]), {"version": effect.version}).status_code == 302
    before = _as_it_was(effect)

    response = world.agent.post("/api/v1/effects/deliver/", {"idempotency_key": effect.idempotency_key,
                                                             "result": RESULT})

    assert (response.status_code, response.json()["code"]) == (403, "not_a_person")
    assert _as_it_was(effect) == before
    assert ExternalEffect.objects.get(pk=effect.pk).retry_authorized is True


@pytest.mark.parametrize("consume", [True, False], ids=["deliver-and-consume", "deliver-only"])
def test_the_service_refuses_an_unprovable_effect_on_either_path(world: World, consume: bool) -> None:
    """Deliver-only is the one-statement path (`_effect_deliver_fast`), which took `unknown` among its sources."""
    effect = _unknown_effect(world)
    before = _as_it_was(effect)

    with pytest.raises(Forbidden) as refused:
        effect_deliver(project=world.project, idempotency_key=effect.idempotency_key, result=RESULT, consume=consume)

    assert refused.value.code == "not_a_person"
    assert _as_it_was(effect) == before


def test_the_worker_with_the_tools_answer_settles_it(world: World) -> None:
    """What the resume's bind_result does after the adapter's lookup by key found the result."""
    effect = _unknown_effect(world)

    delivery = effect_deliver(project=world.project, idempotency_key=effect.idempotency_key, result=RESULT,
                              consume=False, settles_unknown=True)

    assert (delivery.outcome, delivery.effect.status, delivery.effect.result) == ("delivered", "delivered", RESULT)


def test_a_reviewer_settles_it_on_the_effect_page_and_the_agent_then_gets_the_recorded_result(world: World) -> None:
    effect = _unknown_effect(world)
    reviewer = _reviewer(world)
    marked = reviewer.post(reverse("runs:effect_mark_delivered", args=[effect.pk]), {
        "version": effect.version, "evidence": "bank statement line 42", "result": '{"paid": true, "ref": "T-9"}'})
    assert marked.status_code == 302
    effect.refresh_from_db()
    assert (effect.status, effect.resolution["by"]) == (EffectStatus.DELIVERED, "rita")

    # Delivered now (by a person, with the evidence): the same result is the ordinary delivery of a recorded one.
    response = world.agent.post("/api/v1/effects/deliver/", {"idempotency_key": effect.idempotency_key,
                                                             "result": RESULT})
    assert response.status_code == 200, response.json()
    assert response.json()["effect"]["result"] == RESULT


def test_the_admin_shows_an_unknown_effect_read_only_and_a_post_changes_nothing(world: World) -> None:
    effect = _unknown_effect(world)
    before = _as_it_was(effect)
    admin = Client()
    admin.force_login(User.objects.create_superuser("root", "root@example.com", "pw-123456"))
    url = reverse("admin:runs_app_externaleffect_change", args=[effect.pk])

    page = admin.get(url)
    admin.post(url, {"status": "delivered", "result": '{"paid": true}', "result_hash": "0" * 64})

    assert page.status_code == 200
    assert 'name="status"' not in page.content.decode()
    assert _as_it_was(effect) == before


# --- a run that may not act may not declare an action -------------------------------------------------------


def _run_in(world: World, status: str) -> Run:
    """A run of the world's session in `status`, reached through the run table's own edges."""
    run = factories.make_run(world.project, world.session)
    path = {
        RunStatus.CREATED: [],
        RunStatus.RUNNING: [RunStatus.RUNNING],
        RunStatus.WAITING_APPROVAL: [RunStatus.RUNNING, RunStatus.WAITING_APPROVAL],
        RunStatus.WAITING_EXTERNAL: [RunStatus.RUNNING, RunStatus.WAITING_EXTERNAL],
        RunStatus.BLOCKED: [RunStatus.RUNNING, RunStatus.BLOCKED],
        RunStatus.SUCCEEDED: [RunStatus.RUNNING, RunStatus.SUCCEEDED],
        RunStatus.FAILED: [RunStatus.RUNNING, RunStatus.FAILED],
        RunStatus.CANCELLED: [RunStatus.CANCELLED],
    }[RunStatus(status)]
    for to in path:
        run_transition(project=world.project, run_id=run.pk, to=to, expected_version=None)
    return Run.objects.get(pk=run.pk)


def test_only_a_running_run_acts_and_the_worker_also_for_one_it_resumes() -> None:
    assert run_acting_statuses(None) == run_acting_statuses("agent") == {RunStatus.RUNNING}
    assert run_acting_statuses("worker") == RUN_MACHINE.states - {"succeeded", "failed", "cancelled"}


@pytest.mark.parametrize("status", RunStatus.values)
def test_an_intent_is_recorded_only_for_a_running_run(world: World, status: str) -> None:
    run = _run_in(world, status)
    key = f"intent-{status}"
    before = ExternalEffect.objects.count()

    response = world.agent.post("/api/v1/effects/", {"idempotency_key": key, "tool": "send_invoice",
                                                     "arguments": {"eur": 5}, "run": run.pk},
                                HTTP_IDEMPOTENCY_KEY=f"req-{uuid.uuid4()}")

    if status == RunStatus.RUNNING:
        assert response.status_code == 201, response.json()
        assert response.json()["run"] == run.pk
        return
    assert response.status_code == 409, response.json()
    body = response.json()
    assert (body["code"], body["run"], body["run_status"], body["current_status"], body["current_version"]) == (
        "run_not_acting", run.pk, status, status, run.version)
    assert status in body["detail"]
    assert ExternalEffect.objects.count() == before
    assert Run.objects.get(pk=run.pk).version == run.version


def test_a_run_blocked_at_its_budget_declares_nothing_more(world: World) -> None:
    run = _run_in(world, RunStatus.RUNNING)
    Run.objects.filter(pk=run.pk).update(token_budget=100)
    reported = world.agent.post(f"/api/v1/runs/{run.pk}/usage/", {"tokens": 150, "cost": "0.01"})
    assert reported.status_code == 200, reported.json()
    run.refresh_from_db()
    assert (run.status, run.blocked_step) == (RunStatus.BLOCKED, "budget")

    response = world.agent.post("/api/v1/effects/", {"idempotency_key": "after-budget", "tool": "send_invoice",
                                                     "run": run.pk})

    assert (response.status_code, response.json()["code"], response.json()["run_status"]) == (
        409, "run_not_acting", "blocked")
    assert not ExternalEffect.objects.filter(idempotency_key="after-budget").exists()


def test_the_intent_a_running_run_recorded_is_still_answered_after_it_stopped(world: World) -> None:
    """A repeat declares nothing new: the first record, as for any repeat of the same key and action."""
    run = _run_in(world, RunStatus.RUNNING)
    body = {"idempotency_key": "before-stop", "tool": "send_invoice", "arguments": {"eur": 5}, "run": run.pk}
    first = world.agent.post("/api/v1/effects/", body)
    run_transition(project=world.project, run_id=run.pk, to=RunStatus.SUCCEEDED, expected_version=None)

    again = world.agent.post("/api/v1/effects/", body)

    assert (first.status_code, again.status_code, again.json()["id"]) == (201, 200, first.json()["id"])


@pytest.mark.parametrize("status", [RunStatus.WAITING_APPROVAL, RunStatus.BLOCKED, RunStatus.SUCCEEDED])
def test_the_resume_worker_acts_for_a_run_it_resumes_not_for_a_finished_one(world: World, status: str) -> None:
    run = _run_in(world, status)

    def intend() -> ExternalEffect:
        effect, _ = effect_intend(project=world.project, idempotency_key=f"w-{status}", tool="send_invoice",
                                  run_id=run.pk, actor=Actor.for_worker("worker:test:1"))
        return effect

    if status in RUN_MACHINE.terminal:
        with pytest.raises(ConflictError) as refused:
            intend()
        assert (refused.value.code, refused.value.current_status) == ("run_not_acting", status)
    else:
        assert intend().status == EffectStatus.INTENDED


def test_a_refused_intent_is_stored_under_its_key_as_its_final_answer(world: World, agent_for: Any) -> None:
    """409 run_not_acting is the answer to that request (the run will not act again in it): replayed, not redone."""
    run = _run_in(world, RunStatus.SUCCEEDED)
    key = f"req-{uuid.uuid4()}"
    body = {"idempotency_key": "late", "tool": "send_invoice", "run": run.pk}
    client: ApiClient = world.agent
    first = client.post("/api/v1/effects/", body, HTTP_IDEMPOTENCY_KEY=key)
    again = client.post("/api/v1/effects/", body, HTTP_IDEMPOTENCY_KEY=key)
    assert (first.status_code, again.status_code, again["Idempotent-Replayed"]) == (409, 409, "true")
    assert IdempotentRequest.objects.filter(key=key, response_status=409).exists()
