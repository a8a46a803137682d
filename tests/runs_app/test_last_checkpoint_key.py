"""A run's last checkpoint is kept by a foreign key through the run's own id (runs_app migration 0022).

(id, last_checkpoint) -> checkpoint (run, id): a run points only at a stored checkpoint of its own, and a checkpoint
that a run points at cannot be deleted, not even through the retention door. The key is what lets a retention pass
check a deleted checkpoint through the runs' primary key instead of scanning them all (bench/README.md).
"""

import pytest
from django.db import IntegrityError, connection, transaction

from harness.models import Project
from runs_app.models import Checkpoint, Run, RunStatus
from runs_app.services import checkpoint_create, run_transition
from tests import factories

pytestmark = pytest.mark.django_db


def _run_with_checkpoints(project: Project, n: int) -> tuple[Run, list[int]]:
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    ids: list[int] = []
    for i in range(n):
        ids.append(checkpoint_create(project=project, run_id=run.pk, parent_id=ids[-1] if ids else None,
                                     label=f"c{i}").pk)
    return Run.objects.get(pk=run.pk), ids


def _delete_through_the_door(checkpoint_ids: list[int]) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL harness.history_delete = 'on'")
        cursor.execute("DELETE FROM runs_app_checkpoint WHERE id = ANY(%s)", [checkpoint_ids])
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def test_every_writer_points_a_run_at_a_checkpoint_of_its_own(project: Project) -> None:
    run, ids = _run_with_checkpoints(project, 2)
    assert run.last_checkpoint_id == ids[-1]
    assert Checkpoint.objects.get(pk=run.last_checkpoint_id).run_id == run.pk


def test_a_checkpoint_a_run_points_at_cannot_be_deleted_even_through_the_door(project: Project) -> None:
    run, ids = _run_with_checkpoints(project, 2)
    with pytest.raises(IntegrityError, match="run_last_checkpoint_of_run"):
        _delete_through_the_door([ids[-1]])
    assert Run.objects.get(pk=run.pk).last_checkpoint_id == ids[-1]
    assert Checkpoint.objects.filter(pk=ids[-1]).exists()


def test_a_checkpoint_no_run_points_at_goes_through_the_door(project: Project) -> None:
    run, ids = _run_with_checkpoints(project, 3)
    branch = checkpoint_create(project=project, run_id=run.pk, parent_id=ids[0], label="branch").pk
    _point(run, ids[-1])  # the branch became the run's last: point it back
    _delete_through_the_door([branch])
    assert not Checkpoint.objects.filter(pk=branch).exists()
    assert Run.objects.get(pk=run.pk).last_checkpoint_id == ids[-1]


def test_a_run_cannot_point_at_another_runs_checkpoint_or_at_none_stored(project: Project) -> None:
    run, _ = _run_with_checkpoints(project, 1)
    _other, other_ids = _run_with_checkpoints(project, 1)
    for target in (other_ids[0], max(other_ids) + 1000):
        with pytest.raises(IntegrityError, match="run_last_checkpoint_of_run"):
            _point(run, target)


def _point(run: Run, checkpoint_id: int) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE runs_app_run SET last_checkpoint_id = %s WHERE id = %s", [checkpoint_id, run.pk])
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
