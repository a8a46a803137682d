"""Two checkpoints compared for the diff page: every leaf value that differs, by its path.
"""

import json
from dataclasses import dataclass
from typing import Any

from runs_app.models import Checkpoint

DIFF_FIELDS = (
    "cursor", "state", "artifact_fingerprints", "pending_gate", "authority_ref", "resume_policy",
    "schema_version", "label", "content_hash",
)


@dataclass(frozen=True)
class DiffLine:
    path: str
    kind: str  # added | removed | changed
    before: str
    after: str


def _flatten(value: Any, prefix: str, out: dict[str, str]) -> None:
    if isinstance(value, dict) and value:
        for key in sorted(value):
            _flatten(value[key], f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            _flatten(item, f"{prefix}[{index}]", out)
    else:
        out[prefix] = json.dumps(value, sort_keys=True, ensure_ascii=False)


def checkpoint_diff(a: Checkpoint, b: Checkpoint) -> list[DiffLine]:
    """Every leaf value that differs between two checkpoints, by its path (`state.files[2]`)."""
    left: dict[str, str] = {}
    right: dict[str, str] = {}
    for name in DIFF_FIELDS:
        _flatten(getattr(a, name), name, left)
        _flatten(getattr(b, name), name, right)
    lines = []
    for path in sorted(left.keys() | right.keys()):
        if path not in right:
            lines.append(DiffLine(path, "removed", left[path], ""))
        elif path not in left:
            lines.append(DiffLine(path, "added", "", right[path]))
        elif left[path] != right[path]:
            lines.append(DiffLine(path, "changed", left[path], right[path]))
    return lines
