"""Who a worker is, and whether another worker's lease on a run is live.

Lease times are the database's clock (runs_app.services writes them with the claim); a worker's
owner string names its host, process and a nonce, so two processes never share a lease.
"""

import logging
import os
import uuid

from django.db.models.functions import Now

from runs_app.models import (
    Run,
)
from runs_app.resume_due import WORKER_OWNER_PREFIX

log = logging.getLogger(__name__)


def worker_owner(hostname: str = "") -> str:
    host = hostname or os.uname().nodename
    return f"{WORKER_OWNER_PREFIX}{host}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def leased_by_another(run: Run, owner: str) -> bool:
    """Whether another owner's lease on the run is live now, by the database's clock (read afresh: only the
    resume at its attempt limit asks, so the read costs nothing on the usual path)."""
    if not run.lease_owner or run.lease_owner == owner:
        return False
    return Run.objects.filter(pk=run.pk, lease_owner=run.lease_owner, lease_expires_at__gt=Now()).exists()
