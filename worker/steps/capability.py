"""Step `capability`: the approved tool's adapter exists now and takes these arguments
(worker.checks.check_capability, which the approval page's dry run calls too)."""

from typing import Any

from worker.checks import check_capability
from worker.state import Resume


def run(r: Resume) -> dict[str, Any]:
    """The adapter for the approved tool exists now and takes these arguments; the plan's nodes have handlers."""
    adapter, data = check_capability(r)
    if adapter is not None:
        r.adapter = adapter
    return data
