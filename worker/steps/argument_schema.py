"""Step `argument_schema`: the approved arguments match the tool schema version the approval named
(worker.checks.check_argument_schema, which the approval page's dry run calls too); a mismatch blocks the run
here, before the adapter is resolved or anything is called."""

from typing import Any

from worker.checks import check_argument_schema
from worker.state import Resume, ResumeMode


def run(r: Resume) -> dict[str, Any]:
    """The approved arguments are what the tool's declared schema (the version the approval was checked against)
    accepts."""
    if r.mode != ResumeMode.APPROVAL:
        return {"checked": False}
    return check_argument_schema(r.approval)
