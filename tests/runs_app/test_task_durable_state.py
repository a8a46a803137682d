import json

import pytest

from runs_app.models import Task
from runs_app.services import checkpoint_create, task_save
from tests import factories
from tests.subprocesses import run_python

# Runs in a fresh interpreter: it gets only the JSON on stdin and the database, no object from us.
ADVANCE = """
import json, sys
import django
django.setup()
from harness.models import Project
from runs_app.models import Task
from runs_app.services import checkpoint_create, task_save

sent = json.load(sys.stdin)
task = Task.objects.get(pk=sent["id"])
loaded = {k: getattr(task, k) for k in sent["state"]}
assert loaded == sent["state"], (loaded, sent["state"])
node = task.pending_nodes[0]
saved = task_save(project=task.project_id, task_id=task.pk, expected_version=task.version,
                  completed_nodes=task.completed_nodes + [node], pending_nodes=task.pending_nodes[1:],
                  artifact_refs={**task.artifact_refs, node: "sha256:" + "d" * 8})
cp = checkpoint_create(project=task.project_id, task_id=task.pk, parent_id=task.latest_checkpoint_id,
                       cursor={"node": node, "done": True})
print(json.dumps({"version": saved.version, "checkpoint": cp.pk, "node": node}))
"""

STATE_FIELDS = ["objective", "constraints", "plan", "plan_version", "completed_nodes", "pending_nodes",
                "artifact_refs", "schema_version", "status", "version", "latest_checkpoint_id"]


@pytest.mark.django_db(transaction=True)
def test_task_state_is_advanced_by_another_process_from_the_database_alone():
    project = factories.make_project("novel")
    task = factories.make_task(project, objective="Finish the novel", plan=["outline", "draft", "review"],
                               constraints=["no spoilers"])
    day1 = checkpoint_create(project=project, task_id=task.pk, cursor={"node": "start"})
    task = task_save(project=project, task_id=task.pk, expected_version=Task.objects.get(pk=task.pk).version,
                     completed_nodes=["outline"], pending_nodes=["draft", "review"])
    sent = {"id": task.pk, "state": {k: getattr(task, k) for k in STATE_FIELDS}}

    reply = json.loads(run_python(ADVANCE, stdin=json.dumps(sent)))

    task.refresh_from_db()
    assert reply["node"] == "draft"
    assert task.completed_nodes == ["outline", "draft"] and task.pending_nodes == ["review"]
    assert task.artifact_refs == {"draft": "sha256:dddddddd"}
    assert task.latest_checkpoint_id == reply["checkpoint"]
    assert task.latest_checkpoint.parent_id == day1.pk
    assert task.version == reply["version"] + 1  # the checkpoint bumped it once more
    assert task.constraints == ["no spoilers"] and task.objective == "Finish the novel"
