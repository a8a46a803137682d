"""The lineage read: one statement, rows decoded once, answering what the checkpoint serializer says."""

import datetime as dt
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.fields import DateTimeField

from harness.db import api_time_sql
from harness.http.errors import NotFoundError
from harness.models import Project
from runs_app.api.checkpoints import CheckpointOutSerializer
from runs_app.models import Checkpoint
from runs_app.selectors import checkpoints as checkpoints_sel
from runs_app.services import checkpoint_create
from tests import factories

LABEL = 'ünïcode — "quoted" back\\slash\ttab\nnewline'  # what the SQL must escape as JSON


def _chain(project: Project, n: int) -> list[Checkpoint]:
    run = factories.make_run(project, task_id=factories.make_task(project).pk)
    chain: list[Checkpoint] = []
    for k in range(n):
        chain.append(checkpoint_create(
            project=project, run_id=run.pk, parent_id=chain[-1].pk if chain else None, label=f"step {k} {LABEL}",
            cursor={"node": f"n{k}", "nested": {"b": [1, 2.5, None], "a": True}}, state={"k": k, "big": 2**62},
            artifact_fingerprints={"draft": "sha256:" + "0" * 64} if k % 2 else {},
            pending_gate={"tool": "publish", "arguments": {"n": k}} if k == n - 1 else None,
        ))
    return chain


@pytest.mark.django_db
def test_lineage_rows_are_the_serializers_representation_newest_first(project: Project) -> None:
    chain = _chain(project, 4)
    projects = [project.pk]
    with CaptureQueriesContext(connection) as queries:
        rows = checkpoints_sel.checkpoint_lineage(project_ids=projects, checkpoint_id=chain[-1].pk)
    assert len(queries) == 1  # the scope check, the walk and the rows
    expected = [CheckpointOutSerializer(Checkpoint.objects.get(pk=c.pk)).data for c in reversed(chain)]
    rendered = [{**row, "created_at": CheckpointOutSerializer().fields["created_at"].to_representation(
        row["created_at"])} for row in rows]
    assert rendered == expected
    assert [row["created_at"] for row in rows] == [Checkpoint.objects.get(pk=c.pk).created_at for c in reversed(chain)]


@pytest.mark.django_db
def test_lineage_starts_anywhere_stops_at_the_cap_and_stays_in_its_project(
    project: Project, other_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    chain = _chain(project, 5)
    projects = [project.pk]
    middle = checkpoints_sel.checkpoint_lineage(project_ids=projects, checkpoint_id=chain[2].pk)
    assert [row["id"] for row in middle] == [chain[2].pk, chain[1].pk, chain[0].pk]
    assert [row["parent"] for row in middle] == [chain[1].pk, chain[0].pk, None]
    monkeypatch.setattr(checkpoints_sel, "MAX_LINEAGE", 3)
    capped = checkpoints_sel.checkpoint_lineage(project_ids=projects, checkpoint_id=chain[4].pk)
    assert [row["depth"] for row in capped] == [4, 3, 2]
    with pytest.raises(NotFoundError):
        checkpoints_sel.checkpoint_lineage(project_ids=[other_project.pk], checkpoint_id=chain[4].pk)


@pytest.mark.django_db
def test_the_apis_lineage_text_is_the_serializers_representation_as_written_by_postgresql(project: Project) -> None:
    chain = _chain(project, 4)
    with CaptureQueriesContext(connection) as queries:
        text = checkpoints_sel.checkpoint_lineage_json(project_ids=[project.pk], checkpoint_id=chain[-1].pk)
    assert len(queries) == 1
    expected = [CheckpointOutSerializer(Checkpoint.objects.get(pk=c.pk)).data for c in reversed(chain)]
    assert json.loads(text) == expected
    with pytest.raises(NotFoundError):
        checkpoints_sel.checkpoint_lineage_json(project_ids=[project.pk + 1000], checkpoint_id=chain[-1].pk)


@pytest.mark.django_db
@pytest.mark.parametrize("micro", [0, 1, 120000, 999999])
def test_postgresql_renders_a_time_as_drf_does(micro: int) -> None:
    # A whole second: DRF leaves the fraction out, and so must the SQL.
    moment = dt.datetime(2026, 1, 2, 3, 4, 5, micro, tzinfo=dt.UTC)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {api_time_sql('t')} FROM (SELECT %s::timestamptz AS t) x", [moment])  # noqa: S608 - the SQL is the module's own
        rendered = cursor.fetchone()[0]
    assert json.loads(rendered) == DateTimeField().to_representation(moment)
