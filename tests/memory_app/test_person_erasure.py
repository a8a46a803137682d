"""Erasure of a person (issue 20, part 4), end to end: an agent writes a person's words through the API (items,
memory, a context projection, each with an Idempotency-Key), the person decides an approval in the console, an
admin previews and erases them on the console page; then no table holds their words, no API read, console page,
retrieval, projection or replay returns them, other people and projects are untouched, the run still resumes
and the audit chain still verifies."""

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from harness.actors import Actor
from harness.models import AuditEntry, Project
from runs_app.models import ApprovalRequest, Run, RunStatus
from runs_app.services import approval_decide, approval_request_create, run_transition
from sessions_app.models import SessionItem
from tests import factories
from worker.pipeline import resume_run_by_id

pytestmark = pytest.mark.django_db

MARK = "ZEPHYR-4417"  # alice's words in acme
BOB = "BOBMARK-5521"  # bob's words in acme
ELSEWHERE = "ZEPHYR-OTHER-9"  # alice's words in another project


@pytest.fixture(autouse=True)
def _no_resume_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("worker.tasks.enqueue_resume", lambda run_id: None)


@dataclass
class World:
    project: Project
    agent: APIClient
    session_id: int
    run: Run
    item_body: dict[str, Any]
    memory_body: dict[str, Any]
    admin: Any


def _agent(project: Project) -> APIClient:
    _, secret = factories.make_agent_token(project, name=f"agent-{project.slug}")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def _person_in(project: Project, agent: APIClient, user: str, words: str, key: str) -> tuple[int, int, dict, dict]:
    """A session of `user` with one item they wrote and one the assistant wrote, a user-scope memory record,
    and a context projection that handed both to the model: all through the API with Idempotency-Keys."""
    session = agent.post("/api/v1/sessions/", {"role": "writer", "memory_policy": "session",
                                               "metadata": {"user": user}}, format="json").json()
    run = agent.post("/api/v1/runs/", {"session": session["id"]}, format="json").json()
    item_body = {"items": [{"role": "user", "content": {"text": f"my code is {words}"}, "run": run["id"]},
                           {"role": "assistant", "content": {"text": "noted"}, "run": run["id"]}]}
    appended = agent.post(f"/api/v1/sessions/{session['id']}/items/", item_body, format="json",
                          HTTP_IDEMPOTENCY_KEY=f"{key}-items")
    assert appended.status_code == 201 and words in appended.content.decode()
    memory_body = {"scope": "user", "scope_key": user, "content": f"{user}'s door code is {words}",
                   "source_session_id": session["id"], "source_item_seq": 1, "provenance_kind": "told"}
    written = agent.post("/api/v1/memory/records/", memory_body, format="json", HTTP_IDEMPOTENCY_KEY=f"{key}-mem")
    assert written.status_code == 201, written.content
    context = agent.post("/api/v1/memory/context/", {"run_id": run["id"], "query": "door code"}, format="json",
                         HTTP_IDEMPOTENCY_KEY=f"{key}-ctx")
    assert context.status_code == 201 and words in context.content.decode()
    return session["id"], run["id"], item_body, memory_body


@pytest.fixture
def world(project: Project, other_project: Project) -> World:
    agent = _agent(project)
    session_id, run_id, item_body, memory_body = _person_in(project, agent, "alice", MARK, "a")
    _person_in(project, agent, "bob", BOB, "b")
    _person_in(other_project, _agent(other_project), "alice", ELSEWHERE, "o")
    alice = factories.make_user("alice", role="reviewer", projects=[project, other_project])
    admin = factories.make_user("ada", role="admin", projects=[project])
    run_transition(project=project, run_id=run_id, to=RunStatus.RUNNING, expected_version=None)
    approval = approval_request_create(project=project, run_id=run_id, tool="send_invoice", arguments={"n": 1},
                                       idempotency_key=f"inv-{run_id}", actor=Actor.for_agent("writer"),
                                       executor="agent")
    approval_decide(project=project, approval_id=approval.pk, actor=Actor.for_user(alice), decision="approve",
                    reason="fine by me")
    return World(project, agent, session_id, Run.objects.get(pk=run_id), item_body, memory_body, admin)


def _rows_holding(text: str) -> dict[str, int]:
    """Every table of the schema whose rows, as text, hold `text`: the whole database, not the stores we know."""
    found: dict[str, int] = {}
    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        for (table,) in cursor.fetchall():
            sql = f'SELECT count(*) FROM "{table}" AS t WHERE t::text LIKE %s'  # noqa: S608 - the catalog's names
            cursor.execute(sql, [f"%{text}%"])
            count = cursor.fetchone()[0]
            if count:
                found[table] = count
    return found


