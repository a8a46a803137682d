"""The resume of a run that waited on a handoff (DESIGN.md, "Handoff"): its returned result, re-validated and
consumed once into the run, in the same pipeline as an approval's (worker.registry's steps).

The steps call these in handoff mode (`r.mode == ResumeMode.HANDOFF`, decided by `load`):
- `bind_result` -> `verify`: the packet still hashes to its fingerprint, the result to its hash, and it was
  returned before the deadline, for this run;
- `not_yet_consumed` -> `lock`: the handoff is locked until the binding commits, and not consumed already;
- `continue` -> `consume`: returned -> consumed with a receipt (the worker-only edge), the result bound to the
  run's `bound_result`, and the run back to running (to its agent, or on for a plan the worker drives).
"""

from typing import Any

from harness.actors import Actor
from harness.canonical import digest
from harness.db import columns, fetch_instance
from runs_app.models import Handoff, HandoffStatus
from runs_app.services import handoff_consume
from worker import faults
from worker.state import Resume, StepFailed


def _handoff(r: Resume) -> Handoff:
    if r.handoff is None:  # `load` sets it with the mode
        raise StepFailed("the run waits on no returned handoff")
    return r.handoff


def verify(r: Resume) -> dict[str, Any]:
    """The returned result is still bound to the packet that was issued, for this run, in time."""
    handoff = _handoff(r)
    if handoff.origin_run_id != r.run_id or handoff.project_id != r.project_id:
        raise StepFailed("the handoff belongs to another run", handoff=handoff.pk)
    if digest(handoff.packet) != handoff.packet_fingerprint:
        raise StepFailed("the handoff's packet no longer hashes to its fingerprint (changed after issue)",
                         handoff=handoff.pk, packet_fingerprint=handoff.packet_fingerprint)
    if digest(handoff.result) != handoff.result_hash:
        raise StepFailed("the handoff's result no longer hashes to the hash recorded at its return",
                         handoff=handoff.pk, result_hash=handoff.result_hash)
    if handoff.returned_at is None or handoff.returned_at > handoff.deadline:
        raise StepFailed("the handoff's result was not returned before its deadline", handoff=handoff.pk)
    return {"handoff": handoff.pk, "packet_fingerprint": handoff.packet_fingerprint,
            "result_hash": handoff.result_hash, "independent": (handoff.independence or {}).get("counts")}


_LOCK_SQL = f"""
SELECT {columns(Handoff)} FROM runs_app_handoff WHERE id = %(id)s AND project_id = %(pid)s FOR UPDATE
"""  # noqa: S608 - the model's own columns; every value is bound


def lock(r: Resume) -> dict[str, Any]:
    """Lock the handoff until the binding commits: nobody consumes it between this check and ours."""
    handoff = fetch_instance(Handoff, _LOCK_SQL, {"id": _handoff(r).pk, "pid": r.project_id})
    if handoff is None:
        raise StepFailed("the handoff record is gone", handoff=_handoff(r).pk)
    if handoff.status == HandoffStatus.CONSUMED:
        raise StepFailed(f"the handoff's result was consumed already (receipt {handoff.receipt})", handoff=handoff.pk)
    if handoff.status != HandoffStatus.RETURNED or handoff.result_hash != _handoff(r).result_hash:
        raise StepFailed(f"the handoff changed while the resume loaded it (now {handoff.status})", handoff=handoff.pk)
    r.handoff = handoff
    return {"handoff": handoff.pk, "status": handoff.status}


def consume(r: Resume) -> dict[str, Any]:
    """Consume the result once and bind it to the run; the run's move is left in `r.move` for the pipeline."""
    handoff = handoff_consume(project=r.project_id, handoff_id=_handoff(r).pk, actor=Actor.for_worker(r.owner))
    faults.point("handoff_consumed")  # a crash here rolls the consumption back with the binding
    r.handoff = handoff
    r.bound = {"handoff": handoff.pk, "outcome": "returned", "result": handoff.result,
               "result_hash": handoff.result_hash, "packet_fingerprint": handoff.packet_fingerprint,
               "receipt": handoff.receipt, "by": handoff.returned_by,
               "independent": (handoff.independence or {}).get("counts")}
    r.move = {"bound": r.bound, "clear_approval": False, "hand_back": not r.worker_driven}
    return {"handoff": handoff.pk, "receipt": handoff.receipt,
            "driven_by": "worker" if r.worker_driven else "agent"}
