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
from harness.tenancy import require_project_operator
from runs_app.models import ApprovalPolicy, ExpiryAction, ReviewerGroup


def approval_policy_publish(
    *, project: Project | int, tool: str, actor: Actor, required_approvals: int = 1,
    eligible_groups: Sequence[ReviewerGroup | int] = (), expires_after: dt.timedelta | None = None,
    on_expiry: str = ExpiryAction.REJECT, escalate_to: ReviewerGroup | int | None = None,
    escalation_expires_after: dt.timedelta | None = None, always_ask: bool = False,
    reject_options: list[dict[str, Any]] | None = None,
) -> ApprovalPolicy:
    """Write the next version of `tool`'s policy (`tool` empty: the project's default), audited
    (`approval_policy.published`). Only a person with the operator role in the project publishes (an agent
    deciding who reviews its own requests would be no review: 403 `not_an_operator`; another project's, 404).
    Groups must be the project's (400 `invalid` naming the field); two versions racing for the same number: one
    stands, the other is 409 `version_conflict` (ask again)."""
    project_id = project if isinstance(project, int) else project.pk
    require_project_operator(actor.user, project_id, doing="publish approval policies")
    tool = tool.strip()
    if required_approvals < 1:
        raise ValidationFailed("A policy needs at least one approval.", code="invalid", field="required_approvals")
    if on_expiry not in ExpiryAction.values:
        raise ValidationFailed(f"on_expiry is one of {', '.join(ExpiryAction.values)}.", code="invalid",
                               field="on_expiry")
    options_problem = reject_options_problem(reject_options or [])
    if options_problem:
        raise ValidationFailed(options_problem, code="invalid", field="reject_options")
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


def reject_options_problem(options: Any) -> str:
    """What is wrong with a policy's reject options, or "": a list of objects, each with a distinct `name` (at most
    80 characters, what the decision records) and the texts for the reviewer and for the agent."""
    if not isinstance(options, list):
        return "reject_options is a list of {name, reviewer_text, agent_text}."
    names: set[str] = set()
    for option in options:
        if not isinstance(option, dict) or set(option) - {"name", "reviewer_text", "agent_text"}:
            return "Each reject option is an object with name, reviewer_text and agent_text."
        name = option.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 80:
            return "Each reject option has a name of 1 to 80 characters."
        if name in names:
            return f"The reject option {name!r} is named twice."
        if not all(isinstance(option.get(key, ""), str) for key in ("reviewer_text", "agent_text")):
            return "A reject option's texts are strings."
        names.add(name)
    return ""
