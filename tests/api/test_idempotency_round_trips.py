"""The round trips of a keyed POST, and the key claimed in the write's own statement.

A keyed POST with a bearer token looks its token up in the statement that reserves the key (then the
view's statement, then the stored reply: three, in one transaction with the view's work), and only a live
token reserves: a revoked or unknown one gets its 401, never a replay of a reply stored while it was valid.
The append (the hottest write) and the event append claim their key in their own statement
(harness.http.idempotency.Claim): two round trips, and the write and the stored reply commit together or not at all.
The plain path (harness.http.plain) goes further for a token its process already knows: the append's and the
checkpoint's one statement checks the token itself (harness.http.auth.TokenCheck), one round trip in all.
"""

import datetime as dt
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from harness.models import ApiToken, IdempotentRequest
from runs_app.models import Checkpoint, Run, RunEvent
from sessions_app.models import SessionItem
from tests.api.conftest import ApiClient, World

pytestmark = pytest.mark.django_db

ITEMS = {"items": [{"role": "user", "content": {"text": "hello"}}]}


def _items_path(world: World) -> str:
    return f"/api/v1/sessions/{world.session.pk}/items/"


def _statements(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]


def test_a_keyed_write_looks_its_token_up_in_the_reservation_three_statements(world: World) -> None:
    # A token's first use also records last_used_at (at most once a minute): not this request's cost.
    assert world.agent.post(_items_path(world), ITEMS, HTTP_IDEMPOTENCY_KEY="k-0").status_code == 201
    with CaptureQueriesContext(connection) as queries:
        first = world.agent.post("/api/v1/sessions/", {"role": "writer"}, HTTP_IDEMPOTENCY_KEY="s-1")
    assert first.status_code == 201, first.content
    # The round trips of a keyed POST (a measured hot path: bench/README.md, "CPU per agent call"): the token is
    # looked up in the reservation's statement, then the view's, then the settlement.
    statements = _statements(queries)
    assert len(statements) == 3, statements
    record = IdempotentRequest.objects.get(key="s-1")
    assert (record.state, record.response_status, record.response_body) == ("done", 201, first.json())


def test_a_keyed_event_is_two_statements_and_its_retry_is_replayed(world: World) -> None:
    # The event claims its key in its own statement (issue 19: the one-transaction reservation would cost
    # this hot write a BEGIN and a COMMIT round trip; claimed, it costs one round trip less than before).
    assert world.agent.post(_items_path(world), ITEMS, HTTP_IDEMPOTENCY_KEY="k-0").status_code == 201
    path, body = f"/api/v1/runs/{world.running_run.pk}/events/", {"kind": "tool.result", "data": {"n": 1}}
    with CaptureQueriesContext(connection) as queries:
        first = world.agent.post(path, body, HTTP_IDEMPOTENCY_KEY="e-1")
    assert first.status_code == 201, first.content
    statements = _statements(queries)
    assert len(statements) == 2, statements  # the token, then the write that records its reply (a hot path's count)
    record = IdempotentRequest.objects.get(key="e-1")
    assert (record.state, record.response_status, record.response_body) == ("done", 201, first.json())
    again = world.agent.post(path, body, HTTP_IDEMPOTENCY_KEY="e-1")
    assert (again.status_code, again["Idempotent-Replayed"], again.json()) == (201, "true", first.json())
    assert RunEvent.objects.filter(run=world.running_run, kind="tool.result").count() == 1
    other = world.agent.post(path, {**body, "data": {"n": 2}}, HTTP_IDEMPOTENCY_KEY="e-1")
    assert (other.status_code, other.json()["code"]) == (422, "idempotency_key_reused")
    missing = world.agent.post("/api/v1/runs/999999999/events/", body, HTTP_IDEMPOTENCY_KEY="e-2")
    assert missing.status_code == 404 and not IdempotentRequest.objects.filter(key="e-2").exists()


