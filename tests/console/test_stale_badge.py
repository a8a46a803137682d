"""A stale run (running past its expired lease, issue 32 part 5) wears a "stale" badge on its page and in the
runs list; a run whose lease is live wears none."""

import datetime as dt

import pytest
from django.test import Client
from django.urls import reverse

from runs_app.models import Run, RunStatus
from runs_app.services import run_claim, run_transition
from tests import factories
from tests.console.scenario import Scene

pytestmark = pytest.mark.django_db


def test_a_stale_run_has_the_badge_on_its_page_and_in_the_list(scene: Scene, operator_client: Client) -> None:
    stale = factories.make_run(scene.project, ref="R-stale")
    run_transition(project=scene.project, run_id=stale.pk, to=RunStatus.RUNNING, expected_version=None)
    run_claim(project=scene.project, run_id=stale.pk, owner="agent-gone", lease_seconds=60)
    # The agent stopped renewing an hour ago (the lease's end, moved back, as time would have moved it).
    Run.objects.filter(pk=stale.pk).update(lease_expires_at=dt.datetime(2020, 1, 1, tzinfo=dt.UTC))
    live = factories.make_run(scene.project, ref="R-live")
    run_transition(project=scene.project, run_id=live.pk, to=RunStatus.RUNNING, expected_version=None)
    run_claim(project=scene.project, run_id=live.pk, owner="agent-here", lease_seconds=600)

    assert 'id="run-stale"' in operator_client.get(reverse("runs:run_inspector", args=[stale.pk])).content.decode()
    assert 'id="run-stale"' not in operator_client.get(reverse("runs:run_inspector", args=[live.pk])).content.decode()
    listing = operator_client.get(reverse("runs:run_list")).content.decode()
    rows = {ref: row for row in listing.split('<tr class="run-row"')[1:] for ref in ("R-stale", "R-live") if ref in row}
    assert "run-stale" in rows["R-stale"] and "run-stale" not in rows["R-live"]
