"""The production WSGI app with a fault hook installed, for the experiments that kill gunicorn mid-request
(reliability/faults.py, experiment 19). Production never imports this.

A request names what should happen to it in test-only headers, so a client's retry (sent without them)
runs normally:
- `X-Harness-Crash-At: <point>`: the worker process kills itself with SIGKILL (like `kill -9`) there;
- `X-Harness-Pause-At: <point>` (+ `X-Harness-Pause-Seconds`): it sleeps there, a window for an outside
  `kill -9` at a random moment.
The points are harness.http.idempotency's (`idempotency.after_reserve`, `.after_view`, `.before_commit`) and this
module's `response.before_send`: the app has returned (everything committed), nothing is sent yet.
"""

import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from config.wsgi import application as _django
from harness.ops import faults

_request = threading.local()


def _hook(name: str) -> None:
    environ: dict[str, Any] = getattr(_request, "environ", None) or {}
    if environ.get("HTTP_X_HARNESS_CRASH_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
    if environ.get("HTTP_X_HARNESS_PAUSE_AT") == name:
        time.sleep(float(environ.get("HTTP_X_HARNESS_PAUSE_SECONDS") or 0.3))


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    _request.environ = environ
    try:
        response = _django(environ, start_response)
        faults.point("response.before_send")
        return response
    finally:
        _request.environ = None


faults.install(_hook)
