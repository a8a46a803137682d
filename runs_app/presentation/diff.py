"""Two checkpoints compared for the diff page: every leaf of the state that differs, by its path, and the
checkpoint's metadata (label, content hash, authority, schema version) side by side, apart from the state.
"""

import json
from dataclasses import dataclass
from typing import Any

from runs_app.artifacts import bare_fingerprint
from runs_app.models import Checkpoint

# What the run resumes from; the diff's changes are these fields' leaves.
STATE_FIELDS = ("cursor", "state", "artifact_fingerprints", "pending_gate", "resume_policy")
# About the checkpoint, not its state: a changed content hash is a consequence of a state change, not one more.
METADATA_FIELDS = ("label", "content_hash", "authority_ref", "schema_version")


@dataclass(frozen=True)
class DiffLine:
    path: str
    kind: str  # added | removed | changed
    before: str
    after: str


@dataclass(frozen=True)
class MetadataLine:
    field: str
    before: str
    after: str
    differs: bool


@dataclass(frozen=True)
class CheckpointDiff:
    lines: tuple[DiffLine, ...]  # the state's changes
    metadata: tuple[MetadataLine, ...]


def _keyed_by_id(value: list[Any]) -> bool:
    """A list of objects that each carry a distinct `id`: compared by id, so an insertion is one added item
    rather than every later item changed."""
    if not all(isinstance(item, dict) and "id" in item for item in value):
        return False
    ids = [json.dumps(item["id"], sort_keys=True) for item in value]
    return len(set(ids)) == len(ids)


def _flatten(value: Any, prefix: str, out: dict[str, str], *, fingerprints: bool = False) -> None:
    if isinstance(value, dict) and value:
        for key in sorted(value):
            _flatten(value[key], f"{prefix}.{key}" if prefix else str(key), out, fingerprints=fingerprints)
    elif isinstance(value, list) and value and _keyed_by_id(value):
        for item in value:
            _flatten(item, f"{prefix}[id={json.dumps(item['id'], ensure_ascii=False)}]", out,
                     fingerprints=fingerprints)
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            _flatten(item, f"{prefix}[{index}]", out, fingerprints=fingerprints)
    else:
        out[prefix] = json.dumps(bare_fingerprint(value) if fingerprints else value, sort_keys=True,
                                 ensure_ascii=False)


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def checkpoint_diff(a: Checkpoint, b: Checkpoint) -> CheckpointDiff:
    """Every state leaf that differs between two checkpoints, by its path (`state.files[2]`,
    `state.todos[id="t1"].done`), and their metadata side by side.

    Fingerprints compare as bare hex: `sha256:<hex>` and `<hex>` are the same artifact.
    """
    left: dict[str, str] = {}
    right: dict[str, str] = {}
    for name in STATE_FIELDS:
        fingerprints = name == "artifact_fingerprints"
        _flatten(getattr(a, name), name, left, fingerprints=fingerprints)
        _flatten(getattr(b, name), name, right, fingerprints=fingerprints)
    lines = []
    for path in sorted(left.keys() | right.keys()):
        if path not in right:
            lines.append(DiffLine(path, "removed", left[path], ""))
        elif path not in left:
            lines.append(DiffLine(path, "added", "", right[path]))
        elif left[path] != right[path]:
            lines.append(DiffLine(path, "changed", left[path], right[path]))
    metadata = tuple(
        MetadataLine(name, _show(getattr(a, name)), _show(getattr(b, name)), getattr(a, name) != getattr(b, name))
        for name in METADATA_FIELDS
    )
    return CheckpointDiff(lines=tuple(lines), metadata=metadata)
