"""The newest-N read (PostgreSQL writes its JSON), and removing items (pop, clear) through the API: tenant
scope, the seq-conflict guard, terminated sessions, seqs never reused, the audit, the Idempotency-Key replay."""

from typing import Any

import pytest
from django.test import Client

from harness.models import AuditEntry, Project
from sessions_app.api import ItemOutSerializer
from sessions_app.models import SessionItem
from sessions_app.services import session_items_append, session_transition
from tests.api.conftest import World, build_world

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def world(project: Project) -> World:
    return build_world(project, "acme")


@pytest.fixture
def other_world(other_project: Project) -> World:
    return build_world(other_project, "globex")


def _append(world: World, *contents: Any, role: str = "user") -> None:
    session_items_append(project=world.project, session_id=world.session.pk,
                         items=[{"role": role, "content": c} for c in contents])


def _url(world: World, tail: str) -> str:
    return f"/api/v1/sessions/{world.session.pk}/items/{tail}"


def _seqs(world: World) -> list[int]:
    return list(SessionItem.objects.filter(session=world.session).order_by("seq").values_list("seq", flat=True))


# --- latest ---------------------------------------------------------------------------------------------


def test_latest_is_the_newest_n_oldest_first_as_the_serializer_renders_them(world: World) -> None:
    contents = ['a "quoted" back\\slash\ttab\nnewline', 0, -1.5, True, [], {}, {"b": 1, "a": [None]},
                "\u2028 ünïcode — ✓", 2**62, None]
    _append(world, *contents, role="assistant")

    response = world.agent.get(_url(world, "latest/?limit=4"))

    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    stored = SessionItem.objects.filter(session=world.session).order_by("seq")
    assert response.json() == {"session": world.session.pk, "last_seq": 10,
                               "items": [dict(ItemOutSerializer(i).data) for i in stored][-4:]}
    # The default is 50, and a reviewer's personal token reads it too.
    everything = world.reviewer.get(_url(world, "latest/")).json()
    assert [i["content"] for i in everything["items"]] == contents


def test_latest_of_an_empty_session_and_the_limits(world: World) -> None:
    assert world.agent.get(_url(world, "latest/")).json() == {"session": world.session.pk, "last_seq": 0,
                                                              "items": []}
    for bad in ("0", "501", "-1", "x", "1.5", "99999"):
        response = world.agent.get(_url(world, f"latest/?limit={bad}"))
        assert response.status_code == 400 and response.json()["code"] == "invalid_limit", bad
    assert world.agent.get(_url(world, "latest/?limit=500")).status_code == 200


def test_latest_pop_and_clear_of_another_projects_session_are_404(world: World, other_world: World) -> None:
    _append(world, "secret")
    for response in (
        other_world.agent.get(_url(world, "latest/")),
        other_world.reviewer.get(_url(world, "latest/")),
        other_world.agent.post(_url(world, "pop/")),
        other_world.agent.post(_url(world, "clear/")),
        world.agent.get("/api/v1/sessions/999999999/items/latest/"),
    ):
        assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert _seqs(world) == [1]


# --- pop and clear ----------------------------------------------------------------------------------------


def test_pop_returns_the_newest_item_and_its_seq_is_never_reused(world: World) -> None:
    _append(world, "one", "two", "three")

    popped = world.agent.post(_url(world, "pop/"))

    assert popped.status_code == 200
    body = popped.json()
    assert body["last_seq"] == 3 and body["item"]["seq"] == 3 and body["item"]["content"] == "three"
    assert set(body["item"]) == {"id", "session", "seq", "role", "content", "run", "created_at"}
    assert _seqs(world) == [1, 2]
    appended = world.agent.post(_url(world, ""), {"items": [{"role": "user", "content": "four"}]}).json()
    assert appended["items"][0]["seq"] == 4  # 3 stays a gap
    latest = world.agent.get(_url(world, "latest/")).json()
    assert [i["seq"] for i in latest["items"]] == [1, 2, 4] and latest["last_seq"] == 4
    entry = AuditEntry.objects.get(action="session.item_popped")
    assert (entry.actor, entry.target_type, entry.target_id) == ("agent:acme-agent", "session", str(world.session.pk))
    assert entry.data["seq"] == 3 and entry.project_id == world.project.pk


def test_pop_of_an_empty_session_is_null_and_audits_nothing(world: World) -> None:
    response = world.agent.post(_url(world, "pop/"))
    assert response.status_code == 200 and response.json() == {"item": None, "last_seq": 0}
    assert not AuditEntry.objects.filter(action="session.item_popped").exists()


