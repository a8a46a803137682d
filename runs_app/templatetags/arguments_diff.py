"""`{{ approval|arguments_diff }}`: what a reviewer changed, for templates/runs/_arguments_diff.html, the one partial
every page that shows an approval includes (the approval page, the inbox row). The diff itself is
runs_app.presentation.arguments_diff's."""

from django import template

from runs_app.models import ApprovalRequest
from runs_app.presentation.arguments_diff import ArgumentsDiff
from runs_app.presentation.arguments_diff import arguments_diff as diff_of

register = template.Library()


@register.filter
def arguments_diff(approval: ApprovalRequest) -> ArgumentsDiff:
    return diff_of(approval.arguments, approval.approved_arguments)
