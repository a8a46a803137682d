"""Stale runs (issue 32, part 5): a running run whose lease expired is stale; once stale for longer than its
project's grace, runs_end_stale fails it with the reason, an event and an audit entry. A live lease, a run within
its grace, a run without a lease and another project's longer grace are left alone."""

import datetime as dt
import logging

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from config.celery import app
from harness.audit import audit_chain_verify
from harness.models import AuditEntry, Project
from runs_app.models import Run, RunEvent, RunStatus
from runs_app.selectors.runs import run_is_stale, stale_runs
from runs_app.services import run_claim, run_transition
from runs_app.services.stale_runs import ENDED_STALE, runs_end_stale
from tests import factories

pytestmark = pytest.mark.django_db


def _leased(project: Project, ref: str, *, lease_seconds: int = 60) -> Run:
    run = factories.make_run(project, ref=ref)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return run_claim(project=project, run_id=run.pk, owner=f"agent-{ref}", lease_seconds=lease_seconds)


def _expiry(run: Run) -> dt.datetime:
    assert run.lease_expires_at is not None
    return run.lease_expires_at


def test_a_running_run_past_its_lease_is_stale_and_the_two_definitions_agree(project: Project) -> None:
    run = _leased(project, "R-1")
    unleased = factories.make_run(project, ref="R-2")
    run_transition(project=project, run_id=unleased.pk, to=RunStatus.RUNNING, expected_version=None)
    unleased.refresh_from_db()
    for now, expected in ((_expiry(run) - dt.timedelta(seconds=1), set()),
                          (_expiry(run) + dt.timedelta(seconds=1), {run.pk})):
        assert set(stale_runs(Run.objects.filter(project=project), now=now).values_list("pk", flat=True)) == expected
        assert {r.pk for r in (run, unleased) if run_is_stale(r, now=now)} == expected


@override_settings(HARNESS_STALE_RUN_GRACE=3600)
def test_only_runs_stale_past_their_projects_grace_are_failed_with_the_reason(
        project: Project, other_project: Project, caplog: pytest.LogCaptureFixture) -> None:
    project.stale_run_grace_seconds = 600
    project.save(update_fields=["stale_run_grace_seconds"])
    old = _leased(project, "R-old")
    live = _leased(project, "R-live", lease_seconds=3600)  # its agent renews it: a long lease still running
    other = _leased(other_project, "R-other")  # the default grace: an hour
    unleased = factories.make_run(project, ref="R-free")
    run_transition(project=project, run_id=unleased.pk, to=RunStatus.RUNNING, expected_version=None)
    expired = _expiry(old)

    assert runs_end_stale(now=expired + dt.timedelta(seconds=599)) == 0  # within the grace: untouched
    assert Run.objects.get(pk=old.pk).status == RunStatus.RUNNING

    with caplog.at_level(logging.DEBUG, logger="runs_app.services.stale_runs"):
        assert runs_end_stale(now=expired + dt.timedelta(seconds=601)) == 1
    assert [r.levelno for r in caplog.records] == [logging.INFO]  # it did something: not at DEBUG
    ended = Run.objects.get(pk=old.pk)
    assert (ended.status, ended.failure_category, ended.lease_owner, ended.lease_expires_at) == (
        RunStatus.FAILED, "transient", "", None)
    assert isinstance(ended.error, dict) and ended.error["stale"] is True
    assert "agent-R-old" in ended.error["reason"] and "600 s" in ended.error["reason"]
    kinds = list(RunEvent.objects.filter(run=ended).order_by("seq").values_list("kind", flat=True))
    assert kinds[-2:] == [ENDED_STALE, "status.failed"]
    event = RunEvent.objects.get(run=ended, kind=ENDED_STALE)
    assert (event.data["lease_owner"], event.data["grace_seconds"]) == ("agent-R-old", 600)
    entry = AuditEntry.objects.get(action=ENDED_STALE, target_id=str(ended.pk))
    assert (entry.project_id, entry.actor, entry.data["to"]) == (project.pk, "worker:stale-runs", "failed")
    assert not any(report.breaks for report in audit_chain_verify(project_ids=[project.pk]))

    for untouched in (live, other, unleased):
        assert Run.objects.get(pk=untouched.pk).status == RunStatus.RUNNING
    # The other project's own grace (the default hour) ends its run only once that hour is over.
    assert runs_end_stale(now=_expiry(other) + dt.timedelta(seconds=3601)) == 1
    assert Run.objects.get(pk=other.pk).status == RunStatus.FAILED
    assert Run.objects.get(pk=unleased.pk).status == RunStatus.RUNNING
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="runs_app.services.stale_runs"):
        assert runs_end_stale(now=_expiry(other) + dt.timedelta(seconds=3601)) == 0
    assert [r.levelno for r in caplog.records] == [logging.DEBUG]  # nothing done: only at DEBUG


def test_a_lease_renewed_since_it_went_stale_wins(project: Project) -> None:
    run = _leased(project, "R-renew")
    expired = _expiry(run)
    renewed = run_claim(project=project, run_id=run.pk, owner="agent-R-renew", lease_seconds=3600)
    assert runs_end_stale(now=expired + dt.timedelta(seconds=3601)) == 0
    assert Run.objects.get(pk=renewed.pk).status == RunStatus.RUNNING
    assert runs_end_stale(now=timezone.now()) == 0


def test_beat_runs_the_pass_through_a_registered_task(project: Project) -> None:
    app.loader.import_default_modules()  # the autodiscovery a worker does as it starts
    entry = settings.CELERY_BEAT_SCHEDULE["end-stale-runs"]
    run = _leased(project, "R-beat")
    Run.objects.filter(pk=run.pk).update(lease_expires_at=dt.datetime(2020, 1, 1, tzinfo=dt.UTC))
    assert app.tasks[entry["task"]].apply().get() == 1  # the task itself, in this process, at the real clock
    assert Run.objects.get(pk=run.pk).status == RunStatus.FAILED


def test_the_grace_is_set_on_the_admins_project_page(project: Project) -> None:
    client = Client()
    client.force_login(User.objects.create_superuser("root-stale", password="pw-123456"))
    response = client.post(reverse("admin:harness_project_change", args=[project.pk]),
                           {"slug": project.slug, "name": project.name, "stale_run_grace_seconds": "900"})
    assert response.status_code == 302, response.content.decode()[:2000]
    project.refresh_from_db()
    assert project.stale_run_grace_seconds == 900
