"""Standing approvals through the client, against a live server (issue 33, part 2): a reviewer's personal token
writes a rule, the agent's next matching request comes back approved and naming it, the agent cannot write one,
and a revoke is refused the second time."""

import pytest
from harness_client import HarnessClient
from harness_client.errors import ConflictError, PermissionDenied

from tests import factories
from tests.client.conftest import Live

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_rule_approves_the_agent_s_matching_requests_until_it_is_revoked(live: Live, hc: HarnessClient) -> None:
    reviewer = factories.make_user("rule-writer", role="reviewer", projects=[live.project])
    run = hc.create_run(session=hc.create_session(role="writer").id)
    run = hc.transition_run(run.id, to="running", expected_version=run.version)
    with live.client(factories.make_personal_token(reviewer)[1]) as person:
        rule = person.create_standing_approval(live.project.slug, "send_digest", max_uses=2, expires_in="01:00:00",
                                               match_arguments={"list": "weekly"}, run=run.id, reason="routine")
        assert (rule.tool, rule.run, rule.uses, rule.created_by) == ("send_digest", run.id, 0, "rule-writer")

        approval = hc.request_approval(run.id, tool="send_digest", arguments={"list": "weekly", "n": 1},
                                       idempotency_key="digest-1", expected_version=run.version)
        assert (approval.status, approval.standing_approval, approval.decided_by) == ("approved", rule.id,
                                                                                     "rule-writer")
        assert hc.get_standing_approval(rule.id).uses == 1
        assert [r.id for r in hc.list_standing_approvals(live=True)] == [rule.id]

        with pytest.raises(PermissionDenied) as agent:
            hc.create_standing_approval(live.project.slug, "send_digest", max_uses=1, expires_in="01:00:00")
        assert agent.value.code == "not_a_person"

        revoked = person.revoke_standing_approval(rule.id)
        assert revoked.revoked_by == "rule-writer"
        with pytest.raises(ConflictError) as twice:
            person.revoke_standing_approval(rule.id)
        assert twice.value.code == "already_revoked"
    assert list(hc.list_standing_approvals(live=True)) == []
