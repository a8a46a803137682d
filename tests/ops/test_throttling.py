"""Rate limits (harness.http.throttling): per API token on the Redis cache (429, Retry-After), and the console's
login."""

import time
import uuid

import pytest
from django.core.cache import caches
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

from harness.http.throttling import _redis, parse_rate
from tests import factories

pytestmark = pytest.mark.django_db


def _get(secret: str):  # type: ignore[no-untyped-def]
    return Client().get("/api/v1/sessions/", HTTP_AUTHORIZATION=f"Bearer {secret}")


def test_the_cache_is_redis_so_every_process_counts_against_one_limit() -> None:
    assert type(caches["default"]).__name__ == "RedisCache"  # bin/test's broker is Redis; the cache follows it


@override_settings(HARNESS_API_RATE="3/hour")
def test_a_token_over_its_rate_gets_429_with_retry_after_and_another_token_does_not(project) -> None:  # type: ignore[no-untyped-def]
    _, secret = factories.make_agent_token(project, name="busy")
    _, other = factories.make_agent_token(project, name="calm")
    assert [_get(secret).status_code for _ in range(3)] == [200, 200, 200]
    refused = _get(secret)
    assert refused.status_code == 429
    assert refused.json()["code"] == "throttled"
    assert 1 <= int(refused["Retry-After"]) <= 3600
    assert _get(other).status_code == 200
    # Writes count too, and a refused one writes nothing.
    posted = Client().post("/api/v1/sessions/", {"role": "writer"}, content_type="application/json",
                           HTTP_AUTHORIZATION=f"Bearer {secret}", HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex)
    assert posted.status_code == 429


@override_settings(HARNESS_API_RATE="1000/min")
def test_the_throttle_costs_no_database_statement(project) -> None:  # type: ignore[no-untyped-def]
    _, secret = factories.make_agent_token(project)
    _get(secret)  # the first use records last_used_at
    with override_settings(HARNESS_API_RATE="off"), CaptureQueriesContext(connection) as unthrottled:
        _get(secret)
    with CaptureQueriesContext(connection) as throttled:
        _get(secret)
    assert len(throttled.captured_queries) == len(unthrottled.captured_queries)


@override_settings(HARNESS_API_RATE="1000/hour")
def test_a_process_takes_a_tokens_requests_from_redis_in_leases_of_one_percent(project) -> None:  # type: ignore[no-untyped-def]
    token, secret = factories.make_agent_token(project)
    redis = _redis()
    assert redis is not None

    def counted() -> list[int]:
        return [int(redis.get(key)) for key in redis.keys(f"harness:throttle:token:{token.pk}:{token.prefix}:*")]

    assert [_get(secret).status_code for _ in range(3)] == [200] * 3
    assert counted() == [10]  # one round trip took 10; two were served from the lease
    assert [_get(secret).status_code for _ in range(9)] == [200] * 9
    assert counted() == [20]


@override_settings(HARNESS_API_RATE="250/hour")
def test_a_lease_never_admits_past_the_limit(project) -> None:  # type: ignore[no-untyped-def]
    token, secret = factories.make_agent_token(project)
    redis = _redis()
    # The counter is per clock hour: start in a fresh hour rather than straddle its end.
    left = 3600 - time.time() % 3600
    if left < 10:
        time.sleep(left + 0.1)
    key = f"harness:throttle:token:{token.pk}:{token.prefix}:3600:{int(time.time() // 3600)}"
    redis.set(key, 248, ex=3600)  # other processes took 248 of the 250 already
    assert [_get(secret).status_code for _ in range(3)] == [200, 200, 429]


def test_rates_parse_or_stop_the_process() -> None:
    assert parse_rate("6000/min") == (6000, 60)
    assert parse_rate("10/15min") == (10, 900)
    assert parse_rate("5/s") == (5, 1)
    assert parse_rate("off") is None
    for bad in ("fast", "0/min", "10/fortnight", "-1/s"):
        with pytest.raises(ImproperlyConfigured):
            parse_rate(bad)


def _login(client: Client, username: str, password: str):  # type: ignore[no-untyped-def]
    return client.post("/login/", {"username": username, "password": password})


@override_settings(HARNESS_LOGIN_RATE="3/15min")
def test_failed_logins_are_limited_per_address_and_username_with_429_and_retry_after() -> None:
    username = f"lena-{uuid.uuid4().hex[:8]}"  # the counters live in Redis past this test's transaction
    factories.make_user(username, role="reviewer", password="the-right-one")
    client = Client()
    assert [_login(client, username, "wrong").status_code for _ in range(3)] == [200, 200, 200]
    refused = _login(client, username, "the-right-one")  # even the right password, until the window ends
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 900
    assert b"Too many failed logins" in refused.content
    assert "_auth_user_id" not in client.session

    other_address = Client(REMOTE_ADDR="203.0.113.9")
    assert _login(other_address, username, "the-right-one").status_code == 302
    other_user = f"olga-{uuid.uuid4().hex[:8]}"
    factories.make_user(other_user, role="reviewer", password="hers")
    assert _login(Client(), other_user, "hers").status_code == 302


@override_settings(HARNESS_LOGIN_RATE="3/15min")
def test_successful_logins_are_not_counted() -> None:
    username = f"max-{uuid.uuid4().hex[:8]}"
    factories.make_user(username, role="reviewer", password="pw-right")
    for _ in range(5):
        client = Client()
        assert _login(client, username, "pw-right").status_code == 302
