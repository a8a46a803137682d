"""Telling people that a question waits for them (issue 33, part 4): the members of the group it is routed to (their
email, and the group's chat webhook), else every reviewer of the project (their email, unless the project turned
it off, and the project's Slack-compatible URL through the webhook deliveries), with a link to the question's page."""

from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.urls import reverse

from harness.models import Project
from notify_app.groups import tell_groups
from notify_app.models import ProjectNotification, WebhookEvent
from notify_app.reviewers import project_reviewer_emails


def question_link(question_id: int) -> str:
    return f"{settings.HARNESS_CONSOLE_URL}{reverse('runs:question_detail', args=[question_id])}"


def question_summary(facts: dict[str, Any], slug: str) -> str:
    return f"{facts['asked_by']} asks in {slug}: {_short(facts['question'])} {question_link(facts['question_id'])}"


def notify_question(*, facts: dict[str, Any]) -> tuple[int, list[int]]:
    """Tell whoever may answer: the routed group (`tell_groups`: its members' email, its chat webhook), else the
    project's reviewers by email (unless the project turned it off); (the emails sent, the deliveries for the
    caller to queue)."""
    project_id, group = facts["project_id"], facts.get("group_id")
    slug = Project.objects.filter(pk=project_id).values_list("slug", flat=True).first() or "?"
    subject = f"[Harness] {slug}: a question from {facts['asked_by']}"
    link = question_link(facts["question_id"])
    text = f"{facts['asked_by']} asks in {slug}: {_short(facts['question'])}"
    if group:
        return tell_groups(project_id=project_id, group_ids=[group], event=WebhookEvent.QUESTION_ASKED,
                           subject=subject, text=text, link=link)
    setting = ProjectNotification.objects.filter(project_id=project_id).first()
    recipients = [] if setting is not None and not setting.email_reviewers else project_reviewer_emails(project_id)
    for address in recipients:
        send_mail(subject, f"{text}\n\n{link}\n\nAnswer it in the console; it is answered once.\n",
                  settings.DEFAULT_FROM_EMAIL, [address])
    return len(recipients), []


def _short(question: str) -> str:
    return question if len(question) <= 200 else question[:199] + "…"
