"""Step `compatibility`: the checkpoint and task were written in a schema, a plan version and a framework
version (settings.HARNESS_FRAMEWORK_VERSION: the plan's handlers and tools) this worker understands
(worker.checks.check_compatibility, which the approval page's dry run calls too)."""

from typing import Any

from worker.checks import check_compatibility
from worker.state import Resume


def run(r: Resume) -> dict[str, Any]:
    """The checkpoint and task were written in a schema this worker understands, for the current plan."""
    return check_compatibility(r)
