"""Retries: a lost reply is retried under the same Idempotency-Key and the server's replay answers it
(live); which failures are retried, how often and how long the client waits (scripted transports)."""


import httpx
import pytest
from harness_client import (
    ApprovalWaitTimeout,
    AsyncHarnessClient,
    ConflictError,
    HarnessClient,
    RetryPolicy,
    ServerError,
    TransportError,
    ValidationError,
)

from runs_app.models import Checkpoint
from sessions_app.models import Session, SessionItem
from tests.client.conftest import FAST_RETRY, AsyncRecorder, Live, Recorder, posts_to, run_async

# --- against the live server: the write happens once ---------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_reply_lost_after_the_commit_is_retried_and_replayed_not_applied_twice(live: Live) -> None:
    recorder = Recorder(lose=posts_to("/sessions/"))
    with live.client(transport=recorder) as hc:
        session = hc.create_session(role="writer", ref="only-once")

    assert Session.objects.filter(project=live.project).count() == 1
    assert Session.objects.get(project=live.project).pk == session.id
    (first, lost), (retry, replay) = recorder.exchanges
    assert lost is None and replay is not None
    assert first.headers["Idempotency-Key"] == retry.headers["Idempotency-Key"]
    assert first.content == retry.content
    assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"


@pytest.mark.django_db(transaction=True)
def test_lost_replies_of_an_append_and_a_checkpoint_write_each_once(live: Live, hc: HarnessClient) -> None:
    session = hc.create_session()
    run = hc.create_run(session=session.id)
    recorder = Recorder(lose=posts_to("/items/"))
    with live.client(transport=recorder) as flaky:
        appended = flaky.append_items(session.id, [{"role": "user", "content": "once"}], expected_last_seq=0)
        recorder.lose, recorder.lost = posts_to("/checkpoints/"), False
        checkpoint = flaky.create_checkpoint(run=run.id, label="once")

    # Without the replay, the append's retry would have been refused (expected_last_seq is 1 by then) or,
    # without expected_last_seq, applied twice.
    assert appended.last_seq == 1 and SessionItem.objects.filter(session_id=session.id).count() == 1
    assert list(Checkpoint.objects.filter(run_id=run.id).values_list("pk", flat=True)) == [checkpoint.id]
    replays = [r for _, r in recorder.exchanges if r is not None and r.headers.get("Idempotent-Replayed")]
    assert len(replays) == 2


@pytest.mark.django_db(transaction=True)
def test_the_async_client_retries_a_lost_reply_the_same_way(live: Live) -> None:
    recorder = AsyncRecorder(lose=posts_to("/sessions/"))

    async def create() -> int:
        async with AsyncHarnessClient(live.url, live.agent_token, retry=FAST_RETRY, transport=recorder) as hc:
            return (await hc.create_session(ref="async-once")).id

    session_id = run_async(create())
    assert list(Session.objects.filter(project=live.project).values_list("pk", flat=True)) == [session_id]
    (first, _), (retry, replay) = recorder.exchanges
    assert first.headers["Idempotency-Key"] == retry.headers["Idempotency-Key"]
    assert replay is not None and replay.headers["Idempotent-Replayed"] == "true"


# --- scripted answers: what is retried ----------------------------------------------------------------------

Answer = httpx.Response | Exception


