"""PostgreSQL past one primary (docs/operations/sharding.md): the map is the schema's, and the hot path stays on
one shard.

The map (harness.ops.distribution.TABLES) places every table of the migrated schema, and the page shows what the
schema says now. The hot calls (the append, a checkpoint write, the latest reads, a run's claim, a reviewer's
decision) are made as their callers make them, through the API where they have a door, and every statement they
send is captured (Django's CaptureQueriesContext sees the hand-written prepared statements too, harness.db), as
is the body of every trigger those statements fire (the SQL files' functions, read from pg_proc as installed).
Each statement that touches a distributed table must name its `project_id`, so Citus routes it to the one node
holding the project: a change that makes a hot statement cross shards fails here.
"""

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from harness.models import Project
from harness.ops import distribution
from runs_app.selectors.checkpoints import checkpoint_latest
from tests.api.conftest import World, build_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema() -> distribution.Schema:
    with connection.cursor() as cursor:
        return distribution.read_schema(cursor)


@pytest.fixture
def world(project: Project, settings: Any) -> World:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_world(project, "acme")


def test_every_table_of_the_schema_is_placed_and_nothing_else(schema: distribution.Schema) -> None:
    missing, gone = distribution.unclassified(schema)
    assert missing == [], f"classify these tables in harness/ops/distribution.py TABLES: {missing}"
    assert gone == [], f"TABLES places tables the schema does not have: {gone}"


def test_the_page_shows_the_map_of_the_schema_as_it_is(schema: distribution.Schema) -> None:
    page = distribution.PAGE.read_text()
    assert distribution.page_with_markdown(page, schema) == page, \
        f"docs/operations/sharding.md is stale: run `{distribution.WRITE_COMMAND}`"


def test_a_table_without_project_id_is_distributed_only_where_the_page_says_the_column_is_to_add(
        schema: distribution.Schema) -> None:
    to_add = sorted(t for t in distribution.distributed_tables() if t not in schema.with_column)
    page = distribution.PAGE.read_text()
    for table in to_add:
        assert f"| `{table}` | distributed | **to add** |" in page


def test_the_statement_reader_tells_a_routed_statement_from_one_that_crosses_shards() -> None:
    with_column = frozenset({"runs_app_run", "runs_app_checkpoint", "sessions_app_session"})
    routed = [
        'SELECT "runs_app_run"."id" FROM "runs_app_run" WHERE ("runs_app_run"."id" = 1 AND '
        '"runs_app_run"."project_id" = 2)',
        "UPDATE runs_app_run SET version = version + 1 WHERE id = %(rid)s AND project_id = %(pid)s",
        "SELECT c.id FROM runs_app_run r JOIN runs_app_checkpoint c ON c.id = r.last_checkpoint_id "
        "WHERE r.id = %s AND r.project_id = %s AND c.project_id = r.project_id",
        # The item has no project_id yet: it goes where its session's row goes.
        "WITH b AS (UPDATE sessions_app_session SET last_seq = last_seq + 1 WHERE id = %s AND project_id = %s "
        "RETURNING last_seq) INSERT INTO sessions_app_sessionitem (session_id, seq) SELECT %s, last_seq FROM b",
    ]
    crossing = {
        "UPDATE runs_app_run SET version = version + 1 WHERE id = %(rid)s": ["runs_app_run"],
        "SELECT c.id FROM runs_app_run r JOIN runs_app_checkpoint c ON c.id = r.last_checkpoint_id "
        "WHERE r.id = %s AND r.project_id = %s": ["runs_app_checkpoint"],
        # Selected, not compared: the checkpoint is still looked up on every shard.
        "SELECT c.id, c.project_id FROM runs_app_run r JOIN runs_app_checkpoint c ON c.id = r.last_checkpoint_id "
        "WHERE r.id = %s AND r.project_id = %s": ["runs_app_checkpoint"],
        "INSERT INTO runs_app_checkpoint (run_id) SELECT 1 WHERE 1 = 1": ["runs_app_checkpoint"],
        "INSERT INTO sessions_app_sessionitem (session_id, seq) VALUES (1, 2)": ["sessions_app_sessionitem"],
    }
    for sql in routed:
        assert distribution.unrouted(sql, with_column) == [], sql
    for sql, tables in crossing.items():
        assert distribution.unrouted(sql, with_column) == tables, sql


# --- the hot calls --------------------------------------------------------------------------------------------

def _key() -> dict[str, str]:
    return {"HTTP_IDEMPOTENCY_KEY": uuid.uuid4().hex}


def _append(world: World) -> None:
    response = world.agent.post(f"/api/v1/sessions/{world.session.pk}/items/",
                                {"items": [{"role": "user", "content": {"text": "Draft chapter 3"}}]}, **_key())
    assert response.status_code == 201, response.content


