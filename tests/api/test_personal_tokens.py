"""Personal tokens made through harness.tokens (the console's profile page, `manage.py create_personal_token`) act
as their person at the API's doors that need one: the person's roles per project, no self-approval, audited by
name; revoked or expired, 401; another user's token is not theirs to rotate or revoke (404)."""

import datetime as dt
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from harness.actors import Actor
from harness.http.errors import NotFoundError, ValidationFailed
from harness.models import ApiToken, AuditEntry, Project
from harness.tokens import personal_token_create, personal_token_revoke, personal_token_rotate
from memory_app.services import memory_write
from runs_app.services import approval_request_create
from tests import factories
from tests.api.conftest import ApiClient, World

pytestmark = pytest.mark.django_db


def _token_for(user, name: str = "laptop") -> str:  # type: ignore[no-untyped-def]
    return personal_token_create(user=user, actor=Actor.for_user(user), name=name)[1]


def test_a_personal_token_is_stored_hashed_expires_and_is_audited_by_name_in_each_of_the_users_projects(
    project: Project, other_project: Project,
) -> None:
    rita = factories.make_user("rita", role="reviewer", projects=[project, other_project])
    token, secret = personal_token_create(user=rita, actor=Actor.for_user(rita), name="laptop", expires_in_days=7)

    stored = ApiToken.objects.get(pk=token.pk)
    assert (stored.kind, stored.user_id, stored.project_id) == ("personal", rita.pk, None)
    assert stored.digest == ApiToken.hash_secret(secret) and secret not in {stored.digest, stored.prefix}
    assert stored.expires_at is not None
    assert dt.timedelta(days=6) < stored.expires_at - timezone.now() <= dt.timedelta(days=7)
    entries = AuditEntry.objects.filter(action="token.personal_created")
    assert sorted(entries.values_list("project_id", flat=True)) == sorted([project.pk, other_project.pk])
    assert {e.actor for e in entries} == {"user:rita"}
    assert all(secret not in str(e.data) and e.data["prefix"] == stored.prefix for e in entries)


def test_a_personal_token_needs_a_name_and_a_bounded_expiry(project: Project) -> None:
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    for name, days, code in (("", 30, "invalid_token_name"), ("x", 0, "invalid_expiry"), ("x", 366, "invalid_expiry")):
        with pytest.raises(ValidationFailed) as refused:
            personal_token_create(user=rita, actor=Actor.for_user(rita), name=name, expires_in_days=days)
        assert refused.value.code == code
    assert not ApiToken.objects.filter(user=rita).exists()


def test_a_reviewers_personal_token_decides_an_approval_as_the_reviewer(world: World) -> None:
    rita = factories.make_user("rita", role="reviewer", projects=[world.project])
    response = ApiClient(_token_for(rita)).post(f"/api/v1/approvals/{world.approval.pk}/decision/",
                                                {"decision": "approve", "expected_version": world.approval.version})
    assert response.status_code == 200, response.content
    assert response.json()["decided_by"] == "rita"
    assert AuditEntry.objects.get(action="approval.approved").actor == "user:rita"


def test_a_personal_token_cannot_approve_its_persons_own_request(world: World) -> None:
    rita = factories.make_user("rita", role="reviewer", projects=[world.project])
    run = factories.make_run(world.project, world.session)
    from runs_app.services import run_transition

    run_transition(project=world.project, run_id=run.pk, to="running", expected_version=None)
    own = approval_request_create(project=world.project, run_id=run.pk, tool="send_email", arguments={},
                                  idempotency_key="rita-own", actor=Actor.for_user(rita))
    response = ApiClient(_token_for(rita)).post(f"/api/v1/approvals/{own.pk}/decision/",
                                                {"decision": "approve", "expected_version": own.version})
    assert response.status_code == 403
    assert response.json()["code"] == "self_approval"


def test_a_reviewers_personal_token_cannot_curate_memory_set_retention_or_erase_a_person(world: World) -> None:
    rita = factories.make_user("rita", role="reviewer", projects=[world.project])
    record = memory_write(project=world.project, actor=Actor.for_agent("seed"), scope="project",
                          content="The launch is on Tuesday.", source_run_id=world.run.pk).record
    assert record is not None
    client = ApiClient(_token_for(rita))

    refused = {
        "expire": client.post(f"/api/v1/memory/records/{record.pk}/expire/", {"expected_version": record.version}),
        "retention": client.call("PUT", f"/api/v1/projects/{world.project.pk}/retention/", {"items_keep_last": 1}),
        "erasure": client.post("/api/v1/memory/erasures/", {"project": world.project.slug, "subject": "u-1",
                                                            "reason": "asked"}),
    }
    assert {door: (r.status_code, r.json()["code"]) for door, r in refused.items()} == {
        "expire": (403, "not_an_operator"), "retention": (403, "not_an_operator"),
        "erasure": (403, "not_an_operator")}
    record.refresh_from_db()
    assert record.status == "active"


