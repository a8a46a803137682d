"""Step `not_yet_consumed`: the result has not been consumed yet."""

import logging
from typing import Any

from harness.db import columns, fetch_instance
from runs_app.models import (
    EffectStatus,
    ExternalEffect,
)
from worker import handoff
from worker.checks import check_not_consumed
from worker.state import Resume, ResumeMode, StepFailed

log = logging.getLogger(__name__)


_LOCK_SQL = f"""
SELECT {columns(ExternalEffect)} FROM runs_app_externaleffect WHERE id = %(id)s AND project_id = %(pid)s FOR UPDATE
"""  # noqa: S608 - the model's own columns; every value is bound


def run(r: Resume) -> dict[str, Any]:
    """The result has not been consumed yet: consumption commits together with binding it to the run."""
    if r.mode == ResumeMode.HANDOFF:
        return handoff.lock(r)
    if r.effect is None:
        return {"effect": None}
    # Locked until the binding commits: nobody consumes it between this check and our consumption.
    effect = fetch_instance(ExternalEffect, _LOCK_SQL, {"id": r.effect.pk, "pid": r.project_id})
    if effect is None:
        raise StepFailed("the effect record is gone", effect=r.effect.pk)
    if r.inherited:  # consumed by the run this one was forked from (bind_result): bound again, not consumed
        if effect.status != EffectStatus.CONSUMED or effect.receipt != r.effect.receipt:
            raise StepFailed("the forked-from run's effect changed under us", effect=effect.pk)
        r.effect = effect
        return {"effect": effect.pk, "status": effect.status, "forked_from_run": effect.run_id}
    check_not_consumed(effect)
    r.effect = effect
    return {"effect": effect.pk, "status": effect.status}
