"""Every legal transition succeeds and every illegal pair raises, generated from the tables."""

from collections.abc import Callable
from itertools import product

import pytest
from django.db.models import Model, QuerySet

from harness.http.errors import ConflictError
from harness.transitions import StateMachine, cas_transition
from memory_app.models import MEMORY_MACHINE, MemoryRecord
from runs_app.machines import APPROVAL_MACHINE, EFFECT_MACHINE, RUN_MACHINE, TASK_MACHINE
from runs_app.models import ApprovalRequest, ExternalEffect, Run, Task
from sessions_app.models import SESSION_MACHINE, Session
from tests import factories

Maker = Callable[[object, str], Model]


def _session(project, status):
    return Session.objects.create(project=project, status=status)


def _run(project, status):
    run = factories.make_run(project)
    Run.objects.filter(pk=run.pk).update(status=status)
    return run


def _task(project, status):
    return Task.objects.create(project=project, objective="x", status=status)


def _approval(project, status):
    run = factories.make_run(project)
    extra = {}
    if status in ("approved", "rejected"):
        user = factories.make_user(f"u{ApprovalRequest.objects.count()}")
        extra = {"decided_by": user, "decided_at": "2026-01-01T00:00:00Z", "decision_reason": "r",
                 "approved_fingerprint": "f" * 64}
    return ApprovalRequest.objects.create(
        project=project, run=run, tool="t", arguments={}, action_fingerprint="a" * 64,
        idempotency_key=f"k{run.pk}", requested_by="agent", status=status, **extra,
    )


def _effect(project, status):
    n = ExternalEffect.objects.count()
    result_hash = "" if status in ("intended", "dispatched", "unknown", "refused", "abandoned") else "b" * 64
    answer = {"status": 422} if status == "refused" else None  # a refusal records the tool's answer
    return ExternalEffect.objects.create(
        project=project, idempotency_key=f"e{n}", tool="t", status=status, result_hash=result_hash, answer=answer
    )


def _memory(project, status):
    n = MemoryRecord.objects.count()
    extra = {"deleted_at": "2026-01-01T00:00:00Z"} if status == "deleted" else {}
    return MemoryRecord.objects.create(
        project=project, scope="project", content=f"fact {n}", content_hash=f"{n:064d}",
        provenance_kind="told", status=status, **extra,
    )


def _decision_fields(dst):
    # What the services write with a decision; the database refuses a decision without them.
    if dst not in ("approved", "rejected"):
        return {}
    user = factories.make_user(f"reviewer{ApprovalRequest.objects.count()}")
    return {"decided_by": user, "decided_at": "2026-01-01T00:00:00Z", "decision_reason": "r",
            "approved_fingerprint": "f" * 64}


def _effect_fields(dst):
    if dst == "refused":
        return {"answer": {"status": 422}}
    return {"result_hash": "c" * 64} if dst in ("delivered", "consumed", "conflict") else {}


def _memory_fields(dst):
    return {"deleted_at": "2026-01-01T00:00:00Z"} if dst == "deleted" else {}


def _none(dst):
    return {}


MACHINES: list[tuple[StateMachine, type[Model], Callable, Callable]] = [
    (SESSION_MACHINE, Session, _session, _none),
    (RUN_MACHINE, Run, _run, _none),
    (TASK_MACHINE, Task, _task, _none),
    (APPROVAL_MACHINE, ApprovalRequest, _approval, _decision_fields),
    (EFFECT_MACHINE, ExternalEffect, _effect, _effect_fields),
    (MEMORY_MACHINE, MemoryRecord, _memory, _memory_fields),
]

CASES = [
    pytest.param(machine, model, make, updates, src, dst, id=f"{machine.name}:{src}->{dst}")
    for machine, model, make, updates in MACHINES
    for src, dst in product(sorted(machine.states), sorted(machine.states))
]


@pytest.mark.django_db
@pytest.mark.parametrize(("machine", "model", "make", "updates", "src", "dst"), CASES)
def test_transition_follows_the_table(project, machine, model, make, updates, src, dst):
    row = make(project, src)
    version = model.objects.values_list("version", flat=True).get(pk=row.pk)
    queryset: QuerySet = model.objects.filter(project=project)
    if machine.can(src, dst):
        fields = updates(dst)
        guard = machine.guards.get((src, dst))
        if guard is not None:  # an edge reserved for one actor: closed to every door, and nothing written
            with pytest.raises(ConflictError) as refused:
                cas_transition(queryset, pk=row.pk, machine=machine, to=dst, expected_version=version, updates=fields)
            assert (refused.value.code, refused.value.current_status) == (guard.code, src)
            assert model.objects.values_list("status", "version").get(pk=row.pk) == (src, version)
        new_version = cas_transition(queryset, pk=row.pk, machine=machine, to=dst, expected_version=version,
                                     updates=fields, actor=guard.only if guard is not None else None)
        assert new_version == version + 1
        assert model.objects.values_list("status", "version").get(pk=row.pk) == (dst, version + 1)
    else:
        with pytest.raises(ConflictError) as caught:
            cas_transition(queryset, pk=row.pk, machine=machine, to=dst, expected_version=version, updates=updates(dst))
        assert caught.value.code == "illegal_transition"
        assert caught.value.current_status == src
        assert model.objects.values_list("status", "version").get(pk=row.pk) == (src, version)


