"""Tokens narrowed to one end user (issue 30, part 2): minted by an agent token, confined to that user's sessions
and memory scopes, short-lived, unable to mint, dead with their parent; and an agent token's `agent` scope is its
own identity."""

import datetime as dt
import random
from typing import Any

import pytest
from django.utils import timezone

from harness.models import ApiToken, AuditEntry, IdempotentRequest, Project
from memory_app.models import MemoryRecord, MemoryWritePolicy
from sessions_app.models import Session, SessionItem
from tests import factories
from tests.api.conftest import ApiClient, World
from tests.api.test_access import DECIDE, ENDPOINTS, Endpoint

NARROW = "/api/v1/tokens/narrow/"


def mint(agent: ApiClient, end_user: str, **body: Any) -> str:
    response = agent.post(NARROW, {"end_user": end_user, **body})
    assert response.status_code == 201, response.content
    secret: str = response.json()["token"]
    return secret


def for_user(agent: ApiClient, end_user: str, **body: Any) -> ApiClient:
    return ApiClient(mint(agent, end_user, **body))


def _session_of(project: Project, end_user: str, ref: str = "") -> Session:
    session = factories.make_session(project, ref=ref or f"{end_user}-S")
    Session.objects.filter(pk=session.pk).update(end_user=end_user)
    session.refresh_from_db()
    return session


def _record(project: Project, scope: str, key: str, content: str) -> MemoryRecord:
    from django.contrib.auth.models import User

    from harness.actors import Actor
    from memory_app.services import memory_write

    curator = User.objects.filter(username=f"curator-{project.slug}").first() or factories.make_user(
        f"curator-{project.slug}", role="operator", projects=[project])
    result = memory_write(project=project, actor=Actor.for_user(curator), scope=scope, scope_key=key,
                          content=content, subject="s")
    assert result.record is not None, result.reason
    return result.record


# --- minting ------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_minting_is_audited_and_the_secret_is_kept_only_as_its_hash(world: World) -> None:
    response = world.agent.post(NARROW, {"end_user": "u-17", "expires_in": 120}, HTTP_IDEMPOTENCY_KEY="mint-1")
    assert response.status_code == 201, response.content
    body = response.json()
    token = ApiToken.objects.get(pk=body["id"])
    assert token.digest == ApiToken.hash_secret(body["token"])
    assert (token.end_user, token.parent.name, token.agent_key) == ("u-17", "acme-agent", "acme-agent")
    assert token.expires_at is not None and token.expires_at <= timezone.now() + dt.timedelta(seconds=121)
    entry = AuditEntry.objects.get(action="token.narrowed", target_id=str(token.pk))
    assert entry.actor == "agent:acme-agent"
    assert entry.data["end_user"] == "u-17" and entry.data["parent"] == token.parent_id
    assert body["token"] not in str(entry.data)
    # Not stored under its Idempotency-Key either: the reply held the secret.
    assert not IdempotentRequest.objects.filter(key="mint-1").exists()


@pytest.mark.django_db
def test_a_narrowed_token_cannot_mint(world: World) -> None:
    narrowed = for_user(world.agent, "u-17")
    response = narrowed.post(NARROW, {"end_user": "u-18"})
    assert (response.status_code, response.json()["code"]) == (403, "narrowed_token_cannot_mint")
    assert not ApiToken.objects.filter(end_user="u-18").exists()


@pytest.mark.django_db
def test_a_reader_token_and_a_person_cannot_mint(world: World) -> None:
    assert world.reader.post(NARROW, {"end_user": "u-1"}).json()["code"] == "token_read_only"
    assert world.operator.post(NARROW, {"end_user": "u-1"}).json()["code"] == "agent_token_required"


@pytest.mark.django_db
@pytest.mark.parametrize("expires_in", [0, 3601])
def test_the_expiry_is_bounded(world: World, expires_in: int) -> None:
    response = world.agent.post(NARROW, {"end_user": "u-1", "expires_in": expires_in})
    assert response.status_code == 400


