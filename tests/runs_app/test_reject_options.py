"""Reject options (issue 33, part 3): a rejection names one of its policy version's options, and the option with
its text for the agent reaches the API, the audit chain, the run's events, the bound decision and the webhook."""

import pytest
from django.urls import reverse

from harness.actors import Actor
from harness.http.errors import ValidationFailed
from harness.models import AuditEntry
from notify_app.models import Webhook, WebhookDelivery
from runs_app.models import ApprovalPolicy, ApprovalRequest, RunEvent
from runs_app.services import approval_decide, approval_request_create, run_transition
from tests import factories

pytestmark = pytest.mark.django_db
OPTIONS = [{"name": "wrong_amount", "reviewer_text": "Not the report's amount",
            "agent_text": "Recompute the amount from the sales report."}]


@pytest.fixture
def asked(project):  # type: ignore[no-untyped-def]
    ApprovalPolicy.objects.create(project=project, tool="pay", version=1, reject_options=OPTIONS)
    session = factories.make_session(project)
    run = factories.make_run(project, session)
    run_transition(project=project, run_id=run.pk, to="running", expected_version=run.version)
    return approval_request_create(project=project, run_id=run.pk, tool="pay", arguments={"amount": 9},
                                   idempotency_key="pay-1", actor=Actor.for_agent("payer"))


def test_a_rejection_carries_its_option_everywhere(project, asked, client) -> None:  # type: ignore[no-untyped-def]
    Webhook.objects.create(project=project, url="https://hooks.example/h", secret="s" * 32,
                           events=["approval.decided"])
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    decided = approval_decide(project=project, approval_id=asked.pk, actor=Actor.for_user(rita), decision="reject",
                              reason="off by ten", reject_option="wrong_amount")
    assert (decided.status, decided.reject_option) == ("rejected", "wrong_amount")
    assert AuditEntry.objects.get(action="approval.rejected").data["reject_option"] == "wrong_amount"
    assert RunEvent.objects.get(run=asked.run, kind="approval.rejected").data["reject_option"] == "wrong_amount"
    payload = WebhookDelivery.objects.get(event="approval.decided").payload["data"]
    assert (payload["reject_option"], payload["agent_text"]) == (
        "wrong_amount", "Recompute the amount from the sales report.")
    client.force_login(rita)
    page = client.get(reverse("runs:approval_detail", args=[asked.pk])).content.decode()
    assert 'id="decision-reject-option">wrong_amount' in page and "Recompute the amount" in page


def test_an_option_the_policy_does_not_declare_is_refused_and_nothing_is_written(asked, project) -> None:  # type: ignore[no-untyped-def]
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    for decision, option in (("reject", "made_up"), ("approve", "wrong_amount")):
        with pytest.raises(ValidationFailed) as refused:
            approval_decide(project=project, approval_id=asked.pk, actor=Actor.for_user(rita), decision=decision,
                            reason="x", reject_option=option)
        assert (refused.value.code, refused.value.extra["field"]) == ("reject_option_invalid", "reject_option")
    assert ApprovalRequest.objects.get(pk=asked.pk).status == "pending"


def test_the_console_offers_the_options_and_records_the_chosen_one(asked, project, client) -> None:  # type: ignore[no-untyped-def]
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    client.force_login(rita)
    page = client.get(reverse("runs:approval_detail", args=[asked.pk])).content.decode()
    assert 'data-option="wrong_amount"' in page and "Not the report&#x27;s amount" in page
    answer = client.post(reverse("runs:approval_reject", args=[asked.pk]),
                         {"version": asked.version, "reason": "off by ten", "reject_option": "wrong_amount"})
    assert answer.status_code == 302
    assert ApprovalRequest.objects.get(pk=asked.pk).reject_option == "wrong_amount"