def _erase_on_the_console(world: World) -> dict[str, Any]:
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.admin)
    url = reverse("memory:person_erase")
    preview = client.get(url, {"project": world.project.pk, "subject": "alice"})
    page = preview.content.decode()
    assert preview.status_code == 200 and 'id="erase-form"' in page and MARK not in page
    assert '<tr data-store="session_items"><td>session_items</td><td>1</td><td>1</td>' in page
    token = page.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    form = {"project": world.project.pk, "subject": "alice", "reason": "GDPR request 17",
            "csrfmiddlewaretoken": token}
    assert client.post(url, {**form, "csrfmiddlewaretoken": ""}).status_code == 403  # CSRF
    assert client.post(url, form).status_code == 400  # the box is not ticked: nothing erased
    assert _rows_holding(MARK)
    done = client.post(url, {**form, "confirm": "on"})
    assert done.status_code == 200 and "Erased" in done.content.decode()
    entry = AuditEntry.objects.get(project=world.project, action="person.erased")
    assert entry.actor == "user:ada" and entry.data["reason"] == "GDPR request 17"
    assert entry.data["subject_sha256"] == hashlib.sha256(b"alice").hexdigest()
    return entry.data["counts"]


def test_erasing_a_person_leaves_none_of_their_words_and_everything_else_working(world: World) -> None:
    original = SessionItem.objects.get(session_id=world.session_id, seq=1)
    with connection.cursor() as cursor:
        cursor.execute("SELECT content::jsonb::text FROM sessions_app_sessionitem WHERE id = %s", [original.pk])
        original_text = cursor.fetchone()[0]

    counts = _erase_on_the_console(world)

    assert counts == {
        "memory": {"erased": 1, "kept": 0}, "session_items": {"erased": 1, "kept": 1},
        "context_snapshots": {"erased": 1, "kept": 0}, "idempotent_replies": {"erased": 2, "kept": 0},
        "approvals": {"erased": 0, "kept": 1}, "audit_entries": {"erased": 0, "kept": 1},
        "checkpoints": {"erased": 0, "kept": 1}, "run_events": {"erased": 0, "kept": counts["run_events"]["kept"]},
        "handoffs": {"erased": 0, "kept": 0},
    }
    assert _rows_holding(MARK) == {}
    assert set(_rows_holding(BOB)) == set(_rows_holding(ELSEWHERE)) >= {"sessions_app_sessionitem",
                                                                        "memory_app_memoryrecord",
                                                                        "memory_app_contextsnapshot",
                                                                        "harness_idempotentrequest"}

    # The item keeps its place: its seq, role and run, its content the hash of what was there.
    tombstone = SessionItem.objects.get(pk=original.pk)
    assert (tombstone.seq, tombstone.role, tombstone.run_id) == (1, "user", world.run.pk)
    assert tombstone.content["sha256"] == hashlib.sha256(original_text.encode()).hexdigest()
    assert tombstone.content["erased_by"] == "user:ada"

    api = world.agent
    items = api.get(f"/api/v1/sessions/{world.session_id}/items/").json()
    assert MARK not in json.dumps(items) and "noted" in json.dumps(items)
    assert api.get("/api/v1/memory/retrieve/?scope=user&scope_key=alice&q=door").json() == []
    assert BOB in api.get("/api/v1/memory/retrieve/?scope=user&scope_key=bob&q=door").content.decode()
    assert MARK not in api.get("/api/v1/memory/records/").content.decode()
    fresh = api.post("/api/v1/memory/context/", {"run_id": world.run.pk, "query": "door code"}, format="json")
    assert fresh.status_code == 201 and MARK not in fresh.content.decode()
    replayed = api.post(f"/api/v1/sessions/{world.session_id}/items/", world.item_body, format="json",
                        HTTP_IDEMPOTENCY_KEY="a-items")
    assert replayed.status_code == 201 and MARK not in replayed.content.decode()
    assert replayed.json()["items"][0]["content"]["erased"] is True
    assert SessionItem.objects.filter(session_id=world.session_id).count() == 2  # a replay, not a new append
    replayed = api.post("/api/v1/memory/context/", {"run_id": world.run.pk, "query": "door code"}, format="json",
                        HTTP_IDEMPOTENCY_KEY="a-ctx")
    assert replayed.status_code == 201 and MARK not in replayed.content.decode()

    console = Client()
    console.force_login(world.admin)
    for page in (reverse("sessions:session_timeline", args=[world.session_id]), reverse("memory:record_list"),
                 reverse("runs:run_inspector", args=[world.run.pk]),
                 reverse("runs:approval_detail", args=[ApprovalRequest.objects.get(run=world.run).pk])):
        shown = console.get(page)
        assert shown.status_code == 200 and MARK not in shown.content.decode(), page

    # The approval alice decided stands, and the run waiting on it resumes.
    assert ApprovalRequest.objects.get(run=world.run).decided_by.username == "alice"
    assert resume_run_by_id(world.run.pk, owner="worker:test:1") == "done"
    call_command("verify_audit")  # exits 1 (SystemExit) on a broken chain


