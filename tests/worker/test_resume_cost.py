"""What one resume costs the database: a guard against the pipeline growing its round trips back.

An approval-mode resume of an agent-driven run is four transactions (the start count; load up to
the dispatch, committed before the call; the delivery; the binding with the checkpoint and metrics)
and about thirty statements. The trace is still one `resume.<step>` event per step, gap-free.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import connection

from harness.actors import Actor
from runs_app.models import Checkpoint, EffectStatus, ExternalEffect, Run, RunEvent, RunStatus
from runs_app.services import approval_request_create, checkpoint_create, run_transition
from tests import factories
from tests.worker.support import approve, reviewer
from worker.pipeline import resume_run_by_id
from worker.registry import STEP_NAMES

MAX_STATEMENTS = 25
MAX_COMMITS = 4


@dataclass
class DatabaseCost:
    statements: list[str] = field(default_factory=list)
    commits: int = 0  # transactions committed: atomic blocks, and statements run in autocommit mode

    def __call__(self, execute: Callable, sql: str, params: Any, many: bool, context: dict) -> Any:
        self.statements.append(sql)
        if not connection.in_atomic_block:
            self.commits += 1
        return execute(sql, params, many, context)


@contextmanager
def database_cost(monkeypatch: pytest.MonkeyPatch) -> Iterator[DatabaseCost]:
    cost = DatabaseCost()
    commit = connection.commit

    def counted_commit() -> None:
        cost.commits += 1
        commit()

    monkeypatch.setattr(connection, "commit", counted_commit)
    with connection.execute_wrapper(cost):
        yield cost
    monkeypatch.undo()


def _agent_run_waiting_for_approval(project) -> Run:  # type: ignore[no-untyped-def]
    """As bench scenario 7: an agent-driven run at its gate, checkpointed, with a pending approval."""
    run = factories.make_run(project, cursor={"node": "publish"})
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None,
                   updates={"current_node": "publish"})
    arguments = {"chapter": 1, "title": "One"}
    checkpoint_create(project=project, run_id=run.pk, label="before publish", cursor={"node": "publish"},
                      pending_gate={"tool": "publish_chapter", "arguments": arguments})
    approval_request_create(project=project, run_id=run.pk, tool="publish_chapter", arguments=arguments,
                            idempotency_key=f"k-{run.pk}", actor=Actor.for_agent("a"))
    return Run.objects.get(pk=run.pk)


def test_an_approval_resume_of_an_agent_run_takes_four_transactions_and_about_thirty_statements(
    transactional_db, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    # Real commits are what is counted, so no test transaction wraps this; the resume message the
    # decision queues on commit is not sent (the resume is called here, in this process).
    monkeypatch.setattr("worker.tasks.enqueue_resume", lambda run_id: None)
    project = factories.make_project("cost")
    run = _agent_run_waiting_for_approval(project)
    before = Run.objects.values_list("last_checkpoint_id", "last_event_seq").get(pk=run.pk)
    approve(run, reviewer(project))
    seq_before = Run.objects.values_list("last_event_seq", flat=True).get(pk=run.pk)

    with database_cost(monkeypatch) as cost:
        assert resume_run_by_id(run.pk, owner="worker:test:1") == "done"

    assert len(cost.statements) <= MAX_STATEMENTS, "\n".join(cost.statements)
    assert cost.commits <= MAX_COMMITS
    # Cheaper, and still the whole job: the result bound with its receipt, a new checkpoint, the
    # lease back to the agent, one trace event per step and a gap-free event log.
    run.refresh_from_db()
    effect = ExternalEffect.objects.get(run=run)
    assert run.status == RunStatus.RUNNING and (run.lease_owner, run.pending_approval_id) == ("", None)
    assert (effect.status, effect.attempts, run.bound_result["receipt"]) == (EffectStatus.CONSUMED, 1, effect.receipt)
    assert run.last_checkpoint_id != before[0]
    assert Checkpoint.objects.get(pk=run.last_checkpoint_id).parent_id == before[0]
    assert (run.metrics["starts"], run.metrics["attempts"], run.metrics["pipeline_steps"]) == (1, 1, len(STEP_NAMES))
    new_events = list(RunEvent.objects.filter(run=run, seq__gt=seq_before).order_by("seq"))
    assert [e.seq for e in new_events] == list(range(seq_before + 1, run.last_event_seq + 1))
    traced = [e for e in new_events if e.kind.startswith("resume.")]
    assert [e.kind for e in traced] == [f"resume.{name}" for name in STEP_NAMES]
    assert all(e.data["ok"] and e.data["owner"] == "worker:test:1" for e in traced)
