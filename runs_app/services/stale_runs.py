"""Runs whose agent stopped renewing its lease (issue 32, part 5): shown as stale (runs_app.selectors.runs.
stale_runs) and, once stale for longer than their project's grace, failed with the reason recorded.

The end goes through run_transition, as every other door's move does, so its event, the run's webhook and the
audit entry follow as they do for a person's `fail`. An agent that renews its lease in the meantime wins: the run
is locked and read again before it is ended, and a run no longer stale past its grace is left alone.
"""

import datetime as dt
import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from harness.actors import Actor, ActorKind
from harness.audit import audit_record
from harness.models import Project
from runs_app.models import FailureCategory, Run, RunStatus
from runs_app.selectors.runs import stale_runs
from runs_app.services.runs import run_transition

log = logging.getLogger(__name__)
STALE_ACTOR = Actor(ActorKind.WORKER, "stale-runs")
ENDED_STALE = "run.ended_stale"


def project_stale_grace(project: Project) -> dt.timedelta:
    """How long a run of `project` may stay past its expired lease: the project's own grace, else the default."""
    seconds = project.stale_run_grace_seconds
    return dt.timedelta(seconds=seconds if seconds is not None else settings.HARNESS_STALE_RUN_GRACE)


def runs_end_stale(*, now: dt.datetime | None = None) -> int:
    """Fail every run stale for longer than its project's grace at `now`; how many were ended."""
    now = now or timezone.now()
    ended = 0
    project_ids = stale_runs(Run.objects.all(), now=now).values_list("project_id", flat=True).distinct()
    for project in Project.objects.filter(pk__in=list(project_ids)).order_by("pk"):
        grace = project_stale_grace(project)
        due = stale_runs(Run.objects.filter(project=project), now=now - grace)
        for run_id in due.order_by("pk").values_list("pk", flat=True):
            ended += _end_one(project, run_id, now=now, grace=grace)
    # A periodic job logs at DEBUG unless it did something.
    log.log(logging.INFO if ended else logging.DEBUG, "stale runs ended: %d", ended)
    return ended


def _end_one(project: Project, run_id: int, *, now: dt.datetime, grace: dt.timedelta) -> int:
    with transaction.atomic():
        run = stale_runs(Run.objects.filter(project=project), now=now - grace).select_for_update(
            of=("self",)).filter(pk=run_id).first()
        if run is None:  # renewed, or moved by someone else, since the list was read
            return 0
        expired = run.lease_expires_at
        if expired is None:  # stale_runs holds only runs with an expired lease: unreachable
            return 0
        reason = (f"stale: its lease (held by {run.lease_owner}) expired at {expired.isoformat()} and was not "
                  f"renewed within the project's grace of {int(grace.total_seconds())} s")
        data = {"reason": reason, "lease_owner": run.lease_owner, "lease_expired_at": expired.isoformat(),
                "grace_seconds": int(grace.total_seconds()), "version": run.version}
        moved = run_transition(project=project, run_id=run.pk, to=RunStatus.FAILED, expected_version=run.version,
                               actor=STALE_ACTOR, error={"by": STALE_ACTOR.label, "reason": reason, "stale": True},
                               failure_category=FailureCategory.TRANSIENT, events=[(ENDED_STALE, data)])
        audit_record(project=project, actor=STALE_ACTOR, action=ENDED_STALE, target=moved,
                     data={**data, "from": RunStatus.RUNNING, "to": RunStatus.FAILED})
    return 1
