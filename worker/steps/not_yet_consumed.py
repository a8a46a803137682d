"""Step `not_yet_consumed`: the result has not been consumed yet."""

import logging
from typing import Any

from runs_app.models import (
    EffectStatus,
    ExternalEffect,
)
from worker.state import Resume, StepFailed

log = logging.getLogger(__name__)


def run(r: Resume) -> dict[str, Any]:
    """The result has not been consumed yet: consumption commits together with binding it to the run."""
    if r.effect is None:
        return {"effect": None}
    # Locked until the binding commits: nobody consumes it between this check and our consumption.
    effect = ExternalEffect.objects.select_for_update().get(pk=r.effect.pk)
    if effect.status == EffectStatus.CONSUMED:
        raise StepFailed(f"the effect's result was consumed already (receipt {effect.receipt})", effect=effect.pk)
    r.effect = effect
    return {"effect": effect.pk, "status": effect.status}
