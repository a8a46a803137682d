"""Telling a reviewer group that a request waits for it (issue 33, part 5): when a policy routes a request to
groups (its eligible groups when it is asked, its escalation group when it escalates), those groups' members are
emailed instead of every reviewer of the project, and each group with a chat webhook gets a Slack-compatible
incoming-webhook message with a link back to the console page (a delivery of kind "slack": sent, retried and
refused for private addresses like every webhook, notify_app.services.delivery_attempt)."""

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.utils import timezone

from harness.models import Project
from harness.tenancy import Role, role_holders
from notify_app.models import DeliveryKind, WebhookDelivery
from notify_app.reviewers import approval_link
from runs_app.models import ApprovalPolicy, ApprovalRequest, ReviewerGroup


def routed_groups(approval_id: int) -> list[int]:
    """The groups a request is routed to now: its escalation group once escalated, else its policy's eligible
    groups (empty: no group, every reviewer of the project hears of it)."""
    row = ApprovalRequest.objects.filter(pk=approval_id).values("routed_group_id", "policy_id").first()
    if row is None:
        return []
    if row["routed_group_id"]:
        return [row["routed_group_id"]]
    eligible = ApprovalPolicy.eligible_groups.through.objects.filter(approvalpolicy_id=row["policy_id"])
    return sorted(eligible.values_list("reviewergroup_id", flat=True)) if row["policy_id"] else []


def group_emails(project_id: int, group_ids: Sequence[int]) -> list[str]:
    """The addresses of the members of `group_ids` that email their members, who review in the project."""
    members = role_holders(project_id, Role.REVIEWER).filter(
        reviewer_groups__in=ReviewerGroup.objects.filter(pk__in=group_ids, project_id=project_id,
                                                         email_members=True))
    return sorted(set(members.exclude(email="").values_list("email", flat=True)))


def chat_message(text: str, link: str) -> dict[str, Any]:
    """A Slack-compatible incoming-webhook body: the plain `text` (what clients without blocks show) and a section
    with the link back to the console."""
    section = {"type": "mrkdwn", "text": f"{text}\n<{link}|Open it in the console>"}
    return {"text": f"{text} {link}", "blocks": [{"type": "section", "text": section}]}


def notify_groups(*, facts: dict[str, Any], group_ids: Sequence[int], event: str, headline: str
                  ) -> tuple[int, list[int]]:
    """A routed approval's notices (`tell_groups`); (the emails sent, the deliveries for the caller to queue)."""
    project_id = facts["project_id"]
    slug = Project.objects.filter(pk=project_id).values_list("slug", flat=True).first() or "?"
    text = f"{headline} in {slug}: {facts['tool']} (risk {facts['risk']}), asked by {facts['requested_by']}."
    return tell_groups(project_id=project_id, group_ids=group_ids, event=event, text=text,
                       link=approval_link(facts["approval_id"]),
                       subject=f"[Harness] {slug}: {headline.lower()} for {facts['tool']}")


def tell_groups(*, project_id: int, group_ids: Sequence[int], event: str, subject: str, text: str, link: str
                ) -> tuple[int, list[int]]:
    """Email the groups' members (one message each: no reviewer learns the others' addresses) and record one chat
    delivery per group with a chat webhook; (the emails sent, the deliveries for the caller to queue)."""
    recipients = group_emails(project_id, group_ids)
    for address in recipients:
        send_mail(subject, f"{text}\n\n{link}\n", settings.DEFAULT_FROM_EMAIL, [address])
    now = timezone.now()  # marked as sent now (the caller queues each): the sweep leaves them alone unless late
    rows = [WebhookDelivery(project_id=project_id, kind=DeliveryKind.SLACK, url=url, event=event,
                            payload=chat_message(text, link), next_attempt_at=now)
            for url in ReviewerGroup.objects.filter(pk__in=group_ids, project_id=project_id)
            .exclude(chat_webhook_url="").values_list("chat_webhook_url", flat=True)]
    return len(recipients), [row.pk for row in WebhookDelivery.objects.bulk_create(rows)] if rows else []
