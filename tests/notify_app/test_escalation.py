"""Expiry with escalation on a controlled clock (issue 33, part 5): the first group's time passes, the recovery
pass routes the request to the second group, which is emailed and gets a Slack-compatible chat message with the
link back, and may decide; the first group may not. A request routed to groups tells only their members."""

import datetime as dt
import json
from typing import Any

import pytest
from django.core import mail
from django.utils import timezone

from harness.actors import Actor
from harness.http.errors import Forbidden
from harness.models import AuditEntry
from notify_app import tasks
from notify_app.models import DeliveryKind, DeliveryStatus, WebhookDelivery
from runs_app.models import ApprovalPolicy, ApprovalRequest, ExpiryAction, ReviewerGroup, Run, RunEvent, RunStatus
from runs_app.services import approval_decide, approval_expire_due, approval_request_create, run_transition
from tests import factories
from tests.notify_app.receiver import receiving_server

pytestmark = pytest.mark.django_db


def _reviewer(project, name: str, group: ReviewerGroup | None = None):  # type: ignore[no-untyped-def]
    user = factories.make_user(name, role="reviewer", projects=[project])
    user.email = f"{name}@example.com"
    user.save()
    if group is not None:
        group.members.add(user)
    return user


def _ask(project, *, tool: str = "wire"):  # type: ignore[no-untyped-def]
    run = factories.make_run(project, factories.make_session(project))
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(project=project, run_id=run.pk, tool=tool, arguments={"amount": 5},
                                   idempotency_key=f"{tool}-1", risk="high", actor=Actor.for_agent("payer"))


def _queued(queued: list[tuple[str, tuple[Any, ...]]], name: str) -> list[tuple[Any, ...]]:
    return [args for task, args in queued if task == name]


def test_the_first_groups_time_passes_the_second_is_told_and_alone_decides(  # type: ignore[no-untyped-def]
        project, sent, django_capture_on_commit_callbacks) -> None:
    first, second = (ReviewerGroup.objects.create(project=project, name=n) for n in ("desk", "managers"))
    ada, bea = _reviewer(project, "ada", first), _reviewer(project, "bea", second)
    _reviewer(project, "cat")  # a reviewer of the project in neither group: never told
    with receiving_server() as chat:
        ReviewerGroup.objects.filter(pk=second.pk).update(chat_webhook_url=chat.url)
        policy = ApprovalPolicy.objects.create(
            project=project, tool="wire", version=1, expires_after=dt.timedelta(hours=1),
            on_expiry=ExpiryAction.ESCALATE, escalate_to=second, escalation_expires_after=dt.timedelta(hours=24))
        policy.eligible_groups.set([first])
        with django_capture_on_commit_callbacks(execute=True):
            asked = _ask(project)
        # Asked: routed to the first group, whose member alone is emailed.
        [(facts, groups, event, headline)] = _queued(sent, "notify.notify_groups")
        assert groups == [first.pk] and tasks.notify_groups_task.apply(args=[facts, groups, event, headline]).get() == 1
        assert [m.to for m in mail.outbox] == [["ada@example.com"]]
        mail.outbox.clear()

        later = timezone.now() + dt.timedelta(hours=2)  # the controlled clock: the first hour has passed
        with django_capture_on_commit_callbacks(execute=True):
            assert approval_expire_due(now=later) == []  # escalated, not expired: the run keeps waiting
        escalated = ApprovalRequest.objects.get(pk=asked.pk)
        assert (escalated.status, escalated.routed_group_id, escalated.version) == ("pending", second.pk, 2)
        assert escalated.expires_at == later + dt.timedelta(hours=24)
        assert AuditEntry.objects.get(action="approval.escalated").data["group"] == second.pk
        assert RunEvent.objects.filter(run=asked.run, kind="approval.escalated").exists()
        assert Run.objects.get(pk=asked.run_id).status == RunStatus.WAITING_APPROVAL
        # The second group is told: its member's email, and its chat webhook's message with the link back.
        [(facts, groups, event, headline)] = _queued(sent, "notify.notify_groups")[1:]
        assert groups == [second.pk] and event == "approval.escalated"
        assert tasks.notify_groups_task.apply(args=[facts, groups, event, headline]).get() == 1
        assert [m.to for m in mail.outbox] == [["bea@example.com"]]
        [delivery_id] = [args[0] for task, args in sent if task == "notify.deliver_webhook"]
        assert WebhookDelivery.objects.get(pk=delivery_id).kind == DeliveryKind.SLACK
        assert tasks.deliver_webhook.apply(args=[delivery_id]).get() == DeliveryStatus.DELIVERED
    [request] = chat.requests
    body = json.loads(request.body)
    link = f"/approvals/{asked.pk}/"
    assert link in body["text"] and "escalated" in body["text"].lower()
    assert body["blocks"][0]["type"] == "section" and link in body["blocks"][0]["text"]["text"]

    with pytest.raises(Forbidden) as refused:  # the first group no longer decides
        approval_decide(project=project, approval_id=asked.pk, actor=Actor.for_user(ada), decision="approve")
    assert refused.value.code == "not_eligible"
    decided = approval_decide(project=project, approval_id=asked.pk, actor=Actor.for_user(bea), decision="approve")
    assert decided.status == "approved"


@pytest.mark.usefixtures("sent")
def test_an_escalated_request_past_its_second_deadline_expires(project) -> None:  # type: ignore[no-untyped-def]
    second = ReviewerGroup.objects.create(project=project, name="managers")
    ApprovalPolicy.objects.create(project=project, tool="wire", version=1, expires_after=dt.timedelta(hours=1),
                                  on_expiry=ExpiryAction.ESCALATE, escalate_to=second,
                                  escalation_expires_after=dt.timedelta(hours=4))
    asked = _ask(project)
    start = timezone.now()
    assert approval_expire_due(now=start + dt.timedelta(hours=2)) == []
    assert approval_expire_due(now=start + dt.timedelta(hours=3)) == []  # within the escalated wait
    assert approval_expire_due(now=start + dt.timedelta(hours=7)) == [asked.pk]
    assert ApprovalRequest.objects.get(pk=asked.pk).status == "expired"


def test_keep_waiting_sets_no_deadline_and_reject_expires_as_before(project) -> None:  # type: ignore[no-untyped-def]
    ApprovalPolicy.objects.create(project=project, tool="wire", version=1, expires_after=dt.timedelta(hours=1),
                                  on_expiry=ExpiryAction.WAIT)
    assert _ask(project).expires_at is None
    ApprovalPolicy.objects.create(project=project, tool="mail", version=1, expires_after=dt.timedelta(hours=1))
    asked = _ask(project, tool="mail")
    assert asked.expires_at is not None
    assert approval_expire_due(now=timezone.now() + dt.timedelta(hours=2)) == [asked.pk]
