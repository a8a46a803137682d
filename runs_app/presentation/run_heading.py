"""What a run is called on its pages: its ref (a LangGraph thread id, a human reference) or its number, then its
agent, and where a fork came from. Issue 32: a fork's page said "Run run 6"."""

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from runs_app.models import Run
from runs_app.selectors.runs import run_is_stale


@dataclass(frozen=True)
class RunHeading:
    title: str  # "R-101", "chapter-3" or "#6"
    agent: str  # the agent (or graph) that runs it, "" when none is named
    forked_from_run: int | None  # a fork's source run and checkpoint
    forked_from_checkpoint: int | None
    fork_reason: str
    stale: bool = False  # running past its expired lease (runs_app.selectors.runs.stale_runs)

    @property
    def text(self) -> str:
        """The page's <title>: "Run #6 · fork of run 5" or "Run chapter-3 · chapter-writer"."""
        parts = [f"Run {self.title}"]
        if self.agent:
            parts.append(self.agent)
        if self.forked_from_run is not None:
            parts.append(f"fork of run #{self.forked_from_run}")
        return " · ".join(parts)


def run_heading(run: Run, fork: dict[str, Any] | None = None, *, now: dt.datetime | None = None) -> RunHeading:
    fork = fork or {}
    from_run, from_checkpoint = fork.get("from_run"), fork.get("from_checkpoint")
    return RunHeading(
        title=run.ref or f"#{run.pk}",
        agent=run.active_agent,
        forked_from_run=from_run if isinstance(from_run, int) else None,
        forked_from_checkpoint=from_checkpoint if isinstance(from_checkpoint, int) else None,
        fork_reason=str(fork.get("reason") or ""),
        stale=run_is_stale(run, now=now or timezone.now()),
    )
