"""Signed outbound webhooks and reviewer notifications, against a local receiving server (an http.server
thread): the signature verifies, a 500 is retried by the Celery task, and the delivery log shows each attempt."""

import json
from typing import Any

import pytest
from django.core import mail

from harness.actors import Actor
from harness.models import AuditEntry
from notify_app import signing, tasks
from notify_app.models import (
    DeliveryKind,
    DeliveryStatus,
    ProjectNotification,
    WebhookAttempt,
    WebhookDelivery,
)
from notify_app.services import deliveries_to_send, webhook_register
from runs_app.models import Run, RunStatus
from runs_app.services import approval_decide, approval_request_create, run_transition
from tests import factories
from tests.notify_app.receiver import receiving_server

pytestmark = pytest.mark.django_db


def _deliveries(sent: list[tuple[str, tuple[Any, ...]]]) -> list[int]:
    return [args[0] for name, args in sent if name == "notify.deliver_webhook"]


def _ask(project, ref: str = "R-1"):  # type: ignore[no-untyped-def]
    run = factories.make_run(project, factories.make_session(project, ref=f"S-{ref}"), ref=ref)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(project=project, run_id=run.pk, tool="mail.send", arguments={"to": "x"},
                                   idempotency_key=f"k-{ref}", risk="high", actor=Actor.for_agent("coder"))


def test_a_decision_is_delivered_signed_and_a_500_is_retried_with_both_attempts_logged(
        project, sent) -> None:  # type: ignore[no-untyped-def]
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    with receiving_server(answers=[500]) as receiver:
        hook = webhook_register(project=project, url=receiver.url, events=["approval.decided"],
                                actor=Actor.for_agent("coder"))
        approval = _ask(project)
        approval_decide(project=project, approval_id=approval.pk, actor=Actor.of(rita), decision="approve")
        # The decision's UPDATE recorded the delivery (a trigger); the beat sweep hands it to the task.
        assert tasks.send_due() == 1
        [delivery_id] = _deliveries(sent)
        assert tasks.send_due() == 0  # sent once
        result = tasks.deliver_webhook.apply(args=[delivery_id])  # the task's own retry, run in place
        assert result.get() == DeliveryStatus.DELIVERED

    assert len(receiver.requests) == 2
    for request in receiver.requests:
        assert signing.verify(hook.secret, request.body, request.headers[signing.TIMESTAMP_HEADER],
                              request.headers[signing.SIGNATURE_HEADER])
        assert not signing.verify("another-secret", request.body, request.headers[signing.TIMESTAMP_HEADER],
                                  request.headers[signing.SIGNATURE_HEADER])
        assert request.headers[signing.EVENT_HEADER] == "approval.decided"
        assert request.headers[signing.DELIVERY_HEADER] == str(delivery_id)  # the same id across retries
    body = json.loads(receiver.requests[1].body)
    assert body["id"] == delivery_id and body["event"] == "approval.decided"
    assert body["data"]["approval_id"] == approval.pk and body["data"]["status"] == "approved"
    assert body["data"]["decided_by"] == "rita" and body["data"]["fingerprint"] == approval.action_fingerprint
    attempts = list(WebhookAttempt.objects.filter(delivery_id=delivery_id).values_list("number", "status_code",
                                                                                        "error"))
    assert attempts == [(1, 500, "HTTP 500"), (2, 200, "")]
    delivery = WebhookDelivery.objects.get(pk=delivery_id)
    assert delivery.status == DeliveryStatus.DELIVERED and delivery.attempts == 2
    assert AuditEntry.objects.filter(action="webhook.registered", target_id=str(hook.pk)).exists()


def test_a_replayed_or_altered_delivery_does_not_verify() -> None:
    body = b'{"event": "run.status_changed"}'
    signature = signing.sign("s3cret", 1_700_000_000, body)
    assert signing.verify("s3cret", body, "1700000000", signature, now=1_700_000_100)
    assert not signing.verify("s3cret", body, "1700000000", signature, now=1_700_000_000 + 301)  # replayed late
    assert not signing.verify("s3cret", body + b" ", "1700000000", signature, now=1_700_000_100)  # altered body
    assert not signing.verify("s3cret", body, "1700000001", signature, now=1_700_000_100)  # another timestamp


def test_run_state_changes_go_only_to_subscribed_webhooks_of_the_project(
        project, other_project, sent) -> None:  # type: ignore[no-untyped-def]
    runs_hook = webhook_register(project=project, url="http://127.0.0.1:9/runs", events=["run.status_changed"],
                                 actor=Actor.for_agent("coder"))
    webhook_register(project=project, url="http://127.0.0.1:9/approvals", events=["approval.decided"],
                     actor=Actor.for_agent("coder"))
    webhook_register(project=other_project, url="http://127.0.0.1:9/other", events=["run.status_changed"],
                     actor=Actor.for_agent("other"))
    run = factories.make_run(project, factories.make_session(project, ref="S-1"), ref="R-7")
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    run_transition(project=project, run_id=run.pk, to=RunStatus.BLOCKED, expected_version=None,
                   actor=Actor.for_worker("worker:test"), blocked_step="capability")
    Run.objects.filter(pk=run.pk).update(metrics={"touched": True})  # no status change: nothing owed
    assert tasks.send_due() == 2
    deliveries = WebhookDelivery.objects.filter(pk__in=_deliveries(sent)).order_by("pk")
    assert [(d.webhook_id, d.payload["data"]["status"]) for d in deliveries] == [
        (runs_hook.pk, "running"), (runs_hook.pk, "blocked")]
    assert deliveries[1].payload["data"] == {"project_id": project.pk, "run_id": run.pk, "ref": "R-7",
                                             "status": "blocked", "version": 3, "blocked_step": "capability"}


