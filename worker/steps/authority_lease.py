"""Step `authority_lease`: the records agree on who they belong to, the authority behind the decision still
holds; take the lease (one owner)."""

import logging
import time
from typing import Any

from django.conf import settings

from harness.errors import ConflictError
from runs_app.models import FailureCategory
from runs_app.services import (
    run_claim_attempt,
)
from sessions_app.models import SessionStatus
from worker.lease import leased_by_another
from worker.state import Resume, StepFailed, Stop, trace, unsettled

log = logging.getLogger(__name__)


def run(r: Resume) -> dict[str, Any]:
    """The records agree on who they belong to; then take the run's lease (one owner at a time)."""
    run = r.run
    if r.approval is not None and (r.approval.run_id != run.pk or r.approval.project_id != run.project_id):
        raise StepFailed("the pending approval belongs to another run")
    if r.checkpoint is not None and r.checkpoint.project_id != run.project_id:
        raise StepFailed("the checkpoint belongs to another project")
    if run.session.status == SessionStatus.TERMINATED:
        raise StepFailed("the run's session is terminated")
    _check_grant(r)
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


def _check_grant(r: Resume) -> None:
    """The authority to act still holds now (seed 002, section 07): the project is not frozen, the approval's
    reviewer still has the reviewer role in this project (an active account, a member), and the token that
    asked for it is not revoked. Read with the load (worker.loading.Grant): no statement of its own."""
    approval, grant = r.approval, r.grant
    if grant is not None and grant.project_frozen_at is not None:
        # Whatever the run resumes for: a frozen project acts on nothing until an admin unfreezes it, and then
        # a person retries the blocked run as any other.
        raise StepFailed(f"project_frozen: the project was frozen at {grant.project_frozen_at.isoformat()}",
                         code="project_frozen", category=FailureCategory.PERMISSION)
    if approval is None or grant is None or r.mode != "approval":
        return
    if grant.token_revoked_at is not None:
        raise StepFailed(f"the token that asked for approval {approval.pk} was revoked at "
                         f"{grant.token_revoked_at.isoformat()}", approval=approval.pk,
                         category=FailureCategory.PERMISSION)
    if grant.token_expired:
        raise StepFailed(f"the token that asked for approval {approval.pk} has expired", approval=approval.pk,
                         category=FailureCategory.PERMISSION)
    if approval.decided_by_id is not None and not grant.reviewer_holds_role:
        who = approval.decided_by.get_username() if approval.decided_by else approval.decided_by_id
        raise StepFailed(f"{who}, who decided approval {approval.pk}, no longer holds the reviewer role in this "
                         "project", approval=approval.pk, category=FailureCategory.PERMISSION)
