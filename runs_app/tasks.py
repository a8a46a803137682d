"""Celery tasks: thin, take ids, call a service. The resume pipeline lives in runs_app.resume."""

import logging

from celery import shared_task

log = logging.getLogger(__name__)


def enqueue_resume(run_id: int) -> None:
    """Send the resume message; a broker failure is logged, and the recovery pass finds the run later."""
    try:
        resume_run.delay(run_id)
    except Exception:  # noqa: BLE001 - the database, not the broker, is the source of truth
        log.exception("could not enqueue the resume of run %s; the recovery pass will pick it up", run_id)


@shared_task(name="runs_app.resume_run", bind=True, acks_late=True, reject_on_worker_lost=True)
def resume_run(self, run_id: int) -> str:  # type: ignore[no-untyped-def]
    from runs_app.resume import resume_run_by_id, worker_owner

    return resume_run_by_id(run_id, owner=worker_owner(self.request.hostname or ""))


@shared_task(name="runs_app.recovery_pass", acks_late=True, reject_on_worker_lost=True)
def recovery_pass() -> dict:
    from runs_app.recovery import recovery_pass as run_recovery_pass

    return run_recovery_pass()
