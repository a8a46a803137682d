"""The profile page: a person makes, lists, rotates and revokes their own personal tokens (CSRF forms, the same
services as the terminal's); the secret is in the answer that made it and never again; another user's token is
not found (404)."""

import re

import pytest
from django.test import Client

from harness.models import ApiToken, AuditEntry, Project
from tests import factories
from tests.api.conftest import ApiClient

pytestmark = pytest.mark.django_db

SECRET = re.compile(r"hc_[A-Za-z0-9_-]{20,}")


def _csrf_client(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    client.get("/profile/")
    return client


def _post(client: Client, path: str, data: dict[str, object] | None = None):  # type: ignore[no-untyped-def]
    return client.post(path, data or {}, HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)


def test_a_token_made_on_the_profile_page_is_shown_once_and_listed_without_its_secret(project: Project) -> None:
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    client = _csrf_client(rita)
    assert 'href="/profile/"' in client.get("/").content.decode()  # linked from the header

    made = _post(client, "/profile/tokens/", {"name": "laptop", "expires_in_days": 7})
    assert made.status_code == 201
    assert "no-store" in made["Cache-Control"]
    secret = SECRET.search(made.content.decode()).group(0)  # type: ignore[union-attr]
    token = ApiToken.objects.get(user=rita)
    assert (token.kind, token.name, token.digest) == ("personal", "laptop", ApiToken.hash_secret(secret))

    again = client.get("/profile/").content.decode()
    assert "laptop" in again and token.prefix in again
    assert secret not in again and not SECRET.search(again.replace(token.prefix + "…", ""))
    assert ApiClient(secret).get("/api/v1/approvals/").status_code == 200
    assert secret not in str(list(AuditEntry.objects.values_list("data", flat=True)))


def test_the_profile_forms_need_the_csrf_token(project: Project) -> None:
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    client = _csrf_client(rita)
    assert client.post("/profile/tokens/", {"name": "x", "expires_in_days": 7}).status_code == 403
    assert not ApiToken.objects.exists()


def test_a_rotation_on_the_page_shows_the_new_secret_once_and_ends_the_old_token(project: Project) -> None:
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    client = _csrf_client(rita)
    old_secret = SECRET.search(_post(client, "/profile/tokens/", {"name": "ci", "expires_in_days": 30})
                               .content.decode()).group(0)  # type: ignore[union-attr]
    old = ApiToken.objects.get(user=rita)

    rotated = _post(client, f"/profile/tokens/{old.pk}/rotate/")
    assert rotated.status_code == 200
    new_secret = SECRET.search(rotated.content.decode()).group(0)  # type: ignore[union-attr]
    assert new_secret != old_secret
    assert ApiClient(old_secret).get("/api/v1/approvals/").status_code == 401
    assert ApiClient(new_secret).get("/api/v1/approvals/").status_code == 200
    listed = client.get("/profile/").content.decode()
    assert new_secret not in listed and "revoked" in listed and "live" in listed


def test_a_revocation_on_the_page_makes_the_token_401(project: Project) -> None:
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    client = _csrf_client(rita)
    secret = SECRET.search(_post(client, "/profile/tokens/", {"name": "ci", "expires_in_days": 30})
                           .content.decode()).group(0)  # type: ignore[union-attr]
    token = ApiToken.objects.get(user=rita)
    assert _post(client, f"/profile/tokens/{token.pk}/revoke/").status_code == 302
    assert ApiClient(secret).get("/api/v1/approvals/").status_code == 401
    assert AuditEntry.objects.get(action="token.personal_revoked").actor == "user:rita"


def test_owner_member_and_outsider_only_the_owner_sees_rotates_or_revokes_a_token(
    project: Project, other_project: Project,
) -> None:
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    member = factories.make_user("ada", role="admin", projects=[project])  # even an admin of the same project
    outsider = factories.make_user("eve", role="operator", projects=[other_project])
    owner = _csrf_client(rita)
    secret = SECRET.search(_post(owner, "/profile/tokens/", {"name": "rita-laptop", "expires_in_days": 7})
                           .content.decode()).group(0)  # type: ignore[union-attr]
    token = ApiToken.objects.get(user=rita)

    for user in (member, outsider):
        client = _csrf_client(user)
        assert "rita-laptop" not in client.get("/profile/").content.decode()
        assert _post(client, f"/profile/tokens/{token.pk}/rotate/").status_code == 404
        assert _post(client, f"/profile/tokens/{token.pk}/revoke/").status_code == 404
    assert ApiClient(secret).get("/api/v1/approvals/").status_code == 200
    assert ApiToken.objects.filter(user=rita).count() == 1
    assert Client().get("/profile/").status_code == 302  # not logged in: to the login page
    # A bearer token opens no console page, the profile included.
    assert Client().get("/profile/", HTTP_AUTHORIZATION=f"Bearer {secret}").status_code == 302
