"""Fencing and compare-and-set are not optional (issue 30, part 3), door by door.

Every write a lease holder makes to a run is fenced on the lease (runs_app.fencing): while the run holds a lease, a
write that names no owner, null, or a stale one is refused 409 `lease_lost` and writes nothing, whatever version it
sends. Every state-changing door takes `expected_version`: a version the record is not at is refused 409
`version_conflict` and writes nothing; where the schema says it is required, a body without one is 400.
"""

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.utils import timezone

from harness.actors import Actor
from memory_app.models import MemoryRecord, MemoryWritePolicy
from memory_app.services import memory_write
from runs_app import services as run_services
from runs_app.models import ApprovalRequest, Checkpoint, Handoff, Run, RunEvent, Task
from sessions_app.models import Session
from tests import factories
from tests.api.conftest import ApiClient, World

OWNER = "agent-A"


def _leased_run(w: World) -> Run:
    """A running run of the world's session, claimed by OWNER, with a first checkpoint."""
    run = factories.make_run(w.project, w.session, task_id=w.task.pk)
    run_services.run_transition(project=w.project, run_id=run.pk, to="running", expected_version=None)
    run_services.checkpoint_create(project=w.project, run_id=run.pk, label="first")
    run_services.run_claim(project=w.project, run_id=run.pk, owner=OWNER, lease_seconds=300)
    return Run.objects.get(pk=run.pk)


def _soon() -> str:
    return (timezone.now() + dt.timedelta(hours=1)).isoformat()


@dataclass(frozen=True)
class FencedDoor:
    """A lease holder's write to `run`: its path and body (`owner` is the lease_owner to send, or absent)."""

    name: str
    path: Callable[[Run], str]
    body: Callable[[Run, World], dict[str, Any]]
    ok: int = 200


_ABSENT = object()

FENCED_DOORS = [
    FencedDoor("runs_transition", lambda r: f"/api/v1/runs/{r.pk}/transition/",
               lambda r, w: {"to": "succeeded", "expected_version": r.version}),
    FencedDoor("runs_usage_report", lambda r: f"/api/v1/runs/{r.pk}/usage/",
               lambda r, w: {"tokens": 10, "cost": "0.0010"}),
    FencedDoor("run_events_append", lambda r: f"/api/v1/runs/{r.pk}/events/",
               lambda r, w: {"kind": "note", "data": {"n": 1}}, 201),
    FencedDoor("checkpoints_create", lambda r: "/api/v1/checkpoints/",
               lambda r, w: {"run": r.pk, "parent": r.last_checkpoint_id, "label": "second"}, 201),
    FencedDoor("approvals_request", lambda r: f"/api/v1/runs/{r.pk}/approvals/",
               lambda r, w: {"tool": "publish", "arguments": {"n": 1}, "idempotency_key": f"pub-{r.pk}"}, 201),
    FencedDoor("handoffs_issue", lambda r: f"/api/v1/runs/{r.pk}/handoffs/",
               lambda r, w: {"receiver_session": w.session.pk, "objective": "Review.",
                             "output_schema": {"type": "object"}, "deadline": _soon()}, 201),
]
FENCED_IDS = [d.name for d in FENCED_DOORS]


def _written(run: Run) -> tuple[Any, ...]:
    """Everything a fenced write could have written to the run or beside it."""
    current = Run.objects.get(pk=run.pk)
    return (current.status, current.version, current.last_event_seq, current.tokens_used,
            current.last_checkpoint_id, current.lease_owner,
            RunEvent.objects.filter(run=run).count(), Checkpoint.objects.filter(run=run).count(),
            ApprovalRequest.objects.filter(run=run).count(), Handoff.objects.filter(origin_run=run).count())


def _send(w: World, door: FencedDoor, run: Run, owner: Any) -> Any:
    body = door.body(run, w)
    if owner is not _ABSENT:
        body["lease_owner"] = owner
    return w.agent.post(door.path(run), body)


@pytest.mark.django_db
@pytest.mark.parametrize("owner", [_ABSENT, None, "agent-A-before-restart"], ids=["omitted", "null", "stale"])
@pytest.mark.parametrize("door", FENCED_DOORS, ids=FENCED_IDS)
def test_a_leased_run_refuses_a_write_without_its_lease_owner(door: FencedDoor, owner: Any, world: World) -> None:
    run = _leased_run(world)
    before = _written(run)
    response = _send(world, door, run, owner)
    assert response.status_code == 409, response.content
    assert response.json()["code"] == "lease_lost"
    assert _written(run) == before


