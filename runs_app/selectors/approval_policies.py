"""Reads of approval policies and reviewer groups (issue 33), scoped to the caller's projects like every read."""

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db.models import Prefetch, QuerySet

from runs_app.models import ApprovalPolicy, ReviewerGroup


def approval_policy_list(*, project_ids: Sequence[int]) -> QuerySet[ApprovalPolicy]:
    """Every version of the projects' policies, each tool's newest first (the default policy, tool "", first)."""
    return (ApprovalPolicy.objects.for_projects(project_ids).select_related("project", "escalate_to")
            .prefetch_related("eligible_groups").order_by("project__slug", "tool", "-version"))


def reviewer_group_list(*, project_ids: Sequence[int]) -> QuerySet[ReviewerGroup]:
    members = get_user_model().objects.only("id", "username").order_by("username")
    return (ReviewerGroup.objects.for_projects(project_ids).select_related("project")
            .prefetch_related(Prefetch("members", queryset=members)).order_by("project__slug", "name"))


@dataclass
class ToolPolicies:
    """One tool's (or the project default's) policy: the version that governs new requests, and the earlier ones
    that requests decided before it still name."""

    current: ApprovalPolicy
    earlier: list[ApprovalPolicy] = field(default_factory=list)


def policies_by_tool(policies: Sequence[ApprovalPolicy]) -> list[ToolPolicies]:
    """`approval_policy_list`'s rows grouped per (project, tool), the newest version as `current`."""
    grouped: dict[tuple[int, str], ToolPolicies] = {}
    for policy in policies:
        key = (policy.project_id, policy.tool)
        if key in grouped:
            grouped[key].earlier.append(policy)
        else:
            grouped[key] = ToolPolicies(current=policy)
    return list(grouped.values())