def test_a_receiver_that_keeps_failing_ends_failed_after_the_last_attempt(project, sent, settings) -> None:  # type: ignore[no-untyped-def]
    settings.HARNESS_WEBHOOK_MAX_ATTEMPTS = 3
    with receiving_server(answers=[500, 502, 503, 200]) as receiver:
        webhook_register(project=project, url=receiver.url, events=["run.status_changed"],
                         actor=Actor.for_agent("coder"))
        [delivery_id] = WebhookDelivery.objects.bulk_create([WebhookDelivery(
            project=project, webhook=project.webhooks.get(), url=receiver.url, event="run.status_changed",
            payload={"event": "run.status_changed", "data": {}})])[0].pk,
        assert tasks.deliver_webhook.apply(args=[delivery_id]).get() == DeliveryStatus.FAILED
    assert len(receiver.requests) == 3
    assert list(WebhookAttempt.objects.filter(delivery_id=delivery_id).values_list("status_code", flat=True)) == [
        500, 502, 503]
    assert WebhookDelivery.objects.get(pk=delivery_id).status == DeliveryStatus.FAILED


def test_an_unreachable_receiver_is_logged_and_owed_again_when_its_retry_is_lost(project, sent) -> None:  # type: ignore[no-untyped-def]
    from django.utils import timezone

    hook = webhook_register(project=project, url="http://127.0.0.1:9/closed", events=["run.status_changed"],
                            actor=Actor.for_agent("coder"))
    delivery = WebhookDelivery.objects.create(project=project, webhook=hook, url=hook.url, event="run.status_changed",
                                              payload={"event": "run.status_changed", "data": {}},
                                              next_attempt_at=timezone.now())
    from notify_app.services import delivery_attempt

    outcome = delivery_attempt(delivery_id=delivery.pk)
    assert outcome.status == DeliveryStatus.PENDING and outcome.retry_in is not None
    attempt = WebhookAttempt.objects.get(delivery=delivery)
    assert attempt.status_code is None and "ConnectionError" in attempt.error
    assert deliveries_to_send() == []  # its retry is not late yet
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now() - timezone.timedelta(hours=1))
    assert tasks.send_due() == 1 and _deliveries(sent) == [delivery.pk]
    assert deliveries_to_send() == []  # claimed: due again only if this message is lost too


def test_reviewers_are_emailed_and_the_projects_slack_url_gets_a_message(
        project, other_project, sent, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    rita.email = "rita@example.com"
    rita.save()
    for name, role, proj in [("otto", "operator", project), ("gina", "reviewer", other_project)]:
        user = factories.make_user(name, role=role, projects=[proj])
        user.email = f"{name}@example.com"
        user.save()
    with receiving_server() as slack:
        ProjectNotification.objects.create(project=project, slack_webhook_url=slack.url)
        with django_capture_on_commit_callbacks(execute=True):
            approval = _ask(project)
        [(facts,)] = [args for name, args in sent if name == "notify.email_reviewers"]
        assert tasks.email_reviewers_task.apply(args=[facts]).get() == 1
        [delivery_id] = _deliveries(sent)
        assert tasks.send_due() == 0  # queued by the listener already: the sweep leaves it alone
        assert tasks.deliver_webhook.apply(args=[delivery_id]).get() == DeliveryStatus.DELIVERED

    [message] = mail.outbox
    assert message.to == ["rita@example.com"]  # a reviewer of this project only
    assert "mail.send" in message.subject and f"/approvals/{approval.pk}/" in message.body
    assert approval.action_fingerprint in message.body
    [request] = slack.requests
    text = json.loads(request.body)["text"]
    assert f"Approval {approval.pk} waits in acme: mail.send (risk high)" in text
    assert signing.SIGNATURE_HEADER not in request.headers  # a Slack URL is the secret itself
    assert WebhookDelivery.objects.get(pk=delivery_id).kind == DeliveryKind.SLACK


def test_a_project_can_turn_reviewer_email_off(project, sent) -> None:  # type: ignore[no-untyped-def]
    rita = factories.make_user("rita", role="reviewer", projects=[project])
    rita.email = "rita@example.com"
    rita.save()
    ProjectNotification.objects.create(project=project, email_reviewers=False)
    facts = {"project_id": project.pk, "approval_id": 1, "run_id": 1, "tool": "t", "risk": "high",
             "fingerprint": "f", "requested_by": "agent:coder"}
    assert tasks.email_reviewers_task.apply(args=[facts]).get() == 0
    assert mail.outbox == []
