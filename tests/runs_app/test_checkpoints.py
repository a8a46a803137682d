import pytest
from django.db import IntegrityError, transaction

from harness.canonical import digest
from harness.http.errors import ConflictError, ValidationFailed
from runs_app.models import Checkpoint, Run, Task
from runs_app.services import checkpoint_create, run_claim
from tests import factories


@pytest.mark.django_db
def test_checkpoints_form_a_lineage_and_become_latest(project):
    task = factories.make_task(project, plan=["a", "b"])
    run = factories.make_run(project, task_id=task.pk)
    day1 = checkpoint_create(project=project, run_id=run.pk, cursor={"node": "a"}, label="day 1")
    day2 = checkpoint_create(project=project, run_id=run.pk, parent_id=day1.pk, cursor={"node": "b"})
    assert (day1.task_id, day2.parent_id, day2.depth) == (task.pk, day1.pk, 1)
    assert Run.objects.get(pk=run.pk).last_checkpoint_id == day2.pk
    assert Run.objects.get(pk=run.pk).cursor == {"node": "b"}
    assert Task.objects.get(pk=task.pk).latest_checkpoint_id == day2.pk


@pytest.mark.django_db
def test_a_later_run_of_the_same_task_continues_the_task_lineage(project):
    task = factories.make_task(project)
    first = checkpoint_create(project=project, run_id=factories.make_run(project, task_id=task.pk).pk)
    later_run = factories.make_run(project, task_id=task.pk)
    second = checkpoint_create(project=project, run_id=later_run.pk, parent_id=first.pk)
    assert second.parent_id == first.pk


@pytest.mark.django_db
def test_parent_from_another_lineage_is_refused(project):
    elsewhere = checkpoint_create(project=project, run_id=factories.make_run(project).pk)
    with pytest.raises(ValidationFailed) as caught:
        checkpoint_create(project=project, run_id=factories.make_run(project).pk, parent_id=elsewhere.pk)
    assert caught.value.code == "parent_not_in_lineage"


@pytest.mark.django_db
def test_content_hash_is_computed_by_the_server_over_canonical_content(project):
    run = factories.make_run(project)
    a = checkpoint_create(project=project, run_id=run.pk, state={"b": 1, "a": [1, 2]})
    b = checkpoint_create(project=project, run_id=run.pk, state={"a": [1, 2], "b": 1})
    assert a.content_hash == b.content_hash and len(a.content_hash) == 64
    child = checkpoint_create(project=project, run_id=run.pk, parent_id=a.pk, state={"a": [1, 2], "b": 1})
    assert child.content_hash != a.content_hash  # the parent's hash is part of the child's
    assert a.content_hash != digest({"a": [1, 2], "b": 1})


@pytest.mark.django_db
def test_checkpoints_are_immutable_in_the_database(project):
    cp = checkpoint_create(project=project, run_id=factories.make_run(project).pk)
    with pytest.raises(IntegrityError), transaction.atomic():
        Checkpoint.objects.filter(pk=cp.pk).update(label="rewritten")


@pytest.mark.django_db
def test_a_stale_lease_holder_cannot_checkpoint(project):
    run = factories.make_run(project)
    run_claim(project=project, run_id=run.pk, owner="a", lease_seconds=30)
    Run.objects.filter(pk=run.pk).update(lease_owner="b")  # b took over after a's lease expired
    with pytest.raises(ConflictError) as caught:
        checkpoint_create(project=project, run_id=run.pk, lease_owner="a")
    assert caught.value.code == "lease_lost"
    assert not Checkpoint.objects.filter(run=run).exists()
