"""A worker's log is not buried under its periodic tasks (harness.ops.logs.QuietPeriodicTasks): beat's sweep, heartbeat
and recovery pass log their routine lines at DEBUG, and at INFO only when they did something."""

import json
import logging

import pytest

from harness.actors import Actor
from harness.ops.logs import QuietPeriodicTasks, did_something
from notify_app.models import DeliveryStatus, WebhookDelivery
from notify_app.services import webhook_register
from tests import factories
from tests.worker.support import wait_for

pytestmark = pytest.mark.worker


def _lines(log: str) -> list[dict]:
    return [json.loads(line) for line in log.splitlines() if line.startswith("{")]


def _about(lines: list[dict], task: str) -> list[dict]:
    return [line for line in lines if task in line.get("message", "")]


def test_a_periodic_task_is_quiet_until_it_does_something(workers, fake_service) -> None:  # type: ignore[no-untyped-def]
    worker = workers.start("quiet", extra_env={"HARNESS_WEBHOOK_SWEEP_SECONDS": "1", "LOG_FORMAT": "json"})
    # Idle sweeps: beat sends one a second and the worker runs each; none of it is said at INFO.
    wait_for(lambda: WebhookDelivery.objects.count() == 0 and worker.log().count("\n") > 5, what="a running worker")
    project = factories.make_project("quiet")
    hook = webhook_register(project=project, url=fake_service.url, events=["run.status_changed"],
                            actor=Actor.for_agent("coder"))
    delivery = WebhookDelivery.objects.create(project=project, webhook=hook, url=hook.url, event="run.status_changed",
                                              payload={"event": "run.status_changed", "data": {}})
    wait_for(lambda: WebhookDelivery.objects.get(pk=delivery.pk).status == DeliveryStatus.DELIVERED,
             timeout=30, what="the sweep to send the delivery")
    lines = _lines(worker.log())
    sweeps = _about(lines, "notify.send_due")
    # The one sweep that found the delivery says so, with its count; the idle ones said nothing.
    assert [line["message"] for line in sweeps if "succeeded" in line["message"]] and all(
        line["message"].endswith(": 1") for line in sweeps), sweeps
    assert not [line for line in sweeps if "received" in line["message"] or "Sending due task" in line["message"]]
    assert not _about(lines, "worker.heartbeat")
    # What is not periodic keeps its lines: the delivery the sweep sent was received and succeeded at INFO.
    assert any("notify.deliver_webhook" in line["message"] and "succeeded" in line["message"] for line in lines)


def _record(name: str, msg: str, args: object) -> logging.LogRecord:
    return logging.LogRecord(name, logging.INFO, __file__, 1, msg, args, None)  # type: ignore[arg-type]


@pytest.mark.parametrize(("value", "did"), [
    (0, False), (3, True), (None, False), (12.5, False), ([], False), ([7], True),
    ({"resumed": [], "expired": []}, False), ({"resumed": [4]}, True),
    ({"acme": {"items": 0, "runs": 0}}, False), ({"acme": {"items": 0, "runs": 2}}, True),
])
def test_what_counts_as_having_done_something(value: object, did: bool) -> None:
    assert did_something(value) is did


def test_the_filter_lowers_only_a_periodic_tasks_routine_lines(settings) -> None:  # type: ignore[no-untyped-def]
    quiet = QuietPeriodicTasks()
    trace = "Task %(name)s[%(id)s] succeeded in %(runtime)ss: %(return_value)s"
    idle = _record("celery.app.trace", trace, {"name": "notify.send_due", "id": "x", "runtime": 0.01,
                                               "return_value": "0"})
    busy = _record("celery.app.trace", trace, {"name": "notify.send_due", "id": "y", "runtime": 0.01,
                                               "return_value": "2"})
    other = _record("celery.app.trace", trace, {"name": "worker.resume_run", "id": "z", "runtime": 0.01,
                                                "return_value": "None"})
    beat = _record("celery.beat", "Scheduler: Sending due task %s (%s)", ("send-webhooks", "notify.send_due"))
    root = logging.getLogger()
    level = root.level
    try:
        root.setLevel(logging.INFO)
        assert not quiet.filter(idle) and not quiet.filter(beat)
        assert quiet.filter(busy) and busy.levelno == logging.INFO
        assert quiet.filter(other) and other.levelno == logging.INFO
        root.setLevel(logging.DEBUG)  # LOG_LEVEL=DEBUG: the routine lines are there, as DEBUG lines
        idle.levelno = logging.INFO
        assert quiet.filter(idle) and idle.levelname == "DEBUG"
    finally:
        root.setLevel(level)
