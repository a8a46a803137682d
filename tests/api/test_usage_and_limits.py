"""Issue 16, section 3: usage reported per model call advances the run's totals atomically, and a run that
reaches its budget or passes its deadline is stopped (blocked at `budget` / `deadline`) before its next call."""

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from runs_app.models import Run, RunEvent, RunStatus
from runs_app.services import run_transition
from tests import factories
from tests.api.conftest import ApiClient, World
from tests.threads import run_concurrently


def _usage(world: World, run: Run, **body: object) -> object:
    return world.agent.post(f"/api/v1/runs/{run.pk}/usage/", body)


def _running(world: World, **budget: object) -> Run:
    run = factories.make_run(world.project, world.session, **budget)
    run_transition(project=world.project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return Run.objects.get(pk=run.pk)


@pytest.mark.django_db
def test_a_report_advances_tokens_and_cost_and_logs_the_call(world: World) -> None:
    run = _running(world)
    first = _usage(world, run, tokens=120, cost="0.0030", model="m-1", call_id="call-1")
    second = _usage(world, run, tokens=80, cost="0.0020")

    assert (first.status_code, second.status_code) == (200, 200), first.content
    assert (first.json()["tokens_used"], first.json()["cost_used"]) == (120, "0.0030")
    assert (second.json()["tokens_used"], second.json()["cost_used"]) == (200, "0.0050")
    run.refresh_from_db()
    assert (run.tokens_used, run.cost_used, run.status) == (200, Decimal("0.0050"), RunStatus.RUNNING)
    reported = list(RunEvent.objects.filter(run=run, kind="usage.reported").order_by("seq"))
    assert [e.data for e in reported] == [{"tokens": 120, "cost": "0.0030", "model": "m-1", "call_id": "call-1"},
                                          {"tokens": 80, "cost": "0.0020"}]
    # The event took the next gap-free seq in the same statement as the totals.
    assert [e.seq for e in RunEvent.objects.filter(run=run).order_by("seq")] == list(range(1, run.last_event_seq + 1))


@pytest.mark.django_db
def test_a_bad_report_is_refused_and_changes_nothing(world: World) -> None:
    run = _running(world)
    for body in ({"tokens": -1}, {"tokens": 1, "cost": "-0.01"}, {"cost": "1"}, {"tokens": "many"}):
        response = _usage(world, run, **body)
        assert (response.status_code, response.json()["code"]) == (400, "invalid"), body
    run.refresh_from_db()
    assert (run.tokens_used, run.cost_used) == (0, 0)


@pytest.mark.django_db
def test_a_finished_run_takes_no_report_and_a_stale_lease_owner_is_fenced(world: World) -> None:
    run = _running(world)
    run_transition(project=world.project, run_id=run.pk, to=RunStatus.SUCCEEDED, expected_version=None)
    finished = _usage(world, run, tokens=1)
    assert (finished.status_code, finished.json()["code"]) == (409, "run_finished")

    leased = world.running_run
    fenced = _usage(world, leased, tokens=5, lease_owner="someone-else")
    assert (fenced.status_code, fenced.json()["code"]) == (409, "lease_lost")
    assert Run.objects.get(pk=leased.pk).tokens_used == 0


@pytest.mark.django_db
def test_the_report_that_reaches_the_token_budget_blocks_the_run_and_its_next_tool_call_is_refused(world: World
                                                                                                   ) -> None:
    run = _running(world, token_budget=100)
    assert _usage(world, run, tokens=60).json()["status"] == "running"

    over = _usage(world, run, tokens=50)

    body = over.json()
    assert (over.status_code, body["status"], body["blocked_step"], body["failure_category"]) == (
        200, "blocked", "budget", "permission")
    assert body["tokens_used"] == 110 and "100" in body["error"]["reason"]
    # The agent's next tool call (an approval request) is refused: a blocked run cannot start waiting.
    refused = world.agent.post(f"/api/v1/runs/{run.pk}/approvals/",
                               {"tool": "send_email", "arguments": {}, "idempotency_key": "after-budget"})
    assert (refused.status_code, refused.json()["code"]) == (409, "illegal_transition")
    assert RunEvent.objects.filter(run=run, kind="status.blocked").get().data["step"] == "budget"


@pytest.mark.django_db
def test_the_cost_budget_and_the_deadline_stop_a_run_too(world: World) -> None:
    costly = _running(world, cost_budget=Decimal("0.0100"))
    assert _usage(world, costly, tokens=1, cost="0.0099").json()["status"] == "running"
    assert _usage(world, costly, tokens=1, cost="0.0001").json()["blocked_step"] == "budget"

    late = _running(world, deadline=timezone.now() - dt.timedelta(seconds=1))
    body = _usage(world, late, tokens=1).json()
    assert (body["status"], body["blocked_step"]) == ("blocked", "deadline")


@pytest.mark.django_db
def test_another_project_cannot_report_on_a_run(world: World, other_world: World) -> None:
    response = other_world.agent.post(f"/api/v1/runs/{world.running_run.pk}/usage/", {"tokens": 5})
    assert response.status_code == 404
    assert Run.objects.get(pk=world.running_run.pk).tokens_used == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_reports_are_all_counted(world: World) -> None:
    """Each report is one UPDATE adding to the totals: sixteen at once lose none (a read-modify-write would)."""
    run = _running(world)
    auth = world.agent.headers["HTTP_AUTHORIZATION"]

    responses = run_concurrently(16, lambda i: ApiClient(None).call(
        "POST", f"/api/v1/runs/{run.pk}/usage/", {"tokens": i + 1, "cost": "0.0001"}, HTTP_AUTHORIZATION=auth))

    assert [r.status_code for r in responses] == [200] * 16
    run.refresh_from_db()
    assert (run.tokens_used, run.cost_used) == (sum(range(1, 17)), Decimal("0.0016"))
    assert RunEvent.objects.filter(run=run, kind="usage.reported").count() == 16