@pytest.mark.django_db
def test_an_expired_narrowed_token_is_401(world: World) -> None:
    narrowed = for_user(world.agent, "u-17")
    assert narrowed.get("/api/v1/sessions/").status_code == 200
    ApiToken.objects.filter(end_user="u-17").update(expires_at=timezone.now() - dt.timedelta(hours=1))
    response = narrowed.get("/api/v1/sessions/")
    assert (response.status_code, response.json()["code"]) == (401, "authentication_failed")


@pytest.mark.django_db
@pytest.mark.parametrize("how", ["revoked", "expired"])
def test_a_narrowed_token_is_refused_once_its_parent_is_not_live(world: World, how: str) -> None:
    narrowed = for_user(world.agent, "u-17")
    session = _session_of(world.project, "u-17")
    path = f"/api/v1/sessions/{session.pk}/items/"
    assert narrowed.post(path, {"items": [{"role": "user", "content": "hi"}]}).status_code == 201
    field = "revoked_at" if how == "revoked" else "expires_at"
    past = timezone.now() - dt.timedelta(hours=1)  # the test's transaction began before: its now() is earlier
    ApiToken.objects.filter(name="acme-agent", parent__isnull=True).update(**{field: past})
    response = narrowed.post(path, {"items": [{"role": "user", "content": "again"}]})
    assert response.status_code == 401
    assert SessionItem.objects.filter(session=session).count() == 1


@pytest.mark.django_db
def test_revoking_a_token_revokes_the_tokens_it_minted(world: World) -> None:
    from harness.tokens import api_tokens_revoke

    for_user(world.agent, "u-17")
    api_tokens_revoke(ApiToken.objects.filter(name="acme-agent", parent__isnull=True))
    assert ApiToken.objects.filter(end_user="u-17", revoked_at__isnull=False).count() == 1


@pytest.mark.django_db
def test_a_token_is_narrowed_only_to_a_session_of_that_user_and_to_an_identity_under_its_own(world: World) -> None:
    mine, theirs = _session_of(world.project, "u-1"), _session_of(world.project, "u-2")
    assert world.agent.post(NARROW, {"end_user": "u-1", "session": theirs.pk}).json()["code"] == (
        "session_not_of_end_user")
    assert world.agent.post(NARROW, {"end_user": "u-1", "session": mine.pk}).status_code == 201
    assert world.agent.post(NARROW, {"end_user": "u-1", "agent": "other-agent"}).json()["code"] == (
        "agent_scope_not_yours")
    response = world.agent.post(NARROW, {"end_user": "u-1", "agent": "acme-agent/planner"})
    assert (response.status_code, response.json()["agent"]) == (201, "acme-agent/planner")


# --- sessions ----------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_narrowed_token_sees_and_opens_only_its_users_sessions(world: World) -> None:
    _session_of(world.project, "u-2")
    narrowed = for_user(world.agent, "u-1")
    created = narrowed.post("/api/v1/sessions/", {"ref": "chat-1"})
    assert created.status_code == 201 and created.json()["end_user"] == "u-1"
    listed = narrowed.get("/api/v1/sessions/").json()["results"]
    assert [row["id"] for row in listed] == [created.json()["id"]]
    response = narrowed.post("/api/v1/sessions/", {"end_user": "u-2"})
    assert (response.status_code, response.json()["code"]) == (403, "end_user_scope")
    # The project's agent token tags a session for a user itself, and filters by it.
    tagged = world.agent.post("/api/v1/sessions/", {"end_user": "u-3"}).json()
    assert tagged["end_user"] == "u-3"
    assert [r["id"] for r in world.agent.get("/api/v1/sessions/?end_user=u-3").json()["results"]] == [tagged["id"]]


