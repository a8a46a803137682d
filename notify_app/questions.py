"""Telling people that a question waits for them (issue 33, part 4): the members of the group it is routed to (their
email, and the group's chat webhook), else every reviewer of the project (their email, unless the project turned
it off, and the project's Slack-compatible URL through the webhook deliveries), with a link to the question's page."""

from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.urls import reverse
from django.utils import timezone

from harness.models import Project
from notify_app.groups import chat_message, group_emails
from notify_app.models import DeliveryKind, ProjectNotification, WebhookDelivery, WebhookEvent
from notify_app.reviewers import project_reviewer_emails
from runs_app.models import ReviewerGroup


def question_link(question_id: int) -> str:
    return f"{settings.HARNESS_CONSOLE_URL}{reverse('runs:question_detail', args=[question_id])}"


def question_summary(facts: dict[str, Any], slug: str) -> str:
    text = facts["question"] if len(facts["question"]) <= 200 else facts["question"][:199] + "…"
    return f"{facts['asked_by']} asks in {slug}: {text} {question_link(facts['question_id'])}"


def notify_question(*, facts: dict[str, Any]) -> tuple[int, list[int]]:
    """Email whoever may answer (one message each) and record the routed group's chat delivery; (the emails sent,
    the deliveries for the caller to queue)."""
    project_id, group = facts["project_id"], facts.get("group_id")
    slug = Project.objects.filter(pk=project_id).values_list("slug", flat=True).first() or "?"
    if group:
        recipients = group_emails(project_id, [group])
    else:
        setting = ProjectNotification.objects.filter(project_id=project_id).first()
        recipients = [] if setting is not None and not setting.email_reviewers else project_reviewer_emails(project_id)
    body = f"{question_summary(facts, slug)}\n\nAnswer it in the console; it is answered once.\n"
    for address in recipients:
        send_mail(f"[Harness] {slug}: a question from {facts['asked_by']}", body, settings.DEFAULT_FROM_EMAIL,
                  [address])
    deliveries: list[int] = []
    if group:
        url = (ReviewerGroup.objects.filter(pk=group, project_id=project_id).exclude(chat_webhook_url="")
               .values_list("chat_webhook_url", flat=True).first())
        if url:
            delivery = WebhookDelivery.objects.create(
                project_id=project_id, kind=DeliveryKind.SLACK, url=url, event=WebhookEvent.QUESTION_ASKED,
                payload=chat_message(f"{facts['asked_by']} asks in {slug}: {facts['question'][:200]}",
                                     question_link(facts["question_id"])), next_attempt_at=timezone.now())
            deliveries.append(delivery.pk)
    return len(recipients), deliveries