def test_a_keyed_append_is_one_statement_and_its_retry_is_replayed(world: World) -> None:
    # The first append looks the token up; this process then knows it, and the next append's own statement
    # checks it (the plain path: harness.http.plain), claims the key and writes.
    assert world.agent.post(_items_path(world), ITEMS, HTTP_IDEMPOTENCY_KEY="k-0").status_code == 201
    with CaptureQueriesContext(connection) as queries:
        first = world.agent.post(_items_path(world), ITEMS, HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 201, first.content
    statements = _statements(queries)
    assert len(statements) == 1, statements  # H1's one round trip (bench/README.md, "CPU per agent call")
    record = IdempotentRequest.objects.get(key="k-1")
    assert (record.state, record.response_status, record.response_body) == ("done", 201, first.json())
    again = world.agent.post(_items_path(world), ITEMS, HTTP_IDEMPOTENCY_KEY="k-1")
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert SessionItem.objects.filter(session=world.session).count() == 2


def test_a_claimed_key_with_another_body_is_422_and_writes_nothing(world: World) -> None:
    assert world.agent.post(_items_path(world), ITEMS, HTTP_IDEMPOTENCY_KEY="k-4").status_code == 201
    other = {"items": [{"role": "user", "content": {"text": "something else"}}]}
    reused = world.agent.post(_items_path(world), other, HTTP_IDEMPOTENCY_KEY="k-4")
    assert (reused.status_code, reused.json()["code"]) == (422, "idempotency_key_reused")
    # A key a non-claiming endpoint holds is the same key: refused too, nothing appended.
    assert world.agent.post("/api/v1/sessions/", {"role": "writer"}, HTTP_IDEMPOTENCY_KEY="k-5").status_code == 201
    assert world.agent.post(_items_path(world), ITEMS, HTTP_IDEMPOTENCY_KEY="k-5").status_code == 422
    assert SessionItem.objects.filter(session=world.session).count() == 1


def test_a_refused_append_records_nothing_and_its_key_stays_free(world: World) -> None:
    stale = world.agent.post(_items_path(world), {**ITEMS, "expected_last_seq": 7}, HTTP_IDEMPOTENCY_KEY="k-6")
    assert (stale.status_code, stale.json()["code"]) == (409, "seq_conflict")
    assert not IdempotentRequest.objects.filter(key="k-6").exists()
    fixed = world.agent.post(_items_path(world), {**ITEMS, "expected_last_seq": 0}, HTTP_IDEMPOTENCY_KEY="k-6")
    assert fixed.status_code == 201, fixed.content
    record = IdempotentRequest.objects.get(key="k-6")
    assert (record.state, record.response_status, record.response_body) == ("done", 201, fixed.json())


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


def test_the_retry_of_a_guarded_append_is_replayed_not_refused(world: World) -> None:
    # The first append moved last_seq to 1, so the retry's expected_last_seq=0 no longer holds: the answer
    # is still the first reply, not a seq_conflict.
    guarded = {**ITEMS, "expected_last_seq": 0}
    first = world.agent.post(_items_path(world), guarded, HTTP_IDEMPOTENCY_KEY="k-7")
    retry = world.agent.post(_items_path(world), guarded, HTTP_IDEMPOTENCY_KEY="k-7")
    assert (first.status_code, retry.status_code) == (201, 201)
    assert retry["Idempotent-Replayed"] == "true" and retry.json() == first.json()
    stale = world.agent.post(_items_path(world), guarded, HTTP_IDEMPOTENCY_KEY="k-8")
    assert (stale.status_code, stale.json()["code"]) == (409, "seq_conflict")


# --- the checkpoint write claims its key too --------------------------------------------------------------

def _checkpoint_body(world: World, **extra: Any) -> dict[str, Any]:
    return {"run": world.run.pk, "lease_owner": world.run.lease_owner,
            "parent": world.checkpoint.pk, "label": "step", "state": {"n": 1}, **extra}


def test_a_keyed_checkpoint_is_two_statements_one_commit_and_its_retry_is_replayed(world: World) -> None:
    # The first write also reads the parent's facts and records the token's last use: not what is measured.
    warm = world.agent.post("/api/v1/checkpoints/", _checkpoint_body(world), HTTP_IDEMPOTENCY_KEY="c-0")
    assert warm.status_code == 201, warm.content
    body = _checkpoint_body(world, parent=warm.json()["id"])
    with CaptureQueriesContext(connection) as queries:
        first = world.agent.post("/api/v1/checkpoints/", body, HTTP_IDEMPOTENCY_KEY="c-1")
    assert first.status_code == 201, first.content
    # H3's round trips (a measured hot path: bench/README.md, "CPU per agent call"): the chain's facts (a read,
    # from the process's memory outside a test's transaction) and the checkpoint's statement, which checks the
    # token (harness.http.plain), writes and records the reply: one commit where reserving, writing and settling
    # were three. That the write and its reply commit together is the behaviour below and in
    # test_idempotency_transaction.
    assert len(_statements(queries)) <= 2, _statements(queries)
    record = IdempotentRequest.objects.get(key="c-1")
    assert (record.state, record.response_status, record.response_body) == ("done", 201, first.json())
    again = world.agent.post("/api/v1/checkpoints/", body, HTTP_IDEMPOTENCY_KEY="c-1")
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert Checkpoint.objects.filter(run=world.run, parent_id=warm.json()["id"]).count() == 1


def test_a_checkpoint_retried_after_its_lease_went_gets_the_first_reply(world: World) -> None:
    body = _checkpoint_body(world, lease_owner=world.run.lease_owner)
    first = world.agent.post("/api/v1/checkpoints/", body, HTTP_IDEMPOTENCY_KEY="c-2")
    assert first.status_code == 201, first.content
    Run.objects.filter(pk=world.run.pk).update(lease_expires_at=timezone.now() - dt.timedelta(minutes=1))
    # Without the key the same body is now refused: the lease is gone ...
    fresh = world.agent.post("/api/v1/checkpoints/", body, HTTP_IDEMPOTENCY_KEY="c-3")
    assert (fresh.status_code, fresh.json()["code"]) == (409, "lease_lost")
    assert not IdempotentRequest.objects.filter(key="c-3").exists()
    # ... but the retry of the write that was done is answered with what it did.
    again = world.agent.post("/api/v1/checkpoints/", body, HTTP_IDEMPOTENCY_KEY="c-2")
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()


def test_a_refused_checkpoint_records_nothing_and_a_reused_key_is_422(world: World) -> None:
    bad = world.agent.post("/api/v1/checkpoints/", _checkpoint_body(world, parent=world.checkpoint.pk + 10_000),
                           HTTP_IDEMPOTENCY_KEY="c-4")
    assert bad.status_code == 404, bad.content
    assert not IdempotentRequest.objects.filter(key="c-4").exists()
    done = world.agent.post("/api/v1/checkpoints/", _checkpoint_body(world), HTTP_IDEMPOTENCY_KEY="c-4")
    assert done.status_code == 201, done.content
    other = world.agent.post("/api/v1/checkpoints/", _checkpoint_body(world, label="other"),
                             HTTP_IDEMPOTENCY_KEY="c-4")
    assert (other.status_code, other.json()["code"]) == (422, "idempotency_key_reused")
    assert Checkpoint.objects.filter(run=world.run, parent=world.checkpoint).count() == 1
