"""What a reviewer changed: the requested arguments against the approved ones, key by key.

One function, `arguments_diff`, feeds every place that says what changed (the approval page, the inbox row, the
decision's audit entry and the `approval.decided` webhook, through `ApprovalRequest.arguments_changes`), so they
cannot disagree. Objects are compared key by key and lists index by index, down to the leaves; a change is named by
its path (`chapter`, `tags[1]`, `meta.author`) with the values shown, never their fingerprints.
"""

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ChangeKind(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


_MISSING: Any = object()


@dataclass(frozen=True)
class ArgumentChange:
    path: str  # `a.b[2].c`; "" is the arguments as a whole (one is not an object)
    kind: ChangeKind
    before: Any = None  # the requested value (None when added)
    after: Any = None  # the approved value (None when removed)

    @property
    def before_text(self) -> str:
        return _text(self.before)

    @property
    def after_text(self) -> str:
        return _text(self.after)

    def as_data(self) -> dict[str, Any]:
        """The change as JSON: what the audit entry and the webhook carry."""
        data: dict[str, Any] = {"path": self.path, "kind": str(self.kind)}
        if self.kind != ChangeKind.ADDED:
            data["before"] = self.before
        if self.kind != ChangeKind.REMOVED:
            data["after"] = self.after
        return data


@dataclass(frozen=True)
class ArgumentsDiff:
    changes: tuple[ArgumentChange, ...]

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def as_data(self) -> list[dict[str, Any]]:
        return [change.as_data() for change in self.changes]

    @classmethod
    def from_data(cls, data: Any) -> "ArgumentsDiff":
        """Back from `as_data` (the stored `arguments_changes`); anything not a list of changes is no change."""
        if not isinstance(data, list):
            return cls(())
        kinds = {str(kind) for kind in ChangeKind}
        return cls(tuple(ArgumentChange(str(item.get("path", "")), ChangeKind(item["kind"]), item.get("before"),
                                        item.get("after"))
                         for item in data if isinstance(item, dict) and item.get("kind") in kinds))


def arguments_diff(requested: Any, approved: Any) -> ArgumentsDiff:
    """Every difference from `requested` to `approved` (None approved: nothing approved yet, no change)."""
    if approved is None:
        return ArgumentsDiff(())
    changes: list[ArgumentChange] = []
    _walk("", requested, approved, changes)
    return ArgumentsDiff(tuple(changes))


def _walk(path: str, before: Any, after: Any, out: list[ArgumentChange]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(before.keys() | after.keys(), key=str):
            _walk(_key_path(path, str(key)), before.get(key, _MISSING), after.get(key, _MISSING), out)
    elif isinstance(before, list) and isinstance(after, list):
        for index in range(max(len(before), len(after))):
            _walk(f"{path}[{index}]", before[index] if index < len(before) else _MISSING,
                  after[index] if index < len(after) else _MISSING, out)
    elif before is _MISSING:
        out.append(ArgumentChange(path, ChangeKind.ADDED, None, after))
    elif after is _MISSING:
        out.append(ArgumentChange(path, ChangeKind.REMOVED, before, None))
    # 1 and 1.0 and True are one JSON value to Python's ==, not to a tool: compare their JSON text.
    elif _text(before) != _text(after):
        out.append(ArgumentChange(path, ChangeKind.CHANGED, before, after))


def _key_path(path: str, key: str) -> str:
    # A key that is not a plain name is quoted, so `a.b` the key and a -> b the path read differently.
    name = key if key.isidentifier() else json.dumps(key, ensure_ascii=False)
    return f"{path}.{name}" if path else name


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
