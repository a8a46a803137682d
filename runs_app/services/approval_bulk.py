"""Bulk decisions from the inbox: N calls of `approval_decide`, one per item, each bound to what the page showed.

Each item carries the version and the action fingerprint the reviewer saw. An item decided, expired or
otherwise changed since then is refused (its own conflict), never decided on the reviewer's behalf; the
others still go through. Each call is its own transaction and its own audit entry, exactly as a decision
made on the approval's page, so a refusal in the middle undoes nothing that was decided before it.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from harness.actors import Actor
from harness.http.errors import DomainError, ValidationFailed
from runs_app.models import ApprovalStatus
from runs_app.services.approval_quorum import votes_for
from runs_app.services.approvals import Decision, approval_decide

MAX_BULK_ITEMS = 200
_ITEM = re.compile(r"(\d{1,18}):(\d{1,9}):([0-9a-f]{64})")


@dataclass(frozen=True)
class BulkItem:
    """One checked row: the approval, and the version and fingerprint the page showed."""

    approval_id: int
    version: int
    fingerprint: str

    @classmethod
    def parse(cls, text: str) -> "BulkItem":
        """`<id>:<version>:<fingerprint>`, the value of a row's checkbox."""
        match = _ITEM.fullmatch(text.strip())
        if match is None:
            raise ValidationFailed(f"Not an inbox item: {text[:80]!r}.", code="invalid")
        return cls(int(match[1]), int(match[2]), match[3])


@dataclass(frozen=True)
class BulkResult:
    item: BulkItem
    decided: bool
    code: str  # the new status when decided, else the refusal's code
    detail: str


def approval_decide_bulk(
    *, project_ids: Sequence[int], actor: Actor, decision: str, reason: str = "", items: Sequence[BulkItem],
) -> list[BulkResult]:
    """Decide each item in turn through `approval_decide` and report each outcome, in the items' order.

    1. Refuse the whole request only for what is wrong with all of it: no item, too many, a rejection
       without a reason, an unknown decision (nothing is decided).
    2. For each item: `approval_decide` with its expected version and fingerprint, among the projects the
       caller can see; any domain error (stale, already decided, expired, self-approval, not found) is that
       item's result.
    """
    if not items:
        raise ValidationFailed("Select at least one approval.", code="no_items")
    if len(items) > MAX_BULK_ITEMS:
        raise ValidationFailed(f"At most {MAX_BULK_ITEMS} approvals at once.", code="too_many_items")
    if decision not in (Decision.APPROVE, Decision.REJECT):
        raise ValidationFailed("decision is 'approve' or 'reject'.", code="invalid")
    if decision == Decision.REJECT and not reason.strip():
        raise ValidationFailed("A rejection needs a reason.", code="reason_required")
    results: list[BulkResult] = []
    for item in items:
        try:
            approval = approval_decide(
                project_ids=project_ids, approval_id=item.approval_id, actor=actor, decision=decision,
                reason=reason, expected_version=item.version, expected_fingerprint=item.fingerprint,
            )
        except DomainError as exc:
            results.append(BulkResult(item, False, exc.code, exc.detail))
        else:
            if approval.status == ApprovalStatus.PENDING:  # one vote of the quorum its policy asks (issue 33)
                votes = len(votes_for(approval.pk, approval.action_fingerprint))
                results.append(BulkResult(item, True, "voted", f"{votes} of {approval.approvals_required} "
                                          f"approvals, with {actor.label}'s"))
            else:
                results.append(BulkResult(item, True, approval.status, f"{approval.status} by {actor.label}"))
    return results
