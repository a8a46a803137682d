"""Named points in the resume where a test can inject a fault: the kernel's hook (harness.ops.faults).

In production nothing is installed and `point()` does nothing. tests/worker/crash_app.py is a Celery app
whose hook kills the process with SIGKILL (like `kill -9`) at the point its environment names.
"""

from harness.ops.faults import install, point

__all__ = ["install", "point"]