@pytest.mark.django_db
def test_a_taken_ref_tells_a_narrowed_token_the_id_only_of_its_own_users_session(world: World) -> None:
    others = _session_of(world.project, "u-2", ref="shared-ref")
    narrowed = for_user(world.agent, "u-1")
    response = narrowed.post("/api/v1/sessions/", {"ref": "shared-ref"}, HTTP_IDEMPOTENCY_KEY="open-1")
    body = response.json()
    assert (response.status_code, body["code"]) == (409, "already_exists")
    assert "id" not in body and str(others.pk) not in body["detail"]
    own = narrowed.post("/api/v1/sessions/", {"ref": "mine"}).json()
    again = narrowed.post("/api/v1/sessions/", {"ref": "mine"}).json()
    assert (again["code"], again["id"]) == ("already_exists", own["id"])


@pytest.mark.django_db
def test_a_token_narrowed_to_one_session_reaches_no_other_of_its_user(world: World) -> None:
    one, other = _session_of(world.project, "u-1", "a"), _session_of(world.project, "u-1", "b")
    narrowed = for_user(world.agent, "u-1", session=one.pk)
    assert narrowed.get(f"/api/v1/sessions/{one.pk}/").status_code == 200
    assert narrowed.get(f"/api/v1/sessions/{other.pk}/").status_code == 404
    assert narrowed.post("/api/v1/sessions/", {}).json()["code"] == "narrowed_token_scope"


@pytest.mark.django_db
def test_the_hot_calls_hand_a_narrowed_token_to_the_confining_view(world: World) -> None:
    """The plain path (harness.http.plain) answers no narrowed token itself: the append and the newest-items read
    answer its own session and 404 another user's, through either door."""
    mine, theirs = _session_of(world.project, "u-1"), _session_of(world.project, "u-2")
    narrowed = for_user(world.agent, "u-1")
    body = {"items": [{"role": "user", "content": "hello"}]}
    assert narrowed.post(f"/api/v1/sessions/{mine.pk}/items/", body).status_code == 201
    assert narrowed.get(f"/api/v1/sessions/{mine.pk}/items/latest/").json()["last_seq"] == 1
    for _ in range(2):  # the second time the parent's token is one the process knows
        assert narrowed.post(f"/api/v1/sessions/{theirs.pk}/items/", body).status_code == 404
        assert narrowed.get(f"/api/v1/sessions/{theirs.pk}/items/latest/").status_code == 404
        assert world.agent.get(f"/api/v1/sessions/{theirs.pk}/items/latest/").status_code == 200
    assert SessionItem.objects.filter(session=theirs).count() == 0


# --- memory ------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_memory_is_confined_to_the_users_scopes(world: World) -> None:
    mine, theirs = _session_of(world.project, "u-1"), _session_of(world.project, "u-2")
    own = _record(world.project, "user", "u-1", "likes tea")
    other = _record(world.project, "user", "u-2", "likes coffee")
    shared = _record(world.project, "project", "", "house style")
    own_session = _record(world.project, "session", str(mine.pk), "chapter one")
    other_session = _record(world.project, "session", str(theirs.pk), "chapter two")
    narrowed = for_user(world.agent, "u-1")
    listed = {r["id"] for r in narrowed.get("/api/v1/memory/records/").json()["results"]}
    assert listed == {own.pk, shared.pk, own_session.pk}
    assert narrowed.get(f"/api/v1/memory/records/{other.pk}/").status_code == 404
    assert narrowed.get(f"/api/v1/memory/records/{other_session.pk}/").status_code == 404
    assert narrowed.get("/api/v1/memory/retrieve/?scope=user&scope_key=u-2").json()["code"] == "end_user_scope"
    assert narrowed.get(f"/api/v1/memory/retrieve/?scope=session&scope_key={theirs.pk}").json()["code"] == (
        "end_user_scope")
    found = narrowed.get("/api/v1/memory/retrieve/?scope=user").json()  # the key is its own
    assert [r["id"] for r in found] == [own.pk]
    wrote = narrowed.post("/api/v1/memory/records/", {"scope": "user", "content": "takes milk",
                                                      "source_session_id": mine.pk})
    assert wrote.status_code == 201 and wrote.json()["record"]["scope_key"] == "u-1"
    refused = narrowed.post("/api/v1/memory/records/", {"scope": "user", "scope_key": "u-2", "content": "x",
                                                        "source_session_id": mine.pk})
    assert (refused.status_code, refused.json()["code"]) == (403, "end_user_scope")
    assert not MemoryRecord.objects.filter(scope_key="u-2", content="x").exists()


