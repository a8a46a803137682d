"""The overview's charts, laid out in Python and drawn by one template as SVG (no CDN, no script).

A chart here is geometry and text: rectangles with a CSS class and a tooltip, and labels. The
template (templates/charts/chart.html) prints them, escaped like any other text, so agent-given
names (an agent, a step) cannot become markup. The data come from runs_app.selectors.overview.
"""

import datetime as dt
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from runs_app.models import RunStatus
from runs_app.selectors import overview as overview_sel

WIDTH = 480
COLUMN_HEIGHT = 200
LEFT = 52  # room for the value axis' labels
BOTTOM = 26  # room for the day labels
TOP = 12
ROW = 22  # a horizontal bar's row
NAME_WIDTH = 170  # a horizontal bar's label column


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    css: str
    title: str


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "start"  # start | middle | end


@dataclass
class Chart:
    key: str
    title: str
    width: int = WIDTH
    height: int = COLUMN_HEIGHT
    rects: list[Rect] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    grid: list[float] = field(default_factory=list)  # y of horizontal grid lines
    legend: list[tuple[str, str]] = field(default_factory=list)  # (css, name)
    empty: bool = True


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten at or above `value` (an axis' top)."""
    if value <= 0:
        return 1
    power = 10 ** math.floor(math.log10(value))
    return float(next(step * power for step in (1, 2, 2.5, 5, 10) if step * power >= value))


def number(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return f"{value:.0f}" if value == int(value) else f"{value:.2f}".rstrip("0")


def seconds(value: float) -> str:
    if value < 120:
        return f"{value:.0f} s"
    if value < 7200:
        return f"{value / 60:.0f} min"
    return f"{value / 3600:.1f} h"


def columns(key: str, title: str, days: Sequence[dt.date], series: Sequence[tuple[str, str, Sequence[float]]], *,
            stacked: bool, fmt: Callable[[float], str] = number) -> Chart:
    """A column per day: the series stacked (parts of one whole) or side by side (each its own measure).

    `series` is (name, css class, one value per day). The value axis starts at 0 and ends at a round
    number at or above the tallest column; every other day is labelled so the labels do not collide.
    """
    chart = Chart(key, title, legend=[(css, name) for name, css, _ in series])
    totals = [sum(values[i] for _, _, values in series) if stacked else max((v[i] for _, _, v in series), default=0)
              for i in range(len(days))]
    top = nice_ceiling(max(totals, default=0))
    chart.empty = not any(totals)
    plot_h = COLUMN_HEIGHT - TOP - BOTTOM
    slot = (WIDTH - LEFT - 8) / max(len(days), 1)
    for fraction in (0, 0.5, 1):
        y = round(TOP + plot_h * (1 - fraction), 1)
        chart.grid.append(y)
        chart.labels.append(Label(LEFT - 6, y + 4, fmt(top * fraction), "end"))
    for i, day in enumerate(days):
        x0 = LEFT + i * slot + slot * 0.15
        width = slot * 0.7 if stacked else slot * 0.7 / max(len(series), 1)
        base: float = TOP + plot_h
        for j, (name, css, values) in enumerate(series):
            value = values[i]
            if not value:
                continue
            h = plot_h * value / top
            x = x0 if stacked else x0 + j * width
            y = base - h if stacked else TOP + plot_h - h
            chart.rects.append(Rect(round(x, 1), round(y, 1), round(width, 1), round(max(h, 1), 1), css,
                                    f"{day:%a %d %b}: {name} {fmt(value)}"))
            if stacked:
                base -= h
        if i % 2 == (len(days) - 1) % 2:  # the last day always labelled
            chart.labels.append(Label(round(LEFT + i * slot + slot / 2, 1), COLUMN_HEIGHT - 8, f"{day:%d %b}",
                                      "middle"))
    return chart


def bars(key: str, title: str, items: Sequence[tuple[str, float, str]], css: str) -> Chart:
    """A horizontal bar per item (label, value, the value as text), the longest the largest value."""
    chart = Chart(key, title, height=max(len(items), 1) * ROW + 8, empty=not items)
    top = max((value for _, value, _ in items), default=0) or 1
    room = WIDTH - NAME_WIDTH - 140  # and the value's text after the longest bar
    for i, (label, value, text) in enumerate(items):
        y = 4 + i * ROW
        w = max(room * value / top, 1)
        chart.labels.append(Label(NAME_WIDTH - 6, y + 15, label if len(label) <= 26 else f"{label[:25]}…", "end"))
        chart.rects.append(Rect(NAME_WIDTH, y + 3, round(w, 1), ROW - 6, css, f"{label}: {text}"))
        chart.labels.append(Label(round(NAME_WIDTH + w + 6, 1), y + 15, text))
    return chart


def overview_charts(*, project_ids: Sequence[int], days: int = overview_sel.CHART_DAYS) -> list[Chart]:
    """The overview's charts over the last `days` days (six statements, whatever the number of rows)."""
    since = overview_sel.chart_window_start(days)
    day_list = [since.date() + dt.timedelta(days=i) for i in range(days)]
    index = {day: i for i, day in enumerate(day_list)}
    per_status = {status: [0.0] * days for status in RunStatus.values}
    tokens, cost = [0.0] * days, [0.0] * days
    for row in overview_sel.runs_per_day(project_ids=project_ids, since=since):
        i = index.get(row["day"])
        if i is None:
            continue
        per_status[row["status"]][i] += row["runs"]
        tokens[i] += row["tokens"] or 0
        cost[i] += float(row["cost"] or Decimal(0))
    p50, p95 = [0.0] * days, [0.0] * days
    for day, median, high, _ in overview_sel.approval_wait_per_day(project_ids=project_ids, since=since):
        if day in index:
            p50[index[day]], p95[index[day]] = median, high
    agents = overview_sel.usage_per_agent(project_ids=project_ids, since=since)
    return [
        columns("runs-by-status", "Runs created per day, by status now", day_list,
                [(s, f"c-{s}", per_status[s]) for s in RunStatus.values if any(per_status[s])], stacked=True),
        columns("approval-wait", "Approval wait per day (p50, p95)", day_list,
                [("p50", "c-p50", p50), ("p95", "c-p95", p95)], stacked=False, fmt=seconds),
        bars("resume-outcomes", "Resume outcomes (last resume of each run)",
             [(name, n, number(n)) for name, n in overview_sel.resume_outcomes(project_ids=project_ids, since=since)],
             "c-outcome"),
        bars("blocked-by-step", "Runs blocked now, by step",
             [(step, n, number(n)) for step, n in overview_sel.blocked_by_step(project_ids=project_ids)], "c-blocked"),
        columns("tokens-per-day", "Tokens per day", day_list, [("tokens", "c-tokens", tokens)], stacked=True),
        columns("cost-per-day", "Cost per day", day_list, [("cost", "c-cost", cost)], stacked=True,
                fmt=lambda v: f"{v:.2f}"),
        bars("usage-per-agent", "Tokens (and cost) per agent",
             [(row["active_agent"] or "(no agent)", row["tokens"] or 0,
               f"{number(row['tokens'] or 0)} tokens, {row['cost'] or 0:.2f}") for row in agents], "c-tokens"),
    ]
