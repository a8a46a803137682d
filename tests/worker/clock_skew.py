"""A test-only clock shift. A process started with HARNESS_TEST_CLOCK_SKEW_SECONDS=<s> sees Python's wall clock
moved by s seconds (`time.time`, and `django.utils.timezone.now`, which reads `datetime.now` itself); PostgreSQL's
clock is not moved. tests/worker/crash_app.py imports it, so the Celery workers and the reliability experiments'
child processes started with that variable run on a skewed clock (issue 19, defect 4). Production never imports it.
"""

import datetime as dt
import os
import time

from django.utils import timezone

ENV = "HARNESS_TEST_CLOCK_SKEW_SECONDS"


def install() -> float:
    """Shift this process's wall clock by the variable's seconds (none: nothing changes); the shift."""
    seconds = float(os.environ.get(ENV) or 0)
    if seconds:
        real_time, real_now, shift = time.time, timezone.now, dt.timedelta(seconds=seconds)
        time.time = lambda: real_time() + seconds
        timezone.now = lambda: real_now() + shift
    return seconds


SKEW_SECONDS = install()