@pytest.mark.django_db
def test_a_narrowed_token_names_only_its_users_sessions_and_runs_as_provenance(world: World) -> None:
    theirs = _session_of(world.project, "u-2")
    their_run = factories.make_run(world.project, theirs)
    narrowed = for_user(world.agent, "u-1")
    for source in ({"source_session_id": theirs.pk}, {"source_run_id": their_run.pk}):
        response = narrowed.post("/api/v1/memory/records/", {"scope": "user", "content": "x", **source})
        assert (response.status_code, response.json()["code"]) == (400, "invalid_source"), response.content
    assert not MemoryRecord.objects.filter(scope_key="u-1").exists()


@pytest.mark.django_db
def test_the_project_scope_is_read_only_to_a_narrowed_token_unless_its_policy_lets_it_write(world: World) -> None:
    session = _session_of(world.project, "u-1")
    narrowed = for_user(world.agent, "u-1")
    body = {"scope": "project", "content": "a shared fact", "source_session_id": session.pk}
    response = narrowed.post("/api/v1/memory/records/", body)
    assert (response.status_code, response.json()["code"]) == (403, "scope_read_only")
    MemoryWritePolicy.objects.create(project=world.project, scope="project", end_user_tokens_write=True)
    assert narrowed.post("/api/v1/memory/records/", body).status_code == 201


@pytest.mark.django_db
def test_a_narrowed_token_builds_context_only_for_its_users_runs(world: World) -> None:
    theirs = _session_of(world.project, "u-2")
    run = factories.make_run(world.project, theirs)
    narrowed = for_user(world.agent, "u-1")
    assert narrowed.post("/api/v1/memory/context/", {"run_id": run.pk}).status_code == 404
    mine = _session_of(world.project, "u-1")
    own_run = factories.make_run(world.project, mine)
    assert narrowed.post("/api/v1/memory/context/", {"run_id": own_run.pk}).status_code == 201


@pytest.mark.django_db
def test_a_users_memory_is_projected_into_the_context_of_their_sessions(world: World) -> None:
    from memory_app.context import context_project

    session = _session_of(world.project, "u-1")
    Session.objects.filter(pk=session.pk).update(memory_policy="external")
    run = factories.make_run(world.project, session)
    own = _record(world.project, "user", "u-1", "the reader prefers lamps")
    _record(world.project, "user", "u-2", "the other reader prefers lamps")
    snapshot = context_project(project=world.project, run_id=run.pk, query="lamps")
    assert snapshot.memory_ids == [own.pk]


# --- the agent scope is the token's identity ----------------------------------------------------------------


@pytest.mark.django_db
def test_an_agent_tokens_agent_scope_is_its_own_identity(world: World) -> None:
    other = _record(world.project, "agent", "someone-else", "their notes")
    run_id = world.run.pk
    wrote = world.agent.post("/api/v1/memory/records/", {"scope": "agent", "content": "my notes",
                                                         "source_run_id": run_id})
    assert wrote.status_code == 201 and wrote.json()["record"]["scope_key"] == "acme-agent"
    refused = world.agent.post("/api/v1/memory/records/", {"scope": "agent", "scope_key": "someone-else",
                                                           "content": "forged", "source_run_id": run_id})
    assert (refused.status_code, refused.json()["code"]) == (403, "agent_scope_not_yours")
    read = world.agent.get("/api/v1/memory/retrieve/?scope=agent&scope_key=someone-else")
    assert (read.status_code, read.json()["code"]) == (403, "agent_scope_not_yours")
    assert world.agent.get(f"/api/v1/memory/records/{other.pk}/").status_code == 404
    assert other.pk not in {r["id"] for r in world.agent.get("/api/v1/memory/records/").json()["results"]}
    # A person (an operator) still reads every agent's scope.
    assert world.operator.get(f"/api/v1/memory/records/{other.pk}/").status_code == 200


