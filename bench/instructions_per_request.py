"""Instructions per agent request in the web process, counted by valgrind (repeatable on a noisy machine, where
process CPU time drifts by tens of percent between minutes: bench/README.md).

    DATABASE_URL=... SECRET_KEY=x DEBUG=0 HARNESS_DEMO=1 ALLOWED_HOSTS=127.0.0.1 \
      .venv/bin/python bench/instructions_per_request.py [--trees /work/main,.] [--only append,latest,checkpoint]
      [--low 50] [--high 250]

For each tree and call, bench/cpu_per_request.py (that tree's copy) runs under `valgrind --tool=cachegrind` twice,
with `--requests low` and `--requests high`; (I refs at high - at low) / (high - low) is the instructions of one
request, Django's start-up, the fixtures and the warm-up cancelled out. The trees take turns, call by call. Each
run takes about a minute of one core (valgrind runs the interpreter some 50 times slower).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def instructions(tree: Path, call: str, requests: int) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "cachegrind.out"
        run = subprocess.run(
            [shutil.which("valgrind") or "/usr/bin/valgrind", "--tool=cachegrind", "--cache-sim=no",
             f"--cachegrind-out-file={out}", sys.executable,
             str(tree / "bench" / "cpu_per_request.py"), "--requests", str(requests), "--only", call],
            capture_output=True, text=True, env=os.environ, check=False)
        found = re.search(r"I\s+refs:\s+([\d,]+)", run.stderr)
        if run.returncode != 0 or found is None:
            sys.exit(f"{tree} {call}: {run.stdout[-500:]}{run.stderr[-2000:]}")
        return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trees", default=str(ROOT), help="comma-separated worktrees to compare")
    parser.add_argument("--only", default="append,latest,checkpoint")
    parser.add_argument("--low", type=int, default=50)
    parser.add_argument("--high", type=int, default=250)
    args = parser.parse_args()
    trees = [Path(t).resolve() for t in args.trees.split(",")]
    for call in args.only.split(","):
        counts = []
        for tree in trees:
            per = (instructions(tree, call, args.high) - instructions(tree, call, args.low)) / (args.high - args.low)
            counts.append(per)
            print(f"{call:12s} {tree}: {per:,.0f} instructions per request", flush=True)
        if len(counts) > 1:
            print(f"{call:12s} ratio {' / '.join(f'{c / counts[0]:.3f}' for c in counts)} (to the first tree)",
                  flush=True)


if __name__ == "__main__":
    main()
