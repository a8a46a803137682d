"""Instructions per decision and per resume, in this one process, under valgrind's callgrind (issue 35, part D).

    export BENCH_CALLGRIND_DIR=$(mktemp -d)   # where callgrind writes this process's dumps, and this script reads them
    DATABASE_URL=... HARNESS_DEMO=1 SECRET_KEY=x DEBUG=0 valgrind --tool=callgrind \
      --callgrind-out-file=$BENCH_CALLGRIND_DIR/ci.%p .venv/bin/python bench/resume_instructions.py [--cycles 15]

The CPU figures of bench/resume_cpu.py swing with this shared machine's load (the same code measured 6.8 and
8.5 ms per resume within minutes); an instruction count does not. This builds scenario 7's runs (as resume_cpu.py
does), then decides and resumes `--cycles` of them after a warm-up, asking callgrind (`callgrind_control --dump`,
which writes the counts so far and zeroes them) for a dump before and after each phase, and prints each phase's
instructions per cycle from those dumps. Only this process is counted: PostgreSQL's work is not in it, the
database's round trips are (the client's side of each statement).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import resume_cpu  # noqa: E402  (sets Django up)
from bench.scenarios_store import _project  # noqa: E402
from bench.scenarios_worker import reviewer, waiting_run  # noqa: E402


def _dump(label: str) -> None:
    """Ask callgrind to dump its counters since the last dump and zero them (read at the end: reading a dump file
    here would be counted in the next phase)."""
    subprocess.run(["callgrind_control", "--dump=" + label, str(os.getpid())], check=True, capture_output=True)  # noqa: S607


def _totals() -> dict[str, int]:
    """Each dump's label -> the instructions its dumps counted (summed over the dumps of that label), from this
    process's dump files; `label#count` -> how many dumps had it."""
    out: dict[str, int] = {}
    for path in Path(os.environ["BENCH_CALLGRIND_DIR"]).glob(f"*.{os.getpid()}.*"):
        label, total = "", 0
        with path.open() as lines:
            for line in lines:
                if line.startswith("desc: Trigger: dump "):
                    label = line.split("desc: Trigger: dump ", 1)[1].strip()
                elif line.startswith("totals:"):
                    total = int(line.split()[1])
        out[label] = out.get(label, 0) + total
        out[label + "#count"] = out.get(label + "#count", 0) + 1
    return out


def _dumping(name: str, fn: Any) -> Any:
    """`fn`, with a dump before (the pipeline's own work since the last one) and after it (the step's)."""
    # Only letters, digits and `_:+-`: a label with a parenthesis or an apostrophe is dropped by callgrind_control
    # without an error (its interval then lands in the next dump).
    label = re.sub(r"[^A-Za-z0-9_:+-]", "_", name)

    def dumped(*args: Any, **kwargs: Any) -> Any:
        _dump("rest")
        try:
            return fn(*args, **kwargs)
        finally:
            _dump("step:" + label)
    return dumped


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cycles", type=int, default=15)
    parser.add_argument("--steps", action="store_true",
                        help="also each step's instructions (a dump around each of the pipeline's calls)")
    args = parser.parse_args()
    resume_cpu._resume_all(resume_cpu._decided(3))  # warm: imports, caches, prepared statements
    project = _project()
    user = reviewer(project)
    pending = [waiting_run(project, i) for i in range(args.cycles)]
    from unittest import mock

    import worker.tasks
    from harness.actors import Actor
    from runs_app.services import approval_decide

    held: list[int] = []
    with mock.patch.object(worker.tasks, "enqueue_resume", held.append):
        _dump("setup")
        _dump("empty")  # what a dump itself costs this process (a subprocess): taken off each phase
        for _, approval_id in pending:
            approval_decide(project=project, approval_id=approval_id, actor=Actor.for_user(user), decision="approve")
        _dump("decisions")
    from worker.pipeline import resume_run_by_id

    timers: Any = contextlib.nullcontext()
    if args.steps:  # resume_cpu's step timers, each call dumped instead of timed
        resume_cpu._timed = _dumping
        timers = resume_cpu._step_timers()
    _dump("setup-steps")  # the step timers set up: not counted
    with timers:
        for run_id in held:
            resume_run_by_id(run_id, owner="worker:bench-instructions:1")
        _dump("rest")
    totals, n = _totals(), len(held)
    empty = totals["empty"] / totals["empty#count"]  # one dump's own cost, taken off every interval
    decisions = totals["decisions"] - empty
    parts = {label: totals[label] - empty * totals[label + "#count"] for label in totals
             if not label.endswith("#count") and (label == "rest" or label.startswith("step:"))}
    resumes = sum(parts.values())
    print(f"{n} cycles: {decisions / n / 1e6:.2f} M instructions per decision, {resumes / n / 1e6:.2f} M per resume "
          f"(a dump's own: {empty / 1e6:.2f} M, taken off each interval)")
    if args.steps:
        print("  M instructions per resume | step (the rest: the pipeline's own, trace flushes, commits, metrics)")
        for label, count in sorted(parts.items(), key=lambda kv: -kv[1]):
            print(f"  {count / n / 1e6:6.3f} | {label.removeprefix('step:').replace('_', ' ')}")


if __name__ == "__main__":
    main()