def test_only_an_admin_of_the_project_erases_and_a_preview_changes_nothing(world: World, other_project) -> None:  # type: ignore[no-untyped-def]
    url = reverse("memory:person_erase")
    reviewer = Client()
    reviewer.force_login(factories.make_user("rita", role="reviewer", projects=[world.project]))
    assert reviewer.get(url).status_code == 403
    outsider = Client()
    outsider.force_login(factories.make_user("oz", role="admin", projects=[other_project]))
    refused = outsider.post(url, {"project": world.project.pk, "subject": "alice", "reason": "x", "confirm": "on"})
    assert refused.status_code == 400  # not one of their projects: not a choice
    admin = Client()
    admin.force_login(world.admin)
    assert admin.post(url, {"project": world.project.pk, "subject": "alice", "confirm": "on"}).status_code == 400
    preview = admin.get(url, {"project": world.project.pk, "subject": "<script>alert(1)</script>"})
    assert preview.status_code == 200 and "<script>alert(1)" not in preview.content.decode()
    assert _rows_holding(MARK) and not AuditEntry.objects.filter(action="person.erased").exists()


def test_the_command_erases_and_a_second_run_finds_nothing_left(world: World, capsys) -> None:  # type: ignore[no-untyped-def]
    call_command("erase_person", "--project", world.project.slug, "--subject", "alice", "--by", "ada", "--dry-run")
    assert json.loads(capsys.readouterr().out)["stores"]["memory"]["erased"] == 1 and _rows_holding(MARK)
    call_command("erase_person", "--project", world.project.slug, "--subject", "alice", "--by", "ada",
                 "--reason", "request 18")
    first = json.loads(capsys.readouterr().out)
    call_command("erase_person", "--project", world.project.slug, "--subject", "alice", "--by", "ada",
                 "--reason", "request 18, again")
    second = json.loads(capsys.readouterr().out)
    assert (first["stores"]["session_items"]["erased"], second["stores"]["session_items"]["erased"]) == (1, 0)
    assert second["stores"]["memory"]["erased"] == 0 and _rows_holding(MARK) == {}


def test_the_append_only_trigger_still_refuses_any_other_rewrite_of_an_item(world: World) -> None:
    item = SessionItem.objects.get(session_id=world.session_id, seq=1)
    from django.db import DatabaseError, transaction

    for sql in ("UPDATE sessions_app_sessionitem SET content = '{\"text\": \"forged\"}' WHERE id = %s",
                "SET LOCAL harness.item_erase = 'on'; UPDATE sessions_app_sessionitem SET content = "
                "'{\"erased\": true, \"sha256\": \"00\", \"erased_by\": \"x\", \"erased_at\": \"2026-01-01\"}' "
                "WHERE id = %s"):
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, [item.pk])
    assert MARK in json.dumps(SessionItem.objects.get(pk=item.pk).content)


def test_an_admin_erases_through_the_api_with_a_personal_token_and_an_operator_cannot(world: World) -> None:
    def client_of(user) -> APIClient:  # type: ignore[no-untyped-def]
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {factories.make_personal_token(user)[1]}")
        return client

    url, body = "/api/v1/memory/erasures/", {"project": world.project.slug, "subject": "alice"}
    operator = client_of(factories.make_user("otto", role="operator", projects=[world.project]))
    refused = operator.post(url, {**body, "reason": "r"}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (403, "not_an_admin")
    admin = client_of(world.admin)
    unexplained = admin.post(url, body, format="json")
    assert (unexplained.status_code, unexplained.json()["code"]) == (400, "reason_required")
    preview = admin.post(url, {**body, "dry_run": True}, format="json").json()
    assert preview["dry_run"] is True and preview["stores"]["session_items"]["erased"] == 1 and _rows_holding(MARK)
    done = admin.post(url, {**body, "reason": "request 19"}, format="json")
    assert done.status_code == 200 and done.json()["dry_run"] is False
    assert done.json()["stores"] == preview["stores"]  # the preview counted exactly what went
    assert done.json()["stores"]["memory"] == {"erased": 1, "kept": 0, "why_kept": ""}
    assert _rows_holding(MARK) == {}
