"""Handoffs through the API and the services every door calls (issue 16, section 1; DESIGN.md, "Handoff").

A run hands a bounded, blind job to another session: the packet is fingerprinted and frozen, the origin run
waits, the receiver accepts with its own run and returns one result bound to the packet's fingerprint, and
the resume worker consumes it once into the origin run. Every refusal answers a code of its own and writes
nothing; independence is recorded check by check.
"""

import datetime as dt
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from harness.actors import Actor
from harness.canonical import digest
from harness.http.errors import ConflictError
from runs_app.models import Handoff, HandoffStatus, Run, RunEvent, RunStatus
from runs_app.services import (
    handoff_accept,
    handoff_consume,
    handoff_expire_due,
    handoff_issue,
    handoff_return,
    run_transition,
)
from sessions_app.services import session_items_append
from tests import factories
from tests.api.conftest import ApiClient, VersionReadingClient
from worker.pipeline import resume_run_by_id

pytestmark = pytest.mark.django_db

SCHEMA = {"type": "object", "required": ["verdict"], "properties": {"verdict": {"enum": ["pass", "fail"]}},
          "additionalProperties": False}
CHAPTER = {"title": "Chapter 3", "text": "The lamp went out."}
AGENT = Actor.for_agent("writer")


@pytest.fixture(autouse=True)
def _no_resume_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    # The resume is called in the test's process where a test wants one; a return queues nothing.
    monkeypatch.setattr("worker.tasks.enqueue_resume", lambda run_id: None)


@pytest.fixture
def agent(project) -> ApiClient:  # type: ignore[no-untyped-def]
    return VersionReadingClient(factories.make_agent_token(project, name="writer")[1])


def _running_run(project, session=None, **kwargs: Any) -> Run:  # type: ignore[no-untyped-def]
    run = factories.make_run(project, session, **kwargs)
    return run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)


def _issue_body(receiver_session: int, **overrides: Any) -> dict[str, Any]:
    body = {
        "receiver_session": receiver_session,
        "objective": "Review chapter 3 against the outline; answer pass or fail.",
        "inputs": [{"name": "chapter", "fingerprint": digest(CHAPTER), "value": CHAPTER}],
        "allowed_capabilities": ["read_input"],
        "output_schema": SCHEMA,
        "deadline": (timezone.now() + dt.timedelta(hours=1)).isoformat(),
    }
    return {**body, **overrides}


def _issued(project, *, role: str = "semantic_reviewer", receiver=None, origin_session=None,  # type: ignore[no-untyped-def]
            inputs: list[dict[str, Any]] | None = None) -> tuple[Handoff, Run]:
    origin = _running_run(project, origin_session, cursor={"node": "review"})
    receiver = receiver or factories.make_session(project, role=role, memory_policy="none")
    handoff = handoff_issue(
        project=project, origin_run_id=origin.pk, receiver_session_id=receiver.pk,
        objective="Review chapter 3.", inputs=inputs if inputs is not None else [
            {"name": "chapter", "fingerprint": digest(CHAPTER), "value": CHAPTER}],
        allowed_capabilities=["read_input"], output_schema=SCHEMA,
        deadline=timezone.now() + dt.timedelta(hours=1), actor=AGENT,
    )
    return handoff, origin


def _accepted(project, **kwargs: Any) -> tuple[Handoff, Run, Run]:  # type: ignore[no-untyped-def]
    handoff, origin = _issued(project, **kwargs)
    receiver_run = _running_run(project, handoff.receiver_session)
    return handoff_accept(project=project, handoff_id=handoff.pk, receiver_run_id=receiver_run.pk,
                          actor=Actor.for_agent("reviewer")), origin, receiver_run


def _check(handoff: Handoff, name: str) -> dict[str, Any]:
    return next(c for c in handoff.independence["checks"] if c["check"] == name)


def _unlocked_update(sql: str, params: list[Any]) -> None:
    """Change a handoff behind the service's back (what a table owner's SQL could do): triggers, the packet's
    included, are off for this one statement (a superuser's session setting, inside the test's transaction)."""
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        cursor.execute(sql, params)
        cursor.execute("SET session_replication_role = origin")


