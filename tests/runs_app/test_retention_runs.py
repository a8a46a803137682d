"""Retention of finished runs (issue 20, part 1; runs_app migration 0020): a run that no keep rule keeps goes with
its whole history in one round, and each rule keeps what a resume, an approval page, an effect, a memory record,
a fork or a task still needs."""

import datetime as dt
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from harness.actors import Actor
from harness.models import AuditEntry, Project
from harness.ops import faults
from memory_app.models import ContextSnapshot, MemoryRecord
from memory_app.services import memory_delete, memory_write
from runs_app.models import (
    ApprovalRequest,
    ApprovalVote,
    Checkpoint,
    CheckpointWrite,
    ExternalEffect,
    Handoff,
    HumanQuestion,
    NodeExecution,
    Run,
    RunEvent,
    RunStatus,
    StandingApproval,
)
from runs_app.retention import KINDS, retention_pass, retention_policy_set, retention_report
from runs_app.services import (
    approval_request_create,
    checkpoint_create,
    effect_deliver,
    effect_intend,
    handoff_cancel,
    handoff_issue,
    run_event_append,
    run_transition,
    task_transition,
)
from runs_app.services.forks import checkpoint_fork
from runs_app.services.runs import node_execution_finish, node_execution_start
from sessions_app.models import SessionItem
from sessions_app.services import session_items_append
from tests import factories
from tests.worker.support import approve, reviewer
from worker.pipeline import resume_run_by_id

pytestmark = pytest.mark.django_db
AGENT = Actor.for_agent("retention-runs-test")


@pytest.fixture(autouse=True)
def _no_resume_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("worker.tasks.enqueue_resume", lambda run_id: None)


def _operator(project: Project) -> Actor:
    user = User.objects.filter(username=f"op-{project.slug}").first() or factories.make_user(
        f"op-{project.slug}", role="operator", projects=[project])
    return Actor.for_user(user)


def _runs_keep_none(project: Project, *, items_too: bool = False) -> None:
    """No finished run beyond the keep rules (and, with `items_too`, no item either: a run whose items its
    session still holds stays, `items_in_conversation`)."""
    settings = {"runs_keep_last": 0, "items_keep_last": 0} if items_too else {"runs_keep_last": 0}
    retention_policy_set(project=project, actor=_operator(project), settings=settings)


def _running(project: Project, session: Any = None, **kwargs: Any) -> Run:
    run = factories.make_run(project, session, **kwargs)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return run


def _finish(project: Project, run: Run, to: str = RunStatus.SUCCEEDED) -> Run:
    run_transition(project=project, run_id=run.pk, to=to, expected_version=None)
    return Run.objects.get(pk=run.pk)


def _running_from(project: Project, run: Run) -> Run:
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return Run.objects.get(pk=run.pk)


def _finished(project: Project, session: Any = None, **kwargs: Any) -> Run:
    return _finish(project, _running(project, session, **kwargs))


def _runs_report(project: Project) -> tuple[int, dict[str, int]]:
    part = retention_report(project=project)["runs"]
    return part.would_go, part.kept


def _history_of(run_id: int) -> dict[str, int]:
    """Every row that references the run, by table (runs_app migration 0020's list)."""
    return {
        "events": RunEvent.objects.filter(run_id=run_id).count(),
        "checkpoints": Checkpoint.objects.filter(run_id=run_id).count(),
        "node_executions": NodeExecution.objects.filter(run_id=run_id).count(),
        "checkpoint_writes": CheckpointWrite.objects.filter(run_id=run_id).count(),
        "approvals": ApprovalRequest.objects.filter(run_id=run_id).count(),
        "effects": ExternalEffect.objects.filter(run_id=run_id).count(),
        "handoffs": Handoff.objects.filter(origin_run_id=run_id).count(),
        "items": SessionItem.objects.filter(run_id=run_id).count(),
        "snapshots": ContextSnapshot.objects.filter(run_id=run_id).count(),
        "memory_sources": MemoryRecord.objects.filter(source_run_id=run_id).count(),
        # Issue 33's rows (migration 0030: the prune deletes them before what they point at).
        "votes": ApprovalVote.objects.filter(approval__run_id=run_id).count(),
        "standing_approvals": StandingApproval.objects.filter(run_id=run_id).count(),
        "questions": HumanQuestion.objects.filter(run_id=run_id).count(),
    }


