"""Reads of notify_app, scoped to the caller's projects (the console and the API use the same)."""

from collections.abc import Sequence

from django.db.models import Prefetch, QuerySet

from notify_app.models import Webhook, WebhookAttempt, WebhookDelivery


def webhook_list(*, project_ids: Sequence[int]) -> QuerySet[Webhook]:
    return Webhook.objects.filter(project_id__in=project_ids).select_related("project").order_by("-id")


def delivery_log(*, project_ids: Sequence[int]) -> QuerySet[WebhookDelivery]:
    """Deliveries newest first, each with its attempts in order (two statements a page)."""
    return (WebhookDelivery.objects.filter(project_id__in=project_ids)
            .select_related("project", "webhook")
            .prefetch_related(Prefetch("attempt_log", queryset=WebhookAttempt.objects.order_by("number")))
            .order_by("-created_at", "-id"))