def _checkpoint_write(world: World) -> None:
    body = {"run": world.running_run.pk, "label": "step", "state": {"notes": "x"}, "cursor": {"node": "draft"}}
    first = world.agent.post("/api/v1/checkpoints/", body, **_key())
    assert first.status_code == 201, first.content
    # The call the hot path makes: continuing the chain from the checkpoint before.
    world.__dict__["_parent"] = first.json()["id"]


def _checkpoint_continue(world: World) -> None:
    body = {"run": world.running_run.pk, "parent": world.__dict__["_parent"], "label": "step",
            "state": {"notes": "y"}, "cursor": {"node": "draft"}}
    response = world.agent.post("/api/v1/checkpoints/", body, **_key())
    assert response.status_code == 201, response.content


THREAD = "lg-thread-1"


def _thread_put(world: World, checkpoint_id: str, parent: str | None) -> None:
    response = world.agent.post("/api/v1/threads/checkpoints/", {
        "thread_id": THREAD, "checkpoint_id": checkpoint_id, "parent_checkpoint_id": parent,
        "checkpoint": {"v": 4}, "channel_values": {"notes": "x"}, "metadata": {"step": 0}}, **_key())
    assert response.status_code == 201, response.content


def _saver_put(world: World) -> None:
    # HarnessSaver.put: the next checkpoint of a LangGraph thread.
    _thread_put(world, "c00001", "c00000")


def _saver_get(world: World) -> None:
    # HarnessSaver.get_tuple: the thread's latest checkpoint.
    response = world.agent.get(f"/api/v1/threads/checkpoint/?thread_id={THREAD}")
    assert response.status_code == 200, response.content


def _newest_items(world: World) -> None:
    response = world.agent.get(f"/api/v1/sessions/{world.session.pk}/items/latest/?limit=50")
    assert response.status_code == 200, response.content


def _latest_checkpoint(world: World) -> None:
    # What the resume and the checkpointer's latest read go through.
    assert checkpoint_latest(project=world.project, run_id=world.run.pk) is not None


def _claim(world: World) -> None:
    response = world.agent.post(f"/api/v1/runs/{world.running_run.pk}/claim/",
                                {"owner": "acme-worker-2", "lease_seconds": 60}, **_key())
    assert response.status_code == 200, response.content


def _decision(world: World) -> None:
    response = world.reviewer.post(f"/api/v1/approvals/{world.approval.pk}/decision/",
                                   {"decision": "approve", "expected_version": world.approval.version}, **_key())
    assert response.status_code == 200, response.content


HOT_CALLS: dict[str, Callable[[World], None]] = {
    "session append": _append,
    "checkpoint write": _checkpoint_continue,
    "LangGraph checkpoint put": _saver_put,
    "LangGraph latest checkpoint": _saver_get,
    "newest items": _newest_items,
    "latest checkpoint": _latest_checkpoint,
    "run claim": _claim,
    "approval decision": _decision,
}


def _triggers_of(tables: set[str]) -> dict[str, str]:
    """The body of every trigger function on `tables` (the SQL files' functions, as the migrations installed them)."""
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT DISTINCT p.proname, p.prosrc FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
              JOIN pg_proc p ON p.oid = t.tgfoid
             WHERE NOT t.tgisinternal AND c.relname = ANY(%s)""", [sorted(tables)])
        return dict(cursor.fetchall())


def _statements(world: World, call: Callable[[World], None]) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        call(world)
    return [q["sql"] for q in captured.captured_queries]


@pytest.mark.parametrize("name", list(HOT_CALLS))
def test_every_hot_statement_names_its_project(name: str, world: World, schema: distribution.Schema) -> None:
    if name == "checkpoint write":
        _checkpoint_write(world)
    if name.startswith("LangGraph"):
        _thread_put(world, "c00000", None)
    statements = _statements(world, HOT_CALLS[name])
    touched = {t.table for sql in statements for t in distribution.statement_touches(sql, schema.with_column)}
    assert touched, f"{name}: no statement touched a distributed table (is the call still the hot path?)"
    crossing = {sql: distribution.unrouted(sql, schema.with_column) for sql in statements}
    pending = {sql: tables for sql, tables in crossing.items() if tables}
    known = {(sql, table) for sql, tables in pending.items() for table in tables
             if table in distribution.PENDING_TABLES}
    unexpected = {sql: [t for t in tables if (sql, t) not in known] for sql, tables in pending.items()}
    unexpected = {sql: tables for sql, tables in unexpected.items() if tables}
    assert unexpected == {}, f"{name}: statements that would cross shards under Citus (name their project_id): " + \
        "; ".join(f"{tables} in {' '.join(sql.split())[:400]}" for sql, tables in unexpected.items())
    triggers = _triggers_of(touched)
    crossing_triggers = {fn: distribution.unrouted(body, schema.with_column) for fn, body in triggers.items()}
    assert {fn: t for fn, t in crossing_triggers.items() if t} == {}, \
        f"{name}: trigger functions fired by its statements that would cross shards"
