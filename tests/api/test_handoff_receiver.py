"""A handoff's receiver holds a credential of its own (issue 16 part 1: "the receiver sees the packet and nothing
of the origin's transcript"): the issue's answer carries `receiver_token`, which reads that handoff, accepts it
and returns its result through the API, and reads nothing of the origin (its session's items, its run's events
and checkpoints, memory). tests/api/test_access.py tries it on every other operation of the schema."""

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from harness.models import ApiToken
from runs_app.models import Handoff, HandoffStatus, Run
from runs_app.services import run_event_append, run_transition
from tests import factories
from tests.api.conftest import ApiClient, VersionReadingClient, World

pytestmark = pytest.mark.django_db

SCHEMA = {"type": "object", "required": ["verdict"], "properties": {"verdict": {"type": "string"}}}


def issue_with_receiver(world: World) -> tuple[dict[str, Any], str]:
    """Issue a handoff through the API from a running run of the world's session (which holds transcript,
    events and a checkpoint) to a fresh semantic_reviewer session; its answer and the receiver's token."""
    origin = factories.make_run(world.project, world.session)
    run_transition(project=world.project, run_id=origin.pk, to="running", expected_version=None)
    run_event_append(project=world.project, run_id=origin.pk, kind="note", data={"secret": "origin's reasoning"})
    receiver = factories.make_session(world.project, role="semantic_reviewer", memory_policy="none")
    issued = world.agent.post(f"/api/v1/runs/{origin.pk}/handoffs/", {
        "receiver_session": receiver.pk, "objective": "Review chapter 3.", "output_schema": SCHEMA,
        "deadline": (timezone.now() + dt.timedelta(hours=1)).isoformat()})
    assert issued.status_code == 201, issued.content
    return issued.json(), issued.json()["receiver_token"]


def test_the_receiver_token_is_in_the_issues_answer_only_and_lapses_at_the_deadline(world: World) -> None:
    handoff, secret = issue_with_receiver(world)
    assert secret.startswith("hc_")
    token = ApiToken.objects.get(digest=ApiToken.hash_secret(secret))
    assert (token.role, token.project_id, token.kind) == ("handoff_receiver", world.project.pk, "agent")
    assert token.expires_at == Handoff.objects.get(pk=handoff["id"]).deadline
    assert "receiver_token" not in world.agent.get(f"/api/v1/handoffs/{handoff['id']}/").json()
    assert "receiver_token" not in world.agent.get("/api/v1/handoffs/").json()["results"][0]


def test_the_receiver_reads_its_packet_accepts_with_a_run_made_for_it_and_returns_its_result(world: World) -> None:
    handoff, secret = issue_with_receiver(world)
    receiver = VersionReadingClient(secret)
    read = receiver.get(f"/api/v1/handoffs/{handoff['id']}/")
    assert read.status_code == 200 and read.json()["packet"]["objective"] == "Review chapter 3."

    accepted = receiver.post(f"/api/v1/handoffs/{handoff['id']}/accept/", {})
    assert accepted.status_code == 200, accepted.content
    run = Run.objects.get(pk=accepted.json()["receiver_run"])
    assert run.session_id == handoff["receiver_session"] and run.task_mode == "handoff"
    assert accepted.json()["accepted_by"] == f"agent:handoff-receiver:session-{handoff['receiver_session']}"

    returned = receiver.post(f"/api/v1/handoffs/{handoff['id']}/return/", {
        "packet_fingerprint": handoff["packet_fingerprint"], "result": {"verdict": "sound"}})
    assert returned.status_code == 200, returned.content
    assert Handoff.objects.get(pk=handoff["id"]).status == HandoffStatus.RETURNED


def test_the_receiver_token_reads_nothing_of_the_origin(world: World) -> None:
    handoff, secret = issue_with_receiver(world)
    appended = world.agent.post(f"/api/v1/sessions/{world.session.pk}/items/",
                                       {"items": [{"role": "user", "content": {"text": "the origin's transcript"}}]})
    assert appended.status_code == 201
    origin_run = handoff["origin_run"]
    receiver = VersionReadingClient(secret)
    for path in (f"/api/v1/sessions/{world.session.pk}/", f"/api/v1/sessions/{world.session.pk}/items/",
                 f"/api/v1/sessions/{world.session.pk}/items/latest/", "/api/v1/sessions/",
                 f"/api/v1/runs/{origin_run}/", f"/api/v1/runs/{origin_run}/events/", "/api/v1/runs/",
                 f"/api/v1/checkpoints/?run={world.run.pk}", f"/api/v1/checkpoints/{world.checkpoint.pk}/",
                 "/api/v1/memory/records/", "/api/v1/handoffs/"):
        response = receiver.get(path)
        assert (response.status_code, response.json()["code"]) == (403, "receiver_token_scope"), (path, response)
        assert b"transcript" not in response.content and b"reasoning" not in response.content
    # The project's agent token, which a receiver should no longer be handed, reads all of it.
    assert b"the origin's transcript" in world.agent.get(f"/api/v1/sessions/{world.session.pk}/items/").content


def test_the_receiver_token_reaches_no_other_handoff_and_dies_with_a_cancelled_one(world: World) -> None:
    first, first_secret = issue_with_receiver(world)
    second, second_secret = issue_with_receiver(world)
    receiver = VersionReadingClient(first_secret)
    for response in (receiver.get(f"/api/v1/handoffs/{second['id']}/"),
                     receiver.post(f"/api/v1/handoffs/{second['id']}/accept/", {}),
                     receiver.post(f"/api/v1/handoffs/{second['id']}/return/", {
                         "packet_fingerprint": second["packet_fingerprint"], "result": {"verdict": "x"}})):
        assert (response.status_code, response.json()["code"]) == (404, "not_found")
    assert Handoff.objects.get(pk=second["id"]).status == HandoffStatus.ISSUED
    # Nor may it end or re-issue anything.
    cancel = receiver.post(f"/api/v1/handoffs/{first['id']}/cancel/", {"reason": "mine now"})
    assert (cancel.status_code, cancel.json()["code"]) == (403, "receiver_token_scope")

    agent = VersionReadingClient()
    agent.headers = world.agent.headers
    assert agent.post(f"/api/v1/handoffs/{second['id']}/cancel/", {"reason": "not needed"}).status_code == 200
    gone = ApiClient(second_secret).get(f"/api/v1/handoffs/{second['id']}/")
    assert (gone.status_code, gone.json()["code"]) == (401, "authentication_failed")
    assert receiver.get(f"/api/v1/handoffs/{first['id']}/").status_code == 200
