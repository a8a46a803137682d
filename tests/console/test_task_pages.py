"""The task pages (/tasks/, /tasks/<id>/): objective, plan, durable state and its history, what its runs did."""

import re

import pytest
from django.db import DatabaseError, connection, transaction
from django.urls import reverse

from runs_app.models import Task, TaskStateVersion, TaskStatus
from runs_app.services import task_save, task_transition
from tests import factories
from tests.console.scenario import Scene

pytestmark = pytest.mark.django_db


def test_each_save_of_a_tasks_state_is_kept_whichever_door_saved_it(project) -> None:  # type: ignore[no-untyped-def]
    task = factories.make_task(project, ref="T-h", plan=["outline", "draft"])
    task = task_save(project=project, task_id=task.pk, expected_version=task.version,
                     completed_nodes=["outline"], pending_nodes=["draft"])
    task = task_transition(project=project, task_id=task.pk, to=TaskStatus.ACTIVE, expected_version=task.version)
    with connection.cursor() as cursor:  # another door (SQL, the admin): the trigger records it too
        cursor.execute("UPDATE runs_app_task SET artifact_refs = '{\"outline\": \"o1\"}', version = version + 1 "
                       "WHERE id = %s", [task.pk])
    history = list(TaskStateVersion.objects.filter(task=task).order_by("id").values_list("version", "state"))
    # Created (v1), saved (v2); the status move (v3) changed no state; the SQL update (v4).
    assert [version for version, _ in history] == [1, 2, 4]
    assert history[0][1]["pending_nodes"] == ["outline", "draft"] and history[1][1]["completed_nodes"] == ["outline"]
    assert history[2][1]["artifact_refs"] == {"outline": "o1"}
    with pytest.raises(DatabaseError), transaction.atomic():
        TaskStateVersion.objects.filter(task=task).update(state={})


def test_the_task_page_shows_objective_plan_state_history_and_its_runs_work(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    task = Task.objects.get(pk=scene.task.pk)
    saved = task_save(project=scene.project, task_id=task.pk, expected_version=task.version,
                      completed_nodes=["locate"], pending_nodes=["patch", "test"],
                      artifact_refs={"locate": "auth.py:42"})
    body = reviewer_client.get(reverse("runs:task_detail", args=[task.pk])).content.decode()
    assert "Fix the login bug" in body
    plan = re.findall(r'<li class="node-(\w+)" data-state="\w+"><span class="node-name">(\w+)</span>', body)
    assert plan == [("completed", "locate"), ("current", "patch"), ("pending", "test")]
    history = re.findall(r'<li data-version="(\d+)"><strong>version', body)
    assert history == [str(saved.version), "1"]  # created, then saved (status moves in between save nothing)
    assert "<code>artifact_refs</code> = <code>{&quot;locate&quot;: &quot;auth.py:42&quot;}</code>" in body
    assert f'data-run="{scene.run.pk}"' in body  # R-101 works on T-7
    for checkpoint in scene.checkpoints:
        assert f'data-checkpoint="{checkpoint.pk}"' in body
    assert reverse("runs:approval_detail", args=[scene.approval.pk]) in body and "git.push" in body
    assert reverse("runs:task_lineage", args=[task.pk]) in body


def test_the_task_list_filters_and_links_each_task(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    other = factories.make_task(scene.project, ref="T-9", objective="Write the release notes")
    url = reverse("runs:task_list")
    body = reviewer_client.get(url).content.decode()
    assert f'data-task="{scene.task.pk}"' in body and f'data-task="{other.pk}"' in body
    assert reverse("runs:task_detail", args=[other.pk]) in body
    body = reviewer_client.get(f"{url}?q=release").content.decode()
    assert f'data-task="{other.pk}"' in body and f'data-task="{scene.task.pk}"' not in body
    assert f'data-task="{other.pk}"' not in reviewer_client.get(f"{url}?status=active").content.decode()


def test_a_member_of_a_sees_none_of_b_tasks(scene: Scene, other_scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    body = reviewer_client.get(reverse("runs:task_list")).content.decode()
    assert "T-7-b" not in body and f'data-task="{other_scene.task.pk}"' not in body
    assert reviewer_client.get(reverse("runs:task_detail", args=[other_scene.task.pk])).status_code == 404


def test_agent_text_in_a_task_is_shown_as_text(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    payload = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    task = factories.make_task(project, ref="T-x", objective=payload, plan=[payload, {"node": payload}],
                               constraints=[payload])
    for url in (reverse("runs:task_list"), reverse("runs:task_detail", args=[task.pk])):
        body = reviewer_client.get(url).content.decode()
        assert "<script>alert" not in body and "<img src=x" not in body, url
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body, url