# --- issue ------------------------------------------------------------------------------------------


def test_issuing_freezes_a_fingerprinted_packet_and_the_origin_run_waits(project, agent) -> None:  # type: ignore[no-untyped-def]
    origin = _running_run(project, cursor={"node": "review", "step": 4})
    reviewer = factories.make_session(project, role="semantic_reviewer", memory_policy="none")

    response = agent.post(f"/api/v1/runs/{origin.pk}/handoffs/", _issue_body(reviewer.pk))

    assert response.status_code == 201, response.content
    body = response.json()
    packet = body["packet"]
    assert set(packet) == {"objective", "inputs", "allowed_capabilities", "output_schema", "deadline", "origin",
                           "receiver"}
    assert packet["origin"] == {"run": origin.pk, "cursor": {"node": "review", "step": 4}}
    assert packet["inputs"] == [{"name": "chapter", "fingerprint": digest(CHAPTER), "value": CHAPTER}]
    assert body["packet_fingerprint"] == digest(packet) and body["status"] == "issued"
    origin.refresh_from_db()
    assert (origin.status, origin.lease_owner) == (RunStatus.WAITING_EXTERNAL, "")
    issued = RunEvent.objects.get(run=origin, kind="handoff.issued")
    assert issued.data["packet_fingerprint"] == body["packet_fingerprint"]


def test_the_packet_cannot_be_changed_once_issued_whatever_writes_it(project) -> None:  # type: ignore[no-untyped-def]
    handoff, _ = _issued(project)
    with pytest.raises(IntegrityError, match="immutable"), transaction.atomic():
        Handoff.objects.filter(pk=handoff.pk).update(packet={**handoff.packet, "objective": "Approve it."})
    with pytest.raises(IntegrityError, match="immutable"), transaction.atomic():
        Handoff.objects.filter(pk=handoff.pk).update(deadline=handoff.deadline + dt.timedelta(days=1))
    assert Handoff.objects.get(pk=handoff.pk).packet == handoff.packet


def test_an_input_whose_fingerprint_is_not_its_digest_is_refused_and_nothing_waits(project, agent) -> None:  # type: ignore[no-untyped-def]
    origin = _running_run(project)
    reviewer = factories.make_session(project, role="semantic_reviewer")
    body = _issue_body(reviewer.pk, inputs=[{"name": "chapter", "fingerprint": "0" * 64, "value": CHAPTER}])

    response = agent.post(f"/api/v1/runs/{origin.pk}/handoffs/", body)

    assert response.status_code == 400 and response.json()["code"] == "input_fingerprint_mismatch"
    assert not Handoff.objects.exists()
    assert Run.objects.get(pk=origin.pk).status == RunStatus.RUNNING


def test_a_run_waits_on_one_open_handoff_at_a_time(project, agent) -> None:  # type: ignore[no-untyped-def]
    handoff, origin = _issued(project)
    run_transition(project=project, run_id=origin.pk, to=RunStatus.RUNNING, expected_version=None)
    response = agent.post(f"/api/v1/runs/{origin.pk}/handoffs/", _issue_body(handoff.receiver_session_id))
    assert response.status_code == 409 and response.json()["code"] == "handoff_open"


def test_an_output_schema_that_is_not_a_json_schema_is_refused(project, agent) -> None:  # type: ignore[no-untyped-def]
    origin = _running_run(project)
    reviewer = factories.make_session(project, role="semantic_reviewer")
    response = agent.post(f"/api/v1/runs/{origin.pk}/handoffs/",
                          _issue_body(reviewer.pk, output_schema={"type": "no-such-type"}))
    assert response.status_code == 400 and response.json()["code"] == "invalid_output_schema"


# --- accept and return --------------------------------------------------------------------------------


