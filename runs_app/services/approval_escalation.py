"""Escalation at expiry (issue 33, part 5): a pending request whose policy says `escalate` is, when its time runs
out, routed to the policy's `escalate_to` group instead of expiring. From then on only that group's members may
decide it (runs_app.policies.may_decide reads `routed_group`), it waits `escalation_expires_after` more (or without
a deadline), and the group is told (the `approval_escalated` signal: notify_app emails its members and posts to its
chat webhook). An escalated request whose second deadline passes expires as any other."""

import datetime as dt

from django.db import transaction
from django.db.models import F

from harness.actors import Actor
from harness.audit import audit_record
from runs_app.models import ApprovalRequest, ApprovalStatus, ExpiryAction
from runs_app.services.runs import run_event_append
from runs_app.signals import approval_escalated

RECOVERY = Actor.for_worker("worker:recovery")


def approval_escalate(*, approval_id: int, now: dt.datetime) -> bool:
    """Route one pending, overdue, not yet escalated request whose policy escalates to the policy's escalation group,
    in one conditional UPDATE (False: its policy does not escalate, it was escalated already, or a decision or
    another pass got there first). Both doors where a request's time runs out call it before they expire one: the
    recovery pass (approval_expire_due) and the resume of an agent-executed approval (approval_preconditions). Audited
    (`approval.escalated`), with a run event, and the group is told after commit. Call inside a transaction."""
    row = (ApprovalRequest.objects.filter(pk=approval_id, status=ApprovalStatus.PENDING, escalated_at__isnull=True,
                                          expires_at__lte=now, policy__on_expiry=ExpiryAction.ESCALATE,
                                          policy__escalate_to__isnull=False)
           .values("project_id", "run_id", "tool", "risk", "action_fingerprint", "requested_by",
                   "policy__escalate_to_id", "policy__escalation_expires_after").first())
    if row is None:
        return False
    group_id, wait = row["policy__escalate_to_id"], row["policy__escalation_expires_after"]
    deadline = now + wait if wait else None
    moved = ApprovalRequest.objects.filter(
        pk=approval_id, status=ApprovalStatus.PENDING, escalated_at__isnull=True, expires_at__lte=now,
    ).update(routed_group_id=group_id, escalated_at=now, expires_at=deadline, version=F("version") + 1,
             updated_at=now)
    if not moved:
        return False
    audit_record(project=row["project_id"], actor=RECOVERY, action="approval.escalated",
                 target=ApprovalRequest(pk=approval_id),
                 data={"group": group_id, "expires_at": deadline.isoformat() if deadline else None})
    run_event_append(project=row["project_id"], run_id=row["run_id"], kind="approval.escalated",
                     data={"approval": approval_id, "group": group_id})
    facts = {"project_id": row["project_id"], "approval_id": approval_id, "run_id": row["run_id"],
             "tool": row["tool"], "risk": row["risk"], "fingerprint": row["action_fingerprint"],
             "requested_by": row["requested_by"], "group_id": group_id}
    transaction.on_commit(lambda: approval_escalated.send(sender=ApprovalRequest, **facts))
    return True
