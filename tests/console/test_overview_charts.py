"""The overview's charts: runs by status per day, approval waits (p50, p95), resume outcomes, blocked runs
by step, tokens and cost per day and per agent; server-side SVG from the database."""

import datetime as dt
import re
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from console.charts import bars, columns, nice_ceiling
from harness.canonical import digest
from runs_app.models import ApprovalRequest, ApprovalStatus, Run, RunStatus
from tests import factories

pytestmark = pytest.mark.django_db
PAYLOAD = '<script>alert(1)</script><img src=x onerror="alert(2)">'


def _titles(body: str, chart: str) -> list[str]:
    figure = re.search(rf'<figure class="chart" data-chart="{chart}">(.*?)</figure>', body, re.S)
    assert figure is not None, chart
    return re.findall(r"<title>([^<]*)</title>", figure[1])


def _run(project, session, *, days_ago: int, status: str = RunStatus.SUCCEEDED, **fields) -> Run:  # type: ignore[no-untyped-def]
    run = factories.make_run(project, session)
    when = timezone.localtime().replace(hour=12, minute=0, second=0, microsecond=0) - dt.timedelta(days=days_ago)
    Run.objects.filter(pk=run.pk).update(created_at=when, status=status, **fields)
    return run


def _decided(project, run: Run, user, *, waited: float, day: dt.datetime) -> None:  # type: ignore[no-untyped-def]
    approval = ApprovalRequest.objects.create(
        project=project, run=run, tool="git.push", action_fingerprint=digest(waited), idempotency_key=f"k{waited}",
        requested_by="agent:coder", status=ApprovalStatus.APPROVED, decided_by=user, decided_at=day,
        approved_fingerprint=digest(waited))
    ApprovalRequest.objects.filter(pk=approval.pk).update(created_at=day - dt.timedelta(seconds=waited))


def test_each_chart_reads_its_figures_from_the_database(project, other_project, reviewer, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    session = factories.make_session(project)
    _run(project, session, days_ago=0, active_agent="coder", tokens_used=1200, cost_used=Decimal("0.50"))
    _run(project, session, days_ago=0, status=RunStatus.FAILED, active_agent="coder", tokens_used=300,
         metrics={"latency_ms": 5, "failure_type": "tool_unreachable"})
    _run(project, session, days_ago=2, active_agent="tester", tokens_used=50, cost_used=Decimal("1.25"),
         metrics={"latency_ms": 5, "failure_type": ""})
    _run(project, session, days_ago=1, status=RunStatus.BLOCKED, blocked_step="approval_preconditions")
    _run(project, session, days_ago=1, status=RunStatus.BLOCKED, blocked_step="approval_preconditions")
    _run(project, session, days_ago=1, status=RunStatus.BLOCKED, blocked_step=f"x{PAYLOAD}"[:64],
         active_agent=PAYLOAD)
    _run(project, session, days_ago=30, tokens_used=99_999, active_agent="ancient")  # before the window
    noon = timezone.localtime().replace(hour=12, minute=0, second=0, microsecond=0)
    host = _run(project, session, days_ago=3)
    for waited in (10, 20, 30, 40, 100):
        _decided(project, host, reviewer, waited=waited, day=noon)
    theirs = factories.make_session(other_project)
    _run(other_project, theirs, days_ago=0, active_agent="spy", tokens_used=7, blocked_step="secret_step",
         status=RunStatus.BLOCKED)

    body = reviewer_client.get(reverse("dashboard")).content.decode()
    today = f"{timezone.localtime():%a %d %b}"
    assert f"{today}: succeeded 1" in _titles(body, "runs-by-status")
    assert f"{today}: failed 1" in _titles(body, "runs-by-status")
    # 10, 20, 30, 40, 100 s: the median 30 s, the 95th percentile 40 + 0.8 * 60 = 88 s (interpolated)
    assert _titles(body, "approval-wait") == [f"{today}: p50 30 s", f"{today}: p95 88 s"]
    assert _titles(body, "resume-outcomes") == ["went through: 1", "tool_unreachable: 1"]
    blocked = _titles(body, "blocked-by-step")
    assert blocked[0] == "approval_preconditions: 2" and len(blocked) == 2
    assert f"{today}: tokens 1.5k" in _titles(body, "tokens-per-day")
    assert any(title.endswith(": cost 1.25") for title in _titles(body, "cost-per-day"))
    agents = _titles(body, "usage-per-agent")
    assert agents[0] == "coder: 1.5k tokens, 0.50" and "ancient" not in body
    # Another project's figures are nowhere; agent text is text.
    assert "spy" not in body and "secret_step" not in body
    assert "<script>alert" not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_an_empty_window_says_so(reviewer_client) -> None:  # type: ignore[no-untyped-def]
    body = reviewer_client.get(reverse("dashboard")).content.decode()
    assert body.count('class="muted chart-empty"') == 7 and "<rect" not in body


def test_columns_stack_or_stand_side_by_side_on_a_round_axis() -> None:
    days = [dt.date(2026, 12, 1), dt.date(2026, 12, 2)]
    stacked = columns("c", "t", days, [("a", "c-a", [3, 0]), ("b", "c-b", [4, 1])], stacked=True)
    assert [label.text for label in stacked.labels[:3]] == ["0", "5", "10"]  # the top is 10, above 7
    first_day = [r for r in stacked.rects if r.title.startswith("Tue 01 Dec")]
    assert len(first_day) == 2 and first_day[0].x == first_day[1].x  # one column
    assert first_day[1].y + first_day[1].h == pytest.approx(first_day[0].y, abs=0.2)  # b sits on a
    grouped = columns("c", "t", days, [("a", "c-a", [3, 0]), ("b", "c-b", [4, 1])], stacked=False)
    first_day = [r for r in grouped.rects if r.title.startswith("Tue 01 Dec")]
    assert first_day[0].x < first_day[1].x  # side by side
    assert [nice_ceiling(v) for v in (0, 7, 10, 11, 180, 2600)] == [1, 10, 10, 20, 200, 5000]
    wide = bars("b", "t", [("long", 10, "10"), ("short", 5, "5")], "c-x")
    assert wide.rects[0].w == pytest.approx(2 * wide.rects[1].w)
