#!/usr/bin/env bash
# Interleaved before/after pairs of the resume's CPU tools (issue 35, part D): each pair runs the "before" tree, then
# the "after" tree, back to back, so both see the same weather on this shared machine.
#
#   bench/resume_pairs.sh BEFORE_DIR AFTER_DIR OUT_DIR [PAIRS]
#
# BEFORE_DIR / AFTER_DIR: checkouts (or `git archive` extracts) with a .venv each (a symlink to one is fine).
# Uses DATABASE_URL and CELERY_BROKER_URL from the environment (give each helper its own), HARNESS_DEMO=1.
# Writes OUT_DIR/{cpu,cycle2}-{before,after}-N.txt: bench/resume_cpu.py --cycles 200 (the resume's and the
# decision's CPU in-process) and bench/worker_cycle.py --workers 2 --cycles 300 (two live solo workers: cycles/s and
# the workers' CPU per cycle).
set -euo pipefail
before=$1 after=$2 out=$3 pairs=${4:-3}
mkdir -p "$out"
export HARNESS_DEMO=1 SECRET_KEY=${SECRET_KEY:-x} DEBUG=0
for n in $(seq 1 "$pairs"); do
  for side in before after; do
    dir=$before; [ "$side" = after ] && dir=$after
    # Each tree from its own directory: run from elsewhere, sys.path[0] would mix the two.
    (cd "$dir" && .venv/bin/python bench/resume_cpu.py --cycles 200) >"$out/cpu-$side-$n.txt" 2>&1
    echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) $side cpu $n: $(head -2 "$out/cpu-$side-$n.txt" | tr '\n' ' ')"
  done
  for side in before after; do
    dir=$before; [ "$side" = after ] && dir=$after
    (cd "$dir" && .venv/bin/python bench/worker_cycle.py --workers 2 --cycles 300) >"$out/cycle2-$side-$n.txt" 2>&1
    echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) $side cycle2 $n: $(head -2 "$out/cycle2-$side-$n.txt" | tr '\n' ' ')"
  done
done
