"""Keeping a run's lease while a call that may outlast it runs (issue 19, defect 5).

DESIGN.md: "a call that may outlast the lease extends it while it runs". A tool call (and a node handler)
runs with no transaction open and may take longer than the lease; unrenewed, the lease would run out
mid-call and a second worker would take the run and call the tool again. `lease_kept` renews it from a
thread, every third of the lease, on that thread's own database connection (the renewal is
`run_heartbeat`: one conditional UPDATE, by the database's clock), and stops when the call returns.

A renewal that is refused (the lease was lost anyway: the worker was paused past it, say) stops the
renewals and is logged; the call cannot be taken back, so its result is still recorded, and the fenced
writes after it refuse, so the resume stops and whoever holds the run now continues it.
"""

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

from harness.http.errors import ConflictError, NotFoundError
from runs_app.services import run_heartbeat

log = logging.getLogger(__name__)


class LeaseKeeper(threading.Thread):
    """Renews one run's lease every `lease_seconds / 3` until `stop()`; `renewals` and `lost` say how it went."""

    def __init__(self, *, project_id: int, run_id: int, owner: str, lease_seconds: int) -> None:
        super().__init__(name=f"lease-keeper-{run_id}", daemon=True)
        self.project_id, self.run_id, self.owner, self.lease_seconds = project_id, run_id, owner, lease_seconds
        self.renewals = 0
        self.lost = ""  # the refusal's code once a renewal was refused
        self._stopping = threading.Event()

    def run(self) -> None:
        try:
            while not self._stopping.wait(self.lease_seconds / 3):
                try:
                    run_heartbeat(project=self.project_id, run_id=self.run_id, owner=self.owner,
                                  lease_seconds=self.lease_seconds)
                except (ConflictError, NotFoundError) as exc:
                    self.lost = exc.code
                    log.warning("run %s: the lease was lost during a call (%s); the writes after it will be "
                                "refused", self.run_id, exc.detail)
                    return
                except Exception:  # a database hiccup: the next renewal may pass, the lease has time left
                    log.exception("run %s: a lease renewal failed", self.run_id)
                    continue
                self.renewals += 1
        finally:
            connection.close()  # this thread's own connection

    def stop(self) -> None:
        self._stopping.set()
        # Bounded: a renewal stuck on the database must not hold the call's result back for ever.
        self.join(timeout=max(self.lease_seconds, 5))


@contextmanager
def lease_kept(*, project_id: int, run_id: int, owner: str, lease_seconds: int) -> Iterator[LeaseKeeper]:
    """Renew the run's lease while the block runs (the call), and stop renewing when it ends."""
    keeper = LeaseKeeper(project_id=project_id, run_id=run_id, owner=owner, lease_seconds=lease_seconds)
    keeper.start()
    try:
        yield keeper
    finally:
        keeper.stop()
