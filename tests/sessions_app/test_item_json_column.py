"""A session item's content is a json column (harness.fields.TextJSONField, sessions_app migration 0005): every
read gives back the content written, keys in the order written; what compares content (the erasure door, person
erasure, a handoff's copy checks) compares it as jsonb, as before."""

import hashlib
import importlib
import json
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction

from harness.fields import dumps
from harness.models import Project
from sessions_app import selectors
from sessions_app.models import SessionItem
from sessions_app.services import session_items_append
from tests import factories

pytestmark = pytest.mark.django_db

# 0005's database step (harness.sql_files.install: a RunPython), run both ways in a test's transaction.
_0005 = importlib.import_module("sessions_app.migrations.0005_item_content_as_written")
_0005_STEP = _0005.Migration.operations[0].database_operations[0]

# Keys neither sorted nor in jsonb's order (by length, then bytes), nested, non-ASCII, a float jsonb writes back as
# an integer.
CONTENT = {"zeta": {"yy": 1, "b": [2.5, None, {"kk": True, "a": "ü — \"q\"\n"}]}, "text": "hi", "n": 1e16}


def ordered(value: Any) -> str:
    return json.dumps(value)


def _content_type() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT data_type FROM information_schema.columns "
                       "WHERE table_name = 'sessions_app_sessionitem' AND column_name = 'content'")
        return str(cursor.fetchone()[0])


def test_an_item_reads_back_as_written_through_every_read(project: Project) -> None:
    assert _content_type() == "json"
    session = factories.make_session(project)
    [item] = session_items_append(project=project, session_id=session.pk,
                                  items=[{"role": "user", "content": CONTENT, "run_id": None}])
    text = selectors.session_items_latest_json(project_ids=[project.pk], session_id=session.pk)
    assert f'"content":{dumps(CONTENT)},'.encode() in text  # the written text, byte for byte
    assert ordered(json.loads(text)["items"][0]["content"]) == ordered(CONTENT)
    assert ordered(SessionItem.objects.get(pk=item.pk).content) == ordered(CONTENT)
    [latest] = selectors.session_items_latest(project=project, session_id=session.pk, limit=1)
    assert ordered(latest["content"]) == ordered(CONTENT)
    with connection.cursor() as cursor:
        cursor.execute("SELECT content FROM sessions_app_sessionitem WHERE id = %s", [item.pk])
        assert cursor.fetchone()[0] == dumps(CONTENT)


def test_the_erasure_door_compares_as_jsonb_and_still_refuses_anything_else(project: Project) -> None:
    session = factories.make_session(project)
    [item] = session_items_append(project=project, session_id=session.pk,
                                  items=[{"role": "user", "content": CONTENT, "run_id": None}])
    with connection.cursor() as cursor:
        cursor.execute("SELECT content::jsonb::text FROM sessions_app_sessionitem WHERE id = %s", [item.pk])
        jsonb_text = cursor.fetchone()[0]
        # A forged tombstone (the right shape, the wrong hash) is refused by the trigger, even with the door open.
        with transaction.atomic():
            cursor.execute("SET LOCAL harness.item_erase = 'on'")
            with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
                cursor.execute("UPDATE sessions_app_sessionitem SET content = json_build_object('erased', true, "
                               "'sha256', '00', 'erased_by', 'x', 'erased_at', now()) WHERE id = %s", [item.pk])
        cursor.execute("SELECT item_id, sha256 FROM harness_session_items_erase(%s::bigint[], 'user:ada')",
                       [[item.pk]])
        assert cursor.fetchall() == [(item.pk, hashlib.sha256(jsonb_text.encode()).hexdigest())]
        # A tombstone is not erased again.
        cursor.execute("SELECT count(*) FROM harness_session_items_erase(%s::bigint[], 'user:ada')", [[item.pk]])
        assert cursor.fetchone() == (0,)
    tombstone = SessionItem.objects.get(pk=item.pk).content
    assert tombstone["erased"] is True and tombstone["erased_by"] == "user:ada"


def test_the_migrations_sql_keeps_every_value_both_ways(project: Project) -> None:
    session = factories.make_session(project)
    [item] = session_items_append(project=project, session_id=session.pk,
                                  items=[{"role": "user", "content": CONTENT, "run_id": None}])

    class Editor:  # what RunPython hands the functions: only its connection is used
        pass

    editor = Editor()
    editor.connection = connection  # type: ignore[attr-defined]
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no ALTER TABLE with the inserts' deferred checks pending
        _0005_STEP.reverse_code(None, editor)  # 0005 reversed, in this test's transaction
        assert _content_type() == "jsonb"
        cursor.execute("SELECT content::text FROM sessions_app_sessionitem WHERE id = %s", [item.pk])
        (as_jsonb,) = cursor.fetchone()
        _0005_STEP.code(None, editor)
        cursor.execute("SELECT content FROM sessions_app_sessionitem WHERE id = %s", [item.pk])
        (as_json,) = cursor.fetchone()
    assert _content_type() == "json"
    # A row stored as jsonb keeps jsonb's text (its keys in jsonb's order), which is what the API returned for it.
    assert as_json == as_jsonb and list(json.loads(as_json)) == ["n", "text", "zeta"]
    assert SessionItem.objects.get(pk=item.pk).content == CONTENT


def test_a_content_jsonb_would_refuse_is_refused_by_every_door(project: Project) -> None:
    session = factories.make_session(project)
    with pytest.raises(DatabaseError, match="Unicode|session_item_content_reads_as_jsonb"), transaction.atomic():
        SessionItem.objects.create(session=session, seq=1, role="tool", content={"out": "a\x00b"})
    assert not SessionItem.objects.filter(session=session).exists()
