"""Read queries for the console's run, approval and checkpoint pages.

Every function takes the ids of the projects the viewer may see and filters on them first, so an
object of another project is simply absent (a 404 in the view), never a 403.
Each list is a fixed number of queries whatever its length (select_related, no per-row lookups).
"""

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q, QuerySet
from django.http import Http404
from django.utils import timezone

from runs_app.models import (
    ApprovalRequest,
    ApprovalStatus,
    Checkpoint,
    ExternalEffect,
    NodeExecution,
    Run,
    RunEvent,
    RunStatus,
    Task,
)
from sessions_app.models import SessionItem

# What the resume worker re-checks before it continues (DESIGN.md "Resume"), shown to a reviewer.
# The keys are runs_app.resume.STEP_NAMES (a test holds them equal); each step writes `resume.<key>`.
RESUME_CHECKS = (
    ("load", "Load the durable run and its latest checkpoint"),
    ("compatibility", "Check the schema and version are compatible"),
    ("authority_lease", "Check authority and take the lease (one owner)"),
    ("sparse_context", "Rebuild a sparse context snapshot (recorded)"),
    ("artifact_fingerprints", "Verify the artifact fingerprints"),
    ("approval_preconditions", "Verify the approved fingerprint is the pending action's"),
    ("capability", "Re-resolve the tool adapter for the pending work"),
    ("bind_result", "Execute the approved action once, or bind its returned result"),
    ("not_yet_consumed", "Verify the effect was not consumed already"),
    ("continue", "Continue from the saved cursor"),
    ("checkpoint", "Checkpoint again"),
)


@dataclass(frozen=True)
class StepProgress:
    key: str
    text: str
    state: str  # passed | failed | waiting
    reason: str


def resume_progress(trace: Sequence[RunEvent]) -> list[StepProgress]:
    """Each resume check with what the trace says about it (the latest event of each step wins)."""
    latest: dict[str, dict] = {}
    for event in trace:
        if event.kind.startswith("resume."):
            latest[event.kind.removeprefix("resume.")] = event.data or {}
    progress = []
    for key, text in RESUME_CHECKS:
        data = latest.get(key)
        state = "waiting" if data is None else ("passed" if data.get("ok") else "failed")
        progress.append(StepProgress(key, text, state, str((data or {}).get("reason", ""))))
    return progress


AGE_FILTERS = {"1h": dt.timedelta(hours=1), "1d": dt.timedelta(days=1), "7d": dt.timedelta(days=7)}


def pending_approval_count(project_ids: Sequence[int]) -> int:
    return ApprovalRequest.objects.filter(project_id__in=project_ids, status=ApprovalStatus.PENDING).count()


def blocked_run_count(project_ids: Sequence[int]) -> int:
    return Run.objects.filter(project_id__in=project_ids, status=RunStatus.BLOCKED).count()


def blocked_runs(project_ids: Sequence[int], limit: int = 20) -> list[Run]:
    """Runs a failed resume check stopped, newest first: each names its step for a person to decide."""
    return list(
        Run.objects.filter(project_id__in=project_ids, status=RunStatus.BLOCKED)
        .select_related("project")
        .order_by("-updated_at", "-id")[:limit]
    )


def approval_inbox(
    project_ids: Sequence[int],
    *,
    project: str = "",
    risk: str = "",
    older_than: str = "",
    agent: str = "",
) -> QuerySet[ApprovalRequest]:
    """Pending approvals, oldest first (the one waiting longest is the most urgent)."""
    qs = ApprovalRequest.objects.filter(project_id__in=project_ids, status=ApprovalStatus.PENDING)
    if project:
        qs = qs.filter(project__slug=project)
    if risk:
        qs = qs.filter(risk=risk)
    if older_than in AGE_FILTERS:
        qs = qs.filter(created_at__lte=timezone.now() - AGE_FILTERS[older_than])
    if agent:
        qs = qs.filter(Q(run__active_agent=agent) | Q(requested_by=agent))
    return qs.select_related("project", "run", "run__session").order_by("created_at", "id")


def inbox_agents(project_ids: Sequence[int]) -> list[str]:
    return list(
        Run.objects.filter(
            project_id__in=project_ids, approvals__status=ApprovalStatus.PENDING
        ).exclude(active_agent="").values_list("active_agent", flat=True).distinct().order_by("active_agent")[:200]
    )


def approval_get(project_ids: Sequence[int], approval_id: int) -> ApprovalRequest:
    approval = (
        ApprovalRequest.objects.filter(project_id__in=project_ids, pk=approval_id)
        .select_related("project", "run", "run__session", "run__last_checkpoint", "run__task", "decided_by")
        .first()
    )
    if approval is None:
        raise Http404("No such approval.")
    return approval


def session_recent_items(session_id: int, limit: int = 10) -> list[SessionItem]:
    items = list(SessionItem.objects.filter(session_id=session_id).order_by("-seq")[:limit])
    items.reverse()
    return items


