"""Quorum approvals (issue 33, part 1): a request whose policy asks N approvals is approved when N distinct
eligible reviewers approved the same action; one rejection rejects it (approval_decide, as for one reviewer).

An approval that does not complete the quorum is a vote (ApprovalVote: one per reviewer and action). An edit of
the arguments is another action, with its own count: votes for the requested action do not approve the edited
one. A vote moves the request's version (a page read before it is told the count changed: 409 version_conflict)
and is in the audit chain (`approval.vote`) and the run's events; it queues no resume and sends no decision
webhook (the request is still pending). The vote that completes the quorum is the decision itself, written by
approval_decide's one conditional UPDATE, which counts the other votes in its own statement
(runs_app.policies.quorum_reached), so two last votes at once cannot both decide and neither is lost.
"""

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_record
from harness.http.errors import ConflictError
from runs_app.models import ApprovalRequest, ApprovalStatus, ApprovalVote
from runs_app.services.runs import run_event_append

VOTE = "approval.vote"


class QuorumPending(Exception):
    """approval_decide's refusal reader found that every guard holds but the quorum: record a vote instead."""

    def __init__(self, fingerprint: str) -> None:
        super().__init__(fingerprint)
        self.fingerprint = fingerprint  # the requested action's


def quorum_vote(
    approvals: QuerySet[ApprovalRequest], *, approval_id: int, actor: Actor, user: Any, reason: str,
    expected_version: int | None, row_guards: Q, fingerprint: str, arguments: dict[str, Any] | None, changes: Any,
) -> ApprovalRequest:
    """Record `user`'s approval of the action `fingerprint` as one vote (call inside approval_decide's
    transaction): the request's version moves under the same guards as a decision (`approvals` scoped, acting and
    eligible; `row_guards`, approval_decide's `decidable`: not the asker's, not expired, the fingerprint shown; the
    version given), the vote, its audit entry and event."""
    if ApprovalVote.objects.filter(approval_id=approval_id, user=user, fingerprint=fingerprint).exists():
        raise ConflictError("You approved this action already; it waits for other reviewers.", code="already_voted")
    guards = Q(pk=approval_id, status=ApprovalStatus.PENDING) & row_guards
    if expected_version is not None:
        guards &= Q(version=expected_version)
    if not approvals.filter(guards).update(version=F("version") + 1, updated_at=timezone.now()):
        raise ConflictError("The approval changed while you decided; read it again.", code="version_conflict")
    try:
        with transaction.atomic():
            ApprovalVote.objects.create(approval_id=approval_id, user=user, fingerprint=fingerprint,
                                        arguments=arguments, reason=reason)
    except IntegrityError:  # the same reviewer's second request at once
        raise ConflictError("You approved this action already; it waits for other reviewers.",
                            code="already_voted") from None
    approval = ApprovalRequest.objects.select_related("project").get(pk=approval_id)
    voters = votes_for(approval_id, fingerprint)
    data = {"fingerprint": fingerprint, "votes": voters, "required": approval.approvals_required,
            "edited": arguments is not None, "changes": changes, "reason": reason,
            "policy_version": approval.policy_version}
    audit_record(project=approval.project_id, actor=actor, action=VOTE, target=approval, data=data)
    run_event_append(project=approval.project_id, run_id=approval.run_id, kind=VOTE,
                     data={"approval": approval_id, "by": user.get_username(), "fingerprint": fingerprint,
                           "votes": len(voters), "required": approval.approvals_required})
    return approval


def vote_record(approval: ApprovalRequest, *, user: Any, reason: str, arguments: dict[str, Any] | None) -> list[str]:
    """For the approval that completed a quorum: its own vote beside the others, and who voted for the approved
    action, in order. A request of one reviewer keeps no votes (no statement)."""
    if approval.approvals_required <= 1:
        return []
    ApprovalVote.objects.get_or_create(approval_id=approval.pk, user=user, fingerprint=approval.approved_fingerprint,
                                       defaults={"arguments": arguments, "reason": reason})
    return votes_for(approval.pk, approval.approved_fingerprint)


def votes_for(approval_id: int, fingerprint: str) -> list[str]:
    """The usernames of the reviewers who voted for the action `fingerprint`, first vote first."""
    return list(ApprovalVote.objects.filter(approval_id=approval_id, fingerprint=fingerprint)
                .order_by("created_at", "id").values_list("user__username", flat=True))
