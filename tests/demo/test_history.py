"""The demo's last 14 days (demo.history, loaded by `load_demo`): every chart of the overview has something to show."""

import datetime as dt
import io

import pytest
from django.core.management import call_command
from django.utils import timezone

from console.charts import overview_charts
from harness.actors import Actor
from harness.models import Project
from memory_app.models import MemoryRecord
from runs_app.models import ApprovalRequest, Run
from runs_app.services import approval_request_create, run_transition
from tests import factories
from worker.pipeline import resume_run_by_id

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo() -> Project:  # one load per test: loading the history is a few seconds
    call_command("load_demo", stdout=io.StringIO())
    return Project.objects.get(slug="novelforge")


def test_the_history_spreads_hundreds_of_runs_of_four_agents_over_14_days_and_fills_every_chart(demo):
    history = Run.objects.filter(project=demo, ref__startswith="H-")
    assert 100 <= history.count() <= 400
    today = timezone.localdate()
    days = {run.created_at.date() for run in history}
    assert min(days) == today - dt.timedelta(days=13) and len(days) == 14
    assert {run.active_agent for run in history} == {"writer", "researcher", "editor", "publisher"}
    assert {"succeeded", "failed", "cancelled", "running", "waiting_approval"} <= {run.status for run in history}
    assert all(run.tokens_used > 0 and run.cost_used > 0 for run in history)
    decided = ApprovalRequest.objects.filter(project=demo, run__ref__startswith="H-", decided_at__isnull=False)
    waits = sorted((a.decided_at - a.created_at).total_seconds() for a in decided)
    assert waits[0] < 600 < 3 * 3600 < waits[-1]  # minutes to hours
    assert {"approved", "rejected", "expired"} <= set(
        ApprovalRequest.objects.filter(project=demo, run__ref__startswith="H-").values_list("status", flat=True))
    assert MemoryRecord.objects.filter(project=demo, status="held").exists()

    # What bin/start's worker does with the queued resumes of the history's decisions, done here in-process.
    waiting = Run.objects.filter(project=demo, ref__startswith="H-", status="waiting_approval")
    for run_id in waiting.values_list("pk", flat=True):
        resume_run_by_id(run_id)
    history = Run.objects.filter(project=demo, ref__startswith="H-")
    assert history.filter(blocked_step="capability").exists()  # send_newsletter has no adapter
    charts = {chart.key: chart for chart in overview_charts(project_ids=[demo.pk])}
    assert set(charts) == {"runs-by-status", "approval-wait", "resume-outcomes", "blocked-by-step", "tokens-per-day",
                           "cost-per-day", "usage-per-agent"}
    assert [key for key, chart in charts.items() if chart.empty] == []


def test_the_history_expires_only_its_own_approvals(other_project):
    # Loading the demo into a database with other work must not move anyone else's approval to expired early.
    run = factories.make_run(other_project)
    run_transition(project=other_project, run_id=run.pk, to="running", expected_version=None)
    theirs = approval_request_create(
        project=other_project, run_id=run.pk, tool="ship", arguments={}, idempotency_key="theirs",
        actor=Actor.for_agent("bot"), expires_at=timezone.now() + dt.timedelta(minutes=1))
    call_command("load_demo", stdout=io.StringIO())
    theirs.refresh_from_db()
    assert theirs.status == "pending"
    assert ApprovalRequest.objects.filter(project__slug="novelforge", status="expired").exists()
