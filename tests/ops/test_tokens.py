"""Agent tokens: expiry, rotation with two valid tokens for a window, revocation on the next request, and
last_used_at written at most once a minute, all without a round trip on the hot path."""

import datetime as dt
import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from harness.http.errors import ConflictError
from harness.models import ApiToken
from harness.tokens import api_token_create, api_token_rotate, api_tokens_revoke
from tests import factories

pytestmark = pytest.mark.django_db


def _status(secret: str) -> int:
    return int(Client().get("/api/v1/sessions/", HTTP_AUTHORIZATION=f"Bearer {secret}").status_code)


def test_a_token_past_its_expiry_is_refused_like_a_revoked_one(project) -> None:  # type: ignore[no-untyped-def]
    token, secret = api_token_create(project=project, name="bot", role="agent", expires_in=dt.timedelta(hours=1))
    assert _status(secret) == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    response = Client().get("/api/v1/sessions/", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert (response.status_code, response.json()["code"]) == (401, "authentication_failed")
    # A keyed POST (the token looked up inside the key's reservation) is refused the same way.
    keyed = Client().post("/api/v1/sessions/", {"role": "writer"}, content_type="application/json",
                          HTTP_AUTHORIZATION=f"Bearer {secret}", HTTP_IDEMPOTENCY_KEY="after-expiry")
    assert keyed.status_code == 401


def test_a_rotation_keeps_both_tokens_valid_for_the_window_then_only_the_new_one(project) -> None:  # type: ignore[no-untyped-def]
    old, old_secret = api_token_create(project=project, name="bot", role="reader")
    new, new_secret = api_token_rotate(token_id=old.pk, overlap=dt.timedelta(minutes=30))
    assert (new.name, new.role, new.project_id, new.kind) == ("bot", "reader", project.pk, "agent")
    assert _status(old_secret) == 200 and _status(new_secret) == 200  # both, during the window
    old.refresh_from_db()
    assert old.expires_at is not None and old.expires_at > timezone.now() + dt.timedelta(minutes=29)

    ApiToken.objects.filter(pk=old.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))  # window over
    assert _status(old_secret) == 401 and _status(new_secret) == 200
    with pytest.raises(ConflictError) as refused:
        api_token_rotate(token_id=old.pk, overlap=dt.timedelta(minutes=30))
    assert refused.value.code == "token_not_live"


def test_a_rotation_never_extends_an_earlier_expiry(project) -> None:  # type: ignore[no-untyped-def]
    old, _ = api_token_create(project=project, name="bot", role="agent", expires_in=dt.timedelta(minutes=5))
    api_token_rotate(token_id=old.pk, overlap=dt.timedelta(days=1))
    old.refresh_from_db()
    assert old.expires_at is not None and old.expires_at < timezone.now() + dt.timedelta(minutes=6)


def test_revocation_takes_effect_on_the_next_request(project) -> None:  # type: ignore[no-untyped-def]
    token, secret = factories.make_agent_token(project)
    assert _status(secret) == 200
    assert api_tokens_revoke(ApiToken.objects.filter(pk=token.pk)) == 1
    assert _status(secret) == 401
    assert api_tokens_revoke(ApiToken.objects.filter(pk=token.pk)) == 0  # revoked once


def test_last_used_at_is_written_on_first_use_and_then_at_most_once_a_minute(project) -> None:  # type: ignore[no-untyped-def]
    token, secret = factories.make_agent_token(project)
    client = Client()
    with CaptureQueriesContext(connection) as first:
        client.get("/api/v1/sessions/", HTTP_AUTHORIZATION=f"Bearer {secret}")
    token.refresh_from_db()
    assert token.last_used_at is not None
    with CaptureQueriesContext(connection) as later:
        for _ in range(3):
            client.get("/api/v1/sessions/", HTTP_AUTHORIZATION=f"Bearer {secret}")

    def token_updates(queries: CaptureQueriesContext) -> int:
        return sum(1 for q in queries.captured_queries if q["sql"].startswith('UPDATE "harness_apitoken"'))

    assert token_updates(first) == 1 and token_updates(later) == 0
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now() - dt.timedelta(seconds=61))
    with CaptureQueriesContext(connection) as after_a_minute:
        client.get("/api/v1/sessions/", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert token_updates(after_a_minute) == 1


def test_the_commands_create_with_an_expiry_and_rotate_printing_the_secret_once(project) -> None:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    call_command("create_agent_token", project=project.slug, name="cli-bot", expires_in_days=7, stdout=out,
                 stderr=io.StringIO())
    secret = out.getvalue().strip().splitlines()[-1]
    token = ApiToken.objects.get(digest=ApiToken.hash_secret(secret))
    assert token.expires_at is not None and token.expires_at > timezone.now() + dt.timedelta(days=6)

    out = io.StringIO()
    call_command("rotate_agent_token", prefix=token.prefix, overlap_minutes=10, stdout=out, stderr=io.StringIO())
    rotated = out.getvalue().strip().splitlines()[-1]
    assert rotated != secret and _status(rotated) == 200 and _status(secret) == 200
    with pytest.raises(CommandError, match="No unrevoked token"):
        call_command("rotate_agent_token", prefix="hc_nothing", stdout=io.StringIO(), stderr=io.StringIO())
