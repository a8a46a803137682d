"""A run's history laid out as a timeline (the run inspector draws it as server-side SVG).

Events are points in time, but some pairs of them enclose a stretch worth seeing as a bar: a resume
(its `resume.<step>` events, from the load to the last step it reached), a wait for a reviewer (from
`approval.requested` to the decision) and a handoff (issued to returned). Node executions carry their
own start and finish. Events written in one transaction share its timestamp (PostgreSQL's `now()`), so
a resume's steps are ticks inside its bar, not bars of their own: only their sum is measured.
"""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.utils import timezone

from runs_app.models import NodeExecution, RunEvent

LABEL_WIDTH = 170
PLOT_WIDTH = 820
LANE_HEIGHT = 26
TOP = 24
LANES = ("approval", "handoff", "resume", "node", "events")
# A span opens at its first kind and closes at the first later event of one of its closing kinds.
SPANS = {
    "approval": ("approval.requested", ("approval.approved", "approval.rejected", "approval.expired",
                                        "approval.cancelled")),
    "handoff": ("handoff.issued", ("handoff.returned", "handoff.expired", "handoff.cancelled")),
}


def family(kind: str) -> str:
    """An event kind's family, what the timeline filters by: `resume.load` -> `resume`."""
    return kind.split(".", 1)[0]


def duration_text(delta: dt.timedelta | None) -> str:
    if delta is None:
        return ""
    seconds = delta.total_seconds()
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    if seconds < 172_800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86_400:.1f} d"


@dataclass
class Span:
    lane: str
    label: str
    start: dt.datetime
    end: dt.datetime
    state: str  # ok | failed | open
    ticks: list[tuple[dt.datetime, str]] = field(default_factory=list)
    x: float = 0
    width: float = 0
    y: float = 0
    tick_xs: list[tuple[float, str]] = field(default_factory=list)

    @property
    def duration(self) -> str:
        return duration_text(self.end - self.start)


@dataclass
class Point:
    event: RunEvent
    since_previous: dt.timedelta | None
    x: float = 0
    y: float = 0

    @property
    def gap(self) -> str:
        return duration_text(self.since_previous)


@dataclass
class Timeline:
    spans: list[Span]
    points: list[Point]
    lanes: list[tuple[str, float]]  # (name, y) of the lanes drawn
    ticks: list[tuple[float, str]]  # the time axis: (x, label)
    width: int
    height: int
    total: str
    families: list[str]

    @property
    def empty(self) -> bool:
        return not self.spans and not self.points


def _spans_from_events(events: Sequence[RunEvent]) -> list[Span]:
    spans: list[Span] = []
    resume: Span | None = None
    open_spans: dict[str, Span] = {}
    for event in events:
        kind = event.kind
        if kind.startswith("resume."):
            step = kind.removeprefix("resume.")
            ok = bool((event.data or {}).get("ok", True))
            if resume is None or step == "load":
                resume = Span("resume", "resume", event.created_at, event.created_at, "ok")
                spans.append(resume)
            resume.end = event.created_at
            resume.ticks.append((event.created_at, f"{step}: {'passed' if ok else 'failed'}"))
            if not ok:
                resume.state = "failed"
                resume.label = f"resume, failed at {step}"
            continue
        resume = None
        for lane, (opening, closing) in SPANS.items():
            if kind == opening:
                span = Span(lane, kind.split(".", 1)[1] if lane == "handoff" else "waiting for a reviewer",
                            event.created_at, event.created_at, "open")
                open_spans[lane] = span
                spans.append(span)
            elif kind in closing and lane in open_spans:
                span = open_spans.pop(lane)
                span.end = event.created_at
                span.state = "ok" if kind.endswith(("approved", "returned")) else "failed"
                span.label = f"{span.label} → {kind.split('.', 1)[1]}"
    now = timezone.now()
    for span in open_spans.values():
        span.end = max(span.end, now)  # still waiting: up to now
    return spans


def _spans_from_nodes(executions: Sequence[NodeExecution]) -> list[Span]:
    now = timezone.now()
    state = {"succeeded": "ok", "failed": "failed", "running": "open"}
    return [Span("node", f"{e.node} #{e.attempt}", e.started_at, e.finished_at or now, state.get(e.status, "ok"))
            for e in executions]


def run_timeline(events: Sequence[RunEvent], executions: Sequence[NodeExecution], *, families: list[str],
                 show_nodes: bool = True) -> Timeline:
    """Lay events (in seq order) and node executions out on one time axis.

    1. Pair events into spans (resumes, reviewer waits, handoffs) and take node executions as spans.
    2. Every event is also a point on the `events` lane, with the time since the event before it.
    3. Scale the whole stretch, first to last moment, to the plot's width; a span shorter than a pixel
       is drawn a pixel wide, so an instant step is still visible.
    """
    spans = _spans_from_events(events) + (_spans_from_nodes(executions) if show_nodes else [])
    points = []
    previous: dt.datetime | None = None
    for event in events:
        points.append(Point(event, event.created_at - previous if previous else None))
        previous = event.created_at
    moments = [p.event.created_at for p in points] + [s.start for s in spans] + [s.end for s in spans]
    if not moments:
        return Timeline([], [], [], [], LABEL_WIDTH + PLOT_WIDTH + 40, 60, "", families)
    start, end = min(moments), max(moments)
    scale = PLOT_WIDTH / max((end - start).total_seconds(), 0.001)

    def x_of(moment: dt.datetime) -> float:
        return round(LABEL_WIDTH + (moment - start).total_seconds() * scale, 1)

    used = [lane for lane in LANES if lane == "events" and points or any(s.lane == lane for s in spans)]
    lane_y = {lane: TOP + index * LANE_HEIGHT for index, lane in enumerate(used)}
    for span in spans:
        span.x, span.y = x_of(span.start), lane_y[span.lane] + 4
        span.width = max(round(x_of(span.end) - span.x, 1), 1.5)
        span.tick_xs = [(x_of(moment), text) for moment, text in span.ticks]
    for point in points:
        point.x, point.y = x_of(point.event.created_at), lane_y["events"] + LANE_HEIGHT / 2
    axis = [(round(LABEL_WIDTH + PLOT_WIDTH * i / 4, 1),
             timezone.localtime(start + (end - start) * i / 4).strftime("%H:%M:%S")) for i in range(5)]
    height = TOP + len(used) * LANE_HEIGHT + 24
    return Timeline(spans, points, [(lane, lane_y[lane]) for lane in used], axis, LABEL_WIDTH + PLOT_WIDTH + 40,
                    height, duration_text(end - start), families)
