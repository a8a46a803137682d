"""Step `authority_lease`: the records agree on who they belong to, the authority behind the decision still
holds; take the lease (one owner)."""

import logging
import time
from typing import Any

from django.conf import settings

from harness.actors import Actor
from harness.http.errors import ConflictError
from runs_app.models import ApprovalStatus
from runs_app.services import (
    run_claim_attempt,
)
from runs_app.services.standing_approvals import approval_ask_again, rule_lapse
from worker.checks import check_authority
from worker.lease import leased_by_another
from worker.state import Resume, ResumeMode, StepFailed, Stop, trace, unsettled

log = logging.getLogger(__name__)


def run(r: Resume) -> dict[str, Any]:
    """The records agree on who they belong to and the authority still holds (worker.checks.check_authority, which
    the approval page's dry run calls too); then take the run's lease (one owner at a time)."""
    run = r.run
    _standing_rule_stands(r)
    check_authority(r)
    max_attempts = settings.HARNESS_RESUME_MAX_ATTEMPTS
    if unsettled(run.metrics, "attempts") >= max_attempts:
        if leased_by_another(run, r.owner):
            # A duplicate message while the last allowed attempt runs elsewhere: that one decides.
            raise Stop("the run is owned by its last allowed attempt")
        raise StepFailed(f"the resume was attempted {max_attempts} times without finishing")
    try:
        # The claim counts the attempt in the same statement.
        r.run = run_claim_attempt(project=run.project_id, run_id=run.pk, owner=r.owner,
                                  lease_seconds=r.lease_seconds)
    except ConflictError as exc:
        trace(r, "authority_lease", False, exc.code, lease_owner=exc.extra.get("lease_owner", ""))
        raise Stop(f"the run is owned: {exc.detail}") from None
    r.leased = r.claimed = True
    r.claimed_at = time.monotonic()
    return {"lease_expires_at": r.run.lease_expires_at.isoformat() if r.run.lease_expires_at else None}


def _standing_rule_stands(r: Resume) -> None:
    """An approval a standing approval made is acted on only while the rule still stands (issue 33): revoked or
    past its time since, the action is not run and a person is asked again (approval_ask_again: a new pending
    approval of the same action, which the run waits on), before the lease is taken. The rule's state was read with
    the load (worker.loading.Grant): no statement when there is no rule."""
    approval, grant = r.approval, r.grant
    if (r.mode != ResumeMode.APPROVAL or approval is None or grant is None or approval.standing_approval_id is None
            or approval.status != ApprovalStatus.APPROVED):
        return
    why = rule_lapse(grant.rule_revoked_at, grant.rule_expired, approval.standing_approval_id)
    if not why:
        return
    again = approval_ask_again(approval=approval, run=r.run, why=why, actor=Actor.for_worker(r.owner))
    trace(r, "authority_lease", False, why, code="standing_approval_lapsed",
          asked_again=again.pk if again is not None else None)
    raise Stop(f"{why}: a person is asked again" + (f" (approval {again.pk})" if again is not None else ""))
