"""Stale runs (issue 32, part 5): a running run whose agent's lease expired is stale; once stale for longer than its
project's grace, the recovery pass blocks it at `agent_lease_expired` with the reason, a `run.stale_blocked` event
and an audit entry, and an operator's retry hands it back to its agent. A live lease, a run within its grace, a run
without a lease, a resume worker's expired lease and another project's longer grace are left alone."""

import datetime as dt
import logging

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_chain_verify
from harness.models import AuditEntry, Project
from runs_app.models import Run, RunEvent, RunStatus
from runs_app.resume_due import WORKER_OWNER_PREFIX
from runs_app.selectors.runs import run_is_stale, stale_runs
from runs_app.services import run_claim, run_transition
from runs_app.services.run_actions import run_act
from tests import factories
from worker.recovery import AGENT_LEASE_EXPIRED, STALE_BLOCKED, agent_leases_expired_block, recovery_pass

pytestmark = pytest.mark.django_db


def _leased(project: Project, ref: str, *, owner: str = "", lease_seconds: int = 60) -> Run:
    run = factories.make_run(project, ref=ref)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return run_claim(project=project, run_id=run.pk, owner=owner or f"agent-{ref}", lease_seconds=lease_seconds)


def _expired_ago(run: Run, seconds: int) -> Run:
    """The run as if its lease had run out `seconds` ago (the pass compares at the database's clock)."""
    Run.objects.filter(pk=run.pk).update(lease_expires_at=timezone.now() - dt.timedelta(seconds=seconds))
    return Run.objects.get(pk=run.pk)


def _running_unleased(project: Project, ref: str) -> Run:
    run = factories.make_run(project, ref=ref)
    return run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)


def test_a_running_run_past_its_agents_lease_is_stale_and_the_two_definitions_agree(project: Project) -> None:
    run = _leased(project, "R-1")
    unleased = _running_unleased(project, "R-2")
    worker = _leased(project, "R-3", owner=f"{WORKER_OWNER_PREFIX}host-1")  # the recovery pass resumes it again
    assert run.lease_expires_at is not None
    for now, expected in ((run.lease_expires_at - dt.timedelta(seconds=1), set()),
                          (run.lease_expires_at + dt.timedelta(seconds=120), {run.pk})):
        assert set(stale_runs(Run.objects.filter(project=project), now=now).values_list("pk", flat=True)) == expected
        assert {r.pk for r in (run, unleased, worker) if run_is_stale(r, now=now)} == expected


@override_settings(HARNESS_STALE_RUN_GRACE=3600)
def test_only_runs_stale_past_their_projects_grace_are_blocked_with_the_reason(
        project: Project, other_project: Project, caplog: pytest.LogCaptureFixture) -> None:
    project.stale_run_grace_seconds = 600
    project.save(update_fields=["stale_run_grace_seconds"])
    old = _expired_ago(_leased(project, "R-old"), 700)
    within = _expired_ago(_leased(project, "R-within"), 500)  # stale, but within the project's grace
    live = _leased(project, "R-live", lease_seconds=3600)
    other = _expired_ago(_leased(other_project, "R-other"), 700)  # the default grace: an hour
    worker = _expired_ago(_leased(project, "R-worker", owner=f"{WORKER_OWNER_PREFIX}host-1"), 7200)
    unleased = _running_unleased(project, "R-free")

    with caplog.at_level(logging.INFO, logger="worker.recovery"):
        passed = recovery_pass(enqueue=lambda run_id: None)
    assert passed["agent_lease_expired"] == [old.pk]
    assert any(f"agent's lease expired [{old.pk}]" in r.getMessage() for r in caplog.records)
    blocked = Run.objects.get(pk=old.pk)
    assert (blocked.status, blocked.blocked_step, blocked.failure_category, blocked.lease_owner,
            blocked.lease_expires_at) == (RunStatus.BLOCKED, AGENT_LEASE_EXPIRED, "transient", "", None)
    assert isinstance(blocked.error, dict)
    assert "agent-R-old" in blocked.error["reason"] and "grace of 600 s" in blocked.error["reason"]
    kinds = list(RunEvent.objects.filter(run=blocked).order_by("seq").values_list("kind", flat=True))
    assert kinds[-2:] == [STALE_BLOCKED, "status.blocked"]
    event = RunEvent.objects.get(run=blocked, kind=STALE_BLOCKED)
    assert (event.data["lease_owner"], event.data["grace_seconds"], event.data["version"]) == (
        "agent-R-old", 600, old.version)
    entry = AuditEntry.objects.get(action=STALE_BLOCKED, target_id=str(blocked.pk))
    assert (entry.project_id, entry.actor, entry.data["from"], entry.data["to"]) == (
        project.pk, "worker:recovery", "running", "blocked")
    assert not any(report.breaks for report in audit_chain_verify(project_ids=[project.pk]))

    for untouched in (within, live, other, worker, unleased):
        assert Run.objects.get(pk=untouched.pk).status == RunStatus.RUNNING, untouched.ref
    # The other project's own grace (the default hour) blocks its run only once that hour is over.
    _expired_ago(other, 3700)
    assert agent_leases_expired_block() == [other.pk]
    assert agent_leases_expired_block() == []


def test_a_lease_renewed_since_it_went_stale_wins(project: Project) -> None:
    run = _expired_ago(_leased(project, "R-renew"), 7200)
    stale_read = Run.objects.get(pk=run.pk)
    renewed = run_claim(project=project, run_id=run.pk, owner="agent-R-renew", lease_seconds=3600)
    assert agent_leases_expired_block() == []
    assert Run.objects.get(pk=renewed.pk).status == RunStatus.RUNNING
    assert renewed.version >= stale_read.version


def test_an_operators_retry_hands_a_stale_blocked_run_back_to_its_agent(project: Project) -> None:
    run = _expired_ago(_leased(project, "R-back"), 7200)
    assert agent_leases_expired_block() == [run.pk]
    blocked = Run.objects.get(pk=run.pk)
    operator = User.objects.create_superuser("root-retry", password="pw-123456")
    back = run_act(project=project, run_id=run.pk, actor=Actor.for_user(operator), action="retry",
                   reason="the agent is back", expected_version=blocked.version)
    assert (back.status, back.blocked_step) == (RunStatus.RUNNING, "")
    again = run_claim(project=project, run_id=run.pk, owner="agent-R-back", lease_seconds=60)
    assert again.lease_owner == "agent-R-back"
    assert agent_leases_expired_block() == []  # a fresh lease: not stale


def test_the_grace_is_set_on_the_admins_project_page(project: Project) -> None:
    client = Client()
    client.force_login(User.objects.create_superuser("root-stale", password="pw-123456"))
    response = client.post(reverse("admin:harness_project_change", args=[project.pk]),
                           {"slug": project.slug, "name": project.name, "stale_run_grace_seconds": "900"})
    assert response.status_code == 302, response.content.decode()[:2000]
    project.refresh_from_db()
    assert project.stale_run_grace_seconds == 900
