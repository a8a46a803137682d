"""The application as the runtime role, a role that owns nothing (issue 19, defect 7; harness/roles.py).

The suite connects as the tables' owner; here `manage.py runtime_role` grants the runtime role on the test
database and gunicorn serves the API as it: every kind of write works (the audit chain included, through
its SECURITY DEFINER trigger, and a LangGraph thread's deletion), while every rewrite of history over SQL
fails: UPDATE, DELETE and TRUNCATE of the audit log, run events and checkpoints, and the ways around
triggers (disabling them, replica mode). The owner's retention door stays shut to it.
"""

import uuid
from typing import Any

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection, transaction

from harness.audit import audit_chain_verify
from harness.models import AuditEntry
from reliability.faults import HttpServer, processes
from runs_app.models import Checkpoint, RunEvent
from runs_app.services import run_transition
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)

ROLE = "harness_app"


def _settings_as(role: str) -> dict[str, Any]:
    s = connection.settings_dict
    return {"host": s.get("HOST") or "127.0.0.1", "port": int(s.get("PORT") or 5432), "dbname": s["NAME"],
            "user": role, **({"password": s["PASSWORD"]} if s.get("PASSWORD") else {})}


def _url_as(role: str) -> str:
    c = _settings_as(role)
    return f"postgres://{role}@{c['host']}:{c['port']}/{c['dbname']}"


def _refused(raw: psycopg.Connection[Any], sql: str) -> bool:
    try:
        raw.execute(sql)
    except psycopg.Error:
        return True
    return False


def test_the_api_runs_as_the_runtime_role_and_cannot_rewrite_history_over_sql() -> None:
    call_command("runtime_role", ROLE, "--create")
    project = factories.make_project(f"rt-{uuid.uuid4().hex[:8]}")
    _, agent_secret = factories.make_agent_token(project, name="rt-agent")
    reviewer = factories.make_user(f"rt-rev-{uuid.uuid4().hex[:8]}", role="reviewer", projects=[project])
    _, reviewer_secret = factories.make_personal_token(reviewer)
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to="running", expected_version=None)
    agent = {"Authorization": f"Bearer {agent_secret}"}
    person = {"Authorization": f"Bearer {reviewer_secret}"}

    with processes("runtime-role") as procs:
        server = HttpServer(procs, workers=1, env={"DATABASE_URL": _url_as(ROLE)})

        def post(path: str, body: dict[str, Any], headers: dict[str, str], key: str | None = None) -> Any:
            sent = {**headers, **({"Idempotency-Key": key} if key else {})}
            status, _, data = server.request("POST", path, body, headers=sent)
            assert status in (200, 201), (path, status, data)
            return data

        session = post("/api/v1/sessions/", {"role": "writer"}, agent, key="rt-session")
        post(f"/api/v1/sessions/{session['id']}/items/", {"items": [{"role": "user", "content": {"t": 1}}]},
             agent, key="rt-items")
        post(f"/api/v1/runs/{run.pk}/events/", {"kind": "rt.probe", "data": {}}, agent, key="rt-event")
        post("/api/v1/checkpoints/", {"run": run.pk, "label": "rt"}, agent, key="rt-checkpoint")
        approval = post(f"/api/v1/runs/{run.pk}/approvals/", {"tool": "send", "arguments": {"n": 1},
                                                              "idempotency_key": "rt-approval"}, agent)
        post(f"/api/v1/approvals/{approval['id']}/decision/", {"decision": "reject", "reason": "not now",
                                                            "expected_version": approval["version"]}, person)
        post("/api/v1/threads/checkpoints/", {"thread_id": "rt-thread", "checkpoint_id": "c1", "checkpoint": {"v": 1},
                                              "channel_values": {"a": 1}, "metadata": {"step": 0}}, agent)
        deleted = post("/api/v1/threads/delete/", {"thread_id": "rt-thread"}, agent)
        assert deleted["checkpoints"] == 1

    # The decision's entry was chained by the trigger although the role cannot touch the chain's head.
    decision = AuditEntry.objects.get(project=project, action="approval.rejected")
    assert decision.seq is not None and len(decision.hash) == 64
    assert [report.breaks for report in audit_chain_verify(project_ids=[project.pk])] == [[]]

    events, checkpoints = RunEvent.objects.filter(run_id=run.pk), Checkpoint.objects.filter(run_id=run.pk)
    before = (events.count(), checkpoints.count())
    assert before[0] and before[1]
    with psycopg.connect(**_settings_as(ROLE), autocommit=True) as raw:
        assert raw.execute("SELECT current_user").fetchone() == (ROLE,)
        attempts = [
            "UPDATE harness_auditentry SET data = '{}'",
            "DELETE FROM harness_auditentry",
            "TRUNCATE harness_auditentry",
            "UPDATE harness_auditchainhead SET seq = 0",
            "DELETE FROM runs_app_runevent",
            "TRUNCATE runs_app_runevent CASCADE",
            "DELETE FROM runs_app_run",
            "UPDATE runs_app_runevent SET data = '{}'",
            "DELETE FROM runs_app_checkpoint WHERE external_id = ''",
            "UPDATE runs_app_checkpoint SET label = 'rewritten'",
            "TRUNCATE runs_app_checkpoint CASCADE",
            "UPDATE sessions_app_sessionitem SET content = '{}'",
            "ALTER TABLE harness_auditentry DISABLE TRIGGER ALL",
            "ALTER TABLE runs_app_runevent DISABLE TRIGGER runs_app_runevent_no_delete",
            "SET session_replication_role = replica",
            "DROP TABLE harness_auditentry",
            "CREATE TABLE harness_rogue (id int)",
        ]
        refused = {sql: _refused(raw, sql) for sql in attempts}
        assert all(refused.values()), [sql for sql, ok in refused.items() if not ok]
        # The owner's retention door (issue 20) does not open for it.
        with raw.transaction():
            raw.execute("SET LOCAL harness.history_delete = 'on'")
            assert _refused(raw, "DELETE FROM runs_app_runevent")
    assert (events.count(), checkpoints.count()) == before
    assert events.filter(kind="rt.probe").count() == 1


def test_the_owner_deletes_history_only_through_the_retention_door() -> None:
    run = factories.make_run(factories.make_project(f"rt-{uuid.uuid4().hex[:8]}"))
    from runs_app.services import checkpoint_create, run_event_append

    run_event_append(project=run.project_id, run_id=run.pk, kind="old")
    checkpoint_create(project=run.project_id, run_id=run.pk, label="old")
    with pytest.raises(Exception, match="DELETE refused"), transaction.atomic():
        RunEvent.objects.filter(run_id=run.pk).delete()
    with pytest.raises(Exception, match="refused"), transaction.atomic():
        Checkpoint.objects.filter(run_id=run.pk).delete()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL harness.history_delete = 'on'")
        cursor.execute("UPDATE runs_app_run SET last_checkpoint_id = NULL WHERE id = %s", [run.pk])
        cursor.execute("DELETE FROM runs_app_runevent WHERE run_id = %s", [run.pk])
        cursor.execute("DELETE FROM runs_app_checkpoint WHERE run_id = %s", [run.pk])
    assert not RunEvent.objects.filter(run_id=run.pk).exists()
    assert not Checkpoint.objects.filter(run_id=run.pk).exists()


def test_the_command_refuses_a_role_that_is_more_than_a_runtime_role() -> None:
    from django.core.management.base import CommandError

    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        (owner,) = cursor.fetchone()
    with pytest.raises(CommandError):
        call_command("runtime_role", owner)
