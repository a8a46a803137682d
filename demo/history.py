"""Fourteen days of the demo project's past (`load_demo`), so every chart of the overview shows what it is for.

Today's scenario (S-42, R-100..R-102, T-7) is one story; an operator opening the console also wants to see a
project that has been running for two weeks: a few hundred runs of four agents across every ending, their
tokens and cost, approvals decided after waits of minutes to hours (some rejected, some for a tool with no
adapter, which the worker blocks at `resume.capability`), and memory a reviewer's session wrote, held for review.

Everything is written through the services, as agents and reviewers would; then the rows the overview dates by
(runs, sessions, approvals: `created_at`, `updated_at`, `decided_at`) are moved into the last 14 days. What is
append-only keeps the time it was written (run events, checkpoints, the audit chain: the demo does not rewrite
history rows either), so a history run's timeline says when the demo was loaded.

The decided approvals are resumed by the worker, as any decision is (bin/start runs one): their outcomes fill the
"resume outcomes" and "blocked by step" charts a few seconds after the start. Seeded: the same history each time.
"""

import datetime as dt
import random
from decimal import Decimal

from django.contrib.auth.models import User
from django.db.models import F
from django.utils import timezone

from harness.actors import Actor
from harness.models import Project
from memory_app.models import MemoryScope
from memory_app.services import memory_write
from runs_app import services as runs
from runs_app.models import ApprovalRequest, Run, RunStatus
from sessions_app.models import Session
from sessions_app.services import session_create, session_items_append

DAYS = 14
REF_PREFIX = "H-"  # the history's runs and sessions; today's scenario uses R- and S-
# (agent, task mode, share of the runs, tokens per run: low, high)
AGENTS = (("writer", "write", 0.45, (4_000, 60_000)), ("researcher", "research", 0.25, (8_000, 120_000)),
          ("editor", "review", 0.2, (2_000, 30_000)), ("publisher", "publish", 0.1, (500, 4_000)))
# How a history run ends, and how often. "approval ..." asks a reviewer first; "unadapted" asks for a tool no
# adapter is registered for, so the approved resume blocks at the capability check.
ENDINGS = (("succeeded", 58), ("failed", 9), ("cancelled", 5), ("approval approved", 14), ("approval rejected", 5),
           ("approval unadapted", 4), ("approval expired", 2), ("running", 3))
COST_PER_1K_TOKENS = Decimal("0.0040")


def load_demo_history(*, project: Project, reviewer: User, now: dt.datetime | None = None, seed: int = 42) -> int:
    """Write the history (once: a second call finds it and writes nothing); returns how many runs it made."""
    if Run.objects.filter(project=project, ref__startswith=REF_PREFIX).exists():
        return 0
    rng = random.Random(seed)  # noqa: S311 - a demo's reproducible spread, not a secret
    now = now or timezone.now()
    agent_of = rng.choices(AGENTS, weights=[share for _, _, share, _ in AGENTS], k=DAYS * 40)
    endings = rng.choices([name for name, _ in ENDINGS], weights=[weight for _, weight in ENDINGS], k=DAYS * 40)
    made = 0
    for day in range(DAYS):
        day_start = (now - dt.timedelta(days=DAYS - 1 - day)).replace(hour=8, minute=0, second=0, microsecond=0)
        reviewing = day % 4 == 3  # every fourth day a reviewer agent's session, whose memory is held
        session = session_create(project=project, role="semantic_reviewer" if reviewing else "writer",
                                 memory_policy="bounded", ref=f"{REF_PREFIX}S-{day + 1:02d}")
        _date(Session, session.pk, day_start)
        for i in range(rng.randint(8, 20)):
            agent, mode, _, (low, high) = agent_of[made]
            ending = endings[made]
            if ending == "running" and day < DAYS - 2:
                ending = "succeeded"  # only the last two days still have runs going
            started = min(day_start + dt.timedelta(minutes=rng.randint(0, 12 * 60)), now - dt.timedelta(minutes=5))
            _history_run(project, rng, session.pk, f"{REF_PREFIX}{day + 1:02d}-{i + 1:02d}", agent, mode,
                         rng.randint(low, high), ending, started, reviewer)
            made += 1
        if reviewing:
            _held_memory(project, session.pk, day)
    return made


