"""Which approval policy governs a request, and who may decide it (issue 33): the shared rules every door reads.

A request is governed by the current version of its tool's policy, else of the project's default policy (tool
empty), else by none (one reviewer of the project decides, as before policies). Who may decide a pending request:

- before escalation (`routed_group` empty): a reviewer of the project who, when the policy names eligible groups,
  is a member of one of them (no groups named: any reviewer of the project);
- once escalated (`routed_group` set): only members of that group. The first group's members no longer may.

The reviewer role and the freeze stay `harness.tenancy.acting_filter`'s: these conditions narrow it, never widen it.
Both are conditions on the approval row (subqueries), so a decision's write, a queue and a count hold them without
a read of their own. So is the quorum (`quorum_reached`): a request whose policy asks N approvals is approved by the
decision that has N-1 other distinct reviewers' votes for the same action beside it.
"""

from typing import Any

from django.db.models import Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from runs_app.models import ApprovalPolicy, ApprovalVote, ReviewerGroup


def current_policies(project_id: int, tool: str) -> QuerySet[ApprovalPolicy]:
    """The policies that could govern `tool` in the project, the governing one first: the tool's own latest
    version, then the project default's latest. `.first()` is the policy (None: no policy); as a subquery
    (`.values("pk")[:1]`) it rides inside the caller's statement."""
    return (ApprovalPolicy.objects.filter(project_id=project_id, tool__in=[tool, ""])
            .order_by("-tool", "-version"))  # "" sorts last when descending: the tool's own policy wins


def policy_for(project_id: int, tool: str) -> ApprovalPolicy | None:
    return current_policies(project_id, tool).first()


def may_decide(user: Any) -> Q:
    """The condition, on ApprovalRequest rows, that `user` is among those who may decide it now (see the module
    docstring). Holds for any reviewer on a request without a policy or whose policy names no groups."""
    member_of = ReviewerGroup.objects.filter(members=user.pk)
    in_eligible_group = Exists(ApprovalPolicy.eligible_groups.through.objects.filter(
        approvalpolicy_id=OuterRef("policy_id"), reviewergroup_id__in=member_of.values("pk")))
    policy_names_groups = Exists(ApprovalPolicy.eligible_groups.through.objects.filter(
        approvalpolicy_id=OuterRef("policy_id")))
    before_escalation = Q(routed_group__isnull=True) & (~policy_names_groups | in_eligible_group)
    after_escalation = Q(routed_group__in=member_of.values("pk"))
    return before_escalation | after_escalation


def quorum_reached(user: Any, approving: str | None = None) -> Q:
    """The condition, on ApprovalRequest rows, that `user`'s approval completes the quorum: one approval is
    required, or at least `approvals_required - 1` other reviewers voted for the action approved (`approving`, an
    edit's fingerprint, or the requested action's). `user`'s own earlier votes never count twice."""
    fingerprint = Value(approving) if approving else OuterRef("action_fingerprint")
    others = (ApprovalVote.objects.filter(approval=OuterRef("pk"), fingerprint=fingerprint).exclude(user=user.pk)
              .values("approval").annotate(n=Count("user", distinct=True)).values("n"))
    votes = Coalesce(Subquery(others, output_field=IntegerField()), Value(0))
    return Q(approvals_required__lte=1) | Q(approvals_required__lte=votes + Value(1))


def declared_reject_option(options: Any, name: str) -> dict[str, str] | None:
    """The option `name` among a policy version's `reject_options` ({"name", "reviewer_text", "agent_text"}), or
    None when it declares no such option: what a rejection is checked against and what the agent is told."""
    for option in options or []:
        if isinstance(option, dict) and option.get("name") == name:
            return {"name": name, "reviewer_text": str(option.get("reviewer_text", "")),
                    "agent_text": str(option.get("agent_text", ""))}
    return None


def reject_option_of(approval: Any) -> dict[str, str] | None:
    """The reject option a rejection chose, as its policy version declares it, or None (a plain rejection). Reads
    the policy only when there is an option."""
    if not approval.reject_option or approval.policy_id is None:
        return None
    return (declared_reject_option(approval.policy.reject_options, approval.reject_option)
            or {"name": approval.reject_option, "reviewer_text": "", "agent_text": ""})