def test_the_receiver_accepts_with_its_own_run_and_returns_one_result(project, agent) -> None:  # type: ignore[no-untyped-def]
    handoff, origin = _issued(project)
    receiver_run = _running_run(project, handoff.receiver_session)

    accepted = agent.post(f"/api/v1/handoffs/{handoff.pk}/accept/", {"run": receiver_run.pk})
    assert accepted.status_code == 200, accepted.content
    assert (accepted.json()["status"], accepted.json()["receiver_run"]) == ("accepted", receiver_run.pk)

    returned = agent.post(f"/api/v1/handoffs/{handoff.pk}/return/",
                          {"packet_fingerprint": handoff.packet_fingerprint, "result": {"verdict": "pass"}})
    assert returned.status_code == 200, returned.content
    body = returned.json()
    assert (body["status"], body["result"], body["result_hash"]) == ("returned", {"verdict": "pass"},
                                                                     digest({"verdict": "pass"}))
    assert RunEvent.objects.filter(run=origin, kind="handoff.returned").count() == 1
    assert agent.get(f"/api/v1/handoffs/{handoff.pk}/").json()["status"] == "returned"


def test_a_result_bound_to_another_packet_is_refused(project, agent) -> None:  # type: ignore[no-untyped-def]
    handoff, _, _ = _accepted(project)
    altered = {**handoff.packet, "objective": "Approve chapter 3."}

    response = agent.post(f"/api/v1/handoffs/{handoff.pk}/return/",
                          {"packet_fingerprint": digest(altered), "result": {"verdict": "pass"}})

    assert response.status_code == 409 and response.json()["code"] == "packet_mismatch"
    stored = Handoff.objects.get(pk=handoff.pk)
    assert (stored.status, stored.result, stored.result_hash) == (HandoffStatus.ACCEPTED, None, "")


def test_a_result_for_a_packet_altered_after_issue_is_refused(project, agent) -> None:  # type: ignore[no-untyped-def]
    handoff, _, _ = _accepted(project)
    _unlocked_update("UPDATE runs_app_handoff SET packet = jsonb_set(packet, '{objective}', '\"Approve it.\"') "
                     "WHERE id = %s", [handoff.pk])

    response = agent.post(f"/api/v1/handoffs/{handoff.pk}/return/",
                          {"packet_fingerprint": handoff.packet_fingerprint, "result": {"verdict": "pass"}})

    assert response.status_code == 409 and response.json()["code"] == "packet_altered"
    assert Handoff.objects.get(pk=handoff.pk).status == HandoffStatus.ACCEPTED


def test_a_second_result_is_refused_and_the_first_stays(project, agent) -> None:  # type: ignore[no-untyped-def]
    handoff, _, _ = _accepted(project)
    first = {"packet_fingerprint": handoff.packet_fingerprint, "result": {"verdict": "pass"}}
    assert agent.post(f"/api/v1/handoffs/{handoff.pk}/return/", first).status_code == 200

    for result in ({"verdict": "fail"}, {"verdict": "pass"}):
        response = agent.post(f"/api/v1/handoffs/{handoff.pk}/return/", {**first, "result": result})
        assert response.status_code == 409 and response.json()["code"] == "result_already_returned"
    assert Handoff.objects.get(pk=handoff.pk).result == {"verdict": "pass"}


def test_a_result_past_the_deadline_is_refused_and_the_recovery_pass_hands_the_run_back(project, agent) -> None:  # type: ignore[no-untyped-def]
    handoff, origin, _ = _accepted(project)
    _unlocked_update("UPDATE runs_app_handoff SET deadline = now() - interval '1 second' WHERE id = %s", [handoff.pk])

    response = agent.post(f"/api/v1/handoffs/{handoff.pk}/return/",
                          {"packet_fingerprint": handoff.packet_fingerprint, "result": {"verdict": "pass"}})
    assert response.status_code == 409 and response.json()["code"] == "handoff_expired"
    assert Handoff.objects.get(pk=handoff.pk).result is None

    assert handoff_expire_due() == [handoff.pk]
    origin.refresh_from_db()
    assert Handoff.objects.get(pk=handoff.pk).status == HandoffStatus.EXPIRED
    assert origin.status == RunStatus.RUNNING
    assert (origin.bound_result["handoff"], origin.bound_result["outcome"]) == (handoff.pk, "expired")
    response = agent.post(f"/api/v1/handoffs/{handoff.pk}/return/",
                          {"packet_fingerprint": handoff.packet_fingerprint, "result": {"verdict": "pass"}})
    assert response.status_code == 409 and response.json()["code"] == "handoff_expired"