def resume_trace(approval: ApprovalRequest, limit: int = 200) -> list[RunEvent]:
    """The run's events from this approval's decision on: the resume, step by step."""
    if approval.status == ApprovalStatus.PENDING:
        return []
    decision = (
        RunEvent.objects.filter(run_id=approval.run_id, kind=f"approval.{approval.status}", data__approval=approval.pk)
        .values_list("seq", flat=True)
        .first()
    )
    events = RunEvent.objects.filter(run_id=approval.run_id)
    if decision is not None:
        events = events.filter(seq__gte=decision)
    elif approval.decided_at is not None:
        events = events.filter(created_at__gte=approval.decided_at)
    return with_data_json(list(events.order_by("seq")[:limit]))


def with_data_json(events: Sequence[RunEvent]) -> list[RunEvent]:
    """Give each event a compact JSON rendering of its data for the page (templates print repr otherwise)."""
    for event in events:
        event.data_json = json.dumps(event.data, sort_keys=True, ensure_ascii=False, default=str)  # type: ignore[attr-defined]
    return list(events)


def resume_in_progress(run: Run) -> bool:
    """Whether the decision page should keep polling: the worker has not finished with the run yet."""
    return run.status == RunStatus.WAITING_APPROVAL or bool(run.lease_owner)


def run_get(project_ids: Sequence[int], run_id: int) -> Run:
    run = (
        Run.objects.filter(project_id__in=project_ids, pk=run_id)
        .select_related("project", "session", "task", "last_checkpoint", "pending_approval")
        .first()
    )
    if run is None:
        raise Http404("No such run.")
    return run


def run_events(run: Run) -> QuerySet[RunEvent]:
    return RunEvent.objects.filter(run=run).order_by("-seq")


def run_node_executions(run: Run, limit: int = 200) -> list[NodeExecution]:
    return list(NodeExecution.objects.filter(run=run).order_by("-started_at", "-id")[:limit])


def run_effects(run: Run, limit: int = 200) -> list[ExternalEffect]:
    return list(ExternalEffect.objects.filter(run=run).order_by("-created_at", "-id")[:limit])


def run_approvals(run: Run, limit: int = 200) -> list[ApprovalRequest]:
    return list(ApprovalRequest.objects.filter(run=run).select_related("decided_by").order_by("-created_at")[:limit])


def run_context_snapshots(run: Run, limit: int = 10) -> list[Any]:
    """What was handed to the model for this run, newest first (recorded by memory's context projection)."""
    from memory_app.models import ContextSnapshot

    snapshots = list(
        ContextSnapshot.objects.filter(project_id=run.project_id, run=run).order_by("-created_at", "-id")[:limit]
    )
    for snapshot in snapshots:
        snapshot.content_json = json.dumps(snapshot.content, indent=2, ensure_ascii=False, default=str)  # type: ignore[attr-defined]
    return snapshots


def task_get(project_ids: Sequence[int], task_id: int) -> Task:
    task = Task.objects.filter(project_id__in=project_ids, pk=task_id).select_related("project").first()
    if task is None:
        raise Http404("No such task.")
    return task


def checkpoint_get(project_ids: Sequence[int], checkpoint_id: int) -> Checkpoint:
    checkpoint = (
        Checkpoint.objects.filter(project_id__in=project_ids, pk=checkpoint_id)
        .select_related("project", "run", "task", "parent", "approval")
        .first()
    )
    if checkpoint is None:
        raise Http404("No such checkpoint.")
    return checkpoint


# --- lineage -------------------------------------------------------------------------------

LINEAGE_LIMIT = 2000
_DX, _DY, _PAD = 150, 64, 30


@dataclass
class LineageNode:
    checkpoint: Checkpoint
    x: int = 0
    y: int = 0
    children: list["LineageNode"] = field(default_factory=list)
    is_fork: bool = False
    parent_x: int | None = None
    parent_y: int | None = None


@dataclass
class Lineage:
    nodes: list[LineageNode]
    width: int
    height: int
    truncated: bool

    @property
    def edges(self) -> list[LineageNode]:
        return [n for n in self.nodes if n.parent_x is not None]


def lineage_checkpoints(project_ids: Sequence[int], *, run: Run | None = None, task: Task | None = None) -> QuerySet:
    qs = Checkpoint.objects.filter(project_id__in=project_ids)
    qs = qs.filter(run=run) if run is not None else qs.filter(task=task)
    return qs.only("id", "parent_id", "label", "depth", "created_at", "run_id", "task_id").order_by("id")


def lineage_layout(checkpoints: Sequence[Checkpoint], *, truncated: bool = False) -> Lineage:
    """Lay the checkpoint tree out for an SVG picture: depth down, siblings across.

    1. Link each checkpoint to its parent when the parent is in the set (else it is a root).
    2. Walk the forest depth-first in id order; each leaf takes the next column, each inner node
       sits above its first child, so a fork spreads its branches side by side.
    3. Record each node's parent position so the template draws the edges.
    """
    by_id = {c.pk: LineageNode(checkpoint=c) for c in checkpoints}
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
    return Lineage(
        nodes=ordered, width=_PAD * 2 + max(column - 1, 0) * _DX + 120, height=depth + _PAD + 20, truncated=truncated
    )


# --- diff ----------------------------------------------------------------------------------

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
