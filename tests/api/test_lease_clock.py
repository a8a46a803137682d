"""Lease times are the database's clock, never a process's (issue 19, defect 4; DESIGN.md, "State machines").

The server process's clock is moved 30 s either way (`django.utils.timezone.now`, which every lease decision
read before the fix); PostgreSQL's is not. A fast clock must not take a live lease, a slow one must not write a
lease that is already over by the database's clock, nor keep writing under one that is. Each case failed before
the fix (the claim, the heartbeat and the guards compared with the process's time).
"""

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from harness.models import Project
from runs_app.models import Run
from tests import factories
from tests.api.conftest import ApiClient

pytestmark = pytest.mark.django_db

SKEW = dt.timedelta(seconds=30)


@pytest.fixture
def skew(monkeypatch: pytest.MonkeyPatch) -> Callable[[dt.timedelta], None]:
    real = timezone.now

    def shift(by: dt.timedelta) -> None:
        monkeypatch.setattr(timezone, "now", lambda: real() + by)

    return shift


@pytest.fixture
def agent(project: Project) -> ApiClient:
    return ApiClient(factories.make_agent_token(project, name="clock-agent")[1])


def _db_now() -> dt.datetime:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement_timestamp()")
        return cursor.fetchone()[0]


def _claim(agent: ApiClient, run: Run, owner: str, seconds: int) -> Any:
    return agent.post(f"/api/v1/runs/{run.pk}/claim/", {"owner": owner, "lease_seconds": seconds})


def test_a_server_whose_clock_runs_fast_does_not_take_a_live_lease(
    project: Project, agent: ApiClient, skew: Callable[[dt.timedelta], None]
) -> None:
    run = factories.make_run(project)
    assert _claim(agent, run, "worker-a", 10).status_code == 200

    skew(SKEW)
    stolen = _claim(agent, run, "worker-fast", 10)

    assert (stolen.status_code, stolen.json()["code"]) == (409, "lease_held")
    assert Run.objects.get(pk=run.pk).lease_owner == "worker-a"


def test_a_server_whose_clock_runs_slow_writes_a_lease_that_lasts_by_the_database_s_clock(
    project: Project, agent: ApiClient, skew: Callable[[dt.timedelta], None]
) -> None:
    run = factories.make_run(project)
    skew(-SKEW)
    before = _db_now()
    assert _claim(agent, run, "worker-slow", 10).status_code == 200

    expires = Run.objects.get(pk=run.pk).lease_expires_at
    assert expires is not None and expires >= before + dt.timedelta(seconds=10)
    skew(dt.timedelta(0))
    taken = _claim(agent, run, "worker-b", 10)
    assert (taken.status_code, taken.json()["code"]) == (409, "lease_held")


def test_a_lease_over_by_the_database_s_clock_refuses_a_slow_holder_s_heartbeat_and_writes(
    project: Project, agent: ApiClient, skew: Callable[[dt.timedelta], None]
) -> None:
    run = factories.make_run(project)
    assert _claim(agent, run, "worker-slow", 10).status_code == 200
    moved = agent.post(f"/api/v1/runs/{run.pk}/transition/",
                       {"to": "running", "expected_version": Run.objects.get(pk=run.pk).version,
                        "lease_owner": "worker-slow"})
    assert moved.status_code == 200, moved.json()
    # Its lease ran out a second ago by the database's clock; by the holder's (30 s slow) it has 29 s left.
    with connection.cursor() as cursor:
        cursor.execute("UPDATE runs_app_run SET lease_expires_at = statement_timestamp() - interval '1 second' "
                       "WHERE id = %s", [run.pk])
    skew(-SKEW)

    beat = agent.post(f"/api/v1/runs/{run.pk}/heartbeat/", {"owner": "worker-slow", "lease_seconds": 10})
    done = agent.post(f"/api/v1/runs/{run.pk}/transition/",
                      {"to": "succeeded", "expected_version": moved.json()["version"], "lease_owner": "worker-slow"})

    assert (beat.status_code, beat.json()["code"]) == (409, "lease_lost")
    assert done.status_code == 409
    assert Run.objects.get(pk=run.pk).status == "running"
    skew(dt.timedelta(0))
    assert _claim(agent, run, "worker-b", 10).status_code == 200  # expired for everyone alike