@pytest.mark.django_db
def test_an_agent_identity_other_than_the_name_keys_the_agent_scope(world: World) -> None:
    from harness.tokens import api_token_create

    _, secret = api_token_create(project=world.project, name="worker-7", role="agent", agent_identity="planner")
    response = ApiClient(secret).post("/api/v1/memory/records/", {"scope": "agent", "content": "plan",
                                                                  "source_run_id": world.run.pk})
    assert response.json()["record"]["scope_key"] == "planner"


# --- every object path of another user: 404 (or closed to narrowed tokens) ----------------------------------


def _memory_endpoints(w: World) -> list[Endpoint]:
    """The memory API's operations on one object, on objects of end user `u-owner`."""
    record = w.__dict__.get("owner_record") or _record(w.project, "user", "u-owner", "owner's fact")
    w.__dict__["owner_record"] = record
    snapshot = w.__dict__.get("owner_snapshot")
    if snapshot is None:
        from memory_app.context import context_project

        snapshot = w.__dict__["owner_snapshot"] = context_project(project=w.project, run_id=w.run.pk)
    r, c, v = record.pk, snapshot.pk, record.version
    return [
        Endpoint("memory_records_read", "GET", "/api/v1/memory/records/{id}/",
                 lambda _: f"/api/v1/memory/records/{r}/"),
        Endpoint("memory_records_chain", "GET", "/api/v1/memory/records/{id}/chain/",
                 lambda _: f"/api/v1/memory/records/{r}/chain/"),
        Endpoint("memory_records_supersede", "POST", "/api/v1/memory/records/{id}/supersede/",
                 lambda _: f"/api/v1/memory/records/{r}/supersede/",
                 lambda _: {"content": "changed", "expected_version": v}),
        Endpoint("memory_records_review", "POST", "/api/v1/memory/records/{id}/review/",
                 lambda _: f"/api/v1/memory/records/{r}/review/",
                 lambda _: {"decision": "approve", "expected_version": v}),
        Endpoint("memory_records_expire", "POST", "/api/v1/memory/records/{id}/expire/",
                 lambda _: f"/api/v1/memory/records/{r}/expire/", lambda _: {"expected_version": v}),
        Endpoint("memory_records_delete", "POST", "/api/v1/memory/records/{id}/delete/",
                 lambda _: f"/api/v1/memory/records/{r}/delete/", lambda _: {"expected_version": v, "reason": "r"}),
        Endpoint("memory_records_erase", "POST", "/api/v1/memory/records/{id}/erase/",
                 lambda _: f"/api/v1/memory/records/{r}/erase/", lambda _: {}),
        Endpoint("memory_context_read", "GET", "/api/v1/memory/context/{id}/",
                 lambda _: f"/api/v1/memory/context/{c}/"),
    ]


# The operations a narrowed token may call (their views declare `narrowed_token_allowed`): on another user's
# object they answer 404. The memory operators' operations refuse every agent token first (403). The run and
# approval doors a LangGraph graph serving one user calls (HarnessSaver(end_user=...): its run's read, usage and
# approval requests, the approval's read) are confined too; every other run, checkpoint, effect, task and handoff
# door stays closed (tests/api/test_narrowed_threads.py lists every door a narrowed token may call).
_CONFINED = {"sessions_read", "sessions_transition", "session_items_list", "session_items_append",
             "session_items_latest", "session_items_pop", "session_items_clear", "session_items_trim",
             "session_items_compact", "memory_records_read", "memory_records_chain", "memory_records_supersede",
             "memory_context_read", "runs_read", "runs_usage_report", "approvals_request", "approvals_read"}
