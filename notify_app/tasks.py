"""Celery tasks of notify_app: thin, take ids or plain values, call the services."""

import logging
from typing import Any

from celery import Task, shared_task

from notify_app.groups import notify_groups
from notify_app.questions import notify_question
from notify_app.reviewers import email_reviewers
from notify_app.services import deliveries_to_send, delivery_attempt

log = logging.getLogger(__name__)


@shared_task(bind=True, name="notify.deliver_webhook", max_retries=None, acks_late=True)
def deliver_webhook(self: Task, delivery_id: int) -> str:
    """One attempt; a failed one is retried by Celery after the backoff the attempt recorded."""
    outcome = delivery_attempt(delivery_id=delivery_id)
    if outcome.retry_in is not None:
        raise self.retry(countdown=outcome.retry_in)
    return outcome.status


@shared_task(name="notify.email_reviewers", acks_late=True)
def email_reviewers_task(facts: dict[str, Any]) -> int:
    return email_reviewers(facts=facts)


@shared_task(name="notify.notify_groups", acks_late=True)
def notify_groups_task(facts: dict[str, Any], group_ids: list[int], event: str, headline: str) -> int:
    """A routed request's notices (notify_app.groups): the groups' members' email, then their chat messages."""
    sent, deliveries = notify_groups(facts=facts, group_ids=group_ids, event=event, headline=headline)
    for delivery_id in deliveries:
        enqueue(deliver_webhook, delivery_id)
    return sent


@shared_task(name="notify.notify_question", acks_late=True)
def notify_question_task(facts: dict[str, Any]) -> int:
    """A question's notices (notify_app.questions): email, then the routed group's chat message."""
    sent, deliveries = notify_question(facts=facts)
    for delivery_id in deliveries:
        enqueue(deliver_webhook, delivery_id)
    return sent


@shared_task(name="notify.send_due")
def send_due() -> int:
    """Beat, every HARNESS_WEBHOOK_SWEEP_SECONDS: send the deliveries the triggers recorded (decisions, run
    state changes) and those whose retry message was lost; the database holds what is owed."""
    due = deliveries_to_send()
    for delivery_id in due:
        enqueue(deliver_webhook, delivery_id)
    return len(due)


def enqueue(task: Any, *args: Any) -> None:
    """Send a task; a broker failure is logged, and `redeliver_due` finds a delivery later."""
    try:
        task.delay(*args)
    except Exception:  # any broker failure: the delivery row is the record
        log.exception("could not enqueue %s%r", task.name, args)