def test_pop_with_a_stale_expected_last_seq_is_a_conflict(world: World) -> None:
    _append(world, "one", "two")
    response = world.agent.post(_url(world, "pop/"), {"expected_last_seq": 1})
    assert response.status_code == 409
    assert response.json()["code"] == "seq_conflict" and response.json()["last_seq"] == 2
    assert _seqs(world) == [1, 2]
    assert world.agent.post(_url(world, "pop/"), {"expected_last_seq": 2}).json()["item"]["seq"] == 2


def test_clear_removes_every_item_and_the_numbering_goes_on(world: World) -> None:
    _append(world, "a", "b", "c")
    response = world.agent.post(_url(world, "clear/"))
    assert response.status_code == 200 and response.json() == {"removed": 3, "last_seq": 3}
    assert _seqs(world) == []
    entry = AuditEntry.objects.get(action="session.items_cleared")
    assert entry.data == {"removed": 3, "first_seq": 1, "last_seq": 3} and entry.actor == "agent:acme-agent"
    assert world.agent.post(_url(world, "clear/")).json() == {"removed": 0, "last_seq": 3}
    _append(world, "d")
    assert _seqs(world) == [4]


def test_a_terminated_session_keeps_its_items(world: World) -> None:
    _append(world, "kept")
    for to in ("running", "terminated"):
        session_transition(project=world.project, session_id=world.session.pk, to=to, expected_version=None)
    for tail in ("pop/", "clear/"):
        response = world.agent.post(_url(world, tail))
        assert response.status_code == 409 and response.json()["code"] == "session_terminated"
    assert _seqs(world) == [1]


def test_readers_and_people_cannot_remove_items(world: World) -> None:
    _append(world, "kept")
    assert world.reader.post(_url(world, "pop/")).status_code == 403
    assert world.reviewer.post(_url(world, "clear/")).status_code == 403
    assert _seqs(world) == [1]


def test_a_retried_pop_replays_the_first_answer_instead_of_popping_again(world: World) -> None:
    _append(world, "one", "two")
    first = world.agent.post(_url(world, "pop/"), HTTP_IDEMPOTENCY_KEY="pop-1")
    again = world.agent.post(_url(world, "pop/"), HTTP_IDEMPOTENCY_KEY="pop-1")
    assert again["Idempotent-Replayed"] == "true" and again.json() == first.json()
    assert _seqs(world) == [1]


def test_sessions_can_be_found_by_ref(world: World, other_world: World) -> None:
    found = world.agent.get(f"/api/v1/sessions/?ref={world.session.ref}").json()["results"]
    assert [s["id"] for s in found] == [world.session.pk]
    assert world.agent.get(f"/api/v1/sessions/?ref={other_world.session.ref}").json()["results"] == []


def test_the_schema_documents_the_new_operations() -> None:
    schema = Client().get("/api/schema/?format=json").json()
    latest = schema["paths"]["/api/v1/sessions/{id}/items/latest/"]["get"]
    assert latest["operationId"] == "session_items_latest"
    assert [p["name"] for p in latest["parameters"] if p["in"] == "query"] == ["limit"]
    ok = latest["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert set(schema["components"]["schemas"][ok]["properties"]) == {"session", "last_seq", "items"}
    assert schema["paths"]["/api/v1/sessions/{id}/items/pop/"]["post"]["operationId"] == "session_items_pop"
    assert schema["paths"]["/api/v1/sessions/{id}/items/clear/"]["post"]["operationId"] == "session_items_clear"
    refs = [p["name"] for p in schema["paths"]["/api/v1/sessions/"]["get"]["parameters"]]
    assert "ref" in refs



def test_latest_renders_times_as_drf_does_with_and_without_microseconds(world: World) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        for seq, at in ((1, "2026-01-02 03:04:05+00"), (2, "2026-01-02 03:04:05.000120+00"),
                        (3, "2026-07-08 23:59:59.5+02")):
            cursor.execute("INSERT INTO sessions_app_sessionitem (session_id, seq, role, content, created_at) "
                           "VALUES (%s, %s, 'user', '1', %s)", [world.session.pk, seq, at])
    stored = SessionItem.objects.filter(session=world.session).order_by("seq")
    expected = [ItemOutSerializer(i).data["created_at"] for i in stored]
    assert expected == ["2026-01-02T03:04:05Z", "2026-01-02T03:04:05.000120Z", "2026-07-08T21:59:59.500000Z"]
    got = world.agent.get(_url(world, "latest/")).json()["items"]
    assert [i["created_at"] for i in got] == expected
