"""notify_app listens to runs_app's `approval_requested` (after commit) and records what it owes: the reviewers'
email, the project's Slack message, the agents' webhook deliveries. Sending is the tasks' work (notify_app.tasks).

Decisions and run state changes need no listener: triggers record their deliveries (migration 0002)."""

from collections.abc import Callable
from typing import Any

from notify_app import tasks
from notify_app.groups import routed_groups
from notify_app.models import WebhookEvent
from notify_app.questions import question_summary
from notify_app.reviewers import approval_summary
from notify_app.services import deliveries_create
from runs_app.signals import approval_escalated, approval_requested, question_asked


def _owe(project_id: int, event: str, data: dict[str, Any],
         slack_text: Callable[[str], str] | None = None) -> None:
    for delivery_id in deliveries_create(project_id=project_id, event=event, data=data, slack_text=slack_text):
        tasks.enqueue(tasks.deliver_webhook, delivery_id)


def on_approval_requested(sender: Any, **facts: Any) -> None:
    facts.pop("signal", None)
    # A policy that names groups routes the request to them: their members are told, not every reviewer.
    groups = routed_groups(facts["approval_id"])
    if groups:
        tasks.enqueue(tasks.notify_groups_task, facts, groups, WebhookEvent.APPROVAL_REQUESTED.value,
                      "Approval requested")
    else:
        tasks.enqueue(tasks.email_reviewers_task, facts)
    _owe(facts["project_id"], WebhookEvent.APPROVAL_REQUESTED, facts,
         slack_text=lambda slug: approval_summary(facts, slug))


def on_approval_escalated(sender: Any, **facts: Any) -> None:
    """The escalation group is told (email, chat); agents' webhooks subscribed to approval.escalated too."""
    facts.pop("signal", None)
    tasks.enqueue(tasks.notify_groups_task, facts, [facts["group_id"]], WebhookEvent.APPROVAL_ESCALATED.value,
                  "Approval escalated to your group")
    _owe(facts["project_id"], WebhookEvent.APPROVAL_ESCALATED, facts)


def on_question_asked(sender: Any, **facts: Any) -> None:
    """Whoever may answer is told (the routed group, else the project's reviewers); agents' webhooks subscribed to
    question.asked too (and the project's Slack-compatible URL when nobody is routed)."""
    facts.pop("signal", None)
    tasks.enqueue(tasks.notify_question_task, facts)
    _owe(facts["project_id"], WebhookEvent.QUESTION_ASKED, facts,
         slack_text=None if facts.get("group_id") else lambda slug: question_summary(facts, slug))


approval_requested.connect(on_approval_requested, dispatch_uid="notify_app.approval_requested")
approval_escalated.connect(on_approval_escalated, dispatch_uid="notify_app.approval_escalated")
question_asked.connect(on_question_asked, dispatch_uid="notify_app.question_asked")
