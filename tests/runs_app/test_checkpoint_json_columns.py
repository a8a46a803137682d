"""A checkpoint's cursor, state, fingerprints and pending gate are json columns (harness.fields.TextJSONField,
migration 0024): every read gives back the value written, keys in the order written, and the lineage's text
carries each value's text as the service wrote it."""

import importlib
import json
from typing import Any

import pytest
from django.db import connection

from harness.fields import dumps
from harness.models import Project
from runs_app.api.checkpoints import CheckpointOutSerializer
from runs_app.models import Checkpoint
from runs_app.selectors import checkpoints as checkpoints_sel
from runs_app.services import checkpoint_create
from tests import factories

_0024 = importlib.import_module("runs_app.migrations.0024_checkpoint_json_as_written")

# Keys neither sorted nor in jsonb's order (by length, then bytes), nested; non-ASCII; a float jsonb would have
# written back as an integer (1e+16), an integer past 64 bits, a string that reads as a number.
STATE = {"zeta": {"yy": 1, "b": [2.5, None, {"kk": True, "a": "ü — \"q\"\n"}]}, "alpha": 1e16, "mid": 2**70, "s": "123"}
CURSOR = {"node": "draft", "at": 3}


def ordered(value: Any) -> str:
    """The value's JSON text with its keys in their order: equal texts are equal values in the same order."""
    return json.dumps(value)


def _column_types() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT column_name, data_type FROM information_schema.columns "
                       "WHERE table_name = 'runs_app_checkpoint' AND data_type IN ('json', 'jsonb')")
        return dict(cursor.fetchall())


@pytest.mark.django_db
def test_the_four_columns_the_lineage_sends_are_json_and_metadata_stays_jsonb() -> None:
    assert _column_types() == {"cursor": "json", "state": "json", "artifact_fingerprints": "json",
                               "pending_gate": "json", "metadata": "jsonb"}


@pytest.mark.django_db
def test_every_read_gives_the_state_back_as_written_keys_in_their_order(project: Project) -> None:
    run = factories.make_run(project)
    root = checkpoint_create(project=project, run_id=run.pk, cursor={"n": 0})
    written = checkpoint_create(project=project, run_id=run.pk, parent_id=root.pk, cursor=CURSOR, state=STATE,
                                artifact_fingerprints={"z": "sha256:" + "1" * 64, "a": "x"}, pending_gate="123")
    text = checkpoints_sel.checkpoint_lineage_json(project_ids=[project.pk], checkpoint_id=written.pk)
    # The value's text is the service's, byte for byte, inside the lineage's text.
    assert f'"state":{dumps(STATE)},'.encode() in text and f'"cursor":{dumps(CURSOR)},'.encode() in text
    assert b'"pending_gate":"123",' in text
    newest = json.loads(text)[0]
    stored = Checkpoint.objects.get(pk=written.pk)
    assert ordered(newest["state"]) == ordered(stored.state) == ordered(STATE)
    assert ordered(newest["cursor"]) == ordered(stored.cursor) == ordered(CURSOR)
    assert list(stored.artifact_fingerprints) == ["z", "a"]
    assert type(stored.state["alpha"]) is float and stored.state["mid"] == 2**70
    assert stored.pending_gate == "123"  # a JSON string, not the number its text reads as
    assert ordered(Checkpoint.objects.filter(pk=written.pk).values_list("state", flat=True).get()) == ordered(STATE)
    # The rows the API's other reads build (the serializer, the decoded lineage) say the same, in the same order.
    assert ordered(newest) == ordered(dict(CheckpointOutSerializer(stored).data))
    rows = checkpoints_sel.checkpoint_lineage(project_ids=[project.pk], checkpoint_id=written.pk)
    # (json_rows decodes with orjson, which reads an integer past 64 bits as a float: so it did before.)
    assert list(rows[0]["state"]) == list(STATE) and ordered(rows[0]["state"]["zeta"]) == ordered(STATE["zeta"])


@pytest.mark.django_db
def test_the_lineage_text_is_one_json_array_at_any_length(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    run = factories.make_run(project)
    chain = [checkpoint_create(project=project, run_id=run.pk, label="only")]
    one = checkpoints_sel.checkpoint_lineage_json(project_ids=[project.pk], checkpoint_id=chain[0].pk)
    assert one.startswith(b'[{"id":') and one.endswith(b"}]") and [c["label"] for c in json.loads(one)] == ["only"]
    for k in range(4):
        chain.append(checkpoint_create(project=project, run_id=run.pk, parent_id=chain[-1].pk, label=f"c{k}"))
    monkeypatch.setattr(checkpoints_sel, "MAX_LINEAGE", 3)  # cut short: the array still closes
    capped = json.loads(checkpoints_sel.checkpoint_lineage_json(project_ids=[project.pk], checkpoint_id=chain[-1].pk))
    assert [c["label"] for c in capped] == ["c3", "c2", "c1"]


@pytest.mark.django_db
def test_the_orm_writes_the_json_text_and_raw_json_results_read_as_text(project: Project) -> None:
    run = factories.make_run(project)
    made = Checkpoint.objects.bulk_create([Checkpoint(project=project, run=run, content_hash="x", state=STATE,
                                                      pending_gate="null")])[0]
    with connection.cursor() as cursor:
        cursor.execute("SELECT state, pending_gate, json_build_object('b', 1, 'a', 2) FROM runs_app_checkpoint "
                       "WHERE id = %s", [made.pk])
        state, gate, built = cursor.fetchone()
    assert state == dumps(STATE) and "ü" in state  # as written, non-ASCII as it is
    assert gate == '"null"' and built == '{"b" : 1, "a" : 2}'  # json as its text, as Django reads jsonb
    stored = Checkpoint.objects.get(pk=made.pk)
    assert ordered(stored.state) == ordered(STATE) and stored.pending_gate == "null"


@pytest.mark.django_db
def test_the_migrations_sql_keeps_every_value_both_ways(project: Project) -> None:
    run = factories.make_run(project)
    written = checkpoint_create(project=project, run_id=run.pk, cursor=CURSOR, state=STATE, pending_gate=[1, "a"])
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no ALTER TABLE with the inserts' deferred checks pending
        cursor.execute(_0024._alter("jsonb"))  # 0024 reversed, in this test's transaction
        assert set(_column_types().values()) == {"jsonb"}
        cursor.execute("SELECT state::text FROM runs_app_checkpoint WHERE id = %s", [written.pk])
        (as_jsonb,) = cursor.fetchone()
        cursor.execute(_0024._alter("json"))
        cursor.execute("SELECT state FROM runs_app_checkpoint WHERE id = %s", [written.pk])
        (as_json,) = cursor.fetchone()
    assert _column_types()["state"] == "json"
    # A row stored as jsonb keeps jsonb's text (its keys in jsonb's order), which is what the API returned for it.
    assert as_json == as_jsonb and list(json.loads(as_json)) == ["s", "mid", "zeta", "alpha"]
    stored = Checkpoint.objects.get(pk=written.pk)
    assert stored.state == STATE and stored.cursor == CURSOR and stored.pending_gate == [1, "a"]
