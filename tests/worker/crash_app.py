"""The production Celery app with a fault hook installed: at the resume's named point given by
HARNESS_CRASH_AT, the process kills itself with SIGKILL (like `kill -9`). Tests and the reliability
experiments start workers with `celery -A tests.worker.crash_app`; production never imports this. With
HARNESS_TEST_CLOCK_SKEW_SECONDS set, the process's wall clock runs that far off (tests/worker/clock_skew.py).
"""

import os
import signal

from config.celery import app
from tests.worker import clock_skew  # noqa: F401 - HARNESS_TEST_CLOCK_SKEW_SECONDS shifts this process's clock
from worker import faults

__all__ = ["app"]


def _kill_at(name: str) -> None:
    if os.environ.get("HARNESS_CRASH_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


faults.install(_kill_at)
