"""What one decision and one resume cost the database, pinned: a regression of either fails here.

Measured at deb381c (before issue 14's cut), at 7b4222f, at 49baee2, and now, on one approval -> resume cycle
of an agent-driven run whose approved tool the worker calls (bench scenario 7):

| | before | 7b4222f | 49baee2 | now |
|---|---:|---:|---:|---:|
| decision, `approval_decide` (statements / transactions) | 6 / 4 | 3 / 1 (+2 reads once per user) | 3 / 1 | 3 / 1 |
| decision, `POST /api/v1/approvals/{id}/decision/` (statements) | 14 | 10 | 10 | 10 |
| resume, approval executed by the worker (statements / transactions) | 25 / 4 | 17 / 4 | 13 / 4 | 12 / 4 |
| resume, `executor="agent"` (nothing called) | 17 / 3 | 10 / 3 | 9 / 3 | 9 / 3 |
| writes of the run's row in a resume (all transactions; in the binding one) | 12; 6 | 8; 3 | 8; 3 | 7; 3 |

The decision reads nothing before its one conditional UPDATE (the checks that need the row are in its
WHERE; a refused write reads it to say why), and the reviewer's groups and projects once per user
instance (harness.tenancy). The resume loads the run, its task, checkpoint, approval, reviewer, session
and the audit log's decision in one statement (worker.loading), renews no lease it has just taken, and
moves the run on with its trace and metrics in one prepared statement (runs_app.services.run_bind_result).
What is left: the start count; the claim; the context's two (memory_app.context: one prepared read of
everything the session's policy admits, one INSERT of the snapshot with its manifest); the effect's intent;
its dispatch with the pre-call trace (one statement); the delivery with the effect's own event and the
step's trace (one statement, atomic by itself: no BEGIN/COMMIT around it); the lock; the consumption with
its event (one statement); the checkpoint (its approval checked inside the write); the move. Fewer
statements, not fewer writes: the run's row is still written seven times (the trace and the effects' events
each take the run's next seqs). The transactions stay four: the start count before the load, the dispatch
before the call, the delivery, the binding (DESIGN.md, "Side effects").
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import connection

from harness.actors import Actor
from harness.models import AuditEntry, Membership
from runs_app.models import (
    ApprovalRequest,
    ApprovalStatus,
    Checkpoint,
    EffectStatus,
    ExternalEffect,
    Run,
    RunEvent,
    RunStatus,
)
from runs_app.services import approval_decide, approval_request_create, checkpoint_create, run_transition
from tests import factories
from tests.worker.support import approve, reviewer
from worker.pipeline import resume_run_by_id
from worker.registry import STEP_NAMES

RESUME_STATEMENTS, RESUME_COMMITS = 12, 4
AGENT_RESUME_STATEMENTS, AGENT_RESUME_COMMITS = 9, 3
DECISION_STATEMENTS = 3


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


def test_an_approval_resume_of_an_agent_run_takes_four_transactions_and_twelve_statements(
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

    assert (len(cost.statements), cost.commits) == (RESUME_STATEMENTS, RESUME_COMMITS), "\n".join(cost.statements)
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


def test_a_decision_is_three_statements_in_one_transaction(transactional_db, monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("worker.tasks.enqueue_resume", lambda run_id: None)
    project = factories.make_project("cost")
    first, second = _agent_run_waiting_for_approval(project), _agent_run_waiting_for_approval(project)
    rita = reviewer(project)
    approve(first, rita)  # the reviewer's groups and projects are read once per user instance

    with database_cost(monkeypatch) as cost:
        approval_decide(project=project.pk, approval_id=second.pending_approval_id, actor=Actor.for_user(rita),
                        decision="approve")

    assert (len(cost.statements), cost.commits) == (DECISION_STATEMENTS, 1), "\n".join(cost.statements)
    approval = ApprovalRequest.objects.get(pk=second.pending_approval_id)
    assert (approval.status, approval.approved_arguments, approval.approved_fingerprint, approval.decided_by_id) == (
        ApprovalStatus.APPROVED, approval.arguments, approval.action_fingerprint, rita.pk)
    assert AuditEntry.objects.filter(target_id=str(approval.pk), action="approval.approved").count() == 1
    assert RunEvent.objects.filter(run_id=second.pk, kind="approval.approved").count() == 1


def test_an_agent_executed_approval_resume_is_three_transactions_and_nine_statements(
    transactional_db, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """No call, so no delivery: the start count, the validation (committed), the binding."""
    monkeypatch.setattr("worker.tasks.enqueue_resume", lambda run_id: None)
    project = factories.make_project("cost")
    run = factories.make_run(project, cursor={"node": "invoice"})
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    approval_request_create(project=project, run_id=run.pk, tool="send_invoice", arguments={"n": 1},
                            idempotency_key=f"k-{run.pk}", actor=Actor.for_agent("a"), executor="agent")
    approve(Run.objects.get(pk=run.pk), reviewer(project))

    with database_cost(monkeypatch) as cost:
        assert resume_run_by_id(run.pk, owner="worker:test:1") == "done"

    assert (len(cost.statements), cost.commits) == (AGENT_RESUME_STATEMENTS, AGENT_RESUME_COMMITS), (
        "\n".join(cost.statements))
    run.refresh_from_db()
    assert (run.status, run.lease_owner, run.bound_result["decision"]) == (RunStatus.RUNNING, "", "approved")
    assert not ExternalEffect.objects.filter(run=run).exists()
    traced = RunEvent.objects.filter(run=run, kind__startswith="resume.").order_by("seq")
    assert [e.kind for e in traced] == [f"resume.{name}" for name in STEP_NAMES]


def test_a_per_project_reviewers_decision_is_three_statements_too(transactional_db, monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:  # type: ignore[no-untyped-def]
    """The role named by the membership (issue 17) is checked inside the decision's UPDATE, not by a read."""
    monkeypatch.setattr("worker.tasks.enqueue_resume", lambda run_id: None)
    project = factories.make_project("cost")
    first, second = _agent_run_waiting_for_approval(project), _agent_run_waiting_for_approval(project)
    paula = factories.make_user("paula")
    Membership.objects.create(user=paula, project=project, roles=["reviewer"])
    approve(first, paula)

    with database_cost(monkeypatch) as cost:
        approval_decide(project=project.pk, approval_id=second.pending_approval_id, actor=Actor.for_user(paula),
                        decision="approve")

    assert (len(cost.statements), cost.commits) == (DECISION_STATEMENTS, 1), "\n".join(cost.statements)
    assert ApprovalRequest.objects.get(pk=second.pending_approval_id).decided_by_id == paula.pk