def _history_run(project: Project, rng: random.Random, session_id: int, ref: str, agent: str, mode: str,
                 tokens: int, ending: str, started: dt.datetime, reviewer: User) -> None:
    run = runs.run_create(project=project, session_id=session_id, ref=ref, task_mode=mode, active_agent=agent)
    runs.run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    runs.run_record_usage(project=project, run_id=run.pk, tokens=tokens,
                          cost=(COST_PER_1K_TOKENS * tokens / 1000).quantize(Decimal("0.0001")))
    session_items_append(project=project, session_id=session_id, items=[
        {"role": "user", "content": {"text": f"{ref}: {mode} the next part."}, "run_id": run.pk},
        {"role": "assistant", "content": {"text": f"{agent} is on it."}, "run_id": run.pk},
    ])
    finished = started + dt.timedelta(minutes=rng.randint(2, 90))
    if ending in ("succeeded", "cancelled"):
        runs.run_transition(project=project, run_id=run.pk, to=ending, expected_version=None)
    elif ending == "failed":
        runs.run_transition(project=project, run_id=run.pk, to=RunStatus.FAILED, expected_version=None,
                            error={"message": rng.choice(["the model's answer did not parse",
                                                          "the research source timed out"])})
    elif ending.startswith("approval"):
        _history_approval(project, rng, run.pk, ref, agent, ending.split()[1], started, reviewer)
    _date(Run, run.pk, started, None if ending == "running" or ending.startswith("approval") else finished)


def _history_approval(project: Project, rng: random.Random, run_id: int, ref: str, agent: str, decision: str,
                      asked: dt.datetime, reviewer: User) -> None:
    tool, arguments = (("send_newsletter", {"list": "readers", "issue": ref}) if decision == "unadapted"
                       else ("publish_chapter", {"chapter": rng.randint(1, 12), "title": f"Part {ref}"}))
    expiring = decision == "expired"
    approval = runs.approval_request_create(
        project=project, run_id=run_id, tool=tool, arguments=arguments, idempotency_key=f"{ref}/{tool}",
        risk="high", reason="Visible to readers and cannot be undone.", actor=Actor.for_agent(agent),
        expires_at=timezone.now() - dt.timedelta(seconds=1) if expiring else None)
    waited = dt.timedelta(seconds=rng.choice([rng.randint(40, 600), rng.randint(600, 3 * 3600),
                                              rng.randint(3 * 3600, 9 * 3600)]))
    if expiring:
        # Nobody answered in time: asked with its deadline already past, it is due now, and the recovery pass's
        # expiry takes it (with the real clock: one moved ahead would expire other projects' approvals early).
        runs.approval_expire_due()
    else:
        runs.approval_decide(project=project, approval_id=approval.pk, actor=Actor.for_user(reviewer),
                             decision="reject" if decision == "rejected" else "approve",
                             expected_version=approval.version,
                             reason="Not this week: the launch moved." if decision == "rejected" else "")
    ApprovalRequest.objects.filter(pk=approval.pk).update(
        created_at=asked, updated_at=asked + waited,
        **({"expires_at": asked + waited} if expiring else {"decided_at": asked + waited}))


def _held_memory(project: Project, session_id: int, day: int) -> None:
    """A reviewer agent's verdict on the day's chapter: held until an operator accepts it (memory_app.policy)."""
    memory_write(project=project, actor=Actor.for_agent("semantic_reviewer"), scope=MemoryScope.PROJECT,
                 subject=f"review of day {day + 1}", content=f"Day {day + 1}'s chapter drifts from the past tense "
                 "in its second half.", provenance_kind="inferred", source_session_id=session_id)


def _date(model: type[Run] | type[Session], pk: int, created: dt.datetime, finished: dt.datetime | None = None) -> None:
    """Move a row's dates into the past; what happened after `created` keeps its distance from it."""
    rows = model.objects.filter(pk=pk)
    if finished is None:
        rows.update(updated_at=created + (F("updated_at") - F("created_at")), created_at=created)
    else:
        rows.update(created_at=created, updated_at=finished)
