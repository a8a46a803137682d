"""The plain path (harness.http.plain) answers exactly as the DRF views it stands in front of.

Each case makes the same requests twice from the same database state, once with HARNESS_PLAIN_PATH on and once
off (each time in a savepoint rolled back afterwards, so both start from the same rows and the same clock), and
compares what a client and the database see: status, the headers a client reads, the body (ids the sequences
hand out are the one thing allowed to differ), the session's items, the stored Idempotency-Key replies, and the
token's throttle count. It also asserts which door answered: the plain one for the plain cases, DRF's for the rest.
"""

import datetime as dt
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models.expressions import RawSQL
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.views import APIView

from harness.actors import Actor
from harness.models import ApiToken, IdempotentRequest
from harness.projects import project_freeze
from runs_app import services as run_services
from runs_app.models import Run
from sessions_app import services as session_services
from sessions_app.models import SessionItem
from tests import factories
from tests.api.conftest import ApiClient, World

pytestmark = pytest.mark.django_db

_HEADERS = ("Content-Type", "Allow", "Retry-After", "WWW-Authenticate", "Idempotent-Replayed")
_SERIAL_KEYS = frozenset({"id"})  # handed out by a sequence, which a rollback does not give back


def _normal(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("<id>" if k in _SERIAL_KEYS else _normal(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


@pytest.fixture
def doors(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which door answered each request: "drf" when a DRF view dispatched it, else "plain"."""
    answered: list[str] = []
    dispatch = APIView.dispatch

    def spy(self: APIView, request: Any, *args: Any, **kwargs: Any) -> Any:
        answered.append("drf")
        return dispatch(self, request, *args, **kwargs)

    monkeypatch.setattr(APIView, "dispatch", spy)
    return answered


def _seen(world: World, responses: list[Any]) -> dict[str, Any]:
    items = list(SessionItem.objects.filter(session=world.session).order_by("seq")
                 .values_list("seq", "role", "content", "run_id", "created_at"))
    keys = list(IdempotentRequest.objects.order_by("key")
                .values_list("key", "path", "request_hash", "state", "response_status", "response_body"))
    return {
        "answers": [(r.status_code, {h: r.get(h) for h in _HEADERS if r.has_header(h)},
                     _normal(r.json()) if r.content else None) for r in responses],
        "items": items,
        "keys": [(*k[:5], _normal(k[5])) for k in keys],
    }


def both_doors(world: World, doors: list[str], calls: Callable[[], list[Any]]) -> tuple[dict[str, Any], list[str]]:
    """What `calls` leaves behind through each door, from the same state; asserts the two agree. Returns the
    plain door's view and which door answered each of its requests."""
    seen: dict[bool, dict[str, Any]] = {}
    answered: dict[bool, list[str]] = {}
    for plain in (True, False):
        with override_settings(HARNESS_PLAIN_PATH=plain), transaction.atomic():
            doors.clear()
            responses = calls()
            answered[plain] = [r._door for r in responses]
            seen[plain] = _seen(world, responses)
            transaction.set_rollback(True)
    assert seen[True] == seen[False]
    assert answered[False] == ["drf"] * len(answered[False])  # off: every request through DRF's view
    return seen[True], answered[True]


@pytest.fixture
def call(doors: list[str]) -> Callable[..., Any]:
    """Make a request through an ApiClient and mark on the response which door answered it."""

    def make(client: ApiClient, method: str, path: str, body: Any = None, **headers: str) -> Any:
        before = len(doors)
        if method == "RAW":
            response = client.post_raw(path, body)
        elif method == "GET":
            response = client.get(path, **headers)
        else:
            response = client.post(path, body, **headers)
        response._door = "drf" if len(doors) > before else "plain"
        return response

    return make


def _item(text: str = "hello", role: str = "user") -> dict[str, Any]:
    return {"role": role, "content": {"text": text, "pad": "x" * 200}}


def _key() -> str:
    return f"k-{uuid.uuid4()}"


# --- the append ------------------------------------------------------------------------------------


def test_a_plain_append_is_answered_by_the_plain_door_as_drf_would(world: World, doors: list[str],
                                                                   call: Callable[..., Any]) -> None:
    path = f"/api/v1/sessions/{world.session.pk}/items/"
    key = _key()
    body = {"items": [_item("a"), _item("b", "assistant")]}
    seen, answered = both_doors(world, doors, lambda: [
        call(world.agent, "POST", path, body, HTTP_IDEMPOTENCY_KEY=key),
        call(world.agent, "POST", path, body, HTTP_IDEMPOTENCY_KEY=key),  # the replay
        call(world.agent, "POST", path, {"items": [_item("c")]}, HTTP_IDEMPOTENCY_KEY=key),  # 422: another body
        call(world.agent, "POST", path, {"items": [_item("d")], "expected_last_seq": 0}),  # 409: seq moved on
        call(world.agent, "POST", path, {"items": [_item("e")], "expected_last_seq": 2}),  # no key
    ])
    statuses = [a[0] for a in seen["answers"]]
    assert statuses == [201, 201, 422, 409, 201]
    assert seen["answers"][1][1].get("Idempotent-Replayed") == "true"
    assert [seq for seq, *_ in seen["items"]] == [1, 2, 3]
    assert answered == ["plain"] * 5


def test_appends_the_plain_door_does_not_take_are_drf_s(world: World, other_world: World, doors: list[str],
                                                         call: Callable[..., Any],
                                                         agent_for: Callable[..., ApiClient]) -> None:
    path = f"/api/v1/sessions/{world.session.pk}/items/"
    body = {"items": [_item()]}
    receiver = agent_for(world.project, role="handoff_receiver")
    seen, answered = both_doors(world, doors, lambda: [
        call(ApiClient(), "POST", path, body),  # 401 no token
        call(ApiClient("hc_not-a-token"), "POST", path, body),  # 401 unknown token
        call(world.reader, "POST", path, body),  # 403 token_read_only
        call(world.reviewer, "POST", path, body),  # 403 agent_token_required (a personal token)
        call(receiver, "POST", path, body),  # 403 receiver_token_scope
        call(world.agent, "POST", path, {"items": [_item()], "colour": "red"}),  # 400 unknown_field
        call(world.agent, "POST", path, {"items": []}),  # 400 invalid
        call(world.agent, "RAW", path, '{"items": [}'),  # 400 parse_error
        call(world.agent, "RAW", path, '{"items": [{"role": "user", "content": "\\u0000"}]}'),  # unstorable
        call(world.agent, "POST", path, body, HTTP_ACCEPT="text/html"),  # 406
        call(world.agent, "POST", path + "?format=json", body),  # negotiated by DRF: 201
        call(other_world.agent, "POST", path, body),  # 404: another project's session
    ])
    assert [a[0] for a in seen["answers"]] == [401, 401, 403, 403, 403, 400, 400, 400, 400, 406, 201, 404]
    assert answered == ["drf"] * 11 + ["plain"]
    assert len(seen["items"]) == 1


def test_the_plain_door_words_the_service_s_refusals_as_drf(world: World, doors: list[str],
                                                            call: Callable[..., Any]) -> None:
    path = f"/api/v1/sessions/{world.session.pk}/items/"
    other_session = factories.make_session(world.project, ref="other")
    foreign_run = factories.make_run(world.project, other_session)
    seen, answered = both_doors(world, doors, lambda: [
        call(world.agent, "POST", path, {"items": [{"role": "user", "content": 1, "run": foreign_run.pk}]}),
        call(world.agent, "POST", "/api/v1/sessions/999999999/items/", {"items": [_item()]}),
        call(world.agent, "POST", path, {"items": [_item()], "expected_last_seq": 7},
             HTTP_IDEMPOTENCY_KEY=_key()),
    ])
    assert [(a[0], a[2]["code"]) for a in seen["answers"]] == [
        (400, "run_not_in_session"), (404, "not_found"), (409, "seq_conflict")]
    assert answered == ["plain"] * 3
    assert seen["keys"] == []  # a refusal is answered afresh, never recorded under the key


def test_a_frozen_project_s_append_is_refused_by_drf_and_not_final(world: World, doors: list[str],
                                                                     call: Callable[..., Any]) -> None:
    admin = factories.make_user("freezer", role="admin", projects=[world.project])
    project_freeze(project=world.project, actor=Actor.for_user(admin), reason="audit")
    path = f"/api/v1/sessions/{world.session.pk}/items/"
    key = _key()
    seen, answered = both_doors(world, doors, lambda: [
        call(world.agent, "POST", path, {"items": [_item()]}, HTTP_IDEMPOTENCY_KEY=key),
        call(world.agent, "GET", f"/api/v1/sessions/{world.session.pk}/items/latest/"),  # reads stay allowed
    ])
    assert [(a[0], a[2].get("code")) for a in seen["answers"]] == [(409, "project_frozen"), (200, None)]
    assert answered == ["drf", "plain"]
    assert seen["keys"] == []


def test_a_throttled_token_is_counted_once_and_answered_429(world: World, doors: list[str],
                                                             call: Callable[..., Any], settings: Any,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    settings.HARNESS_API_RATE = "3/hour"
    # The window's clock held still: Retry-After counts the seconds left in it, and the two doors' passes run a
    # moment apart, which once put them either side of a second (601 vs 600: a flake, not a difference).
    from harness.http import throttling

    monkeypatch.setattr(throttling, "_window", lambda window: (1, 1234.5))
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                   "LOCATION": f"plain-{uuid.uuid4()}"}}
    path = f"/api/v1/sessions/{world.session.pk}/items/"
    from django.core.cache import cache

    counts = []

    def calls() -> list[Any]:
        cache.clear()
        responses = [call(world.agent, "POST", path, {"items": [_item(str(n))]}) for n in range(4)]
        counts.append(sorted(v for k, v in cache._cache.items()))  # type: ignore[attr-defined]
        return responses

    seen, answered = both_doors(world, doors, calls)
    assert [a[0] for a in seen["answers"]] == [201, 201, 201, 429]
    assert "Retry-After" in seen["answers"][3][1]
    assert answered == ["plain", "plain", "plain", "drf"]
    assert counts[0] == counts[1]  # the same count through both doors: the refusal was not counted twice


# --- the newest items ---------------------------------------------------------------------------------


def test_the_newest_items_read_answers_as_drf(world: World, other_world: World, doors: list[str],
                                              call: Callable[..., Any]) -> None:
    session_services.session_items_append(project=world.project, session_id=world.session.pk,
                                          items=[{"role": "user", "content": n} for n in range(5)])
    path = f"/api/v1/sessions/{world.session.pk}/items/latest/"
    seen, answered = both_doors(world, doors, lambda: [
        call(world.agent, "GET", path + "?limit=3"),
        call(world.reader, "GET", path),
        call(world.agent, "GET", path + "?limit=0"),
        call(world.agent, "GET", path + "?limit=x"),
        call(other_world.agent, "GET", path),
        call(ApiClient(), "GET", path),
        call(world.reviewer, "GET", path),  # a person's token reads through DRF's view
        call(world.agent, "GET", path + "?format=json"),
    ])
    assert [a[0] for a in seen["answers"]] == [200, 200, 400, 400, 404, 401, 200, 200]
    assert [i["seq"] for i in seen["answers"][0][2]["items"]] == [3, 4, 5]
    assert answered == ["plain"] * 5 + ["drf"] * 3


# --- checkpoints -------------------------------------------------------------------------------------------


def test_a_checkpoint_write_answers_as_drf(world: World, other_world: World, doors: list[str],
                                           call: Callable[..., Any]) -> None:
    key = _key()
    owner = "acme-worker"
    first = {"run": world.run.pk, "parent": world.checkpoint.pk, "label": "second", "state": {"n": 2},
             "cursor": {"step": 2}, "lease_owner": owner}
    seen, answered = both_doors(world, doors, lambda: [
        call(world.agent, "POST", "/api/v1/checkpoints/", first, HTTP_IDEMPOTENCY_KEY=key),
        call(world.agent, "POST", "/api/v1/checkpoints/", first, HTTP_IDEMPOTENCY_KEY=key),  # replay
        call(world.agent, "POST", "/api/v1/checkpoints/", {**first, "lease_owner": "someone-else"}),  # 409
        call(world.agent, "POST", "/api/v1/checkpoints/", {"run": world.running_run.pk,
                                                           "parent": world.checkpoint.pk}),  # 400 lineage
        call(world.agent, "POST", "/api/v1/checkpoints/", {"run": other_world.run.pk}),  # 404
        call(world.agent, "POST", "/api/v1/checkpoints/", {"run": world.run.pk, "label": " padded ",
                                                           "lease_owner": owner}),  # DRF
        call(world.reader, "POST", "/api/v1/checkpoints/", {"run": world.run.pk}),  # 403
    ])
    assert [(a[0], (a[2] or {}).get("code")) for a in seen["answers"]] == [
        (201, None), (201, None), (409, "lease_lost"), (400, "parent_not_in_lineage"), (404, "not_found"),
        (201, None), (403, "token_read_only")]
    assert seen["answers"][0][2]["depth"] == 1 and seen["answers"][0][2]["state"] == {"n": 2}
    assert answered == ["plain"] * 5 + ["drf"] * 2
    assert [k[4] for k in seen["keys"]] == [201]


def test_both_doors_fence_a_checkpoint_write_alike(world: World, doors: list[str], call: Callable[..., Any]) -> None:
    """The run's lease refuses a write that names no owner, a stale one or null the same way through both doors
    (409 lease_lost, nothing written); a run that holds no lease takes a write that names none."""
    leased = {"run": world.run.pk, "parent": world.checkpoint.pk, "label": "fenced"}
    Run.objects.filter(pk=world.waiting_run.pk).update(lease_owner="gone-agent",
                                                       lease_expires_at=timezone.now() - dt.timedelta(minutes=1))
    seen, answered = both_doors(world, doors, lambda: [
        call(world.agent, "POST", "/api/v1/checkpoints/", leased),  # no owner on a leased run
        call(world.agent, "POST", "/api/v1/checkpoints/", {**leased, "lease_owner": None}),
        call(world.agent, "POST", "/api/v1/checkpoints/", {**leased, "lease_owner": "acme-worker-before"}),
        call(world.agent, "POST", "/api/v1/checkpoints/", {"run": world.waiting_run.pk}),  # expired, not released
        call(world.agent, "POST", "/api/v1/checkpoints/", {"run": world.running_run.pk}),  # no lease: taken
        call(world.agent, "POST", "/api/v1/checkpoints/", {"run": world.running_run.pk, "lease_owner": "x"}),
        call(world.agent, "GET", f"/api/v1/checkpoints/?run={world.run.pk}"),  # nothing written to it
    ])
    assert [(a[0], (a[2] or {}).get("code")) for a in seen["answers"][:6]] == [
        (409, "lease_lost"), (409, "lease_lost"), (409, "lease_lost"), (409, "lease_lost"), (201, None),
        (409, "lease_lost")]
    assert [c["label"] for c in seen["answers"][6][2]["results"]] == ["first"]  # the world's only
    assert answered == ["plain"] * 6 + ["drf"]


def test_a_lineage_read_answers_as_drf(world: World, other_world: World, doors: list[str],
                                       call: Callable[..., Any]) -> None:
    child = run_services.checkpoint_create(project=world.project, run_id=world.run.pk,
                                           parent_id=world.checkpoint.pk, label="child")
    path = f"/api/v1/checkpoints/{child.pk}/lineage/"
    seen, answered = both_doors(world, doors, lambda: [
        call(world.agent, "GET", path),
        call(world.reader, "GET", path),
        call(other_world.agent, "GET", path),
        call(world.agent, "GET", "/api/v1/checkpoints/999999999/lineage/"),
        call(world.operator, "GET", path),
    ])
    assert [a[0] for a in seen["answers"]] == [200, 200, 404, 404, 200]
    assert [c["label"] for c in seen["answers"][0][2]] == ["child", "first"]
    assert answered == ["plain"] * 4 + ["drf"]


def test_the_schema_is_generated_from_the_drf_views(client: Any) -> None:
    schema = client.get("/api/schema/?format=json").json()
    append = schema["paths"]["/api/v1/sessions/{id}/items/"]["post"]
    assert append["operationId"] == "session_items_append"
    assert schema["paths"]["/api/v1/checkpoints/{id}/lineage/"]["get"]["operationId"] == "checkpoints_lineage"
    assert any(p["name"] == "Idempotency-Key" for p in schema["paths"]["/api/v1/checkpoints/"]["post"]["parameters"])



# --- a token this process knows is checked by the call's own statement ----------------------------------------


def _agent_token(world: World) -> ApiToken:
    digest = ApiToken.hash_secret(world.agent.headers["HTTP_AUTHORIZATION"].split()[1])
    return ApiToken.objects.get(digest=digest)


def _statements(call: Callable[[], Any]) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert call().status_code in (200, 201)
    # Read now: captured_queries slices the connection's log, which the next request's start empties.
    return [q["sql"] for q in captured.captured_queries]


@pytest.mark.django_db(transaction=True)  # as in production: autocommit, the facts of a committed chain remembered
def test_a_known_token_s_append_and_reads_are_one_statement_each(world: World) -> None:
    items = f"/api/v1/sessions/{world.session.pk}/items/"
    assert world.agent.post(items, {"items": [_item()]}).status_code == 201  # the token is looked up, and known
    written = world.agent.post("/api/v1/checkpoints/", {"run": world.run.pk, "parent": world.checkpoint.pk,
                                                        "lease_owner": "acme-worker"})
    statements = [
        _statements(lambda: world.agent.post(items, {"items": [_item()]}, HTTP_IDEMPOTENCY_KEY=_key())),
        _statements(lambda: world.agent.get(items + "latest/")),
        _statements(lambda: world.agent.get(f"/api/v1/checkpoints/{world.checkpoint.pk}/lineage/")),
        # a chain's next link: its run's and parent's facts are known to this process
        _statements(lambda: world.agent.post("/api/v1/checkpoints/", {
            "run": world.run.pk, "parent": written.json()["id"], "lease_owner": "acme-worker"},
            HTTP_IDEMPOTENCY_KEY=_key())),
    ]
    # H1-H4's one round trip each (a measured hot path: bench/README.md, "CPU per agent call"). That each one
    # statement checks the token itself is behaviour: test_a_known_token_changed_since_is_refused_as_drf_refuses_it.
    assert [len(s) for s in statements] == [1, 1, 1, 1], statements


@pytest.mark.parametrize("change", ["revoke", "expire", "expire-in-transaction", "reader", "freeze"])
def test_a_known_token_changed_since_is_refused_as_drf_refuses_it(world: World, change: str) -> None:
    items = f"/api/v1/sessions/{world.session.pk}/items/"
    key = _key()
    first = world.agent.post(items, {"items": [_item("first")]}, HTTP_IDEMPOTENCY_KEY=key)
    assert first.status_code == 201  # the token is now known to this process
    token = _agent_token(world)
    if change == "revoke":
        ApiToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
    elif change == "expire":
        ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    elif change == "expire-in-transaction":
        # Expired after the test's transaction began and before this statement: a check against now() (the
        # transaction's start) would take it for live (CI saw that once the machine was slow).
        ApiToken.objects.filter(pk=token.pk).update(
            expires_at=RawSQL("now() + (statement_timestamp() - now()) / 2", []))
    elif change == "reader":
        ApiToken.objects.filter(pk=token.pk).update(role="reader")
    else:
        admin = factories.make_user("freezer", role="admin", projects=[world.project])
        project_freeze(project=world.project, actor=Actor.for_user(admin), reason="audit")
    expected = {"revoke": (401, "authentication_failed"), "expire": (401, "authentication_failed"),
                "expire-in-transaction": (401, "authentication_failed"),
                "reader": (403, "token_read_only"), "freeze": (409, "project_frozen")}[change]
    fresh = world.agent.post(items, {"items": [_item("second")]}, HTTP_IDEMPOTENCY_KEY=_key())
    replay = world.agent.post(items, {"items": [_item("first")]}, HTTP_IDEMPOTENCY_KEY=key)  # the stored reply's key
    checkpoint = world.agent.post("/api/v1/checkpoints/", {"run": world.run.pk, "parent": world.checkpoint.pk,
                                                           "lease_owner": "acme-worker"})
    for response in (fresh, replay, checkpoint):
        assert (response.status_code, response.json()["code"]) == expected
    assert list(SessionItem.objects.filter(session=world.session).values_list("seq", flat=True)) == [1]
    assert world.run.checkpoints.count() == 1
    reads = [world.agent.get(items + "latest/"),
             world.agent.get(f"/api/v1/checkpoints/{world.checkpoint.pk}/lineage/")]
    assert [r.status_code for r in reads] == ([401, 401] if change.startswith(("revoke", "expire")) else [200, 200])


def test_a_known_tokens_call_while_the_database_is_out_of_reach_is_a_503(world: World,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Found by reliability experiment 25 (PostgreSQL crashed under load): three appends were answered 500, not 503.
    from django.db import OperationalError

    from harness.http import plain

    items = f"/api/v1/sessions/{world.session.pk}/items/"
    assert world.agent.post(items, {"items": [_item()]}).status_code == 201  # the token is now known

    def unreachable(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(session_services, "_append", unreachable)  # the call's own statement
    monkeypatch.setattr(plain, "bearer_token", unreachable)  # and any lookup after it
    answer = world.agent.post(items, {"items": [_item()]}, HTTP_IDEMPOTENCY_KEY=_key())
    assert (answer.status_code, answer.json()["code"], answer["Retry-After"]) == (503, "database_unavailable", "1")
