"""A keyed POST's work and its stored reply commit in one transaction (issue 19, defect 6).

The reservation is the transaction's first statement, so there is no window in which the work is committed
and the key is not settled: a process that dies mid-request (tests/reliability, experiment 17, kills gunicorn
there) rolls back both, and the retry runs the operation once. Final 4xx replies are stored and replayed like
2xx; a 5xx and a 400 roll back with their key; "not now" answers (401, 408, 425, 429) are answered afresh.
"""

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, connections
from django.test import Client
from rest_framework.exceptions import Throttled

from harness.models import AuditEntry, IdempotentRequest
from sessions_app import services as session_services
from sessions_app.models import Session
from tests import factories
from tests.api.conftest import ApiClient, World
from tests.worker.support import wait_for

JOIN_SECONDS = 20


@pytest.mark.django_db
def test_a_final_4xx_is_stored_and_replayed_and_its_key_stays_taken(world: World) -> None:
    assert world.agent.post("/api/v1/sessions/", {"role": "writer", "ref": "S-1"}).status_code == 201
    refused = world.agent.post("/api/v1/sessions/", {"role": "writer", "ref": "S-1"}, HTTP_IDEMPOTENCY_KEY="bad-1")
    assert (refused.status_code, refused.json()["code"]) == (409, "already_exists")
    again = world.agent.post("/api/v1/sessions/", {"role": "writer", "ref": "S-1"}, HTTP_IDEMPOTENCY_KEY="bad-1")
    assert (again.status_code, again["Idempotent-Replayed"], again.json()) == (409, "true", refused.json())
    record = IdempotentRequest.objects.get(key="bad-1")
    assert (record.state, record.response_status) == ("done", 409)
    # The key names that request now: another body needs a key of its own.
    fixed = world.agent.post("/api/v1/sessions/", {"role": "writer", "ref": "S-2"}, HTTP_IDEMPOTENCY_KEY="bad-1")
    assert (fixed.status_code, fixed.json()["code"]) == (422, "idempotency_key_reused")
    assert world.agent.post("/api/v1/sessions/", {"role": "writer", "ref": "S-2"},
                            HTTP_IDEMPOTENCY_KEY="bad-2").status_code == 201


@pytest.mark.django_db
def test_a_400_is_not_stored_and_the_corrected_body_reuses_its_key(world: World) -> None:
    """A 400 did nothing (issue 30): rolled back with its key, unlike the final 4xx above."""
    refused = world.agent.post("/api/v1/sessions/", {"role": "nope"}, HTTP_IDEMPOTENCY_KEY="bad-3")
    assert refused.status_code == 400
    assert not IdempotentRequest.objects.filter(key="bad-3").exists()
    fixed = world.agent.post("/api/v1/sessions/", {"role": "writer"}, HTTP_IDEMPOTENCY_KEY="bad-3")
    assert fixed.status_code == 201, fixed.json()


@pytest.mark.django_db
def test_a_memory_write_the_policy_rejects_is_audited_once_however_often_it_is_retried(world: World) -> None:
    # The rejection writes an audit entry before answering 422: replaying the 422 is what keeps a retry
    # from writing a second one.
    body = {"scope": "project", "content": "x" * 5000, "source_run_id": world.run.pk}
    answers = [world.agent.post("/api/v1/memory/records/", body, HTTP_IDEMPOTENCY_KEY="too-long") for _ in range(3)]
    assert [a.status_code for a in answers] == [422] * 3
    assert [a.get("Idempotent-Replayed") for a in answers] == [None, "true", "true"]
    assert AuditEntry.objects.filter(project=world.project, action="memory.write_rejected").count() == 1


