"""Who may act in a project: the roles of its members (issue 17) and its freeze.

Freezing a project (issue 16, part 5): while frozen, no agent writes to it (harness.http.auth), nobody decides in it
(harness.tenancy.acting_filter) and the resume blocks its runs at `authority_lease` (worker.steps). Reads stay.

The console and the admin both call these; only an admin (the group, or a superuser) freezes or unfreezes.
"""

from django.db import transaction
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_record
from harness.http.errors import ConflictError, Forbidden, ValidationFailed
from harness.models import Membership, Project
from harness.tenancy import Role, user_can_see_project, user_has_role


def _require_admin(actor: Actor, project: Project) -> None:
    if actor.user is None or not user_has_role(actor.user, Role.ADMIN) or not user_can_see_project(
            actor.user, project.pk):
        raise Forbidden("Only an admin freezes or unfreezes a project.", code="not_an_admin")


def project_freeze(*, project: Project, actor: Actor, reason: str) -> Project:
    """Freeze the project: one conditional UPDATE from unfrozen (409 `project_frozen` if it is already), with
    who and why, and the audit entry in the same transaction."""
    _require_admin(actor, project)
    reason = reason.strip()
    if not reason:
        raise ValidationFailed("Freezing a project needs a reason.", code="reason_required")
    now = timezone.now()
    with transaction.atomic():
        if not Project.objects.filter(pk=project.pk, frozen_at__isnull=True).update(
                frozen_at=now, frozen_by=actor.user, frozen_reason=reason):
            raise ConflictError(f"Project {project.slug} is frozen already.", code="project_frozen")
        project.frozen_at, project.frozen_by, project.frozen_reason = now, actor.user, reason
        audit_record(project=project, actor=actor, action="project.frozen", target=project, data={"reason": reason})
    return project


def project_unfreeze(*, project: Project, actor: Actor, reason: str = "") -> Project:
    """Unfreeze the project (409 `project_not_frozen` if it is not frozen), audited with what the freeze was.
    Runs the freeze blocked stay blocked: a person retries each, as for any blocked run."""
    _require_admin(actor, project)
    with transaction.atomic():
        frozen = Project.objects.select_for_update().filter(pk=project.pk, frozen_at__isnull=False).first()
        if frozen is None:
            raise ConflictError(f"Project {project.slug} is not frozen.", code="project_not_frozen")
        Project.objects.filter(pk=project.pk).update(frozen_at=None, frozen_by=None, frozen_reason="")
        audit_record(project=project, actor=actor, action="project.unfrozen", target=project, data={
            "reason": reason.strip(), "frozen_at": frozen.frozen_at.isoformat() if frozen.frozen_at else None,
            "frozen_reason": frozen.frozen_reason})
        project.frozen_at, project.frozen_by, project.frozen_reason = None, None, ""
    return project


def membership_save(*, membership: Membership, actor: Actor) -> Membership:
    """Save a membership (the admin's form) with its per-project roles, audited in its project: who gave whom
    which roles, and what they were before."""
    before = list(Membership.objects.filter(pk=membership.pk).values_list("roles", flat=True).first() or []
                  ) if membership.pk else None
    membership.roles = sorted(set(membership.roles))
    with transaction.atomic():
        membership.save()
        audit_record(project=membership.project_id, actor=actor, action="membership.roles", target=membership,
                     data={"user": membership.user.get_username(), "roles": membership.roles, "before": before})
    return membership
