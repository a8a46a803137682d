"""The console at a phone's and a tablet's width (issue 32, part 6), and axe-core's accessibility scan of the main
pages: in Chromium, for an admin (the longest header: every link and role).

At 375 and 768 px wide no page scrolls sideways (a wide table scrolls in its own box), and every link of the header,
Log out included, is on screen where a finger can reach it. Screenshots: test-artifacts/layout/.
"""

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page

from harness.actors import Actor
from runs_app.services.standing_approvals import standing_approval_create
from tests import factories
from tests.browser.conftest import ARTIFACTS
from tests.console.scenario import Scene, build_scene

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = {"phone": (375, 812), "tablet": (768, 1024)}


def _pages(scene: Scene) -> dict[str, str]:
    a, b = scene.checkpoints[1], scene.checkpoints[3]
    return {
        "overview": reverse("dashboard"),
        "inbox": reverse("runs:approval_inbox"),
        "approval": reverse("runs:approval_detail", args=[scene.approval.pk]),
        "policies": reverse("runs:policy_list"),
        "standing": reverse("runs:standing_approval_list"),
        "question": reverse("runs:question_detail", args=[scene.question.pk]),
        "runs": reverse("runs:run_list"),
        "run": reverse("runs:run_inspector", args=[scene.run.pk]),
        "lineage": reverse("runs:run_lineage", args=[scene.run.pk]),
        "diff": reverse("runs:checkpoint_diff") + f"?a={a.pk}&b={b.pk}",
        "session": reverse("sessions:session_timeline", args=[scene.session.pk]),
        "memory": reverse("memory:record_list"),
        "audit": reverse("audit_log"),
        "bundles": reverse("bundles:bundle_list"),
    }


@pytest.fixture
def admin_page(page: Page, live_server: Any, login: Any) -> tuple[Page, Scene]:
    project = factories.make_project("acme")
    scene = build_scene(project)
    ada = factories.make_user("ada", role="admin", projects=[project])
    standing_approval_create(project=project, actor=Actor.for_user(ada), tool="git.push", agent="coder",
                             match_arguments={"branch": "fix/login"}, max_uses=3, expires_in=dt.timedelta(hours=8))
    login(page, "ada")
    return page, scene


# What sticks out: the page's width beyond the viewport, and each header control not wholly on screen.
MEASURE = """() => {
  const width = window.innerWidth;
  const controls = [...document.querySelectorAll('header.nav a, header.nav button')].map(el => {
    const box = el.getBoundingClientRect();
    return {text: el.textContent.trim().slice(0, 30), left: box.left, right: box.right, width: box.width,
            visible: box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden'};
  });
  return {width, scroll: document.documentElement.scrollWidth,
          off: controls.filter(c => !c.visible || c.left < 0 || c.right > width + 0.5)};
}"""


@pytest.mark.parametrize("screen", WIDTHS)
def test_no_page_scrolls_sideways_and_the_whole_header_is_reachable(admin_page, live_server, screen) -> None:  # type: ignore[no-untyped-def]
    page, scene = admin_page
    width, height = WIDTHS[screen]
    page.set_viewport_size({"width": width, "height": height})
    (ARTIFACTS / "layout").mkdir(parents=True, exist_ok=True)
    problems = {}
    for name, url in _pages(scene).items():
        page.goto(live_server.url + url)
        page.screenshot(path=str(ARTIFACTS / "layout" / f"{screen}-{name}.png"), full_page=True)
        seen = page.evaluate(MEASURE)
        if seen["scroll"] > seen["width"] or seen["off"]:
            problems[name] = seen
    assert not problems, problems
    page.goto(live_server.url + reverse("dashboard"))
    page.get_by_role("button", name="Log out").click()  # reachable means it works where it is
    page.wait_for_url(f"{live_server.url}/login/**")


def test_the_main_pages_have_no_serious_accessibility_violations(admin_page, live_server) -> None:  # type: ignore[no-untyped-def]
    page, scene = admin_page
    found = {}
    for name, url in _pages(scene).items():
        page.goto(live_server.url + url)
        page.add_script_tag(path=str(AXE))
        result = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
                               ".filter(v => ['serious', 'critical'].includes(v.impact))"
                               ".map(v => ({id: v.id, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))")
        if result:
            found[name] = result
    assert not found, found
