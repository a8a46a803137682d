"""Writes of notify_app: registering webhooks, recording the deliveries an event owes, and one attempt at one
delivery. Tasks (notify_app.tasks) and the API call these; nothing else writes these tables."""

import datetime as dt
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import urllib3
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_record
from harness.http.errors import ConflictError, NotFoundError, ValidationFailed
from harness.models import Project
from notify_app import outbound, signing
from notify_app.models import (
    DeliveryKind,
    DeliveryStatus,
    ProjectNotification,
    Webhook,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEvent,
)

MAX_WEBHOOKS_PER_PROJECT = 20
MAX_BACKOFF_SECONDS = 3600
_EXCERPT = 500


def webhook_register(*, project: Project, url: str, events: list[str], actor: Actor) -> Webhook:
    """Register an agent's webhook with a new secret (returned once, on this object), audited; a URL that
    points at an internal address is refused (notify_app.outbound)."""
    if not url.startswith(("https://", "http://")):
        raise ValidationFailed("A webhook URL is http(s).", code="invalid")
    outbound.check_url(url)
    unknown = sorted(set(events) - set(WebhookEvent.values))
    if not events or unknown:
        raise ValidationFailed(f"events are some of {', '.join(WebhookEvent.values)}.", code="invalid")
    with transaction.atomic():
        if Webhook.objects.filter(project=project, active=True).count() >= MAX_WEBHOOKS_PER_PROJECT:
            raise ConflictError(f"At most {MAX_WEBHOOKS_PER_PROJECT} active webhooks per project.",
                                code="too_many_webhooks")
        webhook = Webhook.objects.create(project=project, url=url, events=sorted(set(events)),
                                         secret=signing.new_secret(), created_by=actor.label)
        audit_record(project=project.pk, actor=actor, action="webhook.registered", target=webhook,
                     data={"url": url, "events": webhook.events})
    return webhook


def webhook_deactivate(*, project: Project, webhook_id: int, actor: Actor) -> Webhook:
    with transaction.atomic():
        webhook = Webhook.objects.select_for_update().filter(project=project, pk=webhook_id).first()
        if webhook is None:
            raise NotFoundError(f"Webhook {webhook_id} does not exist.")
        if webhook.active:
            webhook.active = False
            webhook.save(update_fields=["active"])
            audit_record(project=project.pk, actor=actor, action="webhook.deactivated", target=webhook, data={})
    return webhook


def deliveries_create(*, project_id: int, event: str, data: dict[str, Any],
                      slack_text: Callable[[str], str] | None = None) -> list[int]:
    """The deliveries an event owes in its project: one per active webhook subscribed to it, and, for an event
    that reviewers hear of (`slack_text`: the message, given the project's slug), one to the project's
    Slack-compatible URL when it has one. A read per kind of receiver, and an INSERT when any is owed."""
    now = timezone.now()
    payload = {"event": event, "occurred_at": now.isoformat(), "data": data}
    # Marked as sent now (the caller queues each): the sweep (deliveries_to_send) leaves them alone unless late.
    rows = [WebhookDelivery(project_id=project_id, webhook_id=pk, kind=DeliveryKind.SIGNED, url=url, event=event,
                            payload=payload, next_attempt_at=now)
            for pk, url in Webhook.objects.filter(project_id=project_id, active=True, events__contains=[event])
            .values_list("pk", "url")]
    if slack_text is not None:
        slack = ProjectNotification.objects.filter(project_id=project_id).exclude(slack_webhook_url="") \
            .values_list("slack_webhook_url", "project__slug").first()
        if slack:
            rows.append(WebhookDelivery(project_id=project_id, kind=DeliveryKind.SLACK, url=slack[0], event=event,
                                        payload={"text": slack_text(slack[1])}, next_attempt_at=now))
    if not rows:
        return []
    return [row.pk for row in WebhookDelivery.objects.bulk_create(rows)]


@dataclass(frozen=True)
class AttemptOutcome:
    status: str  # the delivery's status after this attempt
    retry_in: float | None  # seconds until the next attempt, when there is one


Post = Callable[..., outbound.Reply]


