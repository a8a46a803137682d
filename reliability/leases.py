"""Lease experiments of issue 19: worker processes whose clocks disagree with the database's.

Experiment 21 (defect 4): claimer processes whose Python wall clock is shifted by -30 s, 0 and +30 s
(tests/worker/clock_skew.py, through HARNESS_TEST_CLOCK_SKEW_SECONDS) claim, renew, release and drop the
leases of a few runs for a while, each through the services the worker and the API use (`run_claim`,
`run_heartbeat`, `run_release`). Every lease they get or renew is logged as a run event in the same
transaction (`lease.claimed`, `lease.renewed`, `lease.released`), so the event's `created_at` is the
database's clock at that write, whatever the writer's clock says. SQL over those events then checks that a
lease is never held by two owners at once: no claim lands inside another owner's lease (from its last
claim or renewal, for the lease's length) that its owner had not released.

Then Celery workers (`celery -A tests.worker.crash_app worker --beat`) with the same three clocks resume
approved demo runs whose tool answers slowly: every run must succeed with its tool called once per key, and
claimed by one worker only (a worker whose recovery pass took a live lease for expired would claim the run
mid-call, mark the effect unknown and call the tool again).

Before the fix (Python's clock in the claim and the guards) a +30 s worker took every live lease it tried,
and a -30 s worker wrote leases that were already over, so others took its runs while it held them.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
import uuid
from collections import Counter
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from harness.http.errors import ConflictError
from reliability.core import Result, command_for, experiment
from reliability.faults import (
    LOG_DIR,
    ROOT,
    Processes,
    _fake_service,
    _idempotency_key,
    _worker_pool,
    approve,
    broker_client,
    child_env,
    fresh_project,
    processes,
    read_line,
    reviewer_for,
    send,
)
from runs_app.models import Run, RunEvent, RunStatus
from runs_app.services import run_claim, run_create, run_event_append, run_heartbeat, run_release
from tests import factories
from tests.worker.support import demo_run, wait_for

LEASE_CHILD_BOOT = ("import sys, django; django.setup(); import tests.worker.crash_app; "
                    "from reliability.leases import child_main; child_main(sys.argv[1:])")
SKEW_ENV = "HARNESS_TEST_CLOCK_SKEW_SECONDS"
SKEWS = (-30, 0, 30)  # seconds each worker's wall clock is off the database's

# A claim's event is written in the claim's transaction, which may have begun a moment before the claim
# statement itself (one round trip): overlaps shorter than this are that moment, not two owners. A skewed
# clock's overlaps, before the fix, were whole leases.
OVERLAP_TOLERANCE_SECONDS = 0.25


def _spawn(procs: Processes, args: dict, env: dict[str, str]) -> subprocess.Popen:
    log = (LOG_DIR / f"{procs.label}-{len(procs.started)}-{args['owner'].replace(':', '_')}.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-c", LEASE_CHILD_BOOT, json.dumps(args)], cwd=ROOT, env=env, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True,
    )
    log.close()
    procs.started.append(proc)  # stopped with the experiment's other processes, by its process group
    return proc


# --- 21. clock skew ------------------------------------------------------------------------------

TITLE_21 = "Clock skew: workers whose clocks run 30 s slow and fast share leases; no lease has two owners"

_OVERLAPS_SQL = """
WITH ledger AS (
    SELECT run_id, seq, kind, data->>'owner' AS owner, created_at AS at
      FROM runs_app_runevent WHERE run_id = ANY(%(runs)s) AND kind LIKE 'lease.%%'
)
SELECT DISTINCT ON (c.run_id, c.seq) c.run_id, c.seq, c.owner, p.owner, EXTRACT(EPOCH FROM (p.at - c.at)) + %(lease)s
  FROM ledger c
  JOIN ledger p ON p.run_id = c.run_id AND p.seq < c.seq AND p.owner <> c.owner
                   AND p.kind IN ('lease.claimed', 'lease.renewed')
 WHERE c.kind = 'lease.claimed'
   AND p.at + (%(lease)s - %(tolerance)s) * interval '1 second' > c.at
   AND NOT EXISTS (SELECT 1 FROM ledger x
                    WHERE x.run_id = c.run_id AND x.seq > p.seq AND x.seq < c.seq
                      AND x.kind = 'lease.released' AND x.owner = p.owner)
 ORDER BY c.run_id, c.seq, p.seq DESC
