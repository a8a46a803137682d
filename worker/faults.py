"""Named points in the resume where a test can inject a fault.

In production nothing is installed and `point()` does nothing. Tests and the reliability
experiments install a hook: tests/worker/crash_app.py is a Celery app whose hook kills the process
with SIGKILL (like `kill -9`) at the point its environment names.
"""

from collections.abc import Callable

_hook: Callable[[str], None] | None = None


def point(name: str) -> None:
    if _hook is not None:
        _hook(name)


def install(hook: Callable[[str], None] | None) -> None:
    """Call `hook(name)` at every named point from now on (None removes it)."""
    global _hook
    _hook = hook