def _full_history_run(project: Project) -> Run:
    """A finished run with a row in every table that points at runs."""
    session = factories.make_session(project)
    run = _running(project, session)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "assistant", "content": {"n": n}, "run_id": run.pk} for n in range(3)])
    run_event_append(project=project, run_id=run.pk, kind="step", data={})
    base = checkpoint_create(project=project, run_id=run.pk, label="base")
    checkpoint_create(project=project, run_id=run.pk, parent_id=base.pk, label="next")
    execution = node_execution_start(run=run, node="draft")
    node_execution_finish(execution=execution, ok=True, checkpoint=base)
    CheckpointWrite.objects.create(project=project, run=run, checkpoint_external_id="x", task_id="t", idx=0,
                                   channel="c", value={"v": 1})
    ContextSnapshot.objects.create(project=project, run=run, budget_chars=10, used_chars=0)
    key = f"full-{run.pk}"
    effect_intend(project=project, idempotency_key=key, tool="publish", arguments={}, run_id=run.pk)
    effect_deliver(project=project, idempotency_key=key, result={"ok": True})
    receiver = factories.make_session(project, role="semantic_reviewer", memory_policy="none")
    handoff = handoff_issue(project=project, origin_run_id=run.pk, receiver_session_id=receiver.pk,
                            objective="Review.", inputs=[], allowed_capabilities=["read_input"],
                            output_schema={"type": "object"}, deadline=timezone.now() + dt.timedelta(hours=1),
                            actor=AGENT)
    handoff_cancel(project=project, handoff_id=handoff.pk, actor=AGENT, reason="not needed")
    asked = approval_request_create(project=project, run_id=run.pk, tool="send", arguments={"n": 1},
                                    idempotency_key=f"ask-{run.pk}", actor=AGENT)
    rita = reviewer(project, "rita-full")
    ApprovalVote.objects.create(approval=asked, user=rita, fingerprint=asked.action_fingerprint)
    StandingApproval.objects.create(project=project, tool="send", created_by=rita, run=run, max_uses=1,
                                    expires_at=timezone.now() + dt.timedelta(hours=1))
    HumanQuestion.objects.create(project=project, run=run, question="Which chapter?", fingerprint="q" * 64,
                                 idempotency_key=f"q-{run.pk}", asked_by=AGENT.label)
    approve(Run.objects.get(pk=run.pk), rita)
    _finish(project, run, RunStatus.CANCELLED)
    # A memory record that cites the run but is no longer live: it stays, without its source run.
    record = memory_write(project=project, actor=AGENT, scope="project", content="Chapter 3 is due.",
                          source_run_id=run.pk).record
    assert record is not None
    memory_delete(project=project, actor=_operator(project), record_id=record.pk, reason="r")
    return Run.objects.get(pk=run.pk)


def test_a_finished_run_goes_with_its_whole_history(project: Project) -> None:
    run = _full_history_run(project)
    history = _history_of(run.pk)
    assert all(history.values()), history  # the fixture reaches every table
    record = MemoryRecord.objects.get(source_run_id=run.pk)
    _runs_keep_none(project, items_too=True)

    assert _runs_report(project) == (0, {"items_in_conversation": 1})  # until the items policy takes its items
    removed = retention_pass(project=project)

    assert removed == {**dict.fromkeys(KINDS, 0), "items": 3, "runs": 1}
    assert not Run.objects.filter(pk=run.pk).exists()
    assert _history_of(run.pk) == dict.fromkeys(history, 0)
    record.refresh_from_db()
    assert record.source_run_id is None  # the record stays (deleted, with who and when), naming no run
    pruned = AuditEntry.objects.get(project=project, action="retention.pruned")
    assert pruned.data["removed"]["runs"] == 1


def test_runs_go_by_age_and_the_newest_stay_by_count(project: Project) -> None:
    runs = [_finished(project) for _ in range(4)]
    Run.objects.filter(pk=runs[0].pk).update(updated_at=timezone.now() - dt.timedelta(days=40))
    retention_policy_set(project=project, actor=_operator(project), settings={"runs_max_age_days": 30})
    assert retention_pass(project=project)["runs"] == 1
    assert not Run.objects.filter(pk=runs[0].pk).exists()

    retention_policy_set(project=project, actor=_operator(project), settings={"runs_keep_last": 2})
    assert _runs_report(project) == (1, {})
    assert retention_pass(project=project)["runs"] == 1
    assert set(Run.objects.filter(project=project).values_list("pk", flat=True)) == {runs[2].pk, runs[3].pk}


