"""Assigning a pending approval to a reviewer of its project: who is asked to decide it (any reviewer still may)."""

from collections.abc import Sequence

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F

from harness.actors import Actor
from harness.audit import audit_record
from harness.http.errors import ConflictError, Forbidden, NotFoundError, ValidationFailed
from harness.tenancy import Role, acting_filter, decision_refusal, role_holders, user_has_role
from runs_app.models import ApprovalRequest, ApprovalStatus


def project_reviewers(project_id: int) -> list[User]:
    """The project's members who may decide its approvals (the reviewer role in it, or admin), active."""
    return list(role_holders(project_id, Role.REVIEWER))


def approval_assign(
    *, project_ids: Sequence[int], approval_id: int, actor: Actor, assignee: str, expected_version: int | None,
) -> ApprovalRequest:
    """Assign (or, with an empty `assignee`, unassign) a pending approval; audited.

    1. Only a reviewer of the approval's project assigns, not while it is frozen; the assignee is a reviewer of
       that project (an empty name clears it).
    2. One conditional UPDATE from pending at the version the caller saw, bumping the version: a bulk form or
       decision made on the page from before the assignment is refused as changed, not decided blind.
    """
    if actor.user is None or not user_has_role(actor.user, Role.REVIEWER):
        raise Forbidden("Only reviewers assign approvals.", code="not_a_reviewer")
    approval = ApprovalRequest.objects.for_projects(project_ids).filter(pk=approval_id).first()
    if approval is None:
        raise NotFoundError(f"Approval {approval_id} does not exist.")
    refusal = decision_refusal(actor.user, Role.REVIEWER, approval.project_id, code="not_a_reviewer",
                               refused="Only reviewers of the approval's project assign it.")
    if refusal is not None:
        raise refusal
    user = None
    if assignee:
        user = next((u for u in project_reviewers(approval.project_id) if u.get_username() == assignee), None)
        if user is None:
            raise ValidationFailed(f"{assignee} is not a reviewer of this project.", code="not_a_project_reviewer")
    scope = ApprovalRequest.objects.filter(acting_filter(actor.user, Role.REVIEWER), pk=approval_id,
                                           project_id=approval.project_id, status=ApprovalStatus.PENDING)
    if expected_version is not None:
        scope = scope.filter(version=expected_version)
    with transaction.atomic():
        if not scope.update(assigned_to=user, version=F("version") + 1):
            approval.refresh_from_db()
            raise ConflictError("The approval changed or was decided; reload it.", code="version_conflict",
                                current_status=approval.status, current_version=approval.version)
        approval.refresh_from_db()
        audit_record(project=approval.project_id, actor=actor, action="approval.assigned", target=approval,
                     data={"assignee": assignee or None, "version": approval.version})
    return approval
