"""Step `checkpoint`: checkpoint the new position (the previous checkpoint is its parent)."""

import logging
from typing import Any

from worker.progress import checkpoint_position
from worker.state import Resume, ResumeMode

log = logging.getLogger(__name__)


def run(r: Resume) -> dict[str, Any]:
    """Checkpoint the new position (lineage: the previous checkpoint is the parent)."""
    if r.mode not in (ResumeMode.APPROVAL, ResumeMode.HANDOFF):
        return {"checkpoint": None, "reason": "each node checkpoints as it finishes"}
    # r.run is the row our claim returned (the move `continue` decided is made after this, at commit), and
    # the checkpoint is written under our lease.
    label = (f"after handoff {r.handoff.pk} (returned)" if r.handoff is not None
             else f"after {r.run.current_node or 'approval'} ({(r.bound or {}).get('decision')})")
    checkpoint = checkpoint_position(r, label=label, parent=r.run.last_checkpoint_id)
    return {"checkpoint": checkpoint.pk if checkpoint else None}
