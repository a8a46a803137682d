"""Who a worker is, and whether another worker's lease on a run is live.

Lease times are the database's clock (runs_app.services writes them with the claim); a worker's
owner string names its host, process and a nonce, so two processes never share a lease.
"""

import logging
import os
import uuid

from django.utils import timezone

from runs_app.models import (
    Run,
)

log = logging.getLogger(__name__)


WORKER_OWNER_PREFIX = "worker:"


def worker_owner(hostname: str = "") -> str:
    host = hostname or os.uname().nodename
    return f"{WORKER_OWNER_PREFIX}{host}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def leased_by_another(run: Run, owner: str) -> bool:
    return bool(run.lease_owner) and run.lease_owner != owner and run.lease_expires_at is not None and (
        run.lease_expires_at > timezone.now())
