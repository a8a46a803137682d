"""Step `artifact_fingerprints`: the artifacts the checkpoint saw are the ones the task has now."""

import logging
from typing import Any

from runs_app.artifacts import artifact_fingerprint, artifact_fingerprints
from worker.state import Resume, StepFailed

log = logging.getLogger(__name__)


def run(r: Resume) -> dict[str, Any]:
    """The artifacts the checkpoint saw are the artifacts the task has now."""
    expected = (r.checkpoint.artifact_fingerprints or {}) if r.checkpoint is not None else {}
    if not expected or r.task is None:
        return {"verified": 0}
    actual = artifact_fingerprints(r.task.artifact_refs)
    changed = sorted(name for name, fingerprint in expected.items()
                     if actual.get(name) != artifact_fingerprint(fingerprint))
    if changed:
        raise StepFailed(f"artifacts changed since the checkpoint: {', '.join(changed)}", artifacts=changed)
    return {"verified": len(expected)}