def test_each_keep_rule_keeps_its_run(project: Project) -> None:
    # run_live: a blocked run, and a run waiting for an approval (its session's finished run stays too: the
    # approval page shows the session's items).
    blocked = _running(project)
    run_transition(project=project, run_id=blocked.pk, to=RunStatus.BLOCKED, expected_version=None)
    waiting_session = factories.make_session(project)
    shown = _finished(project, waiting_session)
    waiting = _running(project, waiting_session)
    approval_request_create(project=project, run_id=waiting.pk, tool="send", arguments={},
                            idempotency_key="waiting", actor=AGENT)
    # effect_not_consumed
    unconsumed = _running(project)
    effect_intend(project=project, idempotency_key="open", tool="t", arguments={}, run_id=unconsumed.pk)
    _finish(project, unconsumed, RunStatus.FAILED)
    # memory_provenance: a live record names the run, or an item the run wrote
    cited = _finished(project)
    memory_write(project=project, actor=AGENT, scope="project", content="cited", source_run_id=cited.pk)
    wrote = _running(project)
    session_items_append(project=project, session_id=wrote.session_id,
                         items=[{"role": "assistant", "content": {"said": 1}, "run_id": wrote.pk}])
    _finish(project, wrote)
    memory_write(project=project, actor=AGENT, scope="project", content="said", source_session_id=wrote.session_id,
                 source_item_seq=1)
    # task_current_run: the newest run of an open task; the task's older run goes.
    task = factories.make_task(project, plan=["draft"])
    older_of_task = _finished(project, task_id=task.pk)
    current_of_task = _finished(project, task_id=task.pk)
    # continued_by_live_run: a live fork's source
    source = _running(project)
    forked_from = checkpoint_create(project=project, run_id=source.pk, label="fork me")
    _finish(project, source)
    fork = checkpoint_fork(project=project, checkpoint_id=forked_from.pk, actor=_operator(project), reason="try again")
    # handoff_open: an issued handoff's origin (a finished receiver run of it would stay as well)
    issuer = _running(project)
    handoff_issue(project=project, origin_run_id=issuer.pk, receiver_session_id=factories.make_session(project).pk,
                  objective="Review.", inputs=[], allowed_capabilities=["read_input"],
                  output_schema={"type": "object"}, deadline=timezone.now() + dt.timedelta(hours=1), actor=AGENT)
    run_transition(project=project, run_id=issuer.pk, to=RunStatus.FAILED, expected_version=None)
    plain = _finished(project)
    _runs_keep_none(project)

    would_go, kept = _runs_report(project)
    assert (would_go, kept) == (2, {
        "run_live": 3, "shown_by_pending_approval": 1, "effect_not_consumed": 1, "memory_provenance": 2,
        "task_current_run": 1, "continued_by_live_run": 1, "handoff_open": 1,
    }), kept
    assert retention_pass(project=project)["runs"] == 2

    gone = {older_of_task.pk, plain.pk}
    assert not Run.objects.filter(pk__in=gone).exists()
    stay = {blocked.pk, shown.pk, waiting.pk, unconsumed.pk, cited.pk, wrote.pk, current_of_task.pk, source.pk,
            fork.run.pk, issuer.pk}
    assert set(Run.objects.filter(project=project).values_list("pk", flat=True)) == stay
    assert retention_report(project=project)["runs"].would_go == 0


def test_a_tasks_latest_checkpoint_and_its_lineage_keep_their_runs(project: Project) -> None:
    """run1's c1 <- run2's c2 (the task's latest, run2 finished, task completed): both runs stay."""
    task = factories.make_task(project, plan=["draft"])
    first = _running(project, task_id=task.pk)
    c1 = checkpoint_create(project=project, run_id=first.pk, label="c1")
    _finish(project, first)
    second = _running(project, task_id=task.pk)
    checkpoint_create(project=project, run_id=second.pk, parent_id=c1.pk, label="c2")
    _finish(project, second)
    task_transition(project=project, task_id=task.pk, to="active", expected_version=None)
    task_transition(project=project, task_id=task.pk, to="completed", expected_version=None)
    _runs_keep_none(project)

    assert _runs_report(project) == (0, {"task_latest_checkpoint": 1, "lineage_of_kept": 1})
    assert retention_pass(project=project)["runs"] == 0


def test_a_live_run_in_the_same_session_resumes_after_a_pass(project: Project) -> None:
    session = factories.make_session(project)
    old = _running(project, session)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "assistant", "content": {"old": n}, "run_id": old.pk} for n in range(3)])
    _finish(project, old)
    live = _running(project, session)
    approval_request_create(project=project, run_id=live.pk, tool="send", arguments={"n": 1},
                            idempotency_key="live", actor=AGENT, executor="agent")
    _runs_keep_none(project, items_too=True)
    assert _runs_report(project) == (0, {"run_live": 1, "shown_by_pending_approval": 1})

    approve(Run.objects.get(pk=live.pk), reviewer(project, "rita-runs"))  # decided: nothing pending any more
    removed = retention_pass(project=project)
    assert (removed["items"], removed["runs"]) == (3, 1)
    assert not Run.objects.filter(pk=old.pk).exists()
    assert resume_run_by_id(live.pk, owner="worker:test:1") == "done"
    assert Run.objects.get(pk=live.pk).status == RunStatus.RUNNING


