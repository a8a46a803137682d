"""A handoff's result resumed by real `celery -A config worker` processes, with a kill -9 inside the binding.

The consumption of a returned result commits in the transaction that binds it to the origin run: a worker
killed between the two leaves the result returned and unconsumed, and the next worker binds it exactly once.
"""

import datetime as dt

import pytest
from django.utils import timezone

from harness.actors import Actor
from runs_app.models import Handoff, HandoffStatus, Run, RunStatus
from runs_app.services import handoff_accept, handoff_issue, run_transition
from tests import factories
from tests.api.conftest import ApiClient
from tests.worker.support import events, wait_for, wait_status

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_kill_9_inside_the_binding_then_a_new_worker_consumes_the_result_once(workers) -> None:  # type: ignore[no-untyped-def]
    project = factories.make_project("acme")
    origin = factories.make_run(project, factories.make_session(project, role="writer"))
    run_transition(project=project, run_id=origin.pk, to=RunStatus.RUNNING, expected_version=None)
    reviewer = factories.make_session(project, role="semantic_reviewer", memory_policy="none")
    handoff = handoff_issue(project=project, origin_run_id=origin.pk, receiver_session_id=reviewer.pk,
                            objective="Review chapter 3.", inputs=[], allowed_capabilities=[],
                            output_schema={"type": "object"}, deadline=timezone.now() + dt.timedelta(minutes=10),
                            actor=Actor.for_agent("writer"))
    accepted = handoff_accept(project=project, handoff_id=handoff.pk,
                              receiver_run_id=factories.make_run(project, reviewer).pk,
                              actor=Actor.for_agent("reviewer"))
    agent = ApiClient(factories.make_agent_token(project, name="reviewer")[1])
    first = workers.start("a", crash_at="handoff_consumed")

    returned = agent.post(f"/api/v1/handoffs/{handoff.pk}/return/",
                          {"packet_fingerprint": handoff.packet_fingerprint, "result": {"verdict": "pass"},
                           "expected_version": accepted.version})
    assert returned.status_code == 200, returned.content

    assert first.exited() == -9
    assert Handoff.objects.get(pk=handoff.pk).status == HandoffStatus.RETURNED  # rolled back with the binding
    assert Run.objects.get(pk=origin.pk).status == RunStatus.WAITING_EXTERNAL

    workers.start("b")
    wait_for(lambda: Handoff.objects.get(pk=handoff.pk).status == HandoffStatus.CONSUMED, what="the consumption")
    run = wait_status(origin.pk, RunStatus.RUNNING)

    consumed = Handoff.objects.get(pk=handoff.pk)
    assert run.bound_result["receipt"] == consumed.receipt and run.bound_result["result"] == {"verdict": "pass"}
    assert run.lease_owner == ""
    bound = [e for e in events(origin.pk, "resume.continue") if e.data["ok"]]
    assert len(bound) == 1 and bound[0].data["receipt"] == consumed.receipt
    assert len(events(origin.pk, "status.running")) == 2  # the start, and the one binding
