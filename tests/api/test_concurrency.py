"""Retries and races against the real database: real threads, each on its own connection."""

from collections.abc import Callable
from typing import Any

import pytest

from harness.models import IdempotentRequest
from runs_app.models import Run
from sessions_app.models import Session
from tests.api.conftest import ApiClient, World
from tests.threads import run_concurrently

JOIN_SECONDS = 20


def _in_threads(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Run `work(i)` in `count` threads released together, each on its own connection; none may raise."""
    results = run_concurrently(count, work, timeout=JOIN_SECONDS)
    assert not any(isinstance(r, Exception) for r in results), results
    return results


# --- Idempotency-Key -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_retry_with_the_same_key_and_body_replays_the_first_response(world: World) -> None:
    body = {"role": "writer", "metadata": {"a": 1, "b": 2}}
    first = world.agent.post("/api/v1/sessions/", body, HTTP_IDEMPOTENCY_KEY="create-1")
    # Same body with keys in another order: the canonical JSON is the same request.
    retry = world.agent.post("/api/v1/sessions/", {"metadata": {"b": 2, "a": 1}, "role": "writer"},
                             HTTP_IDEMPOTENCY_KEY="create-1")
    assert (first.status_code, retry.status_code) == (201, 201)
    assert retry.json() == first.json()
    assert retry["Idempotent-Replayed"] == "true"
    assert Session.objects.filter(role="writer").count() == 1


@pytest.mark.django_db
def test_memory_writes_get_idempotency_without_opting_in(world: World) -> None:
    from memory_app.models import MemoryRecord

    body = {"scope": "project", "content": "The build uses Python 3.11.", "source_run_id": world.run.pk}
    first = world.agent.post("/api/v1/memory/records/", body, HTTP_IDEMPOTENCY_KEY="mem-1")
    retry = world.agent.post("/api/v1/memory/records/", body, HTTP_IDEMPOTENCY_KEY="mem-1")
    assert first.status_code in (200, 201), first.content
    assert (retry.status_code, retry.json()) == (first.status_code, first.json())
    assert retry["Idempotent-Replayed"] == "true"
    assert MemoryRecord.objects.filter(content=body["content"]).count() == 1
    reused = world.agent.post("/api/v1/memory/records/", {**body, "content": "No."}, HTTP_IDEMPOTENCY_KEY="mem-1")
    assert (reused.status_code, reused.json()["code"]) == (422, "idempotency_key_reused")


@pytest.mark.django_db
def test_the_same_key_with_a_different_body_is_422(world: World) -> None:
    assert world.agent.post("/api/v1/sessions/", {"role": "writer"}, HTTP_IDEMPOTENCY_KEY="k").status_code == 201
    response = world.agent.post("/api/v1/sessions/", {"role": "other"}, HTTP_IDEMPOTENCY_KEY="k")
    assert response.status_code == 422
    assert response.json()["code"] == "idempotency_key_reused"
    elsewhere = world.agent.post(f"/api/v1/runs/{world.run.pk}/events/", {"kind": "x"}, HTTP_IDEMPOTENCY_KEY="k")
    assert elsewhere.status_code == 422
    assert Session.objects.filter(role="other").count() == 0


@pytest.mark.django_db
def test_keys_belong_to_their_caller(world: World, agent_for: Callable[..., ApiClient]) -> None:
    second_agent = agent_for(world.project)
    a = world.agent.post("/api/v1/sessions/", {"role": "writer"}, HTTP_IDEMPOTENCY_KEY="shared")
    b = second_agent.post("/api/v1/sessions/", {"role": "writer"}, HTTP_IDEMPOTENCY_KEY="shared")
    assert (a.status_code, b.status_code) == (201, 201)
    assert a.json()["id"] != b.json()["id"]


@pytest.mark.django_db
def test_keys_past_the_retention_window_are_pruned(world: World) -> None:
    import datetime as dt

    from django.utils import timezone

    from harness.http.idempotency import idempotent_requests_prune

    world.agent.post("/api/v1/sessions/", {"role": "writer"}, HTTP_IDEMPOTENCY_KEY="old")
    world.agent.post("/api/v1/sessions/", {"role": "writer"}, HTTP_IDEMPOTENCY_KEY="new")
    IdempotentRequest.objects.filter(key="old").update(created_at=timezone.now() - dt.timedelta(hours=25))
    assert idempotent_requests_prune() == 1
    assert list(IdempotentRequest.objects.values_list("key", flat=True)) == ["new"]


@pytest.mark.django_db
def test_a_reservation_left_in_progress_by_a_dead_process_is_freed_after_ten_minutes(world: World) -> None:
    import datetime as dt

    from django.utils import timezone

    from harness.http.idempotency import idempotent_requests_prune

    for key, minutes in (("dead", 11), ("slow", 2)):
        IdempotentRequest.objects.create(principal="agent:x", key=key, method="POST", path="/api/v1/sessions/",
                                         request_hash="0" * 64)
        IdempotentRequest.objects.filter(key=key).update(created_at=timezone.now() - dt.timedelta(minutes=minutes))
    assert idempotent_requests_prune() == 1
    assert list(IdempotentRequest.objects.values_list("key", flat=True)) == ["slow"]


@pytest.mark.django_db
def test_an_oversized_key_is_400(world: World) -> None:
    response = world.agent.post("/api/v1/sessions/", {}, HTTP_IDEMPOTENCY_KEY="k" * 201)
    assert (response.status_code, response.json()["code"]) == (400, "invalid_idempotency_key")


@pytest.mark.django_db(transaction=True)
def test_eight_concurrent_duplicates_write_once(world: World) -> None:
    body = {"kind": "tool.result", "data": {"n": 1}, "lease_owner": world.run.lease_owner}
    path = f"/api/v1/runs/{world.run.pk}/events/"
    before = Run.objects.get(pk=world.run.pk).last_event_seq

    responses = _in_threads(8, lambda i: ApiClient(None).call(
        "POST", path, body, HTTP_AUTHORIZATION=world.agent.headers["HTTP_AUTHORIZATION"], HTTP_IDEMPOTENCY_KEY="ev-1"
    ))

    # Each duplicate's reservation waits on the first one's uncommitted key, then replays its reply
    # (tests/api/test_idempotency_transaction.py): no 409 window.
    assert [r.status_code for r in responses] == [201] * 8
    assert len({r.json()["id"] for r in responses}) == 1  # replays carry the first write's id
    assert sum(r.get("Idempotent-Replayed") == "true" for r in responses) == 7
    assert Run.objects.get(pk=world.run.pk).last_event_seq == before + 1


@pytest.mark.django_db(transaction=True)
def test_eight_concurrent_duplicate_appends_write_once(world: World) -> None:
    # The append claims its key in its own statement: the duplicates wait on the first one's key, then
    # find it done and replay it (no 409 window, as the reservation has).
    # Guarded by expected_last_seq: the duplicates that wait on the session's row find it moved on by the
    # first, and must still get its reply, not a seq_conflict.
    body = {"items": [{"role": "user", "content": {"text": "once"}}], "expected_last_seq": 0}
    path = f"/api/v1/sessions/{world.session.pk}/items/"

    responses = _in_threads(8, lambda i: ApiClient(None).call(
        "POST", path, body, HTTP_AUTHORIZATION=world.agent.headers["HTTP_AUTHORIZATION"], HTTP_IDEMPOTENCY_KEY="ap-1"
    ))

    assert [r.status_code for r in responses] == [201] * 8
    assert len({r.json()["items"][0]["id"] for r in responses}) == 1
    assert sum(r.get("Idempotent-Replayed") == "true" for r in responses) == 7
    assert Session.objects.get(pk=world.session.pk).last_seq == 1


# --- leases ----------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_eight_threads_claiming_one_run_leave_exactly_one_lease(world: World) -> None:
    run = world.running_run
    auth = world.agent.headers["HTTP_AUTHORIZATION"]

    responses = _in_threads(8, lambda i: ApiClient(None).call(
        "POST", f"/api/v1/runs/{run.pk}/claim/", {"owner": f"worker-{i}", "lease_seconds": 60},
        HTTP_AUTHORIZATION=auth,
    ))

    winners = [r for r in responses if r.status_code == 200]
    losers = [r for r in responses if r.status_code != 200]
    assert len(winners) == 1
    assert {(r.status_code, r.json()["code"]) for r in losers} == {(409, "lease_held")}
    leased = Run.objects.get(pk=run.pk)
    assert leased.lease_owner == winners[0].json()["lease_owner"]
    assert all(r.json()["lease_owner"] == leased.lease_owner for r in losers)
