"""A chain's next checkpoint is one statement: the facts it hashes are remembered, and checked by the write."""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from harness.canonical import digest
from harness.http.errors import NotFoundError
from harness.models import Project
from runs_app.models import Checkpoint
from runs_app.services import checkpoint_create, checkpoint_facts
from tests import factories


@pytest.fixture(autouse=True)
def _empty_memory() -> None:
    checkpoint_facts.forget_all()


def _expected_hash(checkpoint: Checkpoint, parent: Checkpoint | None) -> str:
    return digest({
        "run": checkpoint.run_id, "task": checkpoint.task_id, "parent_hash": parent.content_hash if parent else None,
        "cursor": checkpoint.cursor, "state": checkpoint.state,
        "artifact_fingerprints": checkpoint.artifact_fingerprints,
        "authority_ref": checkpoint.authority_ref, "pending_gate": checkpoint.pending_gate,
        "approval": checkpoint.approval_id, "resume_policy": checkpoint.resume_policy,
        "schema_version": checkpoint.schema_version,
    })


@pytest.mark.django_db(transaction=True)
def test_the_next_checkpoint_of_a_chain_is_one_statement(project: Project) -> None:
    run = factories.make_run(project, task_id=factories.make_task(project).pk)
    first = checkpoint_create(project=project, run_id=run.pk, cursor={"n": 0})
    with CaptureQueriesContext(connection) as queries:
        second = checkpoint_create(project=project, run_id=run.pk, parent_id=first.pk, cursor={"n": 1})
    assert len(queries) == 1
    stored = Checkpoint.objects.get(pk=second.pk)
    assert (stored.parent_id, stored.depth, stored.task_id) == (first.pk, 1, run.task_id)
    assert stored.content_hash == _expected_hash(stored, first)


@pytest.mark.django_db(transaction=True)
def test_wrong_remembered_facts_are_caught_by_the_write_and_read_again(project: Project) -> None:
    run = factories.make_run(project)
    first = checkpoint_create(project=project, run_id=run.pk)
    # What a process would remember across a flush that reused ids: another hash, another depth.
    checkpoint_facts._checkpoints.put((project.pk, first.pk), ("0" * 64, 41, run.pk, None))
    second = checkpoint_create(project=project, run_id=run.pk, parent_id=first.pk)
    stored = Checkpoint.objects.get(pk=second.pk)
    assert stored.depth == 1 and stored.content_hash == _expected_hash(stored, first)
    assert Checkpoint.objects.filter(run=run).count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_checkpoint_rolled_back_is_not_remembered_as_a_parent(project: Project) -> None:
    run = factories.make_run(project)
    with pytest.raises(RuntimeError), transaction.atomic():  # noqa: PT012 - the raise rolls back the create
        ghost = checkpoint_create(project=project, run_id=run.pk)
        raise RuntimeError("roll back")
    with pytest.raises(NotFoundError):
        checkpoint_create(project=project, run_id=run.pk, parent_id=ghost.pk)
    assert not Checkpoint.objects.filter(run=run).exists()


@pytest.mark.django_db(transaction=True)
def test_remembered_facts_do_not_cross_projects(project: Project, other_project: Project) -> None:
    run = factories.make_run(project)
    mine = checkpoint_create(project=project, run_id=run.pk)
    theirs = factories.make_run(other_project)
    with pytest.raises(NotFoundError):
        checkpoint_create(project=other_project, run_id=theirs.pk, parent_id=mine.pk)
    with pytest.raises(NotFoundError):
        checkpoint_create(project=other_project, run_id=run.pk, parent_id=mine.pk)
