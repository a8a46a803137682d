"""`{{ page|quorum_of:approval }}`: an inbox row's "1 of 2 approvals" (empty for a request of one reviewer)."""

from django import template

from runs_app.models import ApprovalRequest
from runs_app.selectors.approvals import InboxPage

register = template.Library()


@register.filter
def quorum_of(page: InboxPage, approval: ApprovalRequest) -> str:
    if approval.approvals_required <= 1:
        return ""
    return f"{page.votes.get(approval.pk, 0)} of {approval.approvals_required} approvals"