@pytest.mark.django_db
@pytest.mark.parametrize("door", FENCED_DOORS, ids=FENCED_IDS)
def test_the_lease_owner_writes(door: FencedDoor, world: World) -> None:
    run = _leased_run(world)
    response = _send(world, door, run, OWNER)
    assert response.status_code == door.ok, response.content


@pytest.mark.django_db
@pytest.mark.parametrize("door", FENCED_DOORS, ids=FENCED_IDS)
def test_an_expired_lease_not_yet_released_still_fences(door: FencedDoor, world: World) -> None:
    run = _leased_run(world)
    Run.objects.filter(pk=run.pk).update(lease_expires_at=timezone.now() - dt.timedelta(seconds=5))
    run = Run.objects.get(pk=run.pk)
    before = _written(run)
    for owner in (_ABSENT, OWNER):  # neither the silent caller nor the owner whose lease ran out
        response = _send(world, door, run, owner)
        assert (response.status_code, response.json()["code"]) == (409, "lease_lost")
    assert _written(run) == before


@pytest.mark.django_db
@pytest.mark.parametrize("door", FENCED_DOORS, ids=FENCED_IDS)
def test_a_run_that_holds_no_lease_takes_a_write_naming_none_and_refuses_an_owner(door: FencedDoor,
                                                                                   world: World) -> None:
    run = _leased_run(world)
    assert run_services.run_release(project=world.project, run_id=run.pk, owner=OWNER)
    run = Run.objects.get(pk=run.pk)
    before = _written(run)
    refused = _send(world, door, run, OWNER)  # the lease it names is not held
    assert (refused.status_code, refused.json()["code"]) == (409, "lease_lost")
    assert _written(run) == before
    assert _send(world, door, run, None).status_code == door.ok


@pytest.mark.django_db
def test_a_stale_owner_with_a_stale_version_is_told_its_lease_is_lost(world: World) -> None:
    """One cause, one code: the transition answers lease_lost as the checkpoint and usage doors do, whatever
    version it sent (it used to be guard_failed)."""
    run = _leased_run(world)
    before = _written(run)
    for version in (run.version, run.version - 1):
        response = world.agent.post(f"/api/v1/runs/{run.pk}/transition/",
                                    {"to": "succeeded", "expected_version": version, "lease_owner": "someone"})
        assert (response.status_code, response.json()["code"]) == (409, "lease_lost")
    assert _written(run) == before
    stale = world.agent.post(f"/api/v1/runs/{run.pk}/transition/",
                             {"to": "succeeded", "expected_version": run.version - 1, "lease_owner": OWNER})
    assert (stale.status_code, stale.json()["code"]) == (409, "version_conflict")
    assert _written(run) == before


