"""The lineage page's picture: a window of a checkpoint tree (runs_app.selectors.checkpoints.lineage_window)
laid out for an SVG, depth down, siblings across.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from runs_app.models import Checkpoint

# Columns wide enough for a node's text (`#id` and LABEL_CHARS of its label, 11px monospace).
_DX, _DY, _PAD = 240, 64, 30
LABEL_CHARS = 28


@dataclass
class LineageNode:
    checkpoint: Checkpoint
    x: int = 0
    y: int = 0
    children: list["LineageNode"] = field(default_factory=list)
    is_fork: bool = False
    parent_x: int | None = None
    parent_y: int | None = None
    label: str = ""  # the full label (the SVG's <title>)
    short_label: str = ""  # at most LABEL_CHARS, for the SVG's text
    run_id: int | None = None
    run_ref: str = ""  # the checkpoint's run, named on a task's lineage (lineage_window's `run_ref`)


@dataclass
class Lineage:
    nodes: list[LineageNode]
    width: int
    height: int
    truncated: bool
    older: int | None = None  # the id to page back from when older checkpoints are not drawn

    @property
    def edges(self) -> list[LineageNode]:
        return [n for n in self.nodes if n.parent_x is not None]


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def _node(checkpoint: Checkpoint) -> LineageNode:
    label = checkpoint.label or ""
    run_ref = getattr(checkpoint, "run_ref", None) or (f"run {checkpoint.run_id}" if checkpoint.run_id else "")
    return LineageNode(checkpoint=checkpoint, label=label, short_label=_short(label), run_id=checkpoint.run_id,
                       run_ref=run_ref)


def lineage_layout(checkpoints: Sequence[Checkpoint], *, truncated: bool = False, older: int | None = None) -> Lineage:
    """Lay the checkpoint tree out for an SVG picture: depth down, siblings across.

    1. Link each checkpoint to its parent when the parent is in the set (else it is a root).
    2. Walk the forest depth-first in id order; each leaf takes the next column, each inner node
       sits above its first child, so a fork spreads its branches side by side.
    3. Record each node's parent position so the template draws the edges.
    """
    by_id = {c.pk: _node(c) for c in sorted(checkpoints, key=lambda c: c.pk)}
    roots: list[LineageNode] = []
    for node in by_id.values():
        parent = by_id.get(node.checkpoint.parent_id) if node.checkpoint.parent_id else None
        (parent.children if parent else roots).append(node)
    column = 0
    ordered: list[LineageNode] = []
    # An explicit stack, not recursion: a long linear chain would exceed Python's recursion limit.
    stack: list[tuple[LineageNode, int, bool]] = [(root, 0, False) for root in reversed(roots)]
    while stack:
        node, level, done = stack.pop()
        if done:
            node.x = node.children[0].x if node.children else node.x
            continue
        node.y = _PAD + level * _DY
        node.is_fork = len(node.children) > 1
        ordered.append(node)
        if not node.children:
            node.x = _PAD + column * _DX
            column += 1
            continue
        stack.append((node, level, True))
        for child in reversed(node.children):
            stack.append((child, level + 1, False))
    for node in ordered:
        for child in node.children:
            child.parent_x, child.parent_y = node.x, node.y
    depth = max((n.y for n in ordered), default=_PAD)
    width = _PAD * 2 + max(column - 1, 0) * _DX + _DX - 20  # the last column's text too
    return Lineage(nodes=ordered, width=width, height=depth + _PAD + 20, truncated=truncated, older=older)
