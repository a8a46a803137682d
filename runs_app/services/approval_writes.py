"""What a decision writes, shared by a person's decision (runs_app.services.approvals) and a standing approval's
(runs_app.services.standing_approvals), so the two are written alike."""

import datetime as dt
from typing import Any

from django.db.models import F

from runs_app.models import ApprovalStatus


def decision_updates(user: Any, now: dt.datetime, reason: str, to: str) -> dict[str, Any]:
    """What a decision writes besides the transition: who and when, the reason, and for an approval the requested
    action, exactly, as the approved one (its arguments and fingerprint; an edit replaces both)."""
    updates: dict[str, Any] = {"decided_by": user, "decided_at": now, "decision_reason": reason}
    if to == ApprovalStatus.APPROVED:
        updates["approved_arguments"] = F("arguments")
        updates["approved_fingerprint"] = F("action_fingerprint")
    return updates
