"""Scenario 7: an approval decided -> its run resumed by a live `celery -A harness worker` on Redis.

The latency runs from `approval_decide` (which queues the resume when it commits) until the run is
`running` again with the result bound and a new checkpoint written, compared with a no-op Celery
task's round trip on the same broker and worker (send, run, signal back). One decision at a time:
this is a latency, not a throughput.
"""

from __future__ import annotations

import time
import uuid
from array import array
from typing import Any

from django.contrib.auth.models import User

from bench import procs
from bench.celery_tasks import noop_round_trip
from bench.core import Measure, Settings, _percentile
from bench.scenarios_store import _project
from harness.models import Project
from runs_app.models import Checkpoint, Run, RunStatus
from runs_app.services import (
    approval_decide,
    approval_request_create,
    checkpoint_create,
    run_create,
    run_transition,
)
from sessions_app.services import session_create

POLL_SECONDS = 0.001


REVIEWER_PASSWORD = "bench-reviewer-password"


def reviewer(project: Project, *projects: Project) -> User:
    """A reviewer of `project` (and `projects`) only: its own user, so one project's inbox is not another's."""
    from django.contrib.auth.models import Group

    from harness.models import Membership
    from harness.tenancy import Role

    user, created = User.objects.get_or_create(username=f"bench-reviewer-{project.slug}")
    if created:
        user.set_password(REVIEWER_PASSWORD)
        user.save()
    user.groups.add(Group.objects.get_or_create(name=Role.REVIEWER)[0])
    for member_of in (project, *projects):
        Membership.objects.get_or_create(user=user, project=member_of)
    return user


def waiting_run(project: Project, n: int) -> tuple[int, int]:
    """An agent-driven run at its `publish` gate, checkpointed, waiting for a pending approval.

    Returns (run id, approval id).
    """
    session = session_create(project=project, role="writer", memory_policy="bounded")
    run = run_create(project=project, session_id=session.pk, cursor={"node": "publish"})
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None,
                   updates={"current_node": "publish"})
    arguments = {"chapter": n, "title": "The Lighthouse"}
    checkpoint_create(project=project, run_id=run.pk, label="before publish", cursor={"node": "publish"},
                      state={"completed_nodes": ["outline", "draft"]},
                      pending_gate={"tool": "publish_chapter", "arguments": arguments})
    approval = approval_request_create(
        project=project, run_id=run.pk, tool="publish_chapter", arguments=arguments,
        idempotency_key=f"bench:{uuid.uuid4().hex}", risk="high", reason="bench", requested_by="agent:bench",
    )
    return run.pk, approval.pk


def resumed(run_id: int, before_checkpoint: int) -> bool:
    row = Run.objects.filter(pk=run_id).values("status", "bound_result", "last_checkpoint_id").first()
    return (row is not None and row["status"] == RunStatus.RUNNING and row["bound_result"] is not None
            and row["last_checkpoint_id"] != before_checkpoint)


def resume_check(run_id: int) -> bool:
    """Result bound with its receipt, and the new checkpoint's parent is the one before the approval."""
    run = Run.objects.get(pk=run_id)
    bound = run.bound_result or {}
    latest = Checkpoint.objects.filter(run_id=run_id).order_by("-id")[:2]
    return (bound.get("decision") == "approved" and bool(bound.get("receipt")) and len(latest) == 2
            and latest[0].parent_id == latest[1].pk and latest[0].pk == run.last_checkpoint_id)


def decide_and_wait(project: Project, user: User, run_id: int, approval_id: int, timeout: float = 30.0) -> float:
    before = Run.objects.values_list("last_checkpoint_id", flat=True).get(pk=run_id)
    t0 = time.perf_counter()
    approval_decide(project=project, approval_id=approval_id, user=user, decision="approve")
    deadline = t0 + timeout
    while not resumed(run_id, before):
        if time.perf_counter() > deadline:
            raise RuntimeError(f"run {run_id} was not resumed within {timeout}s")
        time.sleep(POLL_SECONDS)
    return (time.perf_counter() - t0) * 1000


def _as_measure(subject: str, latencies: array, seconds: float, rss: float, **extra: Any) -> Measure:
    ordered = array("d", sorted(latencies))
    return Measure("7 approval -> resumed", subject, 1, len(latencies), seconds, _percentile(ordered, 0.5),
                   _percentile(ordered, 0.99), rss, extra=extra)


def scenario_resume(settings: Settings) -> list[Measure]:
    project = _project()
    user = reviewer(project)
    rounds = max(20, int(settings.duration * 10))
    runs = [waiting_run(project, n) for n in range(rounds)]
    worker = procs.start_celery_worker()
    try:
        warm = waiting_run(project, rounds)
        decide_and_wait(project, user, *warm)
        for _ in range(20):
            noop_round_trip()
        started = time.perf_counter()
        noop = array("d")
        end = started + settings.duration / 2
        while time.perf_counter() < end and len(noop) < 5000:
            t0 = time.perf_counter()
            if not noop_round_trip(timeout=10):
                raise RuntimeError("a no-op task did not come back within 10 s")
            noop.append((time.perf_counter() - t0) * 1000)
        noop_m = _as_measure("no-op Celery round trip", noop, time.perf_counter() - started,
                             procs.rss_mb(worker.proc.pid))
        started = time.perf_counter()
        latencies = array("d")
        end = started + settings.duration / 2
        done: list[int] = []
        for run_id, approval_id in runs:
            if time.perf_counter() >= end and len(done) >= 10:
                break
            latencies.append(decide_and_wait(project, user, run_id, approval_id))
            done.append(run_id)
        ours = _as_measure("harness resume (worker)", latencies, time.perf_counter() - started,
                           procs.rss_mb(worker.proc.pid))
    finally:
        worker.stop()
    ours.extra["check"] = all(resume_check(rid) for rid in done)
    ours.extra["resumes"] = len(done)
    ratio = ours.p50_ms / noop_m.p50_ms if noop_m.p50_ms else float("inf")
    ours.extra["section"] = (
        "## 7 approval -> resumed, p50 against a no-op round trip\n\n"
        f"p50 {ours.p50_ms:.1f} ms vs {noop_m.p50_ms:.2f} ms: **{ratio:.1f}x** (target at most 3x: "
        f"{'met' if ratio <= 3 else '**not met**'}).\n"
    )
    return [noop_m, ours]


SCENARIOS: dict[str, Any] = {"7": scenario_resume}