def scripted(*answers: Answer) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A transport that gives these answers in turn (the last one again once they run out)."""
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        answer = answers[min(len(seen), len(answers) - 1)]
        seen.append(request)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx.MockTransport(handle), seen


def error(status: int, code: str, **extra: object) -> httpx.Response:
    return httpx.Response(status, json={"code": code, "detail": code.replace("_", " "), **extra})


SESSION = {"id": 7, "project": "p", "ref": "", "role": "manager", "memory_policy": "bounded", "status": "created",
           "version": 1, "last_seq": 0, "metadata": {}, "created_at": "2026-01-02T03:04:05.123456Z",
           "updated_at": "2026-01-02T03:04:05Z"}


def client_for(transport: httpx.MockTransport, **kwargs: object) -> HarnessClient:
    kwargs.setdefault("retry", RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.002))
    return HarnessClient("http://harness.test", "hc_test", transport=transport, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("failure", [
    httpx.ConnectError("refused"), httpx.ReadTimeout("slow"), httpx.RemoteProtocolError("reset"),
    error(500, "error"), error(502, "bad_gateway"), error(503, "unavailable"), error(429, "throttled"),
    error(409, "idempotency_in_progress"),
])
def test_a_post_is_retried_with_one_idempotency_key_until_it_succeeds(failure: Answer) -> None:
    transport, seen = scripted(failure, failure, httpx.Response(201, json=SESSION))
    with client_for(transport) as hc:
        session = hc.create_session()
    assert session.id == 7 and session.created_at.microsecond == 123456
    assert len(seen) == 3
    assert len({r.headers["Idempotency-Key"] for r in seen}) == 1


@pytest.mark.parametrize(("answer", "raised"), [
    (error(400, "invalid", fields={"to": ["bad"]}), ValidationError),
    (error(409, "stale_version", current_status="running", current_version=4), ConflictError),
    (error(422, "idempotency_key_reused"), ValidationError),
])
def test_other_4xx_are_never_retried(answer: httpx.Response, raised: type[Exception]) -> None:
    transport, seen = scripted(answer, httpx.Response(201, json=SESSION))
    with client_for(transport) as hc, pytest.raises(raised):
        hc.create_session()
    assert len(seen) == 1


def test_retries_are_bounded_then_the_last_error_is_raised() -> None:
    transport, seen = scripted(error(503, "unavailable"))
    with client_for(transport) as hc, pytest.raises(ServerError) as failed:
        hc.get_session(7)
    assert (len(seen), failed.value.status, failed.value.code) == (4, 503, "unavailable")

    transport, seen = scripted(httpx.ConnectError("refused"))
    with client_for(transport, retry=RetryPolicy(max_attempts=2, base_delay=0)) as hc, \
            pytest.raises(TransportError) as unreachable:
        hc.create_session()
    assert len(seen) == 2 and isinstance(unreachable.value.__cause__, httpx.ConnectError)

    transport, seen = scripted(error(500, "error"))
    with client_for(transport, retry=RetryPolicy(max_attempts=1)) as hc, pytest.raises(ServerError):
        hc.create_session()
    assert len(seen) == 1


def test_each_call_has_its_own_key_and_a_given_request_key_is_sent() -> None:
    transport, seen = scripted(httpx.Response(201, json=SESSION))
    with client_for(transport) as hc:
        hc.create_session()
        hc.create_session()
        hc.create_session(request_key="step-42")
        hc.get_session(7)
    keys = [r.headers.get("Idempotency-Key") for r in seen]
    assert keys[0] != keys[1] and keys[2] == "step-42" and keys[3] is None


def test_a_patch_is_not_retried_once_it_may_have_reached_the_server() -> None:
    task = {"id": 3, "objective": "x", "version": 2, "status": "open"}
    transport, seen = scripted(httpx.ReadError("lost"), httpx.Response(200, json=task))
    with client_for(transport) as hc, pytest.raises(TransportError):
        hc.save_task(3, expected_version=1, plan=["a"])
    assert len(seen) == 1 and "Idempotency-Key" not in seen[0].headers

    transport, seen = scripted(error(500, "error"), httpx.Response(200, json=task))
    with client_for(transport) as hc, pytest.raises(ServerError):
        hc.save_task(3, expected_version=1, plan=["a"])
    assert len(seen) == 1

    transport, seen = scripted(httpx.ConnectError("refused"), httpx.Response(200, json=task))
    with client_for(transport) as hc:
        assert hc.save_task(3, expected_version=1, plan=["a"]).version == 2
    assert len(seen) == 2


def test_the_async_client_retries_alike() -> None:
    transport, seen = scripted(httpx.ReadError("lost"), error(409, "idempotency_in_progress"),
                               httpx.Response(201, json=SESSION))

    async def create() -> int:
        retry = RetryPolicy(base_delay=0.001, max_delay=0.002)
        async with AsyncHarnessClient("http://harness.test", "hc_test", transport=transport, retry=retry) as hc:
            return (await hc.create_session()).id

    assert run_async(create()) == 7
    assert len(seen) == 3 and len({r.headers["Idempotency-Key"] for r in seen}) == 1


def test_backoff_grows_exponentially_and_stays_under_its_cap() -> None:
    policy = RetryPolicy(base_delay=0.1, max_delay=1.0, jitter=0)
    assert [policy.backoff(n) for n in range(1, 7)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    jittered = RetryPolicy(base_delay=0.1, max_delay=1.0, jitter=0.5)
    assert all(0.2 <= jittered.backoff(3) <= 0.4 for _ in range(50))
    with pytest.raises(ValueError, match="first try"):
        RetryPolicy(max_attempts=0)


def test_retry_after_is_honoured_up_to_the_cap() -> None:
    policy = RetryPolicy(base_delay=0.001, max_delay=0.05, jitter=0)
    throttled = httpx.Response(503, headers={"Retry-After": "30"})
    assert policy.after_response(1, throttled, "unavailable", replayable=True) == 0.05
    assert policy.after_response(1, httpx.Response(503, headers={"Retry-After": "0"}), None, replayable=True) == 0.001


def test_a_duplicate_still_in_flight_is_retried_after_its_retry_after_up_to_the_cap() -> None:
    policy = RetryPolicy(base_delay=0.001, max_delay=0.05, jitter=0)
    in_flight = httpx.Response(409, headers={"Retry-After": "1"})
    assert policy.after_response(1, in_flight, "idempotency_in_progress", replayable=False) == 0.05
    assert policy.after_response(1, httpx.Response(409), "idempotency_in_progress", replayable=False) == 0.001
    assert policy.after_response(1, in_flight, "version_conflict", replayable=True) is None
    assert policy.after_response(4, in_flight, "idempotency_in_progress", replayable=True) is None


def test_the_wait_for_a_decision_times_out_with_the_last_seen_approval() -> None:
    pending = {"id": 5, "status": "pending", "run": 1, "tool": "t", "version": 1}
    transport, seen = scripted(httpx.Response(200, json=pending))
    with client_for(transport) as hc, pytest.raises(ApprovalWaitTimeout) as waited:
        # The polling wait (the push's long poll is tests/mcp/test_push_client.py's): this server answers the
        # approval to every request, so its push route would not be one.
        hc.wait_for_approval(5, timeout=0.05, poll_interval=0.01, max_poll_interval=0.02, push=False)
    assert isinstance(waited.value, TimeoutError) and waited.value.approval.status == "pending"
    assert len(seen) >= 2
