"""Approval policies through the client, against a live server (issue 33): an operator publishes, the agent reads
the policy and is refused a write, and the agent's next request needs the quorum the policy set."""

import pytest
from harness_client import HarnessClient
from harness_client.errors import PermissionDenied

from runs_app.models import ReviewerGroup
from tests import factories
from tests.client.conftest import Live

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_operator_publishes_a_quorum_and_the_agents_request_needs_it(live: Live, hc: HarnessClient) -> None:
    user = factories.make_user("client-operator", role="operator", projects=[live.project])
    with live.client(factories.make_personal_token(user)[1]) as operator:
        published = operator.publish_approval_policy(
            live.project.slug, "wire_money", required_approvals=2, expires_after="02:00:00",
            reject_options=[{"name": "too_big", "reviewer_text": "Over budget", "agent_text": "Ask for less"}])
    assert (published.tool, published.version, published.required_approvals) == ("wire_money", 1, 2)
    assert published.expires_after == "02:00:00" and published.reject_options[0]["name"] == "too_big"
    with pytest.raises(PermissionDenied) as refused:
        hc.publish_approval_policy(live.project.slug, "wire_money")
    assert refused.value.code == "not_an_operator"
    assert [p.version for p in hc.list_approval_policies()] == [1]
    ReviewerGroup.objects.create(project=live.project, name="finance").members.add(user)
    assert [(g.name, g.members) for g in hc.list_reviewer_groups()] == [("finance", ["client-operator"])]

    run = hc.create_run(session=hc.create_session(role="writer").id)
    run = hc.transition_run(run.id, to="running", expected_version=run.version)
    approval = hc.request_approval(run.id, tool="wire_money", arguments={"amount": 5}, idempotency_key="w-1",
                                   expected_version=run.version)
    assert (approval.approvals_required, approval.policy_version, approval.votes) == (2, 1, [])
