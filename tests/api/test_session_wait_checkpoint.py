"""Issue 16, section 5: a session that starts waiting for its user checkpoints its running run in the same
transaction (seed 002 section 06), as an approval or an external wait does; a resume from it works."""

from typing import Any

import pytest

from runs_app.models import Checkpoint, Run
from sessions_app.models import Session
from tests.api.conftest import ApiClient, World


def _ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.content
    return response.json()


def _move(agent: ApiClient, session_id: int, to: str) -> Any:
    """A session transition at the version the agent reads first."""
    version = agent.get(f"/api/v1/sessions/{session_id}/").json()["version"]
    return agent.post(f"/api/v1/sessions/{session_id}/transition/", {"to": to, "expected_version": version})


def _running_session(agent: ApiClient) -> dict[str, Any]:
    session = _ok(agent.post("/api/v1/sessions/", {"role": "writer", "memory_policy": "session"}), 201)
    return _ok(_move(agent, session['id'], "running"))


def _running_run(agent: ApiClient, session_id: int) -> dict[str, Any]:
    run = _ok(agent.post("/api/v1/runs/", {"session": session_id}), 201)
    return _ok(agent.post(f"/api/v1/runs/{run['id']}/transition/", {"to": "running",
                                                                      "expected_version": run["version"]}))


def _checkpoint(agent: ApiClient, run_id: int, **body: Any) -> dict[str, Any]:
    return _ok(agent.post("/api/v1/checkpoints/", {"run": run_id, **body}), 201)


@pytest.mark.django_db
def test_a_session_awaiting_its_user_checkpoints_its_running_run_and_the_run_resumes_from_it(world: World) -> None:
    agent = world.agent
    session = _running_session(agent)
    run = _running_run(agent, session["id"])
    before = _checkpoint(agent, run["id"], label="drafted", cursor={"node": "ask"},
                         state={"draft": "<script>alert(1)</script>", "plan_version": 3},
                         artifact_fingerprints={"draft.md": "sha256:ab"})

    waiting_session = _ok(_move(agent, session['id'], "awaiting_user"))

    assert waiting_session["status"] == "awaiting_user"
    latest = _ok(agent.get(f"/api/v1/runs/{run['id']}/"))["last_checkpoint"]
    assert latest != before["id"]
    waiting = _ok(agent.get(f"/api/v1/checkpoints/{latest}/"))
    assert waiting["parent"] == before["id"]
    assert (waiting["state"], waiting["cursor"], waiting["artifact_fingerprints"]) == (
        before["state"], {"node": "ask"}, {"draft.md": "sha256:ab"})
    assert waiting["label"] == "waiting for its user"
    assert waiting["pending_gate"] == {"user": True, "session": session["id"], "cursor": {"node": "ask"}}
    assert _ok(agent.get(f"/api/v1/runs/{run['id']}/"))["status"] == "running"  # the run itself goes on

    # The user answers: the session runs again and the agent continues from the waiting checkpoint...
    _ok(_move(agent, session['id'], "running"))
    resumed = _checkpoint(agent, run["id"], parent=waiting["id"], label="answered",
                          cursor={"node": "revise"}, state={**waiting["state"], "answer": "yes"})
    lineage = _ok(agent.get(f"/api/v1/checkpoints/{resumed['id']}/lineage/"))
    assert [c["id"] for c in lineage] == [resumed["id"], waiting["id"], before["id"]]
    # ...or another run is forked from it, with the run's state as it waited.
    fork = _ok(agent.post(f"/api/v1/checkpoints/{waiting['id']}/fork/", {"reason": "try the other answer"}), 201)
    assert (fork["checkpoint"]["parent"], fork["checkpoint"]["state"]) == (waiting["id"], before["state"])
    assert fork["diff"] == {"added": {}, "removed": {}, "changed": {}}


@pytest.mark.django_db
def test_a_run_with_no_checkpoint_gets_its_first_at_its_cursor(world: World) -> None:
    session = _running_session(world.agent)
    run = _running_run(world.agent, session["id"])
    Run.objects.filter(pk=run["id"]).update(cursor={"node": "start"})

    _ok(_move(world.agent, session['id'], "awaiting_user"))

    first = Checkpoint.objects.get(run_id=run["id"])
    assert (first.parent_id, first.cursor, first.state) == (None, {"node": "start"}, {})
    assert Run.objects.get(pk=run["id"]).last_checkpoint_id == first.pk


@pytest.mark.django_db
def test_only_the_running_run_of_that_session_is_checkpointed(world: World) -> None:
    session = _running_session(world.agent)
    other = _running_session(world.agent)
    elsewhere = _running_run(world.agent, other["id"])
    created = _ok(world.agent.post("/api/v1/runs/", {"session": session["id"]}), 201)
    before = Checkpoint.objects.count()

    _ok(_move(world.agent, session['id'], "awaiting_user"))

    assert Checkpoint.objects.count() == before  # no running run in it: nothing to checkpoint
    assert Run.objects.get(pk=elsewhere["id"]).last_checkpoint_id is None
    assert Run.objects.get(pk=created["id"]).last_checkpoint_id is None


@pytest.mark.django_db
def test_a_refused_move_writes_no_checkpoint(world: World) -> None:
    session = _running_session(world.agent)
    run = _running_run(world.agent, session["id"])

    stale = world.agent.post(f"/api/v1/sessions/{session['id']}/transition/",
                             {"to": "awaiting_user", "expected_version": session["version"] - 1})

    assert stale.status_code == 409 and stale.json()["code"]
    assert Checkpoint.objects.filter(run_id=run["id"]).count() == 0
    assert Session.objects.get(pk=session["id"]).status == "running"


@pytest.mark.django_db
def test_another_projects_session_cannot_be_moved(world: World, other_world: World) -> None:
    session = _running_session(world.agent)
    run = _running_run(world.agent, session["id"])

    foreign = other_world.agent.post(f"/api/v1/sessions/{session['id']}/transition/",
                                     {"to": "awaiting_user", "expected_version": session["version"]})

    assert foreign.status_code == 404
    assert Checkpoint.objects.filter(run_id=run["id"]).count() == 0
