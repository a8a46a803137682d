"""Handoffs through the client against a live server: issue from a running run, accept with the receiver's own
run, return the one result bound to the packet's fingerprint; a second result and a wrong fingerprint are
ConflictErrors with the server's codes; cancel sends the origin back to running."""

import datetime as dt

import pytest
from harness_client import ConflictError, HarnessClient

from runs_app.models import Run, RunStatus
from tests.client.conftest import Live

pytestmark = pytest.mark.django_db(transaction=True)

SCHEMA = {"type": "object", "properties": {"verdict": {"enum": ["pass", "fail"]}}, "required": ["verdict"]}


def _running_run(hc: HarnessClient, ref: str) -> int:
    session = hc.create_session(role="writer", memory_policy="session", ref=ref)
    run = hc.create_run(session=session.id)
    return hc.transition_run(run.id, "running", expected_version=run.version).id


def _issue(hc: HarnessClient, origin: int, receiver_session: int) -> int:
    handoff = hc.issue_handoff(
        origin, receiver_session=receiver_session, objective="Review chapter 3 for continuity.",
        output_schema=SCHEMA, deadline=dt.datetime.now(dt.UTC) + dt.timedelta(hours=1),
        inputs=[{"name": "chapter", "value": {"text": "The keeper climbs."},
                 "fingerprint": _digest({"text": "The keeper climbs."})}],
        allowed_capabilities=["read"],
    )
    assert handoff.status == "issued" and handoff.origin_run == origin and len(handoff.packet_fingerprint) == 64
    assert Run.objects.get(pk=origin).status == RunStatus.WAITING_EXTERNAL
    return handoff.id


def _digest(value: object) -> str:
    from harness.canonical import digest

    return digest(value)


def test_a_handoff_is_issued_accepted_and_returned_once(live: Live, hc: HarnessClient) -> None:
    origin = _running_run(hc, "H-origin")
    reviewer = hc.create_session(role="semantic_reviewer", memory_policy="none", ref="H-reviewer")
    handoff_id = _issue(hc, origin, reviewer.id)

    receiver_run = hc.create_run(session=reviewer.id)
    accepted = hc.accept_handoff(handoff_id, run=receiver_run.id, expected_version=hc.get_handoff(handoff_id).version)
    assert (accepted.status, accepted.receiver_run) == ("accepted", receiver_run.id)
    assert accepted.independence is not None

    with pytest.raises(ConflictError) as wrong:
        hc.return_handoff(handoff_id, packet_fingerprint="0" * 64, result={"verdict": "pass"},
                          expected_version=accepted.version)
    assert wrong.value.code == "packet_mismatch"
    returned = hc.return_handoff(handoff_id, packet_fingerprint=accepted.packet_fingerprint,
                                 result={"verdict": "pass"}, expected_version=accepted.version)
    assert returned.status in ("returned", "consumed") and returned.result == {"verdict": "pass"}
    with pytest.raises(ConflictError) as again:
        hc.return_handoff(handoff_id, packet_fingerprint=accepted.packet_fingerprint, result={"verdict": "fail"},
                          expected_version=hc.get_handoff(handoff_id).version)  # the version read now: a 2nd result
    assert again.value.code == "result_already_returned"

    assert hc.get_handoff(handoff_id).result == {"verdict": "pass"}
    assert [h.id for h in hc.list_handoffs(origin_run=origin)] == [handoff_id]


def test_a_cancelled_handoff_sends_its_origin_back_to_running(live: Live, hc: HarnessClient) -> None:
    origin = _running_run(hc, "C-origin")
    receiver = hc.create_session(role="specialist", memory_policy="none", ref="C-receiver")
    handoff_id = _issue(hc, origin, receiver.id)
    cancelled = hc.cancel_handoff(handoff_id, reason="no longer needed",
                                  expected_version=hc.get_handoff(handoff_id).version)
    assert (cancelled.status, cancelled.closed_reason) == ("cancelled", "no longer needed")
    assert Run.objects.get(pk=origin).status == RunStatus.RUNNING
    assert [h.id for h in hc.list_handoffs(status="cancelled")] == [handoff_id]