@pytest.mark.django_db
def test_an_event_retried_after_its_lease_went_gets_its_first_reply(world: World) -> None:
    run = _leased_run(world)
    body = {"kind": "note", "data": {"n": 1}, "lease_owner": OWNER}
    first = world.agent.post(f"/api/v1/runs/{run.pk}/events/", body, HTTP_IDEMPOTENCY_KEY="ev-1")
    run_services.run_release(project=world.project, run_id=run.pk, owner=OWNER)
    again = world.agent.post(f"/api/v1/runs/{run.pk}/events/", body, HTTP_IDEMPOTENCY_KEY="ev-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"


# --- compare-and-set on every state-changing door ---------------------------------------------------------


@dataclass(frozen=True)
class CasDoor:
    """A state-changing door: who calls it, the path of its record, the body at a version, the record's version."""

    name: str
    caller: Callable[[World], ApiClient]
    record: Callable[[World], Any]
    path: Callable[[Any], str]
    body: Callable[[Any, World], dict[str, Any]]
    written: Callable[[Any], tuple[Any, ...]]


def _held(w: World) -> MemoryRecord:
    MemoryWritePolicy.objects.get_or_create(project=w.project, scope="user", defaults={"decision": "hold"})
    record = memory_write(project=w.project, actor=Actor.for_agent("acme-agent"), scope="user", scope_key="u-1",
                          content="Held fact.", source_run_id=w.run.pk).record
    assert record is not None and record.status == "held"
    return record


def _live(w: World) -> MemoryRecord:
    record = memory_write(project=w.project, actor=Actor.for_agent("acme-agent"), scope="project",
                          content="Live fact.", source_run_id=w.run.pk).record
    assert record is not None
    return record


def _handoff(w: World, accepted: bool = False) -> Handoff:
    origin = factories.make_run(w.project, w.session)
    run_services.run_transition(project=w.project, run_id=origin.pk, to="running", expected_version=None)
    receiver = factories.make_session(w.project, role="semantic_reviewer", memory_policy="none")
    handoff = run_services.handoff_issue(
        project=w.project, origin_run_id=origin.pk, receiver_session_id=receiver.pk, objective="Review.",
        inputs=[], allowed_capabilities=[], output_schema={"type": "object"},
        deadline=timezone.now() + dt.timedelta(hours=1), actor=Actor.for_agent("seed"))
    if accepted:
        handoff = run_services.handoff_accept(project=w.project, handoff_id=handoff.pk,
                                              receiver_run_id=factories.make_run(w.project, receiver).pk,
                                              actor=Actor.for_agent("seed"))
    return handoff


def _row(model: Any, *fields: str) -> Callable[[Any], tuple[Any, ...]]:
    return lambda obj: tuple(model.objects.filter(pk=obj.pk).values_list(*fields).get())


_SESSION = _row(Session, "status", "version")
_TASK = _row(Task, "status", "version")
_APPROVAL = _row(ApprovalRequest, "status", "version", "decided_by")
_HANDOFF = _row(Handoff, "status", "version", "result_hash")
_RECORD = _row(MemoryRecord, "status", "version", "expires_at", "superseded_by")

CAS_DOORS = [
    CasDoor("sessions_transition", lambda w: w.agent, lambda w: w.session,
            lambda s: f"/api/v1/sessions/{s.pk}/transition/", lambda s, w: {"to": "running"}, _SESSION),
    CasDoor("tasks_transition", lambda w: w.agent, lambda w: w.task,
            lambda t: f"/api/v1/tasks/{t.pk}/transition/", lambda t, w: {"to": "active"}, _TASK),
    CasDoor("approvals_decide", lambda w: w.reviewer, lambda w: w.approval,
            lambda a: f"/api/v1/approvals/{a.pk}/decision/", lambda a, w: {"decision": "approve"}, _APPROVAL),
    CasDoor("handoffs_accept", lambda w: w.agent, _handoff,
            lambda h: f"/api/v1/handoffs/{h.pk}/accept/", lambda h, w: {}, _HANDOFF),
    CasDoor("handoffs_return", lambda w: w.agent, lambda w: _handoff(w, accepted=True),
            lambda h: f"/api/v1/handoffs/{h.pk}/return/",
            lambda h, w: {"packet_fingerprint": h.packet_fingerprint, "result": {"ok": True}}, _HANDOFF),
    CasDoor("handoffs_cancel", lambda w: w.agent, _handoff,
            lambda h: f"/api/v1/handoffs/{h.pk}/cancel/", lambda h, w: {"reason": "Not needed."}, _HANDOFF),
    CasDoor("memory_records_supersede", lambda w: w.operator, _live,
            lambda r: f"/api/v1/memory/records/{r.pk}/supersede/",
            lambda r, w: {"content": "New fact.", "reason": "r"}, _RECORD),
    CasDoor("memory_records_review", lambda w: w.operator, _held,
            lambda r: f"/api/v1/memory/records/{r.pk}/review/", lambda r, w: {"decision": "approve"}, _RECORD),
    CasDoor("memory_records_expire", lambda w: w.operator, _live,
            lambda r: f"/api/v1/memory/records/{r.pk}/expire/", lambda r, w: {}, _RECORD),
    CasDoor("memory_records_delete", lambda w: w.operator, _live,
            lambda r: f"/api/v1/memory/records/{r.pk}/delete/", lambda r, w: {"reason": "r"}, _RECORD),
]
CAS_IDS = [d.name for d in CAS_DOORS]


@pytest.mark.django_db
@pytest.mark.parametrize("door", CAS_DOORS, ids=CAS_IDS)
def test_a_version_the_record_is_not_at_is_refused_and_nothing_is_written(door: CasDoor, world: World) -> None:
    record = door.record(world)
    before = door.written(record)
    for version in [v for v in (record.version - 1, record.version + 1) if v >= 1]:
        response = door.caller(world).post(door.path(record), {**door.body(record, world),
                                                               "expected_version": version})
        assert response.status_code == 409, response.content
        assert response.json()["code"] == "version_conflict"
        assert response.json()["current_version"] == record.version
    assert door.written(record) == before


@pytest.mark.django_db
@pytest.mark.parametrize("door", CAS_DOORS, ids=CAS_IDS)
def test_a_state_change_without_the_version_read_is_refused(door: CasDoor, world: World) -> None:
    record = door.record(world)
    before = door.written(record)
    response = door.caller(world).post(door.path(record), door.body(record, world))
    assert response.status_code == 400, response.content
    assert "expected_version" in response.json()["fields"]
    assert door.written(record) == before


@pytest.mark.django_db
@pytest.mark.parametrize("door", CAS_DOORS, ids=CAS_IDS)
def test_a_version_past_the_columns_range_is_bad_input_not_a_server_error(door: CasDoor, world: World) -> None:
    """Versions are PostgreSQL integers: 2**31 and up is refused 400 naming the field (the schema fuzz of
    bin/reliability once sent 10**18 + 1 to a decision, which reached the prepared statement and answered 500)."""
    record = door.record(world)
    before = door.written(record)
    for version in (2**31, 10**18 + 1):
        response = door.caller(world).post(door.path(record), {**door.body(record, world),
                                                               "expected_version": version})
        assert response.status_code == 400, response.content
        assert "expected_version" in response.json()["fields"]
    assert door.written(record) == before


@pytest.mark.django_db
@pytest.mark.parametrize("door", CAS_DOORS, ids=CAS_IDS)
def test_the_version_read_moves_the_record(door: CasDoor, world: World) -> None:
    record = door.record(world)
    response = door.caller(world).post(door.path(record), {**door.body(record, world),
                                                           "expected_version": record.version})
    assert response.status_code in (200, 201), response.content
    assert door.written(record)[1] == record.version + 1


@pytest.mark.django_db
def test_expiring_a_record_that_is_no_longer_live_is_not_expirable_at_any_version(world: World) -> None:
    """A lost race (version_conflict, above) and a dead record (not_expirable) answer apart."""
    record = _live(world)
    deleted = world.operator.post(f"/api/v1/memory/records/{record.pk}/delete/",
                                  {"expected_version": record.version, "reason": "r"})
    assert deleted.status_code == 200
    version = deleted.json()["version"]
    response = world.operator.post(f"/api/v1/memory/records/{record.pk}/expire/", {"expected_version": version})
    assert (response.status_code, response.json()["code"]) == (409, "not_expirable")


@pytest.mark.django_db
def test_the_schema_says_which_doors_a_version_less_caller_may_use(world: World) -> None:
    schema = world.agent.get("/api/schema/?format=json").json()
    operations = {op["operationId"]: op for ops in schema["paths"].values() for op in ops.values()
                  if isinstance(op, dict) and "operationId" in op}

    def body(operation: str) -> dict[str, Any]:
        ref = operations[operation]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        found: dict[str, Any] = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
        return found

    for operation in ("approvals_request", "handoffs_issue"):
        assert "expected_version" not in body(operation).get("required", [])
        assert "Optional:" in body(operation)["properties"]["expected_version"]["description"]
    for operation in ("sessions_transition", "tasks_transition", "runs_transition", "approvals_decide",
                      "handoffs_accept", "handoffs_return", "handoffs_cancel", "memory_records_supersede",
                      "memory_records_review", "memory_records_expire", "memory_records_delete"):
        assert "expected_version" in body(operation)["required"], operation
    for operation in ("runs_transition", "runs_usage_report", "run_events_append", "checkpoints_create",
                      "approvals_request", "handoffs_issue"):
        assert "lease_lost" in body(operation)["properties"]["lease_owner"]["description"], operation
