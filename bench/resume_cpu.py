"""CPU and statements per approval -> resume cycle, in this one process (issue 14, scenario 7's path).

    DATABASE_URL=... .venv/bin/python bench/resume_cpu.py [--cycles 300] [--profile 30]

Builds scenario 7's runs (an agent-driven run at its `publish` gate, checkpointed, a pending approval),
decides them with their resume messages held back, then resumes each here with `resume_run_by_id`, as the
worker's task does (no broker, no Celery). Prints the CPU time (process time: the database's own work is not
in it, and the other processes on the machine disturb it far less than wall time) per decision and per
resume, and the statements and commits of each. `--profile N` prints the cProfile of the resume's hottest
functions (by own time), over N more cycles. `--steps` prints the CPU of each step of the pipeline (process
time around each call the pipeline makes: the start count, each step, the call, the delivery, the move, the
commits), measured over the same cycles. Every resumed run is checked as scenario 7 checks it.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("HARNESS_DEMO", "1")  # scenario 7's runs call the demo's publish_chapter tool

import django  # noqa: E402

django.setup()

from unittest import mock  # noqa: E402

from django.db import connection  # noqa: E402

import worker.tasks  # noqa: E402
from bench.scenarios_store import _project  # noqa: E402
from bench.scenarios_worker import resume_check, reviewer, waiting_run  # noqa: E402
from harness.actors import Actor  # noqa: E402
from runs_app.services import approval_decide  # noqa: E402
from worker.pipeline import resume_run_by_id  # noqa: E402


class _Count:
    """Statements, and commits (a statement outside any atomic block commits on its own)."""

    def __init__(self, per_statement: bool = False) -> None:
        self.per_statement = per_statement  # each statement's wall and server CPU (reading /proc costs CPU here)
        self.statements = self.commits = 0
        self.server = self.wall_total = 0.0
        self.wall: dict[str, list[float]] = {}  # statement's first line -> [count, wall s, server CPU s]
        self.backend = 0

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.statements += 1
        self.commits += not connection.in_atomic_block
        if not self.per_statement:
            return execute(sql, params, many, context)
        start, server = time.perf_counter(), _server_ns(self.backend)
        try:
            return execute(sql, params, many, context)
        finally:
            self.note(" ".join(sql.split())[:90], start, server)

    def note(self, what: str, start: float, server: int) -> None:
        slot = self.wall.setdefault(what, [0, 0.0, 0.0])
        slot[0] += 1
        slot[1] += time.perf_counter() - start
        slot[2] += (_server_ns(self.backend) - server) / 1e9


_decisions = {"n": 0, "cpu": 0.0, "statements": 0}
_steps: dict[str, float] = {}  # step -> CPU s, over the measured cycles (--steps)


def _timed(name: str, fn: Any) -> Any:
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            _steps[name] = _steps.get(name, 0.0) + time.process_time() - start
    return timed


@contextlib.contextmanager
def _step_timers() -> Any:
    """Each call worker.pipeline makes, timed by process time under its step's name: the pipeline looks these up
    at call time (module globals and the bind step's module), so the resume runs its own code, timed. Nested
    calls are not double counted: the steps do not call each other, and the commits are the pipeline's."""
    import worker.pipeline as pipeline
    from worker.steps import bind_result

    names = vars(pipeline)  # count_start is imported there, not exported: patched in the module's namespace
    saved = (names["count_start"], pipeline.PRE_CALL_STEPS, pipeline.BINDING_STEPS, pipeline._move_on,
             bind_result.call, bind_result.deliver)
    names["count_start"] = _timed("load: start count (own commit)", names["count_start"])
    pipeline.PRE_CALL_STEPS = tuple((name, _timed(f"{name}" if name != "bind_result" else "bind_result: intent + "
                                                  "dispatch", fn)) for name, fn in pipeline.PRE_CALL_STEPS)
    pipeline.BINDING_STEPS = tuple((name, _timed(name, fn)) for name, fn in pipeline.BINDING_STEPS)
    pipeline._move_on = _timed("continue: the move (run_bind_result)", pipeline._move_on)
    bind_result.call = _timed("bind_result: the tool's call", bind_result.call)
    bind_result.deliver = _timed("bind_result: delivery (own commit)", bind_result.deliver)
    try:
        yield
    finally:
        (names["count_start"], pipeline.PRE_CALL_STEPS, pipeline.BINDING_STEPS, pipeline._move_on,
         bind_result.call, bind_result.deliver) = saved


def _decided(n: int) -> list[int]:
    project = _project()
    user = reviewer(project)
    pending = [waiting_run(project, i) for i in range(n)]
    held: list[int] = []
    count = _Count()
    with mock.patch.object(worker.tasks, "enqueue_resume", held.append), connection.execute_wrapper(count):
        start = time.process_time()
        for _, approval_id in pending:
            approval_decide(project=project, approval_id=approval_id, actor=Actor.for_user(user), decision="approve")
        _decisions["cpu"] += time.process_time() - start
    _decisions["n"] += n
    _decisions["statements"] += count.statements
    return held


def _resume_all(run_ids: list[int], profiler: cProfile.Profile | None = None,
                per_statement: bool = False, steps: bool = False) -> tuple[float, _Count]:
    count = _Count(per_statement)
    commit = connection.commit

    def counted_commit() -> None:
        count.commits += 1
        if steps:
            start = time.process_time()
            commit()
            _steps["COMMIT (2 transactions)"] = _steps.get("COMMIT (2 transactions)", 0.0) + time.process_time() - start
            return
        if not count.per_statement:
            commit()
            return
        start, server = time.perf_counter(), _server_ns(count.backend)
        commit()
        count.note("COMMIT", start, server)

    cpu = wall = 0.0
    connection.ensure_connection()
    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        backend = count.backend = cur.fetchone()[0]
    server0 = _server_cpu(backend)
    timers = _step_timers() if steps else contextlib.nullcontext()
    with mock.patch.object(connection, "commit", counted_commit), connection.execute_wrapper(count), timers:
        for run_id in run_ids:
            start, started = time.process_time(), time.perf_counter()
            if profiler is not None:
                profiler.enable()
            outcome = resume_run_by_id(run_id, owner="worker:bench-cpu:1")
            if profiler is not None:
                profiler.disable()
            cpu += time.process_time() - start
            wall += time.perf_counter() - started
            if outcome != "done":
                sys.exit(f"run {run_id}: {outcome}")
    count.server = _server_cpu(backend) - server0
    count.wall_total = wall
    if not all(resume_check(run_id) for run_id in run_ids):
        sys.exit("a resumed run does not have its result bound and a new checkpoint")
    return cpu, count


def _server_ns(pid: int) -> int:
    """The server process's time on a CPU so far, in ns (the scheduler's own count: finer than /proc/PID/stat's)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) if pid else 0


def _server_cpu(pid: int) -> float:
    """CPU seconds (user + system) of this connection's server process: what the statements cost PostgreSQL (the
    server is on this machine)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cycles", type=int, default=300)
    parser.add_argument("--profile", type=int, default=0, help="cycles to profile after the measured ones")
    parser.add_argument("--statements", action="store_true", help="each statement's mean wall time (the round trip)")
    parser.add_argument("--steps", action="store_true", help="the CPU of each step of the pipeline")
    args = parser.parse_args()
    _resume_all(_decided(20))  # warm: imports, caches, prepared statements
    rounds, per_round = 5, max(1, args.cycles // 5)
    _decisions.update(n=0, cpu=0.0, statements=0)
    cpu, statements, commits, cycles, server, wall = 0.0, 0, 0, 0, 0.0, 0.0
    walls: dict[str, list[float]] = {}  # statement -> [count, wall s, server CPU s]
    for _ in range(rounds):  # build, decide and resume in rounds, so the runs' rows stay few and hot
        run_ids = _decided(per_round)
        spent, count = _resume_all(run_ids, per_statement=args.statements, steps=args.steps)
        server += count.server
        wall += count.wall_total
        for sql, (k, w, c) in count.wall.items():
            slot = walls.setdefault(sql, [0, 0.0, 0.0])
            slot[0] += k
            slot[1] += w
            slot[2] += c
        cpu, statements, commits, cycles = (cpu + spent, statements + count.statements, commits + count.commits,
                                            cycles + len(run_ids))
    print(f"{cycles} resumes: {cpu / cycles * 1000:.2f} ms CPU, {statements / cycles:.1f} statements, "
          f"{commits / cycles:.1f} commits per resume; the server's CPU {server / cycles * 1000:.2f} ms per resume; "
          f"wall {wall / cycles * 1000:.2f} ms per resume")
    print(f"{_decisions['n']} decisions: {_decisions['cpu'] / _decisions['n'] * 1000:.2f} ms CPU, "
          f"{_decisions['statements'] / _decisions['n']:.1f} statements per decision")
    if args.statements:
        print("  per resume | wall ms each | server CPU ms each | statement")
        for sql, (k, w, c) in sorted(walls.items(), key=lambda kv: -kv[1][1]):
            print(f"  {k / cycles:4.1f} | {w / k * 1000:6.3f} | {c / k * 1000:6.3f} | {sql}")
    if args.steps:
        print("  CPU ms per resume | step (process time around the pipeline's call; the rest: the pipeline itself)")
        for name, spent_s in sorted(_steps.items(), key=lambda kv: -kv[1]):
            print(f"  {spent_s / cycles * 1000:6.3f} | {name}")
        print(f"  {(cpu - sum(_steps.values())) / cycles * 1000:6.3f} | the rest (the pipeline's own, trace flushes, "
              "BEGINs, metrics)")
    if args.profile:
        profiler = cProfile.Profile(time.process_time)  # CPU, not the waits on the database
        _resume_all(_decided(args.profile), profiler)
        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(25)
        # The project's own functions by cumulative time: where in the resume the CPU goes.
        stats.sort_stats("cumulative").print_stats(r"/(worker|runs_app|harness|memory_app|sessions_app)/", 60)


if __name__ == "__main__":
    main()