def delivery_attempt(*, delivery_id: int, post: Post = outbound.post_pinned) -> AttemptOutcome:
    """Make one attempt at a pending delivery and log it.

    1. Read the delivery with its webhook's secret; one that is no longer pending is left alone.
    2. POST the body (signed: HMAC-SHA256 over "<timestamp>.<body>" with the webhook's secret, the
       timestamp in its own header; a Slack delivery is the bare `{"text": ...}`), outside any transaction,
       to the address its host resolves to now, checked (notify_app.outbound): an internal one fails the
       delivery at once, with nothing sent.
    3. In one transaction: log the attempt (its number, the status code or the error, an excerpt of the
       answer) and move the delivery: a 2xx delivers it; otherwise it waits for the next attempt
       (backoff doubling from HARNESS_WEBHOOK_BACKOFF_SECONDS, capped at an hour) or, after
       HARNESS_WEBHOOK_MAX_ATTEMPTS, fails.
    """
    delivery = WebhookDelivery.objects.select_related("webhook").filter(pk=delivery_id).first()
    if delivery is None or delivery.status != DeliveryStatus.PENDING:
        return AttemptOutcome(delivery.status if delivery else DeliveryStatus.FAILED, None)
    if delivery.kind == DeliveryKind.SIGNED and (delivery.webhook is None or not delivery.webhook.active):
        return _record(delivery, status_code=None, error="The webhook was deactivated.", excerpt="",
                       duration_ms=0, final=True)
    body = json.dumps(delivery.payload if delivery.kind == DeliveryKind.SLACK
                      else {"id": delivery.pk, **delivery.payload}, sort_keys=True).encode()
    headers = {"Content-Type": "application/json", "User-Agent": "harness-console-webhooks"}
    if delivery.kind == DeliveryKind.SIGNED and delivery.webhook is not None:
        timestamp = int(time.time())
        headers.update({
            signing.TIMESTAMP_HEADER: str(timestamp),
            signing.SIGNATURE_HEADER: signing.sign(delivery.webhook.secret, timestamp, body),
            signing.EVENT_HEADER: delivery.event,
            signing.DELIVERY_HEADER: str(delivery.pk),
        })
    started = time.monotonic()
    status_code: int | None = None
    error = excerpt = ""
    refused = False
    try:
        response = post(delivery.url, data=body, headers=headers, timeout=settings.HARNESS_WEBHOOK_TIMEOUT_SECONDS)
        status_code, excerpt = response.status_code, response.text[:_EXCERPT]
        if not 200 <= status_code < 300:
            error = f"HTTP {status_code}"
    except outbound.AddressRefused as exc:
        # Not a network failure that a retry may cure: the URL now leads inside. Nothing was sent.
        error, refused = f"Refused: {exc}"[:_EXCERPT], True
    except (urllib3.exceptions.HTTPError, outbound.HostUnresolvable, OSError) as exc:
        error = f"{type(exc).__name__}: {exc}"[:_EXCERPT]
    duration_ms = int((time.monotonic() - started) * 1000)
    return _record(delivery, status_code=status_code, error=error, excerpt=excerpt, duration_ms=duration_ms,
                   final=refused)


def _record(delivery: WebhookDelivery, *, status_code: int | None, error: str, excerpt: str, duration_ms: int,
            final: bool) -> AttemptOutcome:
    number = delivery.attempts + 1
    now = timezone.now()
    if not error:
        status, retry_in = DeliveryStatus.DELIVERED, None
    elif final or number >= settings.HARNESS_WEBHOOK_MAX_ATTEMPTS:
        status, retry_in = DeliveryStatus.FAILED, None
    else:
        status = DeliveryStatus.PENDING
        retry_in = float(min(settings.HARNESS_WEBHOOK_BACKOFF_SECONDS * 2 ** (number - 1), MAX_BACKOFF_SECONDS))
    with transaction.atomic():
        # Compare-and-set on the attempt count: of two workers on one delivery, one logs this attempt.
        moved = WebhookDelivery.objects.filter(pk=delivery.pk, status=DeliveryStatus.PENDING,
                                               attempts=delivery.attempts).update(
            attempts=F("attempts") + 1, status=status,
            next_attempt_at=now + dt.timedelta(seconds=retry_in) if retry_in is not None else None,
            delivered_at=now if status == DeliveryStatus.DELIVERED else None,
        )
        if not moved:
            return AttemptOutcome(DeliveryStatus.PENDING, None)
        WebhookAttempt.objects.create(delivery=delivery, number=number, status_code=status_code, error=error,
                                      response_excerpt=excerpt, duration_ms=duration_ms)
    return AttemptOutcome(status, retry_in)


def deliveries_to_send(*, grace_seconds: int = 60) -> list[int]:
    """Claim the pending deliveries that no task has been sent for: new ones (recorded by a trigger or a
    listener, never attempted) and those whose retry is over `grace_seconds` late (its message was lost).

    One UPDATE marks them sent now (`next_attempt_at`), so a concurrent sweep skips them, and a delivery whose
    message is lost again is due again after the grace.
    """
    with connection.cursor() as cursor:
        cursor.execute("""
            UPDATE notify_app_webhookdelivery SET next_attempt_at = statement_timestamp()
             WHERE id IN (SELECT id FROM notify_app_webhookdelivery
                           WHERE status = 'pending'
                             AND (next_attempt_at IS NULL
                                  OR next_attempt_at <= statement_timestamp() - make_interval(secs => %s))
                           ORDER BY id LIMIT 500 FOR UPDATE SKIP LOCKED)
            RETURNING id""", [grace_seconds])
        return sorted(row[0] for row in cursor.fetchall())
