"""Step `checkpoint`: checkpoint the new position (the previous checkpoint is its parent)."""

import logging
from typing import Any

from worker.progress import checkpoint_position
from worker.state import Resume

log = logging.getLogger(__name__)


def run(r: Resume) -> dict[str, Any]:
    """Checkpoint the new position (lineage: the previous checkpoint is the parent)."""
    if r.mode != "approval":
        return {"checkpoint": None, "reason": "each node checkpoints as it finishes"}
    # `continue` just moved the run in this transaction (its row is locked): r.run is current.
    label = f"after {r.run.current_node or 'approval'} ({(r.bound or {}).get('decision')})"
    checkpoint = checkpoint_position(r, label=label, parent=r.run.last_checkpoint_id)
    return {"checkpoint": checkpoint.pk if checkpoint else None}
