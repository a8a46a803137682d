"""What the model may see is the session's memory policy and role (issue 16, section 2; DESIGN.md, "Context").

Each policy projects its own part and nothing else; a semantic reviewer is never handed retrieved memory; a
run that received a handoff sees the packet and nothing of the origin's transcript; every projection records
its manifest (each part with the rule that admitted it, and what was left out), and costs two statements.
"""

import datetime as dt
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from harness.actors import Actor
from harness.canonical import digest
from memory_app.context import context_project
from memory_app.models import ContextSnapshot
from memory_app.services import memory_write
from runs_app.services import checkpoint_create, handoff_accept, handoff_issue, run_transition
from sessions_app.services import session_items_append
from tests import factories
from tests.api.conftest import ApiClient

pytestmark = pytest.mark.django_db
AGENT = Actor.for_agent("writer")


def _run_in(project, policy: str, *, role: str = "writer", items: int = 6, **session: Any):  # type: ignore[no-untyped-def]
    """A run of a fresh session with `items` earlier items (of another run) and two of its own."""
    s = factories.make_session(project, role=role, memory_policy=policy, **session)
    earlier = factories.make_run(project, s)
    run = factories.make_run(project, s, active_agent="writer")
    session_items_append(project=project, session_id=s.pk, items=[
        {"role": "user", "content": {"text": f"earlier {i}"}, "run_id": earlier.pk} for i in range(items)])
    session_items_append(project=project, session_id=s.pk, items=[
        {"role": "user", "content": {"text": f"mine {i}"}, "run_id": run.pk} for i in range(2)])
    return run


def _remember(project, run, content: str) -> int:  # type: ignore[no-untyped-def]
    """A project fact the projection may draw on, learnt in another session (a session that keeps no memory, or a
    reviewer's, could not have written it: memory_app.policy.session_verdict)."""
    learnt = factories.make_run(project, factories.make_session(project), active_agent="writer")
    return memory_write(project=project, actor=AGENT, scope="project", content=content,
                        source_run_id=learnt.pk).record.pk


def _texts(snapshot: ContextSnapshot) -> list[str]:
    return [i["text"] for i in snapshot.content["items"]]


def _rules(snapshot: ContextSnapshot) -> set[str]:
    return {e["rule"] for e in snapshot.manifest["entries"]}


def test_none_projects_only_the_current_runs_items(project) -> None:  # type: ignore[no-untyped-def]
    run = _run_in(project, "none")
    _remember(project, run, "The lamp burns whale oil.")

    snapshot = context_project(project=project, run_id=run.pk, query="lamp")

    assert _texts(snapshot) == ["mine 0", "mine 1"]
    assert snapshot.memory_ids == [] and _rules(snapshot) == {"current_items"}
    assert {o["kind"] for o in snapshot.manifest["left_out"]} == {"memory", "transcript"}


def test_bounded_projects_the_newest_n_items_within_the_budget(project) -> None:  # type: ignore[no-untyped-def]
    run = _run_in(project, "bounded", context_items=3)
    _remember(project, run, "The lamp burns whale oil.")

    snapshot = context_project(project=project, run_id=run.pk, query="lamp")
    assert _texts(snapshot) == ["earlier 5", "mine 0", "mine 1"] and snapshot.memory_ids == []
    assert _rules(snapshot) == {"bounded_window"}

    tight = context_project(project=project, run_id=run.pk, budget_chars=13)
    assert _texts(tight) == ["mine 0", "mine 1"] and tight.used_chars == 12
    assert any(o["kind"] == "item" and o.get("count") == 1 for o in tight.manifest["left_out"])


def test_session_projects_the_sessions_items(project) -> None:  # type: ignore[no-untyped-def]
    run = _run_in(project, "session", context_items=3)
    snapshot = context_project(project=project, run_id=run.pk)
    assert _texts(snapshot) == [*(f"earlier {i}" for i in range(6)), "mine 0", "mine 1"]
    assert [e["seq"] for e in snapshot.manifest["entries"]] == snapshot.item_seqs
    assert _rules(snapshot) == {"session_items"}


def test_external_retrieves_memory_only_on_request(project) -> None:  # type: ignore[no-untyped-def]
    run = _run_in(project, "external")
    lamp = _remember(project, run, "The lamp burns whale oil.")
    _remember(project, run, "The rope is frayed.")

    unasked = context_project(project=project, run_id=run.pk)
    asked = context_project(project=project, run_id=run.pk, query="light the lamp")

    assert unasked.memory_ids == [] and _texts(unasked) == ["mine 0", "mine 1"]
    assert asked.memory_ids == [lamp] and _texts(asked) == ["mine 0", "mine 1"]
    assert {"kind": "memory", "id": lamp, "scope": "project", "rule": "retrieved_on_request",
            "chars": len("The lamp burns whale oil.")} in asked.manifest["entries"]