_OPERATORS_ONLY = {"memory_records_review", "memory_records_expire", "memory_records_delete", "memory_records_erase"}


@pytest.mark.django_db
def test_every_object_path_is_tested_with_another_users_narrowed_token(world: World) -> None:
    """The schema's operations that take an object id are exactly those the test below calls: a new one fails
    here until it is classified."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    with_id = {(method.upper(), path) for path, ops in schema["paths"].items()
               if path.startswith("/api/v1/") and "{id}" in path for method in ops
               if method in ("get", "post", "put", "patch", "delete")}
    tested = {(e.method, e.template) for e in [*ENDPOINTS, *_memory_endpoints(world)] if "{id}" in e.template}
    assert with_id == tested
    names = {e.operation for e in [*ENDPOINTS, *_memory_endpoints(world)] if "{id}" in e.template}
    assert names >= _CONFINED | _OPERATORS_ONLY


@pytest.mark.django_db
def test_a_narrowed_token_gets_404_on_every_object_path_of_another_user(world: World) -> None:
    """Each object of the world belongs to end user `u-owner` (its session is tagged with it); a token narrowed to
    `u-other` finds none of them: 404 where the operation admits narrowed tokens, 403 where it is closed to them
    (so no object is ever looked up for it), and nothing changed."""
    from runs_app.models import ApprovalRequest, Run
    from tests.api.test_access import _agent_approved, _call

    Session.objects.filter(pk=world.session.pk).update(end_user="u-owner")
    intruder = for_user(world.agent, "u-other")
    _agent_approved(world)  # the outcome path's approval moves its run: made before the snapshot, as the world's own
    before_runs = list(Run.objects.order_by("pk").values_list("pk", "status", "version", "tokens_used"))
    before_approvals = list(ApprovalRequest.objects.values_list("pk", flat=True))
    before_items = SessionItem.objects.count()
    before_records = list(MemoryRecord.objects.order_by("pk").values_list("pk", "status", "version"))
    for endpoint in [*ENDPOINTS, *_memory_endpoints(world)]:
        if "{id}" not in endpoint.template:
            continue
        response = _call(intruder, endpoint, world)
        got = (response.status_code, response.json()["code"])
        if endpoint.operation in _CONFINED:
            assert got == (404, "not_found"), (endpoint.operation, response.content)
            assert set(response.json()) == {"code", "detail"}
        elif endpoint.operation in _OPERATORS_ONLY:
            assert got == (403, "operator_required"), (endpoint.operation, response.content)
        else:
            expected = "agent_cannot_decide" if endpoint.kind == DECIDE else "narrowed_token_scope"
            assert got == (403, expected), (endpoint.operation, response.content)
    assert SessionItem.objects.count() == before_items
    # (The walk's paths make the handoffs they need: runs and approvals of the world's own, not the intruder's.)
    runs = Run.objects.filter(pk__in=[pk for pk, *_ in before_runs]).order_by("pk")
    assert list(runs.values_list("pk", "status", "version", "tokens_used")) == before_runs
    assert not ApprovalRequest.objects.exclude(pk__in=before_approvals).filter(run__in=runs).exists()
    records = list(MemoryRecord.objects.order_by("pk").values_list("pk", "status", "version"))
    assert [r for r in records if r[0] in {p for p, _, _ in before_records}] == before_records


# --- a thousand random calls ---------------------------------------------------------------------------------

USERS = [f"u-{n}" for n in range(5)]


@pytest.mark.django_db
@pytest.mark.slow  # ~31 s in a full run: started first (tests/parallel.py)
def test_a_thousand_random_calls_never_see_or_touch_another_users_record_or_session(world: World) -> None:
    """Seeded: five end users, two sessions and a few records each (user and session scopes), the shared project
    scope and other agents' scopes; each step one user's narrowed token reads or writes a random target, its own
    or another's, through the API. Another's is refused or absent every time, and what it reads is its own."""
    rng = random.Random(30)
    project = world.project
    sessions = {u: [_session_of(project, u, f"{u}-{i}") for i in range(2)] for u in USERS}
    owner_of_session = {s.pk: u for u, ss in sessions.items() for s in ss}
    for u in USERS:
        _record(project, "user", u, f"{u} fact zero")
        _record(project, "session", str(sessions[u][0].pk), f"{u} session fact")
    _record(project, "project", "", "shared fact")
    _record(project, "agent", "another-agent", "another agent's fact")
    clients = {u: for_user(world.agent, u) for u in USERS}

    def visible_to(u: str, row: dict[str, Any]) -> bool:
        scope, key = row["scope"], row["scope_key"]
        return ((scope == "user" and key == u) or scope == "project" or (scope == "agent" and key == "acme-agent")
                or (scope == "session" and owner_of_session.get(int(key)) == u))

    items_per_session = dict.fromkeys(owner_of_session, 0)
    counts = {"own": 0, "other": 0}
    for step in range(1000):
        u = rng.choice(USERS)
        target = rng.choice(USERS)
        own = target == u
        counts["own" if own else "other"] += 1
        client = clients[u]
        session = rng.choice(sessions[target])
        op = rng.randrange(8)
        if op == 0:  # retrieve a user scope
            response = client.get(f"/api/v1/memory/retrieve/?scope=user&scope_key={target}")
            if own:
                assert response.status_code == 200 and all(r["scope_key"] == u for r in response.json())
            else:
                assert (response.status_code, response.json()["code"]) == (403, "end_user_scope")
        elif op == 1:  # list memory
            rows = client.get("/api/v1/memory/records/?limit=200").json()["results"]
            assert rows and all(visible_to(u, row) for row in rows), step
        elif op == 2:  # read a random record
            record = MemoryRecord.objects.order_by("?").values("id", "scope", "scope_key").first()
            assert record is not None
            response = client.get(f"/api/v1/memory/records/{record['id']}/")
            assert response.status_code == (200 if visible_to(u, record) else 404), (step, record)
        elif op == 3:  # write a user-scope fact
            response = client.post("/api/v1/memory/records/", {
                "scope": "user", "scope_key": target, "content": f"{target} fact {step}",
                "source_session_id": sessions[u][0].pk})
            assert response.status_code == (201 if own else 403), (step, response.content)
        elif op == 4:  # write a session-scope fact
            response = client.post("/api/v1/memory/records/", {
                "scope": "session", "scope_key": str(session.pk), "content": f"session fact {step}",
                "source_session_id": sessions[u][0].pk})
            assert response.status_code == (201 if own else 403), (step, response.content)
        elif op == 5:  # append to a session
            response = client.post(f"/api/v1/sessions/{session.pk}/items/",
                                   {"items": [{"role": "user", "content": f"step {step}"}]})
            assert response.status_code == (201 if own else 404), (step, response.content)
            if own:
                items_per_session[session.pk] += 1
        elif op == 6:  # read a session's newest items
            response = client.get(f"/api/v1/sessions/{session.pk}/items/latest/")
            assert response.status_code == (200 if own else 404), step
        else:  # list sessions
            rows = client.get("/api/v1/sessions/?limit=200").json()["results"]
            assert {row["id"] for row in rows} == {s.pk for s in sessions[u]}, step
    assert min(counts.values()) > 100  # both kinds of step were tried many times
    for pk, n in items_per_session.items():  # no append landed anywhere but where its user's token put it
        assert SessionItem.objects.filter(session_id=pk).count() == n
    for row in MemoryRecord.objects.filter(scope="user").values("scope_key", "content"):
        owner = row["scope_key"]
        assert row["content"].startswith(owner), row  # every user fact was written under its own user's key
