"""Every console page renders for a member, shows the agent's values escaped, and links as plain links."""

import json
import re

import pytest
from django.urls import reverse
from django.utils.html import escape

from harness.actors import Actor
from tests import factories
from tests.console.scenario import Scene

pytestmark = pytest.mark.django_db


def page_urls(scene: Scene) -> list[str]:
    a, b = scene.checkpoints[1], scene.checkpoints[3]
    return [
        reverse("dashboard"),
        reverse("runs:approval_inbox"),
        reverse("runs:approval_detail", args=[scene.approval.pk]),
        reverse("runs:policy_list"),
        reverse("runs:approval_decided"),
        reverse("runs:standing_approval_list"),
        reverse("runs:approval_inbox") + "?kind=question",
        reverse("runs:question_detail", args=[scene.question.pk]),
        reverse("runs:run_list"),
        reverse("runs:task_list"),
        reverse("runs:task_detail", args=[scene.task.pk]),
        reverse("runs:run_inspector", args=[scene.run.pk]),
        reverse("runs:run_lineage", args=[scene.run.pk]),
        reverse("runs:task_lineage", args=[scene.task.pk]),
        reverse("runs:checkpoint_detail", args=[a.pk]),
        reverse("runs:checkpoint_diff") + f"?a={a.pk}&b={b.pk}",
        reverse("sessions:session_list"),
        reverse("sessions:session_timeline", args=[scene.session.pk]),
        reverse("memory:record_list"),
        reverse("memory:record_detail", args=[scene.memory.pk]),
        reverse("memory:record_delete", args=[scene.memory.pk]),
        reverse("memory:held_list"),
        reverse("notify:delivery_log"),
        reverse("audit_log"),
        reverse("pending_count"),
    ]


