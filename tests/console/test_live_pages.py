"""The live desk (issue 32, part 4): the inbox, the overview's counts and a run's page poll "changed since?"; the
overview and the inbox count the same approvals for every role; a reviewer's own queue; the bulk form's preview.

The statement counts below are pinned because they are the bounded cost of an open page: each open inbox,
overview or run page polls every HARNESS_CONSOLE_POLL_SECONDS, and an unchanged poll must stay this cheap
(docs/operations/scaling.md, "Live pages").
"""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from harness.actors import Actor
from harness.models import Project
from runs_app.models import RunStatus
from runs_app.services import approval_assign, approval_request_create, run_event_append, run_transition
from tests import factories
from tests.console.scenario import Scene

pytestmark = pytest.mark.django_db

INBOX = reverse("runs:approval_inbox")
HTMX = {"HTTP_HX_REQUEST": "true"}


def _ask(project: Project, ref: str, tool: str = "mail.send", arguments: dict | None = None) -> int:
    run = factories.make_run(project, ref=ref, active_agent="mailer")
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(project=project, run_id=run.pk, tool=tool, arguments=arguments or {"to": ref},
                                   idempotency_key=f"k-{ref}", actor=Actor.for_agent("mailer")).pk


def _number(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*>([^<]*)<', html)
    assert found, f"#{element_id} is not on the page"
    return found.group(1).strip()


def _version(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*data-version="([^"]+)"', html)
    assert found, f"#{element_id} has no data-version"
    return found.group(1)


@pytest.mark.parametrize("role", [None, "reviewer", "operator", "admin"])
def test_the_overview_and_the_inbox_count_the_same_approvals_for_every_role(  # type: ignore[no-untyped-def]
        scene: Scene, role, client_for) -> None:
    # The reviewer's report: an operator's overview said "0 approvals waiting" while its /approvals/ listed one.
    client: Client = client_for(factories.make_user("vera", role=role, projects=[scene.project]))
    overview = client.get(reverse("dashboard")).content.decode()
    inbox = client.get(INBOX).content.decode()
    assert _number(overview, "approvals-waiting") == "1" and _number(inbox, "inbox-count") == "1 pending"
    decides = "1" if role in ("reviewer", "admin") else "0"
    assert _number(overview, "approvals-to-decide") == _number(inbox, "inbox-to-decide") == decides
    assert _number(inbox, "pending-count") == decides  # the badge: theirs to decide (issue 17)


def test_an_unchanged_inbox_poll_is_one_statement_beyond_the_session_and_a_change_redraws_it(  # type: ignore[no-untyped-def]
        scene: Scene, reviewer_client) -> None:
    page = reviewer_client.get(INBOX).content.decode()
    version = _version(page, "inbox-table")
    poll = f"{INBOX}?part=inbox-table&since={version}"
    with CaptureQueriesContext(connection) as unchanged:
        response = reviewer_client.get(poll, **HTMX)
    assert response.status_code == 204 and response.content == b""
    # The bounded cost of an open inbox: the session, its user, the user's projects, and the version.
    assert len(unchanged.captured_queries) == 4, [q["sql"] for q in unchanged.captured_queries]
    assert "runs_app_approvalrequest" in unchanged.captured_queries[-1]["sql"]

    new = _ask(scene.project, "R-300")
    redrawn = reviewer_client.get(poll, **HTMX)
    body = redrawn.content.decode()
    assert redrawn.status_code == 200 and body.lstrip().startswith("<div id=\"inbox-table\"")
    assert f'data-approval="{new}"' in body and _version(body, "inbox-table") != version
    assert _number(body, "inbox-count") == "2 pending"


