"""The lease fence on a lease holder's writes to a run: one rule, one code (409 `lease_lost`), every door.

A run *holds a lease* while its `lease_owner` is set: from a claim until the lease is released (a waiting or
terminal move, `release`, the recovery pass), whether or not `lease_expires_at` has passed. A write an agent or the
worker makes to a run (a transition, a checkpoint, an event, a usage report, an approval request, a handoff) says
who it writes as, `lease_owner`:

- an owner: the run must be leased to it right now (`lease_expires_at` ahead, PostgreSQL's clock);
- None (the caller holds no lease): the run must hold none (never claimed, or released). A run whose lease is
  held, or expired and not yet released, refuses it: a stale process that omits its owner is fenced like one
  that sends it;
- `UNFENCED`: a write the server makes on its own account, never a lease holder's (a person's decision in the
  console or the admin, the recovery pass releasing an expired lease, an event a service records about its own
  work): no condition. No request body can ask for it.

Anything else is refused 409 `lease_lost` and writes nothing.
"""

from enum import Enum
from typing import Any, Final, Literal

from django.db.models import Q
from django.db.models.functions import Now

from harness.http.errors import ConflictError


class _Unfenced(Enum):
    UNFENCED = "unfenced"


UNFENCED: Final = _Unfenced.UNFENCED
LeaseOwner = str | None | Literal[_Unfenced.UNFENCED]


def lease_fence_q(owner: LeaseOwner) -> Q | None:
    """The fence as a filter on the run's row (None: no condition)."""
    if owner is UNFENCED:
        return None
    if owner is None:
        return Q(lease_owner="")
    # The database's clock (STATEMENT_TIMESTAMP()), never this process's (issue 19, defect 4).
    return Q(lease_owner=owner, lease_expires_at__gt=Now())


def lease_fence_sql(table: str = "") -> str:
    """The fence as a boolean SQL expression on the run's row (`table.` before its columns when given), taking the
    parameters `lease_fence_params` makes (%(fenced)s, %(owner)s)."""
    t = f"{table}." if table else ""
    return (f"(NOT %(fenced)s OR (CASE WHEN %(owner)s::text IS NULL THEN {t}lease_owner = '' "
            f"ELSE {t}lease_owner = %(owner)s::text AND {t}lease_expires_at > statement_timestamp() END))")


def lease_fence_params(owner: LeaseOwner) -> dict[str, Any]:
    return {"fenced": owner is not UNFENCED, "owner": None if owner is UNFENCED else owner}


def lease_lost(owner: LeaseOwner, *, current_status: str | None = None,
               current_version: int | None = None) -> ConflictError:
    """The refusal: the same code and words whichever write was fenced."""
    detail = ("The run holds a lease and the write names no lease owner: send the lease_owner you claimed with."
              if owner is None else "The lease is lost: the run is not leased to this owner right now.")
    return ConflictError(detail, code="lease_lost", current_status=current_status, current_version=current_version)
