"""Step `artifact_fingerprints`: the artifacts the checkpoint saw are the ones the task has now
(worker.checks.check_artifacts, which the approval page's dry run calls too)."""

from typing import Any

from worker.checks import check_artifacts
from worker.state import Resume


def run(r: Resume) -> dict[str, Any]:
    """The artifacts the checkpoint saw are the artifacts the task has now."""
    return check_artifacts(r)
