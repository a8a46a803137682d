"""Who may do what in the console: roles, tenants, agent tokens, CSRF, and GETs that never write."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from harness.actors import Actor
from memory_app.models import MemoryRecord, MemoryStatus
from runs_app.models import ApprovalRequest, ApprovalStatus
from tests import factories
from tests.console.scenario import Scene
from tests.console.test_pages import page_urls

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def test_an_operator_cannot_decide_approvals(scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    page = operator_client.get(reverse("runs:approval_detail", args=[scene.approval.pk])).content.decode()
    assert 'id="approve"' not in page and "You do not hold the reviewer role" in page
    for name, data in (
        ("approval_approve", {}),
        ("approval_reject", {"reason": "no"}),
        ("approval_edit_approve", {"arguments": "{}"}),
    ):
        response = operator_client.post(reverse(f"runs:{name}", args=[scene.approval.pk]), data, **HTMX)
        assert response.status_code == 403
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.PENDING


def test_a_reviewer_cannot_delete_or_edit_memory(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    record = scene.memory
    detail = reviewer_client.get(reverse("memory:record_detail", args=[record.pk])).content.decode()
    assert 'id="delete-link"' not in detail and 'id="edit-link"' not in detail
    assert reviewer_client.post(
        reverse("memory:record_delete", args=[record.pk]), {"confirm": "on", "version": record.version}
    ).status_code == 403
    assert reviewer_client.post(
        reverse("memory:record_edit", args=[record.pk]), {"content": "changed", "version": record.version}
    ).status_code == 403
    assert reviewer_client.post(
        reverse("memory:record_bulk"), {"ids": [record.pk], "action": "delete", "confirm": "on", "reason": "r"}
    ).status_code == 403
    record.refresh_from_db()
    assert record.status == MemoryStatus.ACTIVE and record.content.startswith("The login bug")


def test_a_user_of_project_a_sees_nothing_of_project_b(scene: Scene, other_scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    # Lists: only A's rows.
    for name in ("runs:approval_inbox", "runs:run_list", "runs:task_list", "sessions:session_list",
                 "memory:record_list", "dashboard"):
        body = reviewer_client.get(reverse(name)).content.decode()
        assert "R-101-b" not in body and "S-42-b" not in body and "auth.py-b" not in body and "globex" not in body
    assert reviewer_client.get(reverse("pending_count")).content.decode().count(">1<") == 1
    # Every page of B's objects is a 404, never a 403 and never its data.
    for url in page_urls(other_scene):
        if url in page_urls(scene):
            continue  # the list pages are the same URLs (checked above)
        response = reviewer_client.get(url)
        assert response.status_code == 404, url
    # Writes on B's objects are 404 too, and change nothing.
    assert reviewer_client.post(
        reverse("runs:approval_approve", args=[other_scene.approval.pk]), {}, **HTMX
    ).status_code == 404
    assert ApprovalRequest.objects.get(pk=other_scene.approval.pk).status == ApprovalStatus.PENDING
    # A diff naming one checkpoint of each project is a 404 as well.
    mixed = reverse("runs:checkpoint_diff") + f"?a={scene.checkpoints[0].pk}&b={other_scene.checkpoints[0].pk}"
    assert reviewer_client.get(mixed).status_code == 404


def test_an_operator_of_b_cannot_touch_memory_of_a(scene: Scene, other_project, client_for) -> None:  # type: ignore[no-untyped-def]
    outsider = client_for(factories.make_user("olga", role="operator", projects=[other_project]))
    response = outsider.post(
        reverse("memory:record_bulk"), {"ids": [scene.memory.pk], "action": "delete", "confirm": "on", "reason": "r"}
    )
    assert response.status_code == 302
    assert MemoryRecord.objects.get(pk=scene.memory.pk).status == MemoryStatus.ACTIVE
    assert outsider.post(
        reverse("memory:record_delete", args=[scene.memory.pk]), {"confirm": "on"}
    ).status_code == 404


def test_an_agent_token_cannot_reach_the_console(scene: Scene) -> None:
    _, secret = factories.make_agent_token(scene.project)
    agent = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    for url in page_urls(scene):
        response = agent.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/"), url
    response = agent.post(reverse("runs:approval_approve", args=[scene.approval.pk]), {})
    assert response.status_code in (302, 403)
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.PENDING


def test_posts_need_the_csrf_token_which_htmx_sends_as_a_header(scene: Scene, reviewer) -> None:  # type: ignore[no-untyped-def]
    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer)
    page = client.get(reverse("runs:approval_detail", args=[scene.approval.pk]))
    body = page.content.decode()
    assert 'hx-headers=\'{"X-CSRFToken": "' in body  # on <body>, inherited by every htmx request
    token = body.split('"X-CSRFToken": "', 1)[1].split('"', 1)[0]
    approve = reverse("runs:approval_approve", args=[scene.approval.pk])
    form = {"version": scene.approval.version}
    assert client.post(approve, form, **HTMX).status_code == 403
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.PENDING
    assert client.post(approve, form, HTTP_X_CSRFTOKEN=token, **HTMX).status_code == 200
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.APPROVED


def test_get_never_writes(scene: Scene, client_for, project) -> None:  # type: ignore[no-untyped-def]
    admin = client_for(factories.make_user("ada", role="admin", projects=[project]))
    edit = reverse("memory:record_edit", args=[scene.memory.pk])
    with CaptureQueriesContext(connection) as queries:
        for url in [*page_urls(scene), edit]:
            assert admin.get(url, **({"HTTP_HX_REQUEST": "true"} if url == edit else {})).status_code == 200
    writes = [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))]
    assert writes == []


def test_agent_written_values_are_escaped_and_inert(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    from runs_app.services import approval_request_create, run_transition
    from sessions_app.services import session_items_append

    evil = '<img src=x onerror=alert(1)><b hx-post="/logout/" hx-trigger="load">x</b>'
    session = factories.make_session(project, ref="S-evil")
    run = factories.make_run(project, session, ref="R-evil", active_agent=evil[:100])
    run_transition(project=project, run_id=run.pk, to="running", expected_version=None)
    session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": {"t": evil}}])
    approval = approval_request_create(
        project=project, run_id=run.pk, tool="shell", arguments={"cmd": evil}, idempotency_key="k-evil",
        reason=evil, actor=Actor.for_agent("x"),
    )
    for target in (
        reverse("runs:approval_detail", args=[approval.pk]),
        reverse("runs:approval_inbox"),
        reverse("runs:run_inspector", args=[run.pk]),
        reverse("sessions:session_timeline", args=[session.pk]),
    ):
        body = reviewer_client.get(target).content.decode()
        assert "<img src=x" not in body and '<b hx-post="/logout/"' not in body, target
        assert "&lt;img src=x onerror=alert(1)&gt;" in body or "&lt;img src=x" in body, target
    detail = reviewer_client.get(reverse("runs:approval_detail", args=[approval.pk])).content.decode()
    assert '<pre id="arguments" hx-disable>' in detail