def test_a_semantic_reviewer_is_never_handed_retrieved_memory(project) -> None:  # type: ignore[no-untyped-def]
    run = _run_in(project, "external", role="semantic_reviewer")
    _remember(project, run, "Expected verdict: pass.")
    snapshot = context_project(project=project, run_id=run.pk, query="verdict")
    assert snapshot.memory_ids == []
    assert {"kind": "memory", "why": "a semantic_reviewer is never handed retrieved memory"} in (
        snapshot.manifest["left_out"])


def test_checkpoint_only_projects_the_checkpoints_state_and_no_transcript(project) -> None:  # type: ignore[no-untyped-def]
    run = _run_in(project, "checkpoint_only")
    checkpoint = checkpoint_create(project=project, run_id=run.pk, label="before review",
                                   state={"plan_version": 1, "open_question": "who lit the lamp"})

    snapshot = context_project(project=project, run_id=run.pk)

    assert snapshot.content["items"] == [] and snapshot.item_seqs == []
    assert snapshot.content["checkpoint"]["id"] == checkpoint.pk
    assert snapshot.content["checkpoint"]["state"]["open_question"] == "who lit the lamp"
    assert [(e["kind"], e["id"], e["rule"]) for e in snapshot.manifest["entries"]] == [
        ("checkpoint", checkpoint.pk, "checkpoint_state")]


def test_the_receiver_of_a_handoff_sees_the_packet_and_nothing_of_the_origins_transcript(project) -> None:  # type: ignore[no-untyped-def]
    origin = _run_in(project, "session", role="writer")  # its session holds "earlier ..." and "mine ..."
    run_transition(project=project, run_id=origin.pk, to="running", expected_version=None)
    reviewer_session = factories.make_session(project, role="semantic_reviewer", memory_policy="bounded")
    handoff = handoff_issue(
        project=project, origin_run_id=origin.pk, receiver_session_id=reviewer_session.pk,
        objective="Judge the chapter.", inputs=[{"name": "chapter", "fingerprint": digest("text"), "value": "text"}],
        allowed_capabilities=[], output_schema={"type": "object"}, deadline=timezone.now() + dt.timedelta(hours=1),
        actor=AGENT,
    )
    receiver_run = factories.make_run(project, reviewer_session)
    handoff_accept(project=project, handoff_id=handoff.pk, receiver_run_id=receiver_run.pk, actor=AGENT)

    snapshot = context_project(project=project, run_id=receiver_run.pk)

    assert snapshot.content["packet"]["fingerprint"] == handoff.packet_fingerprint
    assert snapshot.content["packet"]["packet"] == handoff.packet
    assert snapshot.content["items"] == []  # its own session is empty; the origin's is never read
    assert "earlier" not in str(snapshot.content) and "mine" not in str(snapshot.content)
    assert snapshot.manifest["entries"][0] == {
        "kind": "packet", "handoff": handoff.pk, "fingerprint": handoff.packet_fingerprint, "rule": "handoff_packet",
        "chars": snapshot.used_chars}


def test_a_projection_is_two_statements_whatever_the_policy(project) -> None:  # type: ignore[no-untyped-def]
    for policy in ("none", "bounded", "session", "external", "checkpoint_only"):
        run = _run_in(project, policy)
        _remember(project, run, f"The lamp is {policy}.")
        with CaptureQueriesContext(connection) as queries:
            context_project(project=project, run_id=run.pk, query="lamp")
        assert len(queries) == 2, [q["sql"] for q in queries]


def test_the_api_projects_with_the_sessions_budget_and_shows_the_manifest(project) -> None:  # type: ignore[no-untyped-def]
    run = _run_in(project, "bounded", context_budget_chars=20)
    agent = ApiClient(factories.make_agent_token(project, name="writer")[1])

    response = agent.post("/api/v1/memory/context/", {"run_id": run.pk})

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["budget_chars"] == 20 and body["used_chars"] <= 20
    assert body["manifest"]["policy"] == "bounded" and body["manifest"]["budget_chars"] == 20
    assert [e["seq"] for e in body["manifest"]["entries"]] == body["item_seqs"]
    assert agent.get(f"/api/v1/memory/context/{body['id']}/").json()["manifest"] == body["manifest"]
