"""The client's `report_usage` (issue 16, section 3) against a live server: totals advance, a budget stops."""

from decimal import Decimal

import pytest
from harness_client import ConflictError, HarnessClient

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_agent_reports_each_model_call_and_stops_when_its_budget_is_reached(hc: HarnessClient) -> None:
    session = hc.create_session(role="writer", memory_policy="session")
    run = hc.create_run(session=session.id, token_budget=1000, cost_budget=Decimal("0.0500"))
    run = hc.claim_run(run.id, owner="agent-1", lease_seconds=60)
    run = hc.transition_run(run.id, "running", expected_version=run.version, lease_owner="agent-1")

    after_one = hc.report_usage(run.id, tokens=400, cost=Decimal("0.0100"), model="m-1", call_id="c-1",
                                lease_owner="agent-1")
    assert (after_one.status, after_one.tokens_used, after_one.cost_used) == ("running", 400, Decimal("0.0100"))

    after_two = hc.report_usage(run.id, tokens=700, cost=Decimal("0.0100"), lease_owner="agent-1")
    assert (after_two.status, after_two.blocked_step, after_two.tokens_used) == ("blocked", "budget", 1100)
    # The next model call is not made: the client sees the block; the next tool call is refused.
    with pytest.raises(ConflictError):
        hc.request_approval(run.id, tool="send_email", arguments={"to": "a@example.com"}, idempotency_key="mail-1")
    reported = [e.data for e in hc.list_events(run.id, kind="usage.reported")]
    assert reported == [{"tokens": 400, "cost": "0.0100", "model": "m-1", "call_id": "c-1"},
                        {"tokens": 700, "cost": "0.0100"}]
