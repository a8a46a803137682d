"""Who is told what: a project's reviewer notifications (email, a Slack-compatible incoming webhook) and the
agents' signed outbound webhooks, with a delivery log of every attempt.

A delivery is at-least-once: a receiver that must act once dedupes on the delivery id (`X-Harness-Delivery`).
"""

from django.contrib.postgres.fields import ArrayField
from django.db import models

from harness.models import Project


class WebhookEvent(models.TextChoices):
    APPROVAL_REQUESTED = "approval.requested"
    APPROVAL_DECIDED = "approval.decided"  # approved, rejected or expired
    APPROVAL_ESCALATED = "approval.escalated"  # routed to the policy's escalation group when its time ran out
    QUESTION_ASKED = "question.asked"  # an agent asked a person a question (runs_app.services.questions)
    RUN_STATUS_CHANGED = "run.status_changed"


class ProjectNotification(models.Model):
    """How a project's reviewers hear of a new approval request (no row: by email, no Slack)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="notification")
    email_reviewers = models.BooleanField(default=True, help_text="Email the project's reviewers.")
    slack_webhook_url = models.URLField(
        max_length=500, blank=True, help_text="A Slack-compatible incoming webhook: posted {\"text\": ...}.")

    def __str__(self) -> str:
        return f"notifications of {self.project_id}"


class Webhook(models.Model):
    """An agent's subscription: the events it is sent, signed with HMAC-SHA256 under `secret`.

    The secret is stored as it is (unlike a token, it must be read to sign every delivery) and is shown to
    the agent once, when it registers the webhook.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=500)
    events = ArrayField(models.CharField(max_length=40, choices=WebhookEvent.choices))
    secret = models.CharField(max_length=64, editable=False)
    active = models.BooleanField(default=True)
    created_by = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["project", "active"], name="webhook_project_active")]

    def __str__(self) -> str:
        return f"webhook {self.pk} → {self.url}"


class DeliveryKind(models.TextChoices):
    SIGNED = "signed"  # an agent's webhook
    SLACK = "slack"  # the project's Slack-compatible incoming webhook


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"  # every attempt failed


class WebhookDelivery(models.Model):
    """One event for one receiver, with its attempts (the console's delivery log)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhook_deliveries")
    webhook = models.ForeignKey(Webhook, null=True, blank=True, on_delete=models.CASCADE, related_name="deliveries")
    kind = models.CharField(max_length=10, choices=DeliveryKind.choices, default=DeliveryKind.SIGNED)
    url = models.URLField(max_length=500)
    event = models.CharField(max_length=40, choices=WebhookEvent.choices)
    payload = models.JSONField()
    status = models.CharField(max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["project", "-created_at", "-id"], name="delivery_project_newest"),
            models.Index(fields=["next_attempt_at"], name="delivery_pending_due",
                         condition=models.Q(status="pending")),
        ]

    def __str__(self) -> str:
        return f"delivery {self.pk} ({self.event})"


class WebhookAttempt(models.Model):
    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField()
    status_code = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    response_excerpt = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="attempt_number_once")]

    def __str__(self) -> str:
        return f"attempt {self.number} of delivery {self.delivery_id}"