def test_an_operators_personal_token_curates_memory_and_sets_retention_in_its_project_only(
    world: World, other_world: World,
) -> None:
    otto = factories.make_user("otto", role="operator", projects=[world.project])
    record = memory_write(project=world.project, actor=Actor.for_agent("seed"), scope="project", content="A fact.",
                          source_run_id=world.run.pk).record
    assert record is not None
    client = ApiClient(_token_for(otto))

    expired = client.post(f"/api/v1/memory/records/{record.pk}/expire/", {"expected_version": record.version})
    assert expired.status_code == 200, expired.content
    assert client.call("PUT", f"/api/v1/projects/{world.project.pk}/retention/",
                       {"items_keep_last": 5}).status_code == 200
    assert client.call("PUT", f"/api/v1/projects/{other_world.project.pk}/retention/",
                       {"items_keep_last": 5}).status_code == 404
    assert AuditEntry.objects.get(action="retention.policy_set").actor == "user:otto"
    erasure = client.post("/api/v1/memory/erasures/", {"project": world.project.slug, "subject": "u-1", "reason": "x"})
    assert (erasure.status_code, erasure.json()["code"]) == (403, "not_an_admin")  # an admin's door, not an operator's


def test_a_revoked_or_expired_personal_token_is_401(project: Project) -> None:
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    revoked_token, revoked = personal_token_create(user=rita, actor=Actor.for_user(rita), name="a")
    expired_token, expired = personal_token_create(user=rita, actor=Actor.for_user(rita), name="b")
    assert ApiClient(revoked).get("/api/v1/approvals/").status_code == 200

    personal_token_revoke(user=rita, actor=Actor.for_user(rita), token_id=revoked_token.pk)
    ApiToken.objects.filter(pk=expired_token.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))

    for secret in (revoked, expired):
        response = ApiClient(secret).get("/api/v1/approvals/")
        assert response.status_code == 401
        assert response.json()["code"] == "authentication_failed"
    assert AuditEntry.objects.filter(action="token.personal_revoked").count() == 1


def test_a_rotation_ends_the_old_personal_token_and_keeps_its_name(project: Project) -> None:
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    old, old_secret = personal_token_create(user=rita, actor=Actor.for_user(rita), name="ci")
    new, new_secret = personal_token_rotate(user=rita, actor=Actor.for_user(rita), token_id=old.pk)
    assert (new.name, new.user_id, new.kind) == ("ci", rita.pk, "personal")
    assert ApiClient(old_secret).get("/api/v1/approvals/").status_code == 401
    assert ApiClient(new_secret).get("/api/v1/approvals/").status_code == 200
    assert AuditEntry.objects.get(action="token.personal_rotated").data["replaced"] == old.prefix


def test_nobody_rotates_or_revokes_another_users_personal_token(project: Project) -> None:
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    admin = factories.make_user("ada", role="admin", projects=[project])
    token, secret = personal_token_create(user=rita, actor=Actor.for_user(rita), name="laptop")
    agent_token, _ = factories.make_agent_token(project)
    for other in (admin, factories.make_user("eve", projects=[project])):
        for act in (personal_token_rotate, personal_token_revoke):
            with pytest.raises(NotFoundError):
                act(user=other, actor=Actor.for_user(other), token_id=token.pk)
    with pytest.raises(NotFoundError):  # an agent token is not anyone's personal token
        personal_token_revoke(user=admin, actor=Actor.for_user(admin), token_id=agent_token.pk)
    assert ApiClient(secret).get("/api/v1/approvals/").status_code == 200


def test_an_admin_makes_a_personal_token_at_the_terminal_shown_once_on_its_last_line(project: Project) -> None:
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    out, err = StringIO(), StringIO()
    call_command("create_personal_token", "rita", "--name", "ci", "--expires-in-days", "10", stdout=out, stderr=err)
    secret = out.getvalue().strip().splitlines()[-1]
    token = ApiToken.objects.get(user=rita)
    assert (token.name, token.digest) == ("ci", ApiToken.hash_secret(secret))
    assert secret not in err.getvalue()
    assert ApiClient(secret).get("/api/v1/approvals/").status_code == 200
    assert AuditEntry.objects.get(action="token.personal_created").data["door"] == "manage.py"
    with pytest.raises(CommandError):
        call_command("create_personal_token", "nobody", stdout=StringIO(), stderr=StringIO())
    with pytest.raises(CommandError, match="invalid_expiry"):
        call_command("create_personal_token", "rita", "--expires-in-days", "0", stdout=StringIO(), stderr=StringIO())
