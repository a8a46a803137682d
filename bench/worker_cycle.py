"""Where one resume worker's cycle goes: a burst of decided approvals through live solo workers (issue 14).

    DATABASE_URL=... CELERY_BROKER_URL=redis://... HARNESS_DEMO=1 SECRET_KEY=x DEBUG=0 \
      .venv/bin/python bench/worker_cycle.py [--workers 1] [--cycles 400] [--profile OUT.prof] [--poll 0.002]

Scenario 7's throughput burst (bench.scenarios_worker._burst: approvals decided with their resume messages held,
then sent at once), reported per cycle as wall time and the CPU of each party on the machine's cores: the worker
processes, this database's PostgreSQL backends (and every PostgreSQL process), redis-server and this process
(which polls for the resumed runs every `--poll` seconds, as the scenario does). `--profile` runs one worker under
bench/profiled_celery.py and writes the cProfile (CPU time) of the measured burst only.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("HARNESS_DEMO", "1")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from bench import procs, scenarios_worker  # noqa: E402
from bench.scenarios_store import _project  # noqa: E402
from bench.scenarios_worker import resume_check, reviewer, waiting_run  # noqa: E402


def _cpu_of(pids: list[int]) -> float:
    return sum(scenarios_worker._cpu_seconds(pid) for pid in pids)


def _pids_named(name: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == name:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _backends() -> list[int]:
    """This database's server processes (the workers', this process's): not the other databases' on the server."""
    with connection.cursor() as cur:
        cur.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
        return [row[0] for row in cur.fetchall()]


def _burst(project, user, n: int, pids: list[int], poll: float, profile: bool = False) -> dict[str, float]:
    """scenario 7's burst (bench.scenarios_worker._burst) with each party's CPU taken around the resumes only."""
    from runs_app.models import Run
    from worker.tasks import enqueue_resume

    runs = [waiting_run(project, i) for i in range(n)]
    befores = dict(Run.objects.filter(pk__in=[rid for rid, _ in runs]).values_list("pk", "last_checkpoint_id"))
    held, decision_cpu = scenarios_worker._decide_all(project, user, runs)
    pending = [(rid, befores[rid]) for rid in held]
    if profile:
        os.kill(pids[0], signal.SIGUSR2)
    scenarios_worker.resumed_of(pending[:1])  # the poll's connection, so its backend is counted
    pg, rd = _backends(), _pids_named("redis-server")
    allpg = _pids_named("postgres")
    cpu0 = (_cpu_of(pids), _cpu_of(pg), _cpu_of(rd), time.process_time(), _cpu_of(allpg))
    t0 = time.perf_counter()
    for run_id in held:
        enqueue_resume(run_id)
    polls, left = 0, list(pending)
    while left:
        done = scenarios_worker.resumed_of(left)
        polls += 1
        left = [p for p in left if p[0] not in done]
        if left and time.perf_counter() > t0 + 60 + n:
            raise RuntimeError(f"{len(left)} runs were not resumed")
        time.sleep(poll)
    seconds = time.perf_counter() - t0
    cpu1 = (_cpu_of(pids), _cpu_of(pg), _cpu_of(rd), time.process_time(), _cpu_of(allpg))
    if profile:
        os.kill(pids[0], signal.SIGUSR2)
        time.sleep(1.0)
    if not all(resume_check(rid) for rid in held):
        raise RuntimeError("a resumed run does not have its result bound and a new checkpoint")
    per = [(b - a) / n * 1000 for a, b in zip(cpu0[:4], cpu1[:4], strict=True)]
    return {"cycles": n, "seconds": seconds, "workers": per[0], "postgres": per[1], "redis": per[2], "me": per[3],
            "decision": decision_cpu * 1000, "allpg": (cpu1[4] - cpu0[4]) / n * 1000, "polls": polls}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--cycles", type=int, default=400)
    parser.add_argument("--profile", default="")
    parser.add_argument("--poll", type=float, default=0.002, help="seconds between this process's polls")
    args = parser.parse_args()
    project = _project()
    user = reviewer(project)
    workers = [_start(f"cycle-worker-{i}", args.profile if i == 0 else "") for i in range(args.workers)]
    try:
        pids = [w.proc.pid for w in workers]
        _burst(project, user, 8 * args.workers, pids, args.poll)  # warm
        f = _burst(project, user, args.cycles, pids, args.poll, profile=bool(args.profile))
    finally:
        for w in workers:
            w.stop()
    n = f["cycles"]
    load = os.getloadavg()
    print(f"{args.workers} worker(s), {n} cycles in {f['seconds']:.2f} s: {n / f['seconds']:.1f}/s, "
          f"{f['seconds'] / n * 1000:.2f} ms wall per cycle; load {load[0]:.2f} {load[1]:.2f}")
    print(f"  CPU ms per cycle: workers {f['workers']:.2f}, this database's backends {f['postgres']:.2f} "
          f"(every postgres process {f['allpg']:.2f}), redis {f['redis']:.2f}, "
          f"this process (sends, polls) {f['me']:.2f}; the decision {f['decision']:.2f} (before the burst)")
    print(f"  polls {f['polls']} ({f['polls'] / n:.1f} per cycle)")


def _start(name: str, profile: str) -> procs.Server:
    if not profile:
        return procs.start_celery_worker(name=name)
    argv = [sys.executable, str(ROOT / "bench" / "profiled_celery.py"), profile, "-A", "config", "worker",
            "--pool", "solo", "--include", "bench.celery_tasks", "-n", f"{name}-{os.getpid()}@%h",
            "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel", "WARNING"]
    proc, log_path = procs._spawn(name, argv, {})
    from bench.celery_tasks import ping_worker

    procs._wait(lambda: ping_worker(timeout=1.0), proc, name, log_path, timeout=90)
    return procs.Server(name=name, proc=proc, log_path=log_path)


if __name__ == "__main__":
    main()
