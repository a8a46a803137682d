"""`celery` under cProfile by CPU time, switched on and off by SIGUSR2 (bench/worker_cycle.py --profile).

    python bench/profiled_celery.py OUT.prof -A config worker --pool solo ...

The profiler starts off, so the worker's start-up is not in it; the first SIGUSR2 turns it on, the second off
and writes OUT.prof (pstats). Only the bench starts it.
"""

from __future__ import annotations

import cProfile
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

_out = sys.argv.pop(1)
_profiler = cProfile.Profile(time.process_time)  # CPU, not the waits on the broker or the database
_on = False


def _toggle(signum: int, frame: Any) -> None:
    global _on
    if _on:
        _profiler.disable()
        _profiler.dump_stats(_out)
    else:
        _profiler.enable()
    _on = not _on


signal.signal(signal.SIGUSR2, _toggle)

from celery.__main__ import main  # noqa: E402

sys.argv[0] = "celery"
main()