def test_a_result_the_output_schema_refuses_is_refused(project, agent) -> None:  # type: ignore[no-untyped-def]
    handoff, _, _ = _accepted(project)
    response = agent.post(f"/api/v1/handoffs/{handoff.pk}/return/",
                          {"packet_fingerprint": handoff.packet_fingerprint, "result": {"verdict": "maybe"}})
    assert response.status_code == 400 and response.json()["code"] == "result_schema_mismatch"
    assert Handoff.objects.get(pk=handoff.pk).status == HandoffStatus.ACCEPTED


def test_a_result_before_acceptance_and_an_accept_from_another_session_are_refused(project, agent) -> None:  # type: ignore[no-untyped-def]
    handoff, origin = _issued(project)
    response = agent.post(f"/api/v1/handoffs/{handoff.pk}/return/",
                          {"packet_fingerprint": handoff.packet_fingerprint, "result": {"verdict": "pass"}})
    assert response.status_code == 409 and response.json()["code"] == "handoff_not_accepted"
    stranger = _running_run(project)  # a run of another session
    for run in (stranger, origin):
        response = agent.post(f"/api/v1/handoffs/{handoff.pk}/accept/", {"run": run.pk})
        assert response.status_code == 409 and response.json()["code"] == "wrong_session"


def test_cancelling_hands_the_origin_run_back_with_the_reason(project, agent) -> None:  # type: ignore[no-untyped-def]
    handoff, origin = _issued(project)
    response = agent.post(f"/api/v1/handoffs/{handoff.pk}/cancel/", {"reason": "The outline changed."})
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    origin.refresh_from_db()
    assert origin.status == RunStatus.RUNNING
    assert origin.bound_result == {"handoff": handoff.pk, "outcome": "cancelled", "reason": "The outline changed.",
                                   "by": "agent:writer"}


def test_only_the_worker_consumes_a_returned_result(project) -> None:  # type: ignore[no-untyped-def]
    handoff, _, _ = _accepted(project)
    handoff_return(project=project, handoff_id=handoff.pk, packet_fingerprint=handoff.packet_fingerprint,
                   result={"verdict": "pass"}, actor=AGENT)
    with pytest.raises(ConflictError) as refused:
        handoff_consume(project=project, handoff_id=handoff.pk, actor=AGENT)
    assert refused.value.code == "worker_only_transition"
    assert Handoff.objects.get(pk=handoff.pk).status == HandoffStatus.RETURNED


# --- the worker binds it once -----------------------------------------------------------------------------


def test_the_worker_consumes_the_result_once_into_the_origin_run(project) -> None:  # type: ignore[no-untyped-def]
    handoff, origin, _ = _accepted(project)
    handoff_return(project=project, handoff_id=handoff.pk, packet_fingerprint=handoff.packet_fingerprint,
                   result={"verdict": "pass"}, actor=AGENT)

    assert resume_run_by_id(origin.pk, owner="worker:test:1") == "done"

    origin.refresh_from_db()
    consumed = Handoff.objects.get(pk=handoff.pk)
    assert consumed.status == HandoffStatus.CONSUMED and consumed.receipt
    assert (origin.status, origin.lease_owner) == (RunStatus.RUNNING, "")
    assert origin.bound_result["receipt"] == consumed.receipt
    assert origin.bound_result["result"] == {"verdict": "pass"}
    assert origin.bound_result["packet_fingerprint"] == handoff.packet_fingerprint
    traced = RunEvent.objects.filter(run=origin, kind__startswith="resume.").order_by("seq")
    assert all(e.data["ok"] for e in traced)
    assert origin.last_checkpoint.label == f"after handoff {handoff.pk} (returned)"

    # A second resume (a duplicate message) finds nothing to bind: the result is consumed once.
    assert resume_run_by_id(origin.pk, owner="worker:test:2") == "stopped"
    assert Handoff.objects.get(pk=handoff.pk).receipt == consumed.receipt