"""


def lease_overlaps(run_ids: list[int], lease_seconds: float) -> list[dict[str, Any]]:
    """Every claim that landed inside another owner's unreleased lease, by the database's clock (one row per
    such claim, with the holder's latest claim or renewal before it)."""
    with connection.cursor() as cursor:
        cursor.execute(_OVERLAPS_SQL, {"runs": run_ids, "lease": float(lease_seconds),
                                       "tolerance": OVERLAP_TOLERANCE_SECONDS})
        return [{"run": run, "seq": seq, "claimed_by": claimer, "held_by": holder, "overlap_s": round(float(s), 3)}
                for run, seq, claimer, holder, s in cursor.fetchall()]


@experiment(21, TITLE_21)
def clock_skew(quick: bool) -> Result:
    """1. Claimer processes with clocks at -30 s, 0 and +30 s (two of each at full counts) start, each
       reporting how far its clock is from the database's.
    2. Released together, each for `seconds`: pick a run, claim it (lease `lease` s); holding it, renew every
       quarter lease for a random while, then release it or let it lapse. Refused claims retry elsewhere.
    3. The ledger of run events is checked with SQL for a claim inside another owner's live lease.
    """
    runs, per_skew, seconds, lease = (3, 1, 8, 2) if quick else (8, 2, 90, 2)
    started = time.monotonic()
    project = fresh_project("skew")
    session = factories.make_session(project)
    run_ids = [run_create(project=project, session_id=session.pk).pk for _ in range(runs)]
    with processes("skew") as procs:
        children: list[tuple[int, subprocess.Popen]] = []
        for skew in SKEWS:
            for i in range(per_skew):
                owner = f"worker:skew{skew:+d}-{i}:{uuid.uuid4().hex[:6]}"
                args = {"project": project.pk, "runs": run_ids, "owner": owner, "lease": lease, "seconds": seconds,
                        "seed": len(children)}
                children.append((skew, _spawn(procs, args, child_env(**{SKEW_ENV: str(skew)}))))
        measured = {}
        for skew, child in children:
            ready = json.loads(read_line(child, timeout=90))
            measured[ready["owner"]] = (skew, ready["clock_minus_database_s"])
        for _, child in children:
            send(child, "go")
        answers = [json.loads(read_line(child, timeout=seconds + 90)) for _, child in children]
    overlaps = lease_overlaps(run_ids, lease)
    by_skew: dict[str, dict[str, int]] = {}
    for answer in answers:
        skew = measured[answer["owner"]][0]
        totals = by_skew.setdefault(f"{skew:+d}s", {})
        for key in ("claims", "renewals", "releases", "lapses", "lost", "refused"):
            totals[key] = totals.get(key, 0) + answer[key]
    celery = _celery_phase(quick)
    figures = {
        "runs": runs, "lease_seconds": lease, "seconds": seconds,
        "clocks": {owner: {"skew_s": skew, "measured_s": off} for owner, (skew, off) in sorted(measured.items())},
        "by_skew": by_skew,
        "claims": sum(a["claims"] for a in answers),
        "double_ownership": len(overlaps), "overlaps": overlaps[:10],
        "overlap_tolerance_s": OVERLAP_TOLERANCE_SECONDS,
        "errors": [e for a in answers for e in a["errors"]][:10],
        "celery": celery,
        "wall_seconds": round(time.monotonic() - started, 2),
    }
    clocks_skewed = all(abs(off - skew) < 2 for skew, off in measured.values())
    passed = (not overlaps and clocks_skewed and not figures["errors"]
              and all(totals["claims"] > 0 for totals in by_skew.values())
              and celery["succeeded"] == celery["runs"] and celery["max_requests_per_key"] == 1
              and celery["max_claims_per_run"] == 1 and celery["runs_claimed_by_two_workers"] == 0)
    return Result(number=21, title=TITLE_21, passed=passed, figures=figures, command=command_for(21, quick),
                  notes="" if clocks_skewed else "a child's clock was not skewed as asked: the shim did not apply")


def _celery_phase(quick: bool) -> dict[str, Any]:
    """Celery workers at -30 s, 0 and +30 s resume approved demo runs whose tool takes a third of the lease."""
    runs, lease = (3, 3) if quick else (15, 3)
    client = broker_client()
    client.flushdb()
    fake = _fake_service()
    fake.delay = 1.0
    run_ids: list[int] = []
    unfinished: list[int] = []
    try:
        with _worker_pool("skew", fake) as pool:
            for skew in SKEWS:
                pool.start(f"skew{skew:+d}", lease_seconds=lease, wait=False, extra_env={SKEW_ENV: str(skew)})
            for worker in pool.started:
                worker.wait_ready(timeout=90)
            demo = [demo_run(fresh_project("skew-celery")) for _ in range(runs)]
            user = reviewer_for(*[run.project for run in demo])
            for run in demo:
                approve(run, user)
                run_ids.append(run.pk)
            for run_id in run_ids:
                done = Run.objects.filter(pk=run_id, status__in=(RunStatus.SUCCEEDED, RunStatus.FAILED,
                                                                   RunStatus.BLOCKED))
                try:
                    wait_for(done.exists, timeout=120)
                except AssertionError:
                    unfinished.append(run_id)
    finally:
        fake.stop()
        client.flushdb()
    keys = {run_id: _idempotency_key(run_id) for run_id in run_ids}
    claims = {run_id: [e.data["owner"] for e in RunEvent.objects.filter(
        run_id=run_id, kind="resume.authority_lease", data__ok=True).order_by("seq")] for run_id in run_ids}
    return {
        "runs": len(run_ids), "lease_seconds": lease, "tool_seconds": fake.delay,
        "succeeded": Run.objects.filter(pk__in=run_ids, status=RunStatus.SUCCEEDED).count(),
        "unfinished": unfinished,
        "max_requests_per_key": max((fake.requests[k] for k in keys.values()), default=0),
        "max_claims_per_run": max((len(owners) for owners in claims.values()), default=0),
        "claims_by_worker": dict(Counter(owner.split(":")[1].split("@")[0] for owners in claims.values()
                                         for owner in owners)),
        "runs_claimed_by_two_workers": sum(1 for owners in claims.values() if len(set(owners)) > 1),
    }


def _child_lease_skew(args: dict) -> None:
    project, owner, lease = args["project"], args["owner"], args["lease"]
    rng = random.Random(args["seed"])
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement_timestamp()")
        database_now = cursor.fetchone()[0]
    off = (timezone.now() - database_now).total_seconds()
    print(json.dumps({"owner": owner, "clock_minus_database_s": round(off, 2)}), flush=True)
    sys.stdin.readline()
    counts = {"claims": 0, "renewals": 0, "releases": 0, "lapses": 0, "lost": 0, "refused": 0}
    errors: list[str] = []
    deadline = time.monotonic() + args["seconds"]  # monotonic: the skew shifts only the wall clock
    while time.monotonic() < deadline:
        run_id = rng.choice(args["runs"])
        try:
            with transaction.atomic():
                run_claim(project=project, run_id=run_id, owner=owner, lease_seconds=lease)
                run_event_append(project=project, run_id=run_id, kind="lease.claimed", data={"owner": owner})
        except ConflictError as exc:
            if exc.code != "lease_held":
                errors.append(exc.code)
            counts["refused"] += 1
            time.sleep(rng.uniform(0.01, 0.05))
            continue
        counts["claims"] += 1
        hold_until, lost = time.monotonic() + rng.uniform(0.1, lease * 2), False
        while time.monotonic() < hold_until and not lost:
            time.sleep(lease / 4)
            try:
                with transaction.atomic():
                    run_heartbeat(project=project, run_id=run_id, owner=owner, lease_seconds=lease)
                    run_event_append(project=project, run_id=run_id, kind="lease.renewed", data={"owner": owner})
                counts["renewals"] += 1
            except ConflictError:
                counts["lost"] += 1
                lost = True
        if lost:
            continue
        if rng.random() < 0.5:
            with transaction.atomic():
                if run_release(project=project, run_id=run_id, owner=owner):
                    run_event_append(project=project, run_id=run_id, kind="lease.released", data={"owner": owner})
                    counts["releases"] += 1
        else:
            counts["lapses"] += 1  # held to the end of its lease: the others may claim it once it is over
    print(json.dumps({"owner": owner, **counts, "errors": errors}), flush=True)


def child_main(argv: list[str]) -> None:
    """Entry point of this module's child processes (LEASE_CHILD_BOOT)."""
    _child_lease_skew(json.loads(argv[0]))
