"""A keyed POST with a bearer token: the token is looked up in the statement that reserves the key.

Three statements for an append (the token and the reservation, the append, the stored reply), and the
reservation is only ever made for a live token: a revoked or unknown one gets its 401, never a replay
of a reply stored while it was valid.
"""

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from harness.models import ApiToken, IdempotentRequest
from tests.api.conftest import ApiClient, World

pytestmark = pytest.mark.django_db

ITEMS = {"items": [{"role": "user", "content": {"text": "hello"}}]}


def _items_path(world: World) -> str:
    return f"/api/v1/sessions/{world.session.pk}/items/"


def test_a_keyed_append_is_three_statements_and_its_retry_is_replayed(world: World) -> None:
    # A token's first use also records last_used_at (at most once a minute): not this request's cost.
    assert world.agent.post(_items_path(world), ITEMS, HTTP_IDEMPOTENCY_KEY="k-0").status_code == 201
    with CaptureQueriesContext(connection) as queries:
        first = world.agent.post(_items_path(world), ITEMS, HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 201, first.content
    statements = [q["sql"] for q in queries.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]
    assert len(statements) == 3, statements
    assert "apitoken" in statements[0] and "INSERT INTO harness_idempotentrequest" in statements[0]
    again = world.agent.post(_items_path(world), ITEMS, HTTP_IDEMPOTENCY_KEY="k-1")
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()


def test_a_revoked_token_gets_401_not_the_reply_it_was_given_while_valid(world: World) -> None:
    assert world.agent.post(_items_path(world), ITEMS, HTTP_IDEMPOTENCY_KEY="k-2").status_code == 201
    ApiToken.objects.filter(project=world.project, kind=ApiToken.Kind.AGENT).update(revoked_at=timezone.now())
    retried = world.agent.post(_items_path(world), ITEMS, HTTP_IDEMPOTENCY_KEY="k-2")
    assert retried.status_code == 401
    assert retried.json()["code"] in {"not_authenticated", "authentication_failed"}


def test_an_unknown_token_reserves_nothing(world: World, anonymous: Any) -> None:
    before = IdempotentRequest.objects.count()
    stranger = ApiClient("hc_not-a-real-token")
    answer = stranger.post(_items_path(world), ITEMS, HTTP_IDEMPOTENCY_KEY="k-3")
    assert answer.status_code == 401
    assert IdempotentRequest.objects.count() == before
