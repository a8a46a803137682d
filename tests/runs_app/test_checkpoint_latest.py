import pytest

from harness.http.errors import NotFoundError
from runs_app.models import Checkpoint
from runs_app.selectors.checkpoints import checkpoint_latest
from runs_app.services import checkpoint_create
from tests import factories


@pytest.mark.django_db
def test_latest_checkpoint_follows_the_runs_pointer_to_the_newest(project):
    run = factories.make_run(project)
    assert checkpoint_latest(project=project, run_id=run.pk) is None
    first = checkpoint_create(project=project, run_id=run.pk, state={"n": 1})
    second = checkpoint_create(project=project.pk, run_id=run.pk, parent_id=first.pk, state={"n": 2})
    other = factories.make_run(project)
    checkpoint_create(project=project, run_id=other.pk, state={"n": 3})

    latest = checkpoint_latest(project=project.pk, run_id=run.pk)

    assert latest is not None
    assert (latest.pk, latest.parent_id, latest.state, latest.depth) == (second.pk, first.pk, {"n": 2}, 1)
    stored = Checkpoint.objects.get(pk=second.pk)
    assert {f.attname: getattr(latest, f.attname) for f in Checkpoint._meta.concrete_fields} == {
        f.attname: getattr(stored, f.attname) for f in Checkpoint._meta.concrete_fields}


@pytest.mark.django_db
def test_latest_checkpoint_of_another_tenants_run_is_not_found(project, other_project):
    run = factories.make_run(project)
    checkpoint_create(project=project, run_id=run.pk, state={"secret": True})
    with pytest.raises(NotFoundError):
        checkpoint_latest(project=other_project, run_id=run.pk)
    with pytest.raises(NotFoundError):
        checkpoint_latest(project=project, run_id=run.pk + 10_000)
