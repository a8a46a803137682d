"""The resume verifies the checkpoint it resumes from (issue 30, part 4): its content hash, recomputed from the row,
and the approval its `authority_ref` names. A row changed behind the service (as the tables' owner, triggers off)
blocks the run at `load`, the field named, and nothing is called."""

from typing import Any

import pytest
from django.db import connection

from harness.actors import Actor
from runs_app.models import Checkpoint, ExternalEffect, Run, RunStatus
from runs_app.services import checkpoint_create, checkpoint_fork
from runs_app.services.checkpoints import checkpoint_hash
from runs_app.services.threads import thread_checkpoint_put
from tests import factories
from tests.worker.support import approve, demo_run, events, reviewer
from worker.pipeline import resume_run_by_id

OWNER = "worker:test:integrity"


def _as_owner(sql: str, params: list[Any]) -> None:
    """Rewrite a row as the tables' owner would (the runtime role cannot: checkpoints take no UPDATE, and a
    trigger refuses it): triggers off for this one statement."""
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        cursor.execute(sql, params)
        cursor.execute("SET session_replication_role = origin")


@pytest.fixture
def approved(db):  # type: ignore[no-untyped-def]
    run = demo_run()
    approve(run, reviewer(run.project))
    return Run.objects.get(pk=run.pk)


def _blocked_at_load(run: Run) -> tuple[Run, dict[str, Any]]:
    assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"
    run = Run.objects.get(pk=run.pk)
    assert run.status == RunStatus.BLOCKED and run.blocked_step == "load"
    assert not ExternalEffect.objects.filter(run=run).exists()  # nothing was called
    load = [e for e in events(run.pk, "resume.load") if not e.data["ok"]]
    assert load, "the load's failure is traced"
    return run, load[-1].data


def test_a_checkpoint_state_rewritten_as_the_owner_blocks_the_resume_at_load(approved) -> None:
    _as_owner("UPDATE runs_app_checkpoint SET state = %s::json WHERE id = %s",
              ['{"plan_version": 1, "injected": "do something else"}', approved.last_checkpoint_id])

    run, traced = _blocked_at_load(approved)

    assert run.error["code"] == "checkpoint_tampered" and run.error["field"] == "content_hash"
    assert run.error["checkpoint"] == approved.last_checkpoint_id
    assert "content_hash does not match" in run.error["reason"] and traced["field"] == "content_hash"


def test_a_parent_hash_rewritten_breaks_the_childs_hash(approved) -> None:
    parent_id = Checkpoint.objects.get(pk=approved.last_checkpoint_id).parent_id
    assert parent_id is not None
    _as_owner("UPDATE runs_app_checkpoint SET content_hash = %s WHERE id = %s", ["0" * 64, parent_id])

    run, _ = _blocked_at_load(approved)

    assert run.error["field"] == "content_hash"


def test_an_authority_ref_rewritten_as_the_owner_is_caught_by_the_hash(approved) -> None:
    _as_owner("UPDATE runs_app_checkpoint SET authority_ref = %s WHERE id = %s",
              ["admin@override", approved.last_checkpoint_id])

    run, _ = _blocked_at_load(approved)

    assert run.error["field"] == "content_hash"


def test_an_authority_ref_naming_another_approval_blocks_at_load_naming_authority_ref(approved) -> None:
    other = demo_run(factories.make_project("other"))  # an approval of another run (another project even)
    written = checkpoint_create(project=approved.project_id, run_id=approved.pk,
                                parent_id=approved.last_checkpoint_id, cursor={"node": "publish"},
                                state={"plan_version": 1}, authority_ref=f"approval:{other.pending_approval_id}")
    assert checkpoint_hash(written, parent_hash=Checkpoint.objects.get(pk=written.parent_id).content_hash) == (
        written.content_hash)  # written through the service: the hash holds, the reference does not

    run, traced = _blocked_at_load(approved)

    assert run.error["code"] == "checkpoint_tampered" and run.error["field"] == "authority_ref"
    assert f"approval:{other.pending_approval_id}" in run.error["reason"] and traced["field"] == "authority_ref"


def test_the_waiting_checkpoint_names_its_approval_and_an_untouched_resume_goes_on(approved) -> None:
    checkpoint = Checkpoint.objects.get(pk=approved.last_checkpoint_id)
    assert checkpoint.authority_ref == f"approval:{approved.pending_approval_id}"
    assert checkpoint.approval_id == approved.pending_approval_id

    assert resume_run_by_id(approved.pk, owner=OWNER) == "done"

    load = events(approved.pk, "resume.load")[0].data
    assert load["ok"] and load["content_hash"] == checkpoint.content_hash
    assert Run.objects.get(pk=approved.pk).status == RunStatus.SUCCEEDED


def test_the_recomputed_hash_is_the_stored_one_for_every_kind_of_checkpoint(db) -> None:
    project = factories.make_project()
    run = factories.make_run(project)
    root = checkpoint_create(project=project, run_id=run.pk, cursor={"n": 1}, state={"x": [1, 2.5, "é"]},
                             artifact_fingerprints={"a": {"sha256": "1" * 64}}, authority_ref="lock:7",
                             pending_gate={"tool": "t"})
    child = checkpoint_create(project=project, run_id=run.pk, parent_id=root.pk, state={"y": None})
    checkpoint_fork(project=project, checkpoint_id=child.pk, actor=Actor.for_agent("forker"), reason="try")
    thread_checkpoint_put(project=project, thread_id="th-1", checkpoint_ns="", checkpoint_id="c1",
                          parent_checkpoint_id=None, checkpoint={"v": 1}, channel_values={"m": [1]},
                          metadata={"step": 0})
    thread_checkpoint_put(project=project, thread_id="th-1", checkpoint_ns="", checkpoint_id="c2",
                          parent_checkpoint_id="c1", checkpoint={"v": 2}, channel_values={"m": [1, 2]},
                          metadata={"step": 1})
    rows = list(Checkpoint.objects.select_related("parent", "run"))
    assert len(rows) >= 5
    for row in rows:
        parent_hash = row.parent.content_hash if row.parent is not None else None
        assert checkpoint_hash(row, parent_hash=parent_hash, thread=row.run.ref if row.run else "") == (
            row.content_hash), row
