"""The admin moves rows only through the services, and never edits history or a status field."""

import pytest
from django.contrib.auth.models import User

from runs_app.models import Run, RunEvent
from runs_app.services import run_transition
from tests import factories


@pytest.fixture
def admin_client(client, db):
    User.objects.create_superuser("root", "root@example.com", "pw-123456")
    client.login(username="root", password="pw-123456")
    return client


def test_a_transition_action_goes_through_the_service(admin_client, project):
    run = factories.make_run(project)
    response = admin_client.post("/admin/runs_app/run/", {"action": "move_to_running", "_selected_action": [run.pk]})
    assert response.status_code == 302
    run.refresh_from_db()
    assert (run.status, run.version) == ("running", 2)
    assert RunEvent.objects.filter(run=run, kind="status.running").exists()


def test_an_illegal_transition_action_changes_nothing_and_says_why(admin_client, project):
    run = factories.make_run(project)
    response = admin_client.post("/admin/runs_app/run/", {"action": "move_to_succeeded", "_selected_action": [run.pk]},
                                 follow=True)
    assert "not a legal transition" in response.content.decode()
    assert Run.objects.get(pk=run.pk).status == "created"


def test_the_admin_cannot_push_a_waiting_run_past_its_approval(admin_client, project):
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to="running", expected_version=1)
    run_transition(project=project, run_id=run.pk, to="waiting_approval", expected_version=None)
    response = admin_client.post("/admin/runs_app/run/", {"action": "move_to_running", "_selected_action": [run.pk]},
                                 follow=True)
    assert "resume worker" in response.content.decode()
    assert Run.objects.get(pk=run.pk).status == "waiting_approval"


def test_status_and_version_are_read_only_in_the_change_form(admin_client, project):
    session = factories.make_session(project)
    page = admin_client.get(f"/admin/sessions_app/session/{session.pk}/change/").content.decode()
    assert 'name="status"' not in page and 'name="version"' not in page
    admin_client.post(f"/admin/sessions_app/session/{session.pk}/change/",
                      {"ref": "S-1", "role": "writer", "memory_policy": "none", "metadata": "{}",
                       "context_budget_chars": 4000, "context_items": 20, "status": "completed", "version": 99})
    session.refresh_from_db()
    assert (session.status, session.version, session.role) == ("created", 1, "writer")


@pytest.mark.parametrize("path", [
    "/admin/sessions_app/sessionitem/{pk}/delete/", "/admin/runs_app/runevent/{pk}/delete/",
                                  "/admin/runs_app/checkpoint/{pk}/delete/", "/admin/runs_app/run/{pk}/delete/"])
def test_append_only_history_cannot_be_deleted_in_the_admin(admin_client, project, path):
    from runs_app.services import checkpoint_create
    from sessions_app.services import session_items_append

    run = factories.make_run(project)
    rows = {
        "sessionitem": session_items_append(project=project, session_id=run.session_id,
                                            items=[{"role": "user", "content": "x"}])[0].pk,
        "runevent": RunEvent.objects.filter(run=run).first().pk,
        "checkpoint": checkpoint_create(project=project, run_id=run.pk).pk,
        "run": run.pk,  # a run goes only by retention (runs_app migration 0020)
    }
    model = path.split("/")[3]
    assert admin_client.post(path.format(pk=rows[model]), {"post": "yes"}).status_code == 403
    assert admin_client.get(path.replace("delete/", "change/").format(pk=rows[model])).status_code == 200  # view only


def test_the_admin_trims_and_compacts_a_sessions_history_through_the_service(admin_client, project):
    from harness.models import AuditEntry
    from sessions_app.models import SessionItem
    from sessions_app.services import session_items_append

    session = factories.make_session(project)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "user", "content": i} for i in range(6)])
    url = f"/admin/sessions_app/session/{session.pk}/trim/"
    assert url in admin_client.get(f"/admin/sessions_app/session/{session.pk}/change/").content.decode()
    assert admin_client.get(url).status_code == 200

    trimmed = admin_client.post(url, {"operation": "trim", "keep_last": 4, "confirm": "on"})
    compacted = admin_client.post(url, {"operation": "compact", "first_seq": 3, "last_seq": 4, "role": "system",
                                        "summary": '{"summary": "3 and 4"}', "confirm": "on"})

    assert trimmed.status_code == compacted.status_code == 302
    assert list(SessionItem.objects.filter(session=session).order_by("seq").values_list("seq", "content")) == [
        (4, {"summary": "3 and 4"}), (5, 4), (6, 5)]
    assert list(AuditEntry.objects.order_by("pk").values_list("action", "actor")) == [
        ("session.items_trimmed", "user:root"), ("session.items_compacted", "user:root")]
    refused = admin_client.post(url, {"operation": "compact", "first_seq": 1, "last_seq": 2, "summary": "x",
                                      "role": "system", "confirm": "on"}, follow=True)
    assert "No item has a seq between 1 and 2" in refused.content.decode()


def test_the_admin_sets_a_retention_policy_through_the_service_shows_its_dry_run_and_runs_a_pass(
    admin_client, project,
):
    from harness.models import AuditEntry
    from runs_app.models import RetentionPolicy
    from sessions_app.models import SessionItem
    from sessions_app.services import session_items_append

    session = factories.make_session(project)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "user", "content": i} for i in range(3)])
    added = admin_client.post("/admin/runs_app/retentionpolicy/add/", {"project": project.pk, "items_keep_last": 1})
    assert added.status_code == 302
    policy = RetentionPolicy.objects.get(project=project)
    assert policy.items_keep_last == 1 and policy.events_keep_last is None
    assert AuditEntry.objects.get(action="retention.policy_set").actor == "user:root"

    page = admin_client.get(f"/admin/runs_app/retentionpolicy/{policy.pk}/change/").content.decode()
    assert "items: would remove 2; kept: none" in page
    ran = admin_client.post("/admin/runs_app/retentionpolicy/", {"action": "run_pass", "_selected_action": [policy.pk]})
    assert ran.status_code == 302
    assert list(SessionItem.objects.filter(session=session).values_list("seq", flat=True)) == [3]
    assert AuditEntry.objects.get(action="retention.pruned").actor == "user:root"