def test_a_result_changed_after_its_return_blocks_the_resume_and_is_not_consumed(project) -> None:  # type: ignore[no-untyped-def]
    handoff, origin, _ = _accepted(project)
    handoff_return(project=project, handoff_id=handoff.pk, packet_fingerprint=handoff.packet_fingerprint,
                   result={"verdict": "fail"}, actor=AGENT)
    Handoff.objects.filter(pk=handoff.pk).update(result={"verdict": "pass"})

    assert resume_run_by_id(origin.pk, owner="worker:test:1") == "blocked"

    origin.refresh_from_db()
    assert (origin.status, origin.blocked_step) == (RunStatus.BLOCKED, "bind_result")
    assert Handoff.objects.get(pk=handoff.pk).status == HandoffStatus.RETURNED


# --- independence --------------------------------------------------------------------------------------


def test_a_reviewer_with_its_own_session_run_and_a_blind_packet_counts_as_independent(project, agent) -> None:  # type: ignore[no-untyped-def]
    handoff, _, _ = _accepted(project)
    assert handoff.independence["counts"] is True
    assert all(c["ok"] for c in handoff.independence["checks"])
    shown = agent.get(f"/api/v1/handoffs/{handoff.pk}/").json()["independence"]
    assert shown == handoff.independence


def test_a_reviewer_session_that_shares_the_origins_session_is_not_independent(project) -> None:  # type: ignore[no-untyped-def]
    shared = factories.make_session(project, role="semantic_reviewer")
    handoff, _, _ = _accepted(project, receiver=shared, origin_session=shared)
    assert handoff.independence["counts"] is False
    assert _check(handoff, "own_session")["ok"] is False
    assert "origin run's own session" in _check(handoff, "own_session")["why"]


def test_a_packet_that_carries_an_origin_item_is_not_blind(project) -> None:  # type: ignore[no-untyped-def]
    writer = factories.make_session(project, role="writer")
    session_items_append(project=project, session_id=writer.pk, items=[
        {"role": "assistant", "content": {"text": "My private plan: the butler did it."}}])
    leaked = "My private plan: the butler did it."
    handoff, _, _ = _accepted(project, origin_session=writer, inputs=[
        {"name": "notes", "fingerprint": digest(leaked), "value": leaked}])
    assert handoff.independence["counts"] is False
    assert _check(handoff, "blind_packet")["ok"] is False


def test_copying_the_origins_items_into_the_reviewer_session_ends_independence_at_return(project) -> None:  # type: ignore[no-untyped-def]
    writer = factories.make_session(project, role="writer")
    item = {"role": "assistant", "content": {"text": "Draft verdict: pass."}}
    session_items_append(project=project, session_id=writer.pk, items=[item])
    handoff, _, _ = _accepted(project, origin_session=writer)
    assert handoff.independence["counts"] is True
    session_items_append(project=project, session_id=handoff.receiver_session_id, items=[item])

    returned = handoff_return(project=project, handoff_id=handoff.pk, packet_fingerprint=handoff.packet_fingerprint,
                              result={"verdict": "pass"}, actor=AGENT)

    assert returned.independence["counts"] is False
    assert _check(returned, "no_copied_items")["ok"] is False


def test_a_specialist_is_not_counted_as_an_independent_review(project) -> None:  # type: ignore[no-untyped-def]
    handoff, _, _ = _accepted(project, role="specialist")
    assert handoff.independence["counts"] is False
    assert _check(handoff, "reviewer_role")["ok"] is False


def test_the_deadline_is_the_databases_clock_not_the_process_clock(project, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    handoff, _ = _issued(project)  # due in an hour
    receiver_run = _running_run(project, handoff.receiver_session)
    real_now = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: real_now() + dt.timedelta(hours=2))  # this process runs 2 h fast

    assert handoff_expire_due() == []
    accepted = handoff_accept(project=project, handoff_id=handoff.pk, receiver_run_id=receiver_run.pk, actor=AGENT)
    assert accepted.status == HandoffStatus.ACCEPTED and accepted.accepted_at < handoff.deadline