def test_a_run_whose_items_the_conversation_still_holds_stays(project: Project) -> None:
    """The runs policy never cuts items out of a conversation: they go by the items policy, then their run."""
    session = factories.make_session(project)
    session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": {"n": 0}}])
    wrote = _running(project, session)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "assistant", "content": {"n": n}, "run_id": wrote.pk} for n in (1, 2)])
    _finish(project, wrote)
    session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": {"n": 3}}])
    silent = _finished(project, session)
    _runs_keep_none(project)

    assert _runs_report(project) == (1, {"items_in_conversation": 1})
    assert retention_pass(project=project)["runs"] == 1
    assert not Run.objects.filter(pk=silent.pk).exists()
    assert list(SessionItem.objects.filter(session=session).order_by("seq").values_list("seq", flat=True)) == [
        1, 2, 3, 4]

    retention_policy_set(project=project, actor=_operator(project),
                         settings={"runs_keep_last": 0, "items_keep_last": 1})
    removed = retention_pass(project=project)
    assert (removed["items"], removed["runs"]) == (3, 1)  # the oldest three items first, then their run
    assert not Run.objects.filter(pk=wrote.pk).exists()
    assert list(SessionItem.objects.filter(session=session).values_list("seq", flat=True)) == [4]


def test_one_projects_run_policy_never_touches_another(project: Project, other_project: Project) -> None:
    mine = _finished(project)
    theirs = _finished(other_project)
    _runs_keep_none(project)
    retention_policy_set(project=other_project, actor=_operator(other_project), settings={"runs_keep_last": 5})
    assert retention_pass(project=project)["runs"] == 1
    assert retention_pass(project=other_project)["runs"] == 0
    assert not Run.objects.filter(pk=mine.pk).exists()
    assert Run.objects.filter(pk=theirs.pk).exists() and RunEvent.objects.filter(run=theirs).exists()


def test_a_pass_killed_in_the_runs_step_rolls_back_the_whole_round(project: Project) -> None:
    run = _full_history_run(project)
    history = _history_of(run.pk)
    _runs_keep_none(project, items_too=True)

    def crash(name: str) -> None:
        if name == "retention.runs":
            raise RuntimeError("killed")

    faults.install(crash)
    try:
        with pytest.raises(RuntimeError):
            retention_pass(project=project)
    finally:
        faults.install(None)
    assert Run.objects.filter(pk=run.pk).exists()
    assert _history_of(run.pk) == history
    assert not AuditEntry.objects.filter(project=project, action="retention.pruned").exists()
    assert retention_pass(project=project)["runs"] == 1


def test_a_run_is_deleted_only_through_the_retention_door(project: Project) -> None:
    run = _finished(project)
    with pytest.raises(Exception, match="DELETE refused"), connection.cursor() as cursor:
        cursor.execute("DELETE FROM runs_app_run WHERE id = %s", [run.pk])


def test_the_keep_rules_call_live_exactly_the_runs_the_transition_table_can_still_move() -> None:
    """Each current retention function's list of finished run statuses (runs_app/sql/harness_retention_*) is the run
    machine's states with no way out."""
    from harness.sql_files import latest
    from runs_app.machines import RUN_MACHINE

    finished = {state for state, targets in RUN_MACHINE.table.items() if not targets}
    kinds = ("items", "events", "snapshots", "effects", "checkpoints", "runs")
    for kind in kinds:
        sql = latest("runs_app")[f"harness_retention_{kind}"].text()
        live = re.findall(r"status NOT IN \(([^)]*'succeeded'[^)]*)\)", sql)
        assert live, kind
        assert all(set(re.findall(r"'(\w+)'", statuses)) == finished for statuses in live), kind


def test_a_finished_fork_goes_before_its_finished_source_one_run_a_round(project: Project) -> None:
    source = _running(project)
    base = checkpoint_create(project=project, run_id=source.pk, label="base")
    _finish(project, source)
    fork = checkpoint_fork(project=project, checkpoint_id=base.pk, actor=_operator(project), reason="branch")
    _finish(project, _running_from(project, fork.run))
    _runs_keep_none(project)

    # The fork's checkpoint has its parent in the source: the source waits for the fork to go.
    assert _runs_report(project) == (1, {"lineage_of_kept": 1})
    assert retention_pass(project=project, batch=1) == {**dict.fromkeys(KINDS, 0), "runs": 2}
    assert not Run.objects.filter(pk__in=[source.pk, fork.run.pk]).exists()
    rounds = AuditEntry.objects.filter(project=project, action="retention.pruned").order_by("seq")
    assert [entry.data["removed"]["runs"] for entry in rounds] == [1, 1]
