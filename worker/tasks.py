"""Celery tasks: thin, take ids, call the worker's functions. The pipeline is worker.pipeline."""

import logging
import time
from typing import Any

from celery import Task, shared_task
from celery.signals import worker_init
from django.core.exceptions import ImproperlyConfigured

from harness.ops import logs
from harness.ops.task_observe import SENT_AT_HEADER
from runs_app.signals import resume_requested
from worker.handlers import check_configuration
from worker.heartbeat import worker_heartbeat_record
from worker.lease import worker_owner
from worker.metrics import RESUME_DURATION, RESUMES
from worker.pipeline import resume_run_by_id
from worker.recovery import recovery_pass as run_recovery_pass
from worker.state import ResumeOutcome

log = logging.getLogger(__name__)

RESUME_TASK = "worker.resume_run"
RECOVERY_TASK = "worker.recovery_pass"
HEARTBEAT_TASK = "worker.heartbeat"


def enqueue_resume(run_id: int) -> None:
    """Send the resume message; a broker failure is logged, and the recovery pass finds the run later."""
    try:
        resume_run.delay(run_id)
    except Exception:  # any broker failure: the database, not the broker, is the source of truth
        log.exception("could not enqueue the resume of run %s; the recovery pass will pick it up", run_id)


def _on_resume_requested(sender: Any, run_id: int, **kwargs: Any) -> None:
    enqueue_resume(run_id)  # looked up at call time, so a test can replace it


resume_requested.connect(_on_resume_requested, dispatch_uid="worker.enqueue_resume")


@worker_init.connect
def _check_configuration_at_start(sender: Any = None, **kwargs: Any) -> None:
    """A node handler or tool adapter that does not import stops the worker here, at start, with the
    path and the error, instead of a resume that waits for an agent that never comes."""
    try:
        checked = check_configuration()
    except ImproperlyConfigured as exc:
        log.critical("the worker cannot start: %s", exc)
        # SystemExit, not the exception itself: Celery logs and swallows an Exception from a signal handler.
        raise SystemExit(f"the worker cannot start: {exc}") from exc
    log.info("worker configuration checked: %s", ", ".join(checked) or "no tools, no node handlers")


@shared_task(name=RESUME_TASK, bind=True, acks_late=True, reject_on_worker_lost=True)
def resume_run(self: Task[[int], str], run_id: int) -> str:
    started, outcome = time.perf_counter(), ResumeOutcome.ERROR
    logs.bind(run=run_id)
    try:
        outcome = resume_run_by_id(run_id, owner=worker_owner(self.request.hostname or ""))
        return outcome
    finally:
        RESUMES.labels(outcome).inc()
        RESUME_DURATION.labels(outcome).observe(time.perf_counter() - started)


@shared_task(name=HEARTBEAT_TASK, bind=True, ignore_result=True)
def heartbeat(self: Task[[], float], sent_at: float | None = None) -> float:
    # The time of sending rides in the message's headers (harness.ops.task_observe); an argument is accepted too.
    header = getattr(self.request, SENT_AT_HEADER, None)
    return worker_heartbeat_record(hostname=self.request.hostname or "worker",
                                   sent_at=sent_at if sent_at is not None else header)


@shared_task(name=RECOVERY_TASK, acks_late=True, reject_on_worker_lost=True)
def recovery_pass() -> dict[str, list[int]]:
    return run_recovery_pass(enqueue=enqueue_resume)