def test_every_page_renders_for_a_member(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    for url in page_urls(scene):
        response = reviewer_client.get(url)
        assert response.status_code == 200, (url, response.status_code)


def test_approval_detail_shows_what_a_reviewer_needs(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    body = reviewer_client.get(reverse("runs:approval_detail", args=[scene.approval.pk])).content.decode()
    assert "git.push" in body
    assert scene.approval.action_fingerprint in body
    assert "&quot;branch&quot;: &quot;fix/login&quot;" in body  # pretty-printed, escaped
    assert "agent:coder" in body
    assert "I need to push the patch" in body  # the session's recent items
    # The latest checkpoint: the one the request wrote as the run started waiting (issue 16, section 5).
    assert "waiting for approval of git.push" in body
    assert "Verify the approved fingerprint" in body  # what the resume will check
    assert 'id="approve"' in body and 'id="reject"' in body and 'id="edit-approve"' in body


def test_anonymous_users_are_sent_to_login(scene: Scene, client) -> None:  # type: ignore[no-untyped-def]
    for url in page_urls(scene):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/"), url


def test_the_approval_page_lists_the_workers_resume_steps_in_order(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    from django.utils.html import escape

    from worker.registry import STEPS

    body = reviewer_client.get(reverse("runs:approval_detail", args=[scene.approval.pk])).content.decode()
    positions = [body.find(escape(step.label)) for step in STEPS]
    assert -1 not in positions, [step.label for step, at in zip(STEPS, positions, strict=True) if at == -1]
    assert positions == sorted(positions)


def test_lineage_draws_forks_side_by_side(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    from runs_app.presentation.lineage import lineage_layout
    from runs_app.selectors.checkpoints import lineage_checkpoints

    root, located, fork, patched = scene.checkpoints
    lineage = lineage_layout(list(lineage_checkpoints(project_ids=[scene.project.pk], run=scene.run)))
    nodes = {n.checkpoint.pk: n for n in lineage.nodes}
    assert nodes[root.pk].is_fork and not nodes[located.pk].is_fork
    assert nodes[located.pk].y == nodes[fork.pk].y > nodes[root.pk].y  # siblings on one level
    assert nodes[located.pk].x != nodes[fork.pk].x  # side by side
    assert nodes[patched.pk].y > nodes[located.pk].y and nodes[patched.pk].parent_x == nodes[located.pk].x
    body = reviewer_client.get(reverse("runs:run_lineage", args=[scene.run.pk])).content.decode()
    # Four of the scene's and the one the approval request wrote under `patched` as the run started waiting.
    assert body.count('class="edge"') == 4 and body.count("<circle") == 5 and 'class="node fork"' in body


def test_diff_names_each_changed_path(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    located, patched = scene.checkpoints[1], scene.checkpoints[3]
    url = reverse("runs:checkpoint_diff") + f"?a={located.pk}&b={patched.pk}&part=diff"
    body = reviewer_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert body.lstrip().startswith('<div id="diff">')  # the partial, not the page
    for path in ("state.step", "state.patch", "state.root_cause", "cursor.node", "artifact_fingerprints.repo"):
        assert f"<code>{path}</code>" in body, path
    assert 'class="diff-added"' in body and 'class="diff-removed"' in body and 'class="diff-changed"' in body


@pytest.mark.django_db(transaction=True)
def test_timeline_pages_items_and_runs_in_order(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    # Committed one by one (as separate requests would be), so every row has its own time.
    from tests.console.scenario import build_scene

    scene = build_scene(project)
    body = reviewer_client.get(reverse("sessions:session_timeline", args=[scene.session.pk])).content.decode()
    order = [body.index(s) for s in ("Help me analyse", "Go on, fix", "R-100", "R-101", "I need to push", "R-102")]
    assert order == sorted(order)


def test_the_dashboard_names_the_step_a_blocked_run_failed(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    from runs_app.services import run_transition

    run_transition(
        project=scene.project, run_id=scene.run.pk, to="blocked", expected_version=None,
        actor=Actor.for_worker("worker:test"),
        blocked_step="approval_preconditions", error={"reason": "the fingerprint changed"},
    )
    body = reviewer_client.get(reverse("dashboard")).content.decode()
    assert f'data-run="{scene.run.pk}"' in body
    assert "approval_preconditions" in body and "the fingerprint changed" in body


def test_inbox_filters_by_project_risk_age_and_agent(scene: Scene, project, other_project, client_for) -> None:  # type: ignore[no-untyped-def]
    import datetime as dt

    from runs_app.models import ApprovalRequest
    from tests.console.scenario import build_scene

    other = build_scene(other_project, suffix="-b")
    client = client_for(factories.make_user("ivy", role="reviewer", projects=[project, other_project]))
    ApprovalRequest.objects.filter(pk=other.approval.pk).update(
        risk="critical", created_at=other.approval.created_at - dt.timedelta(days=2)
    )
    inbox = reverse("runs:approval_inbox")

    def shown(query: str) -> set[int]:
        body = client.get(inbox + query).content.decode()
        return {a for a in (scene.approval.pk, other.approval.pk) if f'data-approval="{a}"' in body}

    assert shown("") == {scene.approval.pk, other.approval.pk}
    assert shown("?project=acme") == {scene.approval.pk}
    assert shown("?risk=critical") == {other.approval.pk}
    assert shown("?older_than=1d") == {other.approval.pk}
    assert shown("?agent=coder") == {scene.approval.pk, other.approval.pk}
    assert shown("?agent=nobody") == set()
    fragment = client.get(inbox + "?risk=high&part=inbox-table", HTTP_HX_REQUEST="true").content.decode()
    assert fragment.lstrip().startswith('<div id="inbox-table" ')


def test_the_timeline_is_paged(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    from sessions_app.services import session_items_append

    session_items_append(project=scene.project, session_id=scene.session.pk,
                         items=[{"role": "user", "content": {"n": i}} for i in range(60)])
    url = reverse("sessions:session_timeline", args=[scene.session.pk])
    first = reviewer_client.get(url).content.decode()
    # Keyset paging: the "later" link carries the last row's position, not a page number.
    later = re.search(r'href="\?after=([0-9.]+)"', first)
    assert later is not None and "?before=" not in first and first.count('class="timeline-') == 50
    second = reviewer_client.get(url + f"?after={later[1]}").content.decode()
    assert second.count('class="timeline-') == 67 - 50 and "?after=" not in second
    earlier = re.search(r'href="\?before=([0-9.]+)"', second)
    assert earlier is not None
    back = reviewer_client.get(url + f"?before={earlier[1]}").content.decode()
    assert back.count('class="timeline-') == 50 and "?before=" not in back


def test_fragments_are_chosen_by_target_and_unknown_parts_get_the_page(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    url = reverse("runs:run_inspector", args=[scene.run.pk])
    fragment = reviewer_client.get(url + "?page=1", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="events").content.decode()
    assert fragment.lstrip().startswith('<section class="card" id="events">') and "<nav" not in fragment
    for bogus in ("?part=nope", "?part=../base.html"):
        page = reviewer_client.get(url + bogus, HTTP_HX_REQUEST="true")
        assert page.status_code == 200 and "<html" in page.content.decode()


def test_an_expired_session_sends_htmx_to_the_login_page(scene: Scene, client) -> None:  # type: ignore[no-untyped-def]
    response = client.get(reverse("pending_count"), HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and response["HX-Redirect"] == "/login/?next=%2Fapprovals%2Fcount%2F"
    assert response.content == b""


def test_the_run_inspector_shows_the_context_handed_to_the_model(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    from memory_app.context import context_project
    from sessions_app.models import Session

    # An `external` session hands over memory retrieved on request (memory_app.context).
    Session.objects.filter(pk=scene.session.pk).update(memory_policy="external")
    snapshot = context_project(project=scene.project, run_id=scene.run.pk, budget_chars=2000, query="login bug")
    body = reviewer_client.get(reverse("runs:run_inspector", args=[scene.run.pk])).content.decode()
    assert f"{snapshot.used_chars} / 2000 chars" in body
    assert "external (manager)" in body  # the policy and role that decided it
    assert "retrieved for the query this projection was asked for" in body  # why the record went in
    assert snapshot.memory_ids == [scene.memory.pk]
    for record_id in snapshot.memory_ids:
        assert reverse("memory:record_detail", args=[record_id]) in body
    # The content handed over (as stored), as indented JSON beside the snapshot (memory_app.inspector_panel), escaped.
    snapshot.refresh_from_db()
    assert escape(json.dumps(snapshot.content, indent=2, ensure_ascii=False, default=str)) in body


def test_the_run_inspector_shows_each_events_data_as_json(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    from runs_app.services import run_event_append

    event = run_event_append(project=scene.project, run_id=scene.run.pk, kind="note", data={"b": "<i>two</i>", "a": 1},
                             lease_owner=scene.run.lease_owner or None)
    body = reviewer_client.get(reverse("runs:run_inspector", args=[scene.run.pk])).content.decode()
    # Compact, keys sorted, escaped: beside the row (runs_app.presentation.events), not a dict's repr.
    assert f"<td><code>{escape(json.dumps(event.data, sort_keys=True))}</code></td>" in body