def test_assigning_or_deciding_changes_the_inbox_version(scene: Scene, reviewer, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    version = _version(reviewer_client.get(INBOX).content.decode(), "inbox-table")
    approval_assign(project_ids=[scene.project.pk], approval_id=scene.approval.pk, actor=Actor.of(reviewer),
                    assignee="rita", expected_version=None)
    assigned = _version(reviewer_client.get(INBOX).content.decode(), "inbox-table")
    assert assigned != version
    assert reviewer_client.get(f"{INBOX}?part=inbox-table&since={version}", **HTMX).status_code == 200


def test_an_unchanged_overview_poll_costs_its_counts_and_a_moved_count_redraws_the_tiles(  # type: ignore[no-untyped-def]
        scene: Scene, operator_client) -> None:
    page = operator_client.get(reverse("dashboard")).content.decode()
    version = _version(page, "overview-counts")
    poll = f"{reverse('dashboard')}?part=overview-counts&since={version}"
    with CaptureQueriesContext(connection) as unchanged:
        assert operator_client.get(poll, **HTMX).status_code == 204
    # The session, its user, the user's projects, the reviewer projects among them, and the four counts: no chart.
    assert len(unchanged.captured_queries) == 8, [q["sql"] for q in unchanged.captured_queries]

    _ask(scene.project, "R-301")
    tiles = operator_client.get(poll, **HTMX).content.decode()
    assert tiles.lstrip().startswith('<ul class="tiles" id="overview-counts"')
    assert _number(tiles, "approvals-waiting") == "2"
    assert _number(tiles, "approvals-to-decide") == "0"  # an operator decides none


def test_an_unchanged_run_page_poll_is_one_statement_and_a_new_event_redraws_the_page(  # type: ignore[no-untyped-def]
        scene: Scene, reviewer_client) -> None:
    url = reverse("runs:run_inspector", args=[scene.run.pk])
    version = _version(reviewer_client.get(url).content.decode(), "run-live")
    poll = f"{url}?since={version}"
    with CaptureQueriesContext(connection) as unchanged:
        assert reviewer_client.get(poll, **HTMX).status_code == 204
    assert len(unchanged.captured_queries) == 4, [q["sql"] for q in unchanged.captured_queries]
    assert reviewer_client.get(poll).status_code == 200  # a person opening that URL gets the page, not a 204

    run_event_append(project=scene.project, run_id=scene.run.pk, kind="note", data={"text": "moved on"})
    page = reviewer_client.get(poll, **HTMX).content.decode()
    assert 'id="run-page"' in page and "moved on" in page and _version(page, "run-live") != version


def test_a_run_of_another_project_is_never_answered_unchanged(  # type: ignore[no-untyped-def]
        scene: Scene, other_scene: Scene, reviewer_client) -> None:
    url = reverse("runs:run_inspector", args=[other_scene.run.pk])
    assert reviewer_client.get(f"{url}?since=gone", **HTMX).status_code == 404


def test_assigned_to_me_lists_only_the_reviewers_own_queue(scene: Scene, reviewer, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    factories.make_user("ruth", role="reviewer", projects=[scene.project])
    theirs = _ask(scene.project, "R-302")
    approval_assign(project_ids=[scene.project.pk], approval_id=scene.approval.pk, actor=Actor.of(reviewer),
                    assignee="rita", expected_version=None)
    approval_assign(project_ids=[scene.project.pk], approval_id=theirs, actor=Actor.of(reviewer),
                    assignee="ruth", expected_version=None)
    _ask(scene.project, "R-303")  # nobody's
    mine = reviewer_client.get(f"{INBOX}?assigned=me").content.decode()
    assert re.findall(r'class="approval-row" data-approval="(\d+)"', mine) == [str(scene.approval.pk)]
    assert _number(mine, "inbox-count") == "1 pending" and 'id="tab-mine" aria-current="page"' in mine
    everyone = reviewer_client.get(INBOX).content.decode()
    assert len(re.findall(r'class="approval-row"', everyone)) == 3


def test_the_bulk_form_shows_each_rows_arguments_not_only_its_fingerprint(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    other = _ask(scene.project, "R-304", tool="refund", arguments={"amount": 120, "order": "A-9"})
    page = reviewer_client.get(INBOX).content.decode()
    preview = page[page.index('id="bulk-preview"'):]
    for approval_id, text in ((scene.approval.pk, "&quot;branch&quot;: &quot;fix/login&quot;"),
                              (other, "&quot;amount&quot;: 120")):
        item = re.search(rf'class="bulk-preview-item" data-preview="{approval_id}">(.*?)</li>', preview, re.S)
        assert item and text in item.group(1)
    assert 'id="bulk-all"' in page and 'id="bulk-none"' in page
