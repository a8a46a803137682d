"""gunicorn's settings for bin/serve (`--config python:config.gunicorn_conf`); the command line adds the rest.

Loaded by gunicorn's master before the application, so it imports no Django code.
"""

import os
from typing import Any

# Sync workers (one request at a time per process, one per core): bench scenario 5 measured them best for this
# API; the buffering proxy in front (nginx) absorbs slow clients, as gunicorn's docs ask for sync workers.
worker_class = "sync"
graceful_timeout = 20
timeout = 60
# gunicorn's own access log stays off: harness.ops.observe logs every request as JSON, with its request id.
accesslog = None
errorlog = "-"


def child_exit(server: Any, worker: Any) -> None:
    """A worker that exited takes its live gauges with it (prometheus_client's multiprocess mode); its counters
    and histograms stay in the totals, as a counter must."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]  # prometheus_client is untyped here
