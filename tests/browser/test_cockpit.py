"""The operator's cockpit in a real browser (Debian's Chromium): the runs list, the task pages, a run's
timeline and the overview's charts; agent text with script payloads executes nothing."""

import re

import pytest
from playwright.sync_api import Page, expect

from harness.actors import Actor
from runs_app.models import RunStatus
from runs_app.services import run_transition
from tests import factories
from tests.console.scenario import build_scene

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PAYLOAD = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">'


def _no_script_ran(page: Page) -> None:
    assert page.evaluate("window.__xss === undefined")
    assert page.locator("img[src=x]").count() == 0


def test_the_runs_list_filters_by_url_pages_and_shows_agent_text_as_text(page: Page, live_server, login,
                                                                         shot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from runs_app.selectors import runs as runs_sel

    monkeypatch.setattr(runs_sel, "RUN_PAGE_SIZE", 3)  # the live server runs in this process
    scene = build_scene(factories.make_project("acme"))
    hostile = factories.make_run(scene.project, scene.session, ref=f"R-x{PAYLOAD}"[:64], active_agent=PAYLOAD[:120])
    run_transition(project=scene.project, run_id=hostile.pk, to=RunStatus.RUNNING, expected_version=None)
    run_transition(project=scene.project, run_id=hostile.pk, to=RunStatus.BLOCKED, expected_version=None,
                   actor=Actor.for_worker("worker:test"), blocked_step="approval_preconditions",
                   error={"reason": PAYLOAD})
    factories.make_user("otto", role="operator", projects=[scene.project])

    login(page, "otto")
    page.click("nav >> text=Runs")
    expect(page.locator("tr.run-row")).to_have_count(3)
    _no_script_ran(page)
    expect(page.locator(f"tr[data-run='{hostile.pk}']")).to_contain_text("window.__xss = 2")  # shown, as text
    expect(page.locator("#status-counts li[data-status=created] strong")).to_have_text("2")
    shot(page, "runs-list")

    page.click("#runs-next")
    expect(page.locator("tr.run-row")).to_have_count(1)
    page.click("#runs-previous")
    expect(page.locator("tr.run-row")).to_have_count(3)

    # A filter changes the URL (htmx pushes it), so the filtered list is a link to share.
    page.select_option("select[name=blocked_step]", "approval_preconditions")
    expect(page.locator("tr.run-row")).to_have_count(1)
    expect(page).to_have_url(re.compile(r"blocked_step=approval_preconditions"))
    shared = page.url
    page.goto(f"{live_server.url}/")
    page.goto(shared)
    expect(page.locator("tr.run-row")).to_have_count(1)
    expect(page.locator(f"tr[data-run='{hostile.pk}']")).to_contain_text("approval_preconditions")
    _no_script_ran(page)

    page.goto(f"{live_server.url}/runs/")
    page.click("#status-counts li[data-status=waiting_approval] a")
    expect(page.locator("tr.run-row")).to_have_count(1)
    expect(page.locator(f"tr[data-run='{scene.run.pk}']")).to_be_visible()
    shot(page, "runs-list-filtered")


def test_a_task_page_shows_its_plan_state_history_and_runs(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    from runs_app.models import Task
    from runs_app.services import task_save

    scene = build_scene(factories.make_project("acme"))
    task = Task.objects.get(pk=scene.task.pk)
    task_save(project=scene.project, task_id=task.pk, expected_version=task.version, completed_nodes=["locate"],
              pending_nodes=["patch", "test"], artifact_refs={"locate": "auth.py:42"})
    hostile = factories.make_task(scene.project, ref="T-x", objective=PAYLOAD, plan=[PAYLOAD, "ship"],
                                  constraints=[PAYLOAD])
    factories.make_user("otto", role="operator", projects=[scene.project])

    login(page, "otto")
    page.click("nav >> text=Tasks")
    expect(page.locator("tr.task-row")).to_have_count(2)
    _no_script_ran(page)
    page.click(f"tr[data-task='{task.pk}'] >> text=T-7")
    expect(page.locator("#task-objective")).to_have_text("Fix the login bug")
    expect(page.locator("#task-plan li")).to_have_count(3)
    expect(page.locator("#task-plan li[data-state=completed]")).to_contain_text("locate")
    expect(page.locator("#task-plan li[data-state=current]")).to_contain_text("patch")
    expect(page.locator("#task-history > li")).to_have_count(2)
    expect(page.locator("#task-history > li").first).to_contain_text("auth.py:42")
    expect(page.locator(f"tr[data-run='{scene.run.pk}']")).to_contain_text("R-101")
    shot(page, "task-detail")
    page.click("#task-lineage")
    expect(page.locator("svg.lineage")).to_be_visible()

    page.goto(f"{live_server.url}/tasks/{hostile.pk}/")
    expect(page.locator("#task-objective")).to_have_text(PAYLOAD)
    expect(page.locator("#task-plan li").first).to_contain_text(PAYLOAD)
    _no_script_ran(page)


def test_a_runs_timeline_draws_bars_and_filters_by_kind(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    import datetime as dt

    from django.utils import timezone

    from runs_app.models import NodeExecution
    from tests.console.test_run_timeline import _events

    scene = build_scene(factories.make_project("acme"))
    start = timezone.now() - dt.timedelta(minutes=2)
    _events(scene.run, start, [
        (0, "approval.requested", {}), (40, "approval.approved", {}), (41, "resume.load", {"ok": True}),
        (41, "resume.approval_preconditions", {"ok": True}), (44, "resume.checkpoint", {"ok": True}),
        (50, f"note.{PAYLOAD}"[:64], {"text": PAYLOAD}),
    ])
    for node, begin, end in (("outline", 45, 52), ("draft", 52, 70)):
        execution = NodeExecution.objects.create(run=scene.run, node=node, status="succeeded")
        NodeExecution.objects.filter(pk=execution.pk).update(started_at=start + dt.timedelta(seconds=begin),
                                                             finished_at=start + dt.timedelta(seconds=end))
    factories.make_user("otto", role="operator", projects=[scene.project])

    login(page, "otto")
    page.goto(f"{live_server.url}/runs/{scene.run.pk}/")
    timeline = page.locator("#timeline")
    expect(timeline.locator("svg.timeline")).to_be_visible()
    expect(timeline.locator("tr.span-row")).to_have_count(5)  # the scene's own approval still waits
    expect(timeline.locator("tr.span-row[data-lane=node]").last).to_contain_text("18.0 s")
    _no_script_ran(page)
    timeline.screenshot(path=str(shot.__globals__["ARTIFACTS"] / "console-run-timeline.png"))
    page.select_option("#timeline-kind", "resume")
    expect(page.locator("#timeline tr.span-row")).to_have_count(1)
    expect(page.locator("#timeline tr.span-row")).to_contain_text("3.0 s")
    _no_script_ran(page)


def test_the_overview_draws_its_charts_without_any_script(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    import datetime as dt
    from decimal import Decimal

    from django.utils import timezone

    from tests.console.test_overview_charts import _decided, _run

    project = factories.make_project("acme")
    session = factories.make_session(project)
    user = factories.make_user("rita", role="reviewer", projects=[project])
    statuses = [RunStatus.SUCCEEDED, RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.BLOCKED, RunStatus.RUNNING]
    for day in range(14):
        for i in range(day % 5 + 1):
            status = statuses[(day + i) % len(statuses)]
            _run(project, session, days_ago=day, status=status, active_agent=("writer", "editor", PAYLOAD)[i % 3],
                 tokens_used=1000 * (i + 1) + 37 * day, cost_used=Decimal("0.0125") * (i + 1),
                 blocked_step="approval_preconditions" if status == RunStatus.BLOCKED and i % 2 else
                 ("budget" if status == RunStatus.BLOCKED else ""),
                 metrics={"latency_ms": 10, "failure_type": ("", "", "tool_unreachable", "load")[i % 4]})
    host = _run(project, session, days_ago=0)
    noon = timezone.localtime().replace(hour=12, minute=0, second=0, microsecond=0)
    for day in range(0, 14, 2):
        for waited in (30, 90, 600 + 60 * day):
            _decided(project, host, user, waited=waited + day / 10, day=noon - dt.timedelta(days=day))

    login(page, "rita")
    charts = page.locator("#charts figure.chart")
    expect(charts).to_have_count(7)
    for key in ("runs-by-status", "approval-wait", "resume-outcomes", "blocked-by-step", "tokens-per-day",
                "cost-per-day", "usage-per-agent"):
        expect(page.locator(f"figure[data-chart={key}] svg rect").first).to_be_visible()
    _no_script_ran(page)
    expect(page.locator("figure[data-chart=usage-per-agent]")).to_contain_text("<script>")
    shot(page, "overview-charts")
