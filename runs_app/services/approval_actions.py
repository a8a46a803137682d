"""A reviewer cancels a pending approval or gives it more time, previewed by the code that does it.

`approval_action_plan` says what cancelling or extending would do to the approval as read; `approval_cancel`
and `approval_extend` lock the row, recompute the same plan and carry it out, refusing an approval that changed
since the preview (another version). Both are audited and logged on the approval's run.
"""

import datetime as dt
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_record
from harness.http.errors import ConflictError, Forbidden, NotFoundError, ValidationFailed
from harness.models import Project
from harness.tenancy import Role, user_can_see_project, user_has_role
from harness.transitions import cas_transition_row
from runs_app.machines import APPROVAL_MACHINE
from runs_app.models import ApprovalRequest, ApprovalStatus, Run
from runs_app.services.run_actions import REASON_MAX
from runs_app.services.runs import run_event_append
from runs_app.signals import resume_requested

# An approval waits at most this long after it was asked for, however often it is extended: a decision that
# old is about a world that has moved on.
APPROVAL_MAX_LIFETIME = dt.timedelta(days=7)
EXTEND_MAX_HOURS = int(APPROVAL_MAX_LIFETIME.total_seconds() // 3600)


class ApprovalAction:
    CANCEL = "cancel"
    EXTEND = "extend"


@dataclass(frozen=True)
class ApprovalPlan:
    action: str
    approval_id: int
    version: int
    status: str
    refusal: str = ""
    expires_at: dt.datetime | None = None
    new_expires_at: dt.datetime | None = None

    @property
    def allowed(self) -> bool:
        return not self.refusal

    def summary(self) -> list[str]:
        if self.refusal:
            return [f"Refused: {self.refusal}"]
        if self.action == ApprovalAction.CANCEL:
            return ["The approval goes pending -> cancelled; nothing it asks for is executed.",
                    "The run's resume is queued: it stops at the approval check (blocked: the approval is "
                    "cancelled), where an operator decides the run."]
        return [f"The approval stays pending; it expires at {_when(self.new_expires_at)} instead of "
                f"{_when(self.expires_at)}."]


def _when(moment: dt.datetime | None) -> str:
    return f"{moment:%Y-%m-%d %H:%M:%S %Z}" if moment is not None else "never"


def approval_action_plan(*, approval: ApprovalRequest, action: str, hours: int = 0,
                         now: dt.datetime | None = None) -> ApprovalPlan:
    """What cancelling, or extending by `hours`, would do to `approval` as read."""
    now = now or timezone.now()
    base = ApprovalPlan(action=action, approval_id=approval.pk, version=approval.version, status=approval.status,
                        expires_at=approval.expires_at)
    if action not in (ApprovalAction.CANCEL, ApprovalAction.EXTEND):
        raise ValidationFailed("action is 'cancel' or 'extend'.", code="invalid")
    if approval.status != ApprovalStatus.PENDING:
        return _refused(base, f"the approval is {approval.status}, not pending")
    if approval.expires_at is not None and approval.expires_at <= now:
        return _refused(base, "the approval has expired (the recovery pass will mark it so)")
    if action == ApprovalAction.CANCEL:
        return base
    if approval.expires_at is None:
        return _refused(base, "the approval has no expiry to extend")
    if not 1 <= hours <= EXTEND_MAX_HOURS:
        return _refused(base, f"an extension is 1 to {EXTEND_MAX_HOURS} hours")
    later = approval.expires_at + dt.timedelta(hours=hours)
    latest = approval.created_at + APPROVAL_MAX_LIFETIME
    if later > latest:
        return _refused(base, f"an approval waits at most {APPROVAL_MAX_LIFETIME.days} days after it was asked "
                              f"for: it can expire at {_when(latest)} at the latest")
    return ApprovalPlan(**{**base.__dict__, "new_expires_at": later})


def _refused(plan: ApprovalPlan, why: str) -> ApprovalPlan:
    return ApprovalPlan(**{**plan.__dict__, "refusal": why})


def _locked(*, project: Project | int, approval_id: int, actor: Actor, reason: str,
            expected_version: int) -> ApprovalRequest:
    """The approval locked for a reviewer's action, at the version the preview showed."""
    user = actor.user
    if user is None or not user_has_role(user, Role.REVIEWER):
        raise Forbidden("Only reviewers cancel or extend approvals.", code="not_a_reviewer")
    project_id = project if isinstance(project, int) else project.pk
    if not user_can_see_project(user, project_id):
        raise NotFoundError(f"Approval {approval_id} does not exist.")
    if not user_has_role(user, Role.REVIEWER, project_id):  # the role in the approval's project (issue 17)
        raise Forbidden("Only reviewers of the approval's project cancel or extend it.", code="not_a_reviewer")
    if not reason or len(reason) > REASON_MAX:
        raise ValidationFailed(f"A reason of 1 to {REASON_MAX} characters is required.", code="reason_required")
    approval = ApprovalRequest.objects.select_for_update().filter(project_id=project_id, pk=approval_id).first()
    if approval is None:
        raise NotFoundError(f"Approval {approval_id} does not exist.")
    if approval.requested_by == actor.label:
        raise Forbidden("Nobody cancels or extends their own request.", code="self_approval")
    if approval.version != expected_version:
        raise ConflictError(
            f"The approval changed since the preview: it is {approval.status} at version {approval.version}, not "
            f"version {expected_version}. Nothing was done; look at it again.",
            code="version_conflict", current_status=approval.status, current_version=approval.version)
    return approval


def approval_cancel(
    *, project: Project | int, approval_id: int, actor: Actor, reason: str, expected_version: int
) -> ApprovalRequest:
    """Cancel a pending approval (pending -> cancelled), audited and logged on its run, and queue the run's resume
    (which blocks it at the approval check: a person then decides the run)."""
    reason = reason.strip()
    with transaction.atomic():
        approval = _locked(project=project, approval_id=approval_id, actor=actor, reason=reason,
                           expected_version=expected_version)
        plan = approval_action_plan(approval=approval, action=ApprovalAction.CANCEL)
        if not plan.allowed:
            raise ConflictError(plan.refusal, code="action_refused", current_status=approval.status,
                                current_version=approval.version)
        approval = cas_transition_row(
            ApprovalRequest.objects.filter(project_id=approval.project_id), pk=approval.pk, machine=APPROVAL_MACHINE,
            to=ApprovalStatus.CANCELLED, expected_version=expected_version, updates={"decision_reason": reason})
        _record(approval, actor, "cancelled", {"reason": reason, "plan": plan.summary()})
        run_id = approval.run_id
        transaction.on_commit(lambda: resume_requested.send(sender=Run, run_id=run_id))
        return approval


def approval_extend(
    *, project: Project | int, approval_id: int, actor: Actor, reason: str, hours: int, expected_version: int
) -> ApprovalRequest:
    """Give a pending approval `hours` more before it expires, within APPROVAL_MAX_LIFETIME of its asking;
    audited and logged on its run. It stays pending (a new version): nothing is queued."""
    reason = reason.strip()
    with transaction.atomic():
        approval = _locked(project=project, approval_id=approval_id, actor=actor, reason=reason,
                           expected_version=expected_version)
        plan = approval_action_plan(approval=approval, action=ApprovalAction.EXTEND, hours=hours)
        if not plan.allowed:
            raise ConflictError(plan.refusal, code="action_refused", current_status=approval.status,
                                current_version=approval.version)
        ApprovalRequest.objects.filter(pk=approval.pk, version=expected_version).update(
            expires_at=plan.new_expires_at, version=F("version") + 1, updated_at=timezone.now())
        approval.refresh_from_db()
        _record(approval, actor, "extended", {
            "reason": reason, "hours": hours, "plan": plan.summary(),
            "from": plan.expires_at.isoformat() if plan.expires_at else None,
            "to": plan.new_expires_at.isoformat() if plan.new_expires_at else None})
        return approval


def _record(approval: ApprovalRequest, actor: Actor, what: str, data: dict[str, object]) -> None:
    audit_record(project=approval.project_id, actor=actor, action=f"approval.{what}", target=approval, data=data)
    run_event_append(project=approval.project_id, run_id=approval.run_id, kind=f"approval.{what}",
                     data={"approval": approval.pk, "by": actor.label, **data})
