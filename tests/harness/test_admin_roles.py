"""The Django admin follows the console's roles (issue 30): a console user with the admin role enters it and adds
or changes the rows of their own projects (a write policy, a retention policy, a membership, a token's revocation)
through the same services; reviewers, operators and users of other projects do not reach those rows. The owner /
member / outsider trio per page: the admin of the row's project, an operator and a reviewer of it, and the admin of
another project."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from harness.actors import Actor
from harness.models import ApiToken, AuditEntry, Membership, Project
from harness.tokens import personal_token_create
from memory_app.models import MemoryWritePolicy
from runs_app.models import RetentionPolicy
from tests import factories

pytestmark = pytest.mark.django_db


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def rows(project: Project, other_project: Project) -> dict[str, Any]:
    agent_token, _ = factories.make_agent_token(project)
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    personal, _ = personal_token_create(user=rita, actor=Actor.for_user(rita), name="laptop")
    return {
        "policy": MemoryWritePolicy.objects.create(project=project, scope="user", decision="hold"),
        "retention": RetentionPolicy.objects.create(project=project, items_keep_last=10),
        "membership": Membership.objects.get(user=rita, project=project),
        "agent_token": agent_token, "personal_token": personal,
        "session": factories.make_session(project), "run": factories.make_run(project),
        "other_token": factories.make_agent_token(other_project, name="globex-agent")[0],
    }


@pytest.fixture
def people(project: Project, other_project: Project) -> dict[str, Client]:
    return {
        "admin": _client(factories.make_user("ada", role="admin", projects=[project])),
        "operator": _client(factories.make_user("otto", role="operator", projects=[project])),
        "reviewer": _client(factories.make_user("rev", role="reviewer", projects=[project])),
        "outsider": _client(factories.make_user("gus", role="admin", projects=[other_project])),
    }


ADD_PAGES = {
    "/admin/memory_app/memorywritepolicy/add/": "policy",
    "/admin/runs_app/retentionpolicy/add/": "retention",
    "/admin/harness/membership/add/": "membership",
}
CHANGE_PAGES = {
    "policy": "/admin/memory_app/memorywritepolicy/{pk}/change/",
    "retention": "/admin/runs_app/retentionpolicy/{pk}/change/",
    "membership": "/admin/harness/membership/{pk}/change/",
    "agent_token": "/admin/harness/apitoken/{pk}/change/",
    "personal_token": "/admin/harness/apitoken/{pk}/change/",
    "session": "/admin/sessions_app/session/{pk}/change/",
    "run": "/admin/runs_app/run/{pk}/change/",
}


@pytest.mark.parametrize("who", ["admin", "operator", "reviewer", "outsider"])
@pytest.mark.parametrize("path", list(ADD_PAGES))
def test_add_pages_open_to_the_admin_role_only(path: str, who: str, people: dict[str, Client], rows: Any) -> None:
    response = people[who].get(path)
    if who in ("admin", "outsider"):  # an admin of some project: the form, with their own projects to choose from
        assert response.status_code == 200
    else:
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


@pytest.mark.parametrize("who", ["admin", "operator", "reviewer", "outsider"])
@pytest.mark.parametrize("row", list(CHANGE_PAGES))
def test_change_pages_open_to_the_admin_of_the_rows_project_only(
    row: str, who: str, people: dict[str, Client], rows: dict[str, Any],
) -> None:
    response = people[who].get(CHANGE_PAGES[row].format(pk=rows[row].pk))
    if who == "admin":
        assert response.status_code == 200
    elif who == "outsider":  # another project's row does not exist for them: back to the index, nothing shown
        assert response.status_code == 302 and response["Location"] == "/admin/"
    else:
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


@pytest.mark.parametrize("who", ["admin", "operator", "reviewer", "outsider"])
def test_no_role_adds_a_token_in_the_admin_the_secret_is_shown_only_by_its_own_doors(
    who: str, people: dict[str, Client], rows: Any,
) -> None:
    assert people[who].get("/admin/harness/apitoken/add/").status_code in (302, 403)
    if who == "admin":
        assert people[who].get("/admin/harness/apitoken/add/").status_code == 403


def test_a_project_admin_saves_a_write_policy_for_their_project_and_not_for_another(
    project: Project, other_project: Project, people: dict[str, Client],
) -> None:
    admin = people["admin"]
    form = admin.get("/admin/memory_app/memorywritepolicy/add/").content.decode()
    assert f'value="{project.pk}"' in form and f'value="{other_project.pk}"' not in form

    saved = admin.post("/admin/memory_app/memorywritepolicy/add/", {
        "project": project.pk, "scope": "project", "decision": "hold", "max_chars": 500, "provenance_required": "on",
        "blocked_patterns": "[]"})
    assert saved.status_code == 302
    assert MemoryWritePolicy.objects.get(project=project, scope="project").decision == "hold"
    assert AuditEntry.objects.get(action="memory.policy_saved").actor == "user:ada"

    refused = admin.post("/admin/memory_app/memorywritepolicy/add/", {
        "project": other_project.pk, "scope": "project", "decision": "reject", "max_chars": 500,
        "blocked_patterns": "[]"})
    assert refused.status_code == 200  # the form again, with the error
    assert not MemoryWritePolicy.objects.filter(project=other_project).exists()


def test_a_project_admin_lists_and_revokes_only_their_projects_tokens(
    project: Project, rows: dict[str, Any], people: dict[str, Client],
) -> None:
    admin = people["admin"]
    listed = admin.get("/admin/harness/apitoken/").content.decode()
    assert "laptop" in listed and rows["agent_token"].name in listed and "globex-agent" not in listed
    assert "globex" not in admin.get("/admin/harness/project/").content.decode()

    selected = [rows["personal_token"].pk, rows["other_token"].pk]
    admin.post("/admin/harness/apitoken/", {"action": "revoke", "_selected_action": selected})
    assert ApiToken.objects.get(pk=rows["personal_token"].pk).revoked_at is not None
    assert ApiToken.objects.get(pk=rows["other_token"].pk).revoked_at is None


def test_a_project_admin_neither_creates_nor_deletes_projects(project: Project, people: dict[str, Client]) -> None:
    assert people["admin"].get("/admin/harness/project/add/").status_code == 403
    assert people["admin"].get(f"/admin/harness/project/{project.pk}/change/").status_code == 200
    assert people["admin"].post(f"/admin/harness/project/{project.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Project.objects.filter(pk=project.pk).exists()


def test_the_admin_login_form_lets_in_the_admin_role_and_no_other(project: Project) -> None:
    factories.make_user("ada", role="admin", projects=[project])
    factories.make_user("otto", role="operator", projects=[project])
    for name, lands in (("ada", "/admin/"), ("otto", None)):
        client = Client()
        response = client.post("/admin/login/?next=/admin/", {"username": name, "password": "pw-123456",
                                                                "next": "/admin/"})
        if lands:
            assert response.status_code == 302 and response["Location"] == lands
        else:
            assert response.status_code == 200  # the form again
            assert client.get("/admin/").status_code == 302