@pytest.mark.django_db
def test_a_5xx_rolls_back_the_work_with_its_key(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    original = session_services.session_create

    def create_then_fail(**kwargs: Any) -> Session:
        original(**kwargs)
        raise RuntimeError("the view failed after its write")

    monkeypatch.setattr(session_services, "session_create", create_then_fail)
    agent = ApiClient(client=Client(raise_request_exception=False))
    agent.headers = dict(world.agent.headers)
    before = Session.objects.count()
    failed = agent.post("/api/v1/sessions/", {"role": "other"}, HTTP_IDEMPOTENCY_KEY="boom")
    assert failed.status_code == 500
    assert Session.objects.count() == before  # the write went with the failure
    assert not IdempotentRequest.objects.filter(key="boom").exists()
    monkeypatch.setattr(session_services, "session_create", original)
    retried = agent.post("/api/v1/sessions/", {"role": "other"}, HTTP_IDEMPOTENCY_KEY="boom")
    assert retried.status_code == 201 and retried.get("Idempotent-Replayed") is None
    assert Session.objects.count() == before + 1


@pytest.mark.django_db
def test_a_429_is_answered_afresh_and_the_retry_runs(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    original = session_services.session_create

    def throttled(**kwargs: Any) -> Session:
        raise Throttled(wait=1)

    monkeypatch.setattr(session_services, "session_create", throttled)
    assert world.agent.post("/api/v1/sessions/", {"role": "writer"}, HTTP_IDEMPOTENCY_KEY="busy").status_code == 429
    assert not IdempotentRequest.objects.filter(key="busy").exists()
    monkeypatch.setattr(session_services, "session_create", original)
    later = world.agent.post("/api/v1/sessions/", {"role": "writer"}, HTTP_IDEMPOTENCY_KEY="busy")
    assert later.status_code == 201 and later.get("Idempotent-Replayed") is None


def _waiting_on_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND wait_event_type = 'Lock' AND query LIKE %s", ["%harness_idempotentrequest%"])
        return bool(cursor.fetchone()[0])


def _hold_session_create(monkeypatch: pytest.MonkeyPatch, before: Callable[[], None] = lambda: None
                         ) -> tuple[threading.Event, threading.Event]:
    """Hold every session_create inside its view (its key uncommitted) until `release` is set; `entered` says
    one got there. `before` runs in the view first."""
    entered, release = threading.Event(), threading.Event()
    original = session_services.session_create

    def held_session_create(**kwargs: Any) -> Session:
        before()
        entered.set()
        release.wait(JOIN_SECONDS)
        return original(**kwargs)

    monkeypatch.setattr(session_services, "session_create", held_session_create)
    return entered, release


def _post_in_thread(world: World, name: str, body: dict[str, Any], answers: dict[str, Any]) -> threading.Thread:
    """POST `body` to create a session with the key "slow", on a thread and connection of its own, started;
    the answer lands in `answers[name]`."""

    def post() -> None:
        try:
            client = ApiClient(None)
            client.headers = dict(world.agent.headers)
            answers[name] = client.post("/api/v1/sessions/", body, HTTP_IDEMPOTENCY_KEY="slow")
        finally:
            connections.close_all()

    thread = threading.Thread(target=post, daemon=True)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
def test_a_duplicate_arriving_while_the_first_is_in_flight_waits_for_it_and_replays_its_reply(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release = _hold_session_create(monkeypatch)
    body = {"role": "specialist"}
    answers: dict[str, Any] = {}
    first = _post_in_thread(world, "first", body, answers)
    assert entered.wait(JOIN_SECONDS)
    duplicate = _post_in_thread(world, "duplicate", body, answers)
    # The duplicate's reservation waits on the first one's uncommitted key: no 409, no second write.
    wait_for(_waiting_on_a_lock, timeout=JOIN_SECONDS, interval=0.05, what="the duplicate to wait on the key")
    assert "duplicate" not in answers
    release.set()
    for thread in (first, duplicate):
        thread.join(JOIN_SECONDS)
        assert not thread.is_alive()

    assert answers["first"].status_code == 201
    assert answers["duplicate"].status_code == 201 and answers["duplicate"]["Idempotent-Replayed"] == "true"
    assert answers["duplicate"].json() == answers["first"].json()
    assert Session.objects.filter(role="specialist").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_keyed_post_on_a_connection_the_server_dropped_is_reserved_on_a_new_one(world: World) -> None:
    assert world.agent.post("/api/v1/sessions/", {"role": "writer"}, HTTP_IDEMPOTENCY_KEY="warm").status_code == 201
    connection.connection.close()  # the server dropped the persistent connection between requests
    connection.health_check_done = False  # type: ignore[attr-defined]  # what the next request's start resets
    answer = world.agent.post("/api/v1/sessions/", {"role": "semantic_reviewer"}, HTTP_IDEMPOTENCY_KEY="after-drop")
    assert answer.status_code == 201, answer.content
    assert IdempotentRequest.objects.get(key="after-drop").response_body == answer.json()
    assert Session.objects.filter(role="semantic_reviewer").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_duplicate_waits_on_the_first_only_up_to_the_lock_timeout_then_is_told_to_retry(
    world: World, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    # The first request is held open inside its view (its key uncommitted) until the duplicate has its answer:
    # the duplicate does not hold its worker for the first one's whole run.
    settings.HARNESS_IDEMPOTENCY_LOCK_TIMEOUT_MS = 200
    seen_by_view: list[str] = []

    def lock_timeout_of_the_view() -> None:
        with connection.cursor() as cursor:  # what the view's own statements wait under: the default, not 200ms
            cursor.execute("SHOW lock_timeout")
            seen_by_view.append(cursor.fetchone()[0])

    entered, release = _hold_session_create(monkeypatch, lock_timeout_of_the_view)
    body = {"role": "specialist"}
    answers: dict[str, Any] = {}
    first = _post_in_thread(world, "first", body, answers)
    try:
        assert entered.wait(JOIN_SECONDS)
        duplicate = _post_in_thread(world, "duplicate", body, answers)
        duplicate.join(JOIN_SECONDS)
        assert not duplicate.is_alive()
        assert first.is_alive() and "first" not in answers  # still held: the duplicate did not wait for it
    finally:
        release.set()
        first.join(JOIN_SECONDS)
    assert not first.is_alive()

    late = answers["duplicate"]
    assert (late.status_code, late.json()["code"]) == (409, "idempotency_in_progress")
    assert late["Retry-After"] == "1"
    assert answers["first"].status_code == 201, answers["first"].content
    assert seen_by_view == ["0"]
    # The retry the client makes after Retry-After gets the first request's reply; one session was made.
    retry = world.agent.post("/api/v1/sessions/", body, HTTP_IDEMPOTENCY_KEY="slow")
    assert (retry.status_code, retry["Idempotent-Replayed"]) == (201, "true")
    assert retry.json() == answers["first"].json()
    assert Session.objects.filter(role="specialist").count() == 1


@pytest.mark.django_db
def test_a_console_users_keyed_post_is_reserved_and_replayed_like_a_tokens(world: World) -> None:
    # The reservation without a token (a logged-in user: `user:<pk>`) bounds its wait the same way.
    client = Client()
    client.force_login(factories.make_user("rita", role="reviewer", projects=[world.project]))
    first = client.post("/api/v1/sessions/", {"role": "writer"}, content_type="application/json",
                        HTTP_IDEMPOTENCY_KEY="by-rita")
    again = client.post("/api/v1/sessions/", {"role": "writer"}, content_type="application/json",
                        HTTP_IDEMPOTENCY_KEY="by-rita")
    assert (first.status_code, first.json()["code"]) == (403, "agent_token_required")
    assert (again.status_code, again["Idempotent-Replayed"], again.json()) == (403, "true", first.json())
    assert IdempotentRequest.objects.filter(principal__startswith="user:", key="by-rita").count() == 1
