"""Erasure under the runtime role (a role that owns nothing): `manage.py erase_person` connected as it tombstones
the person's items through the SECURITY DEFINER door, while the same role still cannot rewrite an item over SQL,
not even by setting the door's switch itself (sessions_app migration 0004)."""

import json
import subprocess
import sys
import uuid
from typing import Any

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from harness.actors import Actor
from harness.audit import audit_chain_verify
from memory_app.services import memory_write
from sessions_app.models import SessionItem
from sessions_app.services import session_items_append
from tests import factories
from tests.subprocesses import ROOT, child_env

pytestmark = pytest.mark.django_db(transaction=True)

ROLE = "harness_app"


def _as_runtime_role() -> tuple[str, dict[str, Any]]:
    s = connection.settings_dict
    host, port = s.get("HOST") or "127.0.0.1", int(s.get("PORT") or 5432)
    return (f"postgres://{ROLE}@{host}:{port}/{s['NAME']}",
            {"host": host, "port": port, "dbname": s["NAME"], "user": ROLE})


def _refused(raw: psycopg.Connection[Any], *statements: tuple[str, int | None]) -> bool:
    try:
        with raw.transaction():
            for sql, value in statements:
                raw.execute(sql, [] if value is None else [value])
    except psycopg.Error:
        return True
    return False


def test_the_runtime_role_erases_through_the_door_and_cannot_open_it_itself() -> None:
    call_command("runtime_role", ROLE, "--create")
    project = factories.make_project(f"er-{uuid.uuid4().hex[:8]}")
    factories.make_user(f"ada-{project.slug}", role="admin", projects=[project])
    session = factories.make_session(project, metadata={"user": "carol"})
    mine, theirs = session_items_append(project=project, session_id=session.pk, items=[
        {"role": "user", "content": {"text": "carol says QUARTZ-71"}},
        {"role": "assistant", "content": {"text": "QUARTZ-71 noted"}}])
    memory_write(project=project, actor=Actor.for_agent("writer"), scope="user", scope_key="carol",
                 content="carol's code is QUARTZ-71", source_session_id=session.pk, source_item_seq=1)
    url, params = _as_runtime_role()

    with psycopg.connect(**params, autocommit=True) as raw:
        assert _refused(raw, ("UPDATE sessions_app_sessionitem SET content = '{}' WHERE id = %s", mine.pk))
        assert _refused(raw, ("SET LOCAL harness.item_erase = 'on'", None),
                        ("UPDATE sessions_app_sessionitem SET content = harness_item_tombstone(content, 'x', now()) "
                         "WHERE id = %s", mine.pk))
        assert _refused(raw, ("DELETE FROM harness_auditentry WHERE project_id = %s", project.pk))

    done = subprocess.run(
        [sys.executable, "manage.py", "erase_person", "--project", project.slug, "--subject", "carol",
         "--by", f"ada-{project.slug}", "--reason", "request 3"],
        capture_output=True, text=True, cwd=ROOT, env=child_env(DATABASE_URL=url), timeout=120)
    assert done.returncode == 0, done.stderr
    stores = json.loads(done.stdout)["stores"]
    assert (stores["session_items"]["erased"], stores["session_items"]["kept"], stores["memory"]["erased"]) == (1, 1, 1)
    erased = SessionItem.objects.get(pk=mine.pk)
    assert erased.content["erased"] is True and "QUARTZ" not in json.dumps(erased.content)
    assert SessionItem.objects.get(pk=theirs.pk).content == {"text": "QUARTZ-71 noted"}  # the agent's, kept
    assert [report.breaks for report in audit_chain_verify(project_ids=[project.pk])] == [[]]
