"""Approval policies as data (issue 33, part 1): each change is the tool's (or the project default's) next version,
audited; requests record the version that governed them (approval_request_create), so old versions never change."""

import datetime as dt
from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, transaction

from harness.actors import Actor
from harness.audit import audit_record
from harness.http.errors import ConflictError, ValidationFailed
from harness.models import Project
from runs_app.models import ApprovalPolicy, ExpiryAction, ReviewerGroup


def approval_policy_publish(
    *, project: Project | int, tool: str, actor: Actor, required_approvals: int = 1,
    eligible_groups: Sequence[ReviewerGroup | int] = (), expires_after: dt.timedelta | None = None,
    on_expiry: str = ExpiryAction.REJECT, escalate_to: ReviewerGroup | int | None = None,
    escalation_expires_after: dt.timedelta | None = None, always_ask: bool = False,
    reject_options: list[dict[str, Any]] | None = None,
) -> ApprovalPolicy:
    """Write the next version of `tool`'s policy (`tool` empty: the project's default), audited
    (`approval_policy.published`). Groups must be the project's (400 `invalid` naming the field); two versions
    racing for the same number: one stands, the other is 409 `version_conflict` (ask again)."""
    project_id = project if isinstance(project, int) else project.pk
    tool = tool.strip()
    if required_approvals < 1:
        raise ValidationFailed("A policy needs at least one approval.", code="invalid", field="required_approvals")
    if on_expiry not in ExpiryAction.values:
        raise ValidationFailed(f"on_expiry is one of {', '.join(ExpiryAction.values)}.", code="invalid",
                               field="on_expiry")
    if on_expiry == ExpiryAction.ESCALATE and escalate_to is None:
        raise ValidationFailed("Escalation names the group it escalates to.", code="invalid", field="escalate_to")
    group_ids = [g if isinstance(g, int) else g.pk for g in eligible_groups]
    escalate_id = escalate_to if isinstance(escalate_to, int) or escalate_to is None else escalate_to.pk
    wanted = set(group_ids) | ({escalate_id} if escalate_id else set())
    if len(ReviewerGroup.objects.filter(project_id=project_id, pk__in=wanted)) != len(wanted):
        raise ValidationFailed("A policy names only its project's reviewer groups.", code="invalid",
                               field="eligible_groups")
    with transaction.atomic():
        current = ApprovalPolicy.objects.filter(project_id=project_id, tool=tool).order_by("-version").first()
        try:
            with transaction.atomic():
                policy = ApprovalPolicy.objects.create(
                    project_id=project_id, tool=tool, version=(current.version + 1) if current else 1,
                    required_approvals=required_approvals, expires_after=expires_after, on_expiry=on_expiry,
                    escalate_to_id=escalate_id, escalation_expires_after=escalation_expires_after,
                    always_ask=always_ask, reject_options=reject_options or [], created_by=actor.label)
        except IntegrityError:
            raise ConflictError(f"Another version of {tool or 'the default'} policy was published at the same "
                                "time: ask again.", code="version_conflict") from None
        policy.eligible_groups.set(group_ids)
        audit_record(project=project_id, actor=actor, action="approval_policy.published", target=policy,
                     data={"tool": tool, "version": policy.version, "required_approvals": required_approvals,
                           "eligible_groups": sorted(group_ids), "on_expiry": on_expiry,
                           "always_ask": always_ask})
        return policy