def test_session_machine_is_exactly_the_seed():
    seed = {
        "created": {"running"},
        "running": {"idle", "awaiting_user", "awaiting_external", "completed", "failed", "terminated", "stale"},
        "idle": {"running", "completed", "terminated", "stale"},
        "awaiting_user": {"running", "failed", "terminated", "stale"},
        "awaiting_external": {"running", "failed", "terminated", "stale"},
        "failed": {"running", "terminated", "stale"},
        "completed": {"stale"},
        "stale": {"terminated"},
        "terminated": set(),
    }
    assert {src: set(dsts) for src, dsts in SESSION_MACHINE.table.items()} == seed


@pytest.mark.django_db
def test_stale_version_is_a_conflict_carrying_the_current_state(project):
    run = factories.make_run(project)
    queryset = Run.objects.filter(project=project)
    cas_transition(queryset, pk=run.pk, machine=RUN_MACHINE, to="running", expected_version=run.version)
    with pytest.raises(ConflictError) as caught:
        cas_transition(queryset, pk=run.pk, machine=RUN_MACHINE, to="succeeded", expected_version=run.version)
    assert caught.value.code == "version_conflict"
    assert (caught.value.current_status, caught.value.current_version) == ("running", run.version + 1)


@pytest.mark.django_db
def test_another_projects_row_is_missing_not_movable(project, other_project):
    from harness.http.errors import NotFoundError

    run = factories.make_run(project)
    with pytest.raises(NotFoundError):
        cas_transition(Run.objects.filter(project=other_project), pk=run.pk, machine=RUN_MACHINE,
                       to="running", expected_version=None)
    assert Run.objects.get(pk=run.pk).status == "created"


@pytest.mark.django_db
def test_a_transition_is_one_statement_and_returns_the_row_as_stored(project):
    """cas_transition_row: the UPDATE returns the written row (RETURNING), so nobody reads it back."""
    from django.db import connection
    from django.db.models import F
    from django.test.utils import CaptureQueriesContext

    from harness.transitions import cas_transition_row

    run = Run.objects.get(pk=factories.make_run(project).pk)
    with CaptureQueriesContext(connection) as queries:
        moved = cas_transition_row(Run.objects.filter(project=project), pk=run.pk, machine=RUN_MACHINE, to="running",
                                   expected_version=None, updates={"cursor": {"node": "draft"},
                                                                   "last_event_seq": F("last_event_seq") + 5})
    assert len(queries.captured_queries) == 1  # the write, and no read after it: the row below is what it returned
    stored = Run.objects.get(pk=run.pk)
    every_field = [f.attname for f in Run._meta.concrete_fields]
    assert [getattr(moved, name) for name in every_field] == [getattr(stored, name) for name in every_field]
    assert (moved.status, moved.version, moved.cursor, moved.last_event_seq) == (
        "running", run.version + 1, {"node": "draft"}, run.last_event_seq + 5)
    assert moved._state.adding is False


def test_a_guard_names_an_edge_of_its_table():
    from harness.transitions import Guard

    guard = Guard(only="worker", code="worker_only", detail="x")
    with pytest.raises(ValueError, match="guards no edge"):
        StateMachine.declare("m", "a", {"a": {"b"}, "b": set()}, guards={("b", "a"): guard})
    machine = StateMachine.declare("m", "a", {"a": {"b"}, "c": {"b"}, "b": set()}, guards={("a", "b"): guard})
    assert machine.sources_of("b") == {"c"}  # the guarded source is not among everyone else's
    assert machine.sources_of("b", "worker") == {"a", "c"}
    assert machine.sources_of("b", "agent") == {"c"}
    assert (machine.refusal("a", "b", None), machine.refusal("a", "b", "worker")) == (guard, None)


@pytest.mark.django_db
def test_a_guarded_edge_is_refused_by_the_write_itself_not_by_a_read_before_it(project):
    """The worker-only edge is closed in the UPDATE's WHERE: a refusal is that UPDATE and the one read
    that says why; the worker's move is the one UPDATE."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    run = factories.make_run(project)
    Run.objects.filter(pk=run.pk).update(status="waiting_approval")
    queryset = Run.objects.filter(project=project)
    with CaptureQueriesContext(connection) as queries, pytest.raises(ConflictError) as caught:
        cas_transition(queryset, pk=run.pk, machine=RUN_MACHINE, to="running", expected_version=None)
    assert caught.value.code == "worker_only_transition"
    assert caught.value.current_status == "waiting_approval"
    assert len(queries.captured_queries) == 2  # the refused write, and the one read that says why
    assert Run.objects.get(pk=run.pk).status == "waiting_approval"
    with CaptureQueriesContext(connection) as queries:
        cas_transition(queryset, pk=run.pk, machine=RUN_MACHINE, to="running", expected_version=None,
                       actor="worker")
    assert len(queries.captured_queries) == 1  # the write alone: nothing read before it
    assert Run.objects.get(pk=run.pk).status == "running"
