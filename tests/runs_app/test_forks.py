"""Forks from a checkpoint (issue 20, part 3) through the API: the new run, its first checkpoint whose parent is
the source, the same / another / a new session, the recorded who, why and diff, and the refusals."""

from typing import Any

import pytest

from harness.models import AuditEntry, Project
from runs_app.models import Checkpoint, Run, RunEvent
from runs_app.services import checkpoint_create, state_diff
from sessions_app.models import Session
from tests import factories
from tests.api.conftest import World, build_world

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def world(project: Project) -> World:
    return build_world(project, "acme")


def _source(world: World) -> Checkpoint:
    first = checkpoint_create(project=world.project, run_id=world.run.pk, label="plan", state={"step": 1})
    return checkpoint_create(project=world.project, run_id=world.run.pk, parent_id=first.pk, label="drafted",
                             cursor={"node": "draft"}, state={"step": 2, "draft": {"title": "A", "words": 900}},
                             artifact_fingerprints={"outline": "abc"}, pending_gate={"tool": "publish"})


def _fork(world: World, checkpoint: Checkpoint, **body: Any) -> Any:
    return world.agent.post(f"/api/v1/checkpoints/{checkpoint.pk}/fork/", {"reason": "try a shorter draft", **body})


def test_a_fork_is_a_new_run_whose_first_checkpoint_copies_the_source_and_names_it_as_parent(world: World) -> None:
    source = _source(world)

    response = _fork(world, source)

    assert response.status_code == 201, response.content
    body = response.json()
    run = Run.objects.get(pk=body["run"]["id"])
    fork = Checkpoint.objects.get(pk=body["checkpoint"]["id"])
    assert run.pk != world.run.pk and run.session_id == world.run.session_id and run.task_id == world.run.task_id
    assert (run.status, run.last_checkpoint_id, run.cursor) == ("created", fork.pk, {"node": "draft"})
    assert (fork.run_id, fork.parent_id, fork.depth) == (run.pk, source.pk, source.depth + 1)
    assert (fork.state, fork.cursor, fork.artifact_fingerprints, fork.pending_gate) == (
        source.state, source.cursor, source.artifact_fingerprints, source.pending_gate)
    assert body["diff"] == {"added": {}, "removed": {}, "changed": {}}
    # The lineage from the fork runs through the source into the source run's history.
    lineage = world.agent.get(f"/api/v1/checkpoints/{fork.pk}/lineage/").json()
    assert [c["id"] for c in lineage] == [fork.pk, source.pk, source.parent_id]


def test_who_why_and_the_diff_are_recorded_on_both_runs_and_in_the_audit(world: World) -> None:
    source = _source(world)
    edited = {"step": 2, "draft": {"title": "B", "words": 900}, "style": "terse"}

    body = _fork(world, source, state=edited).json()

    diff = {"added": {"style": "terse"}, "removed": {}, "changed": {"draft/title": {"from": "A", "to": "B"}}}
    assert body["diff"] == diff and body["checkpoint"]["state"] == edited
    forked = RunEvent.objects.get(run_id=body["run"]["id"], kind="run.forked").data
    assert forked == {"from_checkpoint": source.pk, "from_run": world.run.pk, "by": "agent:acme-agent",
                      "reason": "try a shorter draft", "edited": True, "diff": diff,
                      "session": world.session.pk, "new_session": False, "checkpoint": body["checkpoint"]["id"]}
    made = RunEvent.objects.get(run_id=world.run.pk, kind="run.fork_made").data
    assert (made["to_run"], made["to_checkpoint"], made["checkpoint"]) == (
        body["run"]["id"], body["checkpoint"]["id"], source.pk)
    [audit] = AuditEntry.objects.filter(action="checkpoint.forked")
    assert (audit.actor, audit.target_type, audit.target_id) == ("agent:acme-agent", "checkpoint", str(source.pk))
    assert audit.data["diff"] == diff and audit.data["reason"] == "try a shorter draft"


def test_a_fork_goes_to_another_session_or_a_new_one_made_like_the_source_runs(world: World) -> None:
    source = _source(world)
    other = factories.make_session(world.project, ref="S-other")

    into_other = _fork(world, source, session=other.pk).json()
    into_new = _fork(world, source, new_session=True).json()

    assert Run.objects.get(pk=into_other["run"]["id"]).session_id == other.pk
    made = Session.objects.get(pk=into_new["run"]["session"])
    assert made.pk not in (world.session.pk, other.pk)
    assert (made.role, made.memory_policy) == (world.session.role, world.session.memory_policy)
    assert made.metadata == {"forked_from_checkpoint": source.pk, "forked_from_session": world.session.pk}
    both = _fork(world, source, session=other.pk, new_session=True)
    assert both.status_code == 400


def test_a_fork_needs_a_reason_an_object_state_and_a_checkpoint_and_session_of_the_callers_project(
    world: World, other_project: Project
) -> None:
    source = _source(world)
    other = build_world(other_project, "globex")
    runs = Run.objects.count()

    assert world.agent.post(f"/api/v1/checkpoints/{source.pk}/fork/", {"reason": "  "}).status_code == 400
    assert _fork(world, source, state=[1, 2]).status_code == 400
    assert other.agent.post(f"/api/v1/checkpoints/{source.pk}/fork/", {"reason": "x"}).status_code == 404
    assert _fork(world, source, session=other.session.pk).status_code == 404
    assert world.reader.post(f"/api/v1/checkpoints/{source.pk}/fork/", {"reason": "x"}).status_code == 403
    task_only = checkpoint_create(project=world.project, task_id=world.task.pk, label="task's own")
    refused = _fork(world, task_only)
    assert (refused.status_code, refused.json()["code"]) == (409, "checkpoint_has_no_run")
    assert Run.objects.count() == runs and not AuditEntry.objects.filter(action="checkpoint.forked").exists()


def test_state_diff_walks_objects_and_compares_anything_else_whole() -> None:
    assert state_diff({"a": 1, "b": {"c": [1], "d": 1}, "e": 1}, {"a": 1, "b": {"c": [1, 2]}, "e": True}) == {
        "added": {}, "removed": {"b/d": 1},
        "changed": {"b/c": {"from": [1], "to": [1, 2]}, "e": {"from": 1, "to": True}}}
    assert state_diff({}, {}) == {"added": {}, "removed": {}, "changed": {}}
