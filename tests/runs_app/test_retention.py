"""Retention (issue 20, part 1): each keep rule holds through a pass, the dry run is the pass, a pass stopped
halfway leaves whole rounds and the next one carries on, one project's policy never touches another's, and
audit entries are never pruned."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from harness.actors import Actor
from harness.audit import audit_chain_verify
from harness.http.errors import Forbidden, NotFoundError, ValidationFailed
from harness.models import AuditEntry, Project
from harness.ops import faults
from memory_app.models import ContextSnapshot
from memory_app.services import memory_write
from runs_app.models import Checkpoint, ExternalEffect, RetentionPolicy, Run, RunEvent, RunStatus
from runs_app.retention import KINDS, retention_pass, retention_policy_set, retention_report
from runs_app.services import (
    approval_request_create,
    checkpoint_create,
    effect_deliver,
    effect_intend,
    run_event_append,
    run_transition,
)
from sessions_app.models import SessionItem
from sessions_app.services import session_items_append
from tests import factories
from tests.worker.support import approve, reviewer
from worker.pipeline import resume_run_by_id

pytestmark = pytest.mark.django_db
AGENT = Actor.for_agent("retention-test")


def _operator(project: Project) -> Actor:
    """An operator of `project` (made once per project): only such a person sets its retention policy."""
    user = User.objects.filter(username=f"op-{project.slug}").first() or factories.make_user(
        f"op-{project.slug}", role="operator", projects=[project])
    return Actor.for_user(user)
# Every kind of history but runs themselves (tests/runs_app/test_retention_runs.py): a run that goes takes its
# remaining rows of the other kinds with it, which these tests count kind by kind.
HISTORY_KINDS = tuple(kind for kind in KINDS if kind != "runs")
ALL_ZERO = {f"{kind}_keep_last": 0 for kind in HISTORY_KINDS}


@pytest.fixture(autouse=True)
def _no_resume_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("worker.tasks.enqueue_resume", lambda run_id: None)


def _finished_run(project: Project, session: Any = None, **kwargs: Any) -> Run:
    run = factories.make_run(project, session, **kwargs)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return run


def _finish(project: Project, run: Run, to: str = RunStatus.SUCCEEDED) -> None:
    run_transition(project=project, run_id=run.pk, to=to, expected_version=None)


def _events(project: Project, run: Run, n: int) -> None:
    for i in range(n):
        run_event_append(project=project, run_id=run.pk, kind="step", data={"i": i})


def _waiting_run(project: Project, session: Any = None) -> Run:
    run = _finished_run(project, session)
    approval_request_create(project=project, run_id=run.pk, tool="send", arguments={"n": run.pk},
                            idempotency_key=f"wait-{run.pk}", actor=AGENT)
    return Run.objects.get(pk=run.pk)


def _keep_none(project: Project, **only: int | None) -> None:
    retention_policy_set(project=project, actor=_operator(project), settings=only or ALL_ZERO)


def test_without_a_policy_nothing_goes_and_the_dry_run_reports_nothing(project: Project) -> None:
    run = _finished_run(project)
    _events(project, run, 3)
    _finish(project, run)
    report = retention_report(project=project)
    assert all(part.would_go == 0 and part.kept == {} for part in report.values())
    assert retention_pass(project=project) == dict.fromkeys(KINDS, 0)
    assert RunEvent.objects.filter(run=run).count() > 3


def test_a_waiting_runs_events_survive_while_a_finished_runs_go(project: Project) -> None:
    waiting = _waiting_run(project)
    finished = _finished_run(project)
    _events(project, finished, 4)
    _finish(project, finished)
    waiting_events = set(RunEvent.objects.filter(run=waiting).values_list("pk", flat=True))
    _keep_none(project, events_keep_last=0)

    finished_events = RunEvent.objects.filter(run=finished).count()
    report = retention_report(project=project)["events"]
    assert (report.would_go, report.kept) == (finished_events, {"run_live": len(waiting_events)})
    removed = retention_pass(project=project)

    assert removed["events"] == finished_events
    assert not RunEvent.objects.filter(run=finished).exists()
    assert set(RunEvent.objects.filter(run=waiting).values_list("pk", flat=True)) == waiting_events


def test_a_pending_approvals_items_and_checkpoint_survive(project: Project) -> None:
    session = factories.make_session(project)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "user", "content": {"n": n}} for n in range(15)])
    waiting = _waiting_run(project, session)
    approval_checkpoint = Checkpoint.objects.get(run=waiting, approval_id=waiting.pending_approval_id)
    _keep_none(project, items_keep_last=0, checkpoints_keep_last=0)

    report = retention_report(project=project)
    assert report["items"].kept == {"shown_by_pending_approval": 10}
    assert report["checkpoints"].kept == {"run_live": 1}
    retention_pass(project=project)

    # The approval page shows the session's newest ten items: those stay, the five older ones go.
    assert list(SessionItem.objects.filter(session=session).order_by("seq").values_list("seq", flat=True)) == list(
        range(6, 16))
    assert Checkpoint.objects.filter(pk=approval_checkpoint.pk).exists()


def test_an_unconsumed_effect_survives_while_a_consumed_one_goes(project: Project) -> None:
    run = _finished_run(project)
    open_effect, _ = effect_intend(project=project, idempotency_key="open", tool="publish", arguments={}, run_id=run.pk)
    done_effect, _ = effect_intend(project=project, idempotency_key="done", tool="publish", arguments={}, run_id=run.pk)
    effect_deliver(project=project, idempotency_key="done", result={"ok": True})
    _finish(project, run, RunStatus.FAILED)
    _keep_none(project, effects_keep_last=0)

    report = retention_report(project=project)["effects"]
    assert (report.would_go, report.kept) == (1, {"effect_not_consumed": 1})
    assert retention_pass(project=project)["effects"] == 1
    assert list(ExternalEffect.objects.filter(project=project).values_list("pk", flat=True)) == [open_effect.pk]
    assert not ExternalEffect.objects.filter(pk=done_effect.pk).exists()


def test_old_effects_and_snapshots_go_by_age(project: Project) -> None:
    run = _finished_run(project)
    old, _ = effect_intend(project=project, idempotency_key="old", tool="t", arguments={}, run_id=run.pk)
    new, _ = effect_intend(project=project, idempotency_key="new", tool="t", arguments={}, run_id=run.pk)
    for key in ("old", "new"):
        effect_deliver(project=project, idempotency_key=key, result={"k": key})
    snapshot = ContextSnapshot.objects.create(project=project, run=run, budget_chars=10, used_chars=0)
    _finish(project, run)
    # Effects and snapshots are the only kinds whose rows may be rewritten, so only they can be made old here.
    ExternalEffect.objects.filter(pk=old.pk).update(created_at=old.created_at.replace(year=2020))
    ContextSnapshot.objects.filter(pk=snapshot.pk).update(created_at=snapshot.created_at.replace(year=2020))
    _keep_none(project, effects_max_age_days=30, snapshots_max_age_days=30)

    removed = retention_pass(project=project)
    assert (removed["effects"], removed["snapshots"]) == (1, 1)
    assert list(ExternalEffect.objects.filter(project=project).values_list("pk", flat=True)) == [new.pk]


def test_a_tasks_latest_checkpoint_and_its_lineage_survive_and_the_resume_succeeds(project: Project) -> None:
    """c1 <- c2 <- c3 is the task's line (c3 its latest); b1 <- b2, branched off c2, nobody continues."""
    task = factories.make_task(project, plan=["outline", "draft"])
    first = _finished_run(project, task_id=task.pk)
    c1 = checkpoint_create(project=project, run_id=first.pk, label="c1", state={"n": 1})
    c2 = checkpoint_create(project=project, run_id=first.pk, parent_id=c1.pk, label="c2", state={"n": 2})
    b1 = checkpoint_create(project=project, run_id=first.pk, parent_id=c2.pk, label="b1")
    b2 = checkpoint_create(project=project, run_id=first.pk, parent_id=b1.pk, label="b2")
    c3 = checkpoint_create(project=project, run_id=first.pk, parent_id=c2.pk, label="c3", state={"n": 3})
    _finish(project, first)
    _keep_none(project, checkpoints_keep_last=0)

    report = retention_report(project=project)["checkpoints"]
    assert (report.would_go, report.kept) == (2, {"lineage_of_kept": 2, "task_latest_checkpoint": 1})
    # One row per statement: the deeper b2 goes before b1, so no round leaves a child without its parent.
    assert retention_pass(project=project, batch=1)["checkpoints"] == 2
    assert set(Checkpoint.objects.filter(run=first).values_list("pk", flat=True)) == {c1.pk, c2.pk, c3.pk}
    assert not Checkpoint.objects.filter(pk__in=[b1.pk, b2.pk]).exists()

    # The task carries on in a new run from its latest checkpoint, through an approval and a real resume.
    second = _finished_run(project, task_id=task.pk)
    approval_request_create(project=project, run_id=second.pk, tool="send", arguments={"n": 2},
                            idempotency_key="second", actor=AGENT, executor="agent")
    approve(Run.objects.get(pk=second.pk), reviewer(project, "rita-retention"))
    assert resume_run_by_id(second.pk, owner="worker:test:1") == "done"
    resumed = Checkpoint.objects.filter(run=second).order_by("-id").first()
    assert resumed is not None and resumed.depth > c3.depth


def test_the_items_an_active_memory_record_names_survive(project: Project) -> None:
    session = factories.make_session(project)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "user", "content": {"n": n}} for n in range(4)])
    memory_write(project=project, actor=AGENT, scope="project", content="The lamp is lit.",
                 source_session_id=session.pk, source_item_seq=2)
    _keep_none(project, items_keep_last=0)

    assert retention_report(project=project)["items"].kept == {"memory_provenance": 1}
    assert retention_pass(project=project)["items"] == 3
    assert list(SessionItem.objects.filter(session=session).values_list("seq", flat=True)) == [2]


def _mixed(project: Project) -> dict[str, Any]:
    """A project with some of everything, some of it kept by each rule."""
    session = factories.make_session(project)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "user", "content": {"n": n}} for n in range(12)])
    waiting = _waiting_run(project, session)
    _events(project, waiting, 2)
    done = _finished_run(project, session)
    _events(project, done, 5)
    base = checkpoint_create(project=project, run_id=done.pk, label="base")
    for i in range(3):
        checkpoint_create(project=project, run_id=done.pk, parent_id=base.pk, label=f"branch {i}")
    checkpoint_create(project=project, run_id=done.pk, parent_id=base.pk, label="last")
    effect_intend(project=project, idempotency_key=f"{project.slug}-e", tool="t", arguments={}, run_id=done.pk)
    effect_deliver(project=project, idempotency_key=f"{project.slug}-e", result={"ok": 1})
    ContextSnapshot.objects.create(project=project, run=done, budget_chars=10, used_chars=0)
    _finish(project, done)
    return {"session": session, "waiting": waiting, "done": done}


def _counts(project: Project) -> dict[str, int]:
    return {
        "items": SessionItem.objects.filter(session__project=project).count(),
        "events": RunEvent.objects.filter(run__project=project).count(),
        "checkpoints": Checkpoint.objects.filter(project=project).count(),
        "effects": ExternalEffect.objects.filter(project=project).count(),
        "snapshots": ContextSnapshot.objects.filter(project=project).count(),
    }


def test_the_dry_run_reports_exactly_what_the_pass_removes(project: Project) -> None:
    _mixed(project)
    _keep_none(project)
    report = retention_report(project=project)
    before = _counts(project)

    removed = retention_pass(project=project)

    assert removed == {kind: part.would_go for kind, part in report.items()}
    assert all(removed[kind] > 0 for kind in HISTORY_KINDS)
    assert _counts(project) == {kind: before[kind] - removed[kind] for kind in HISTORY_KINDS}
    after = retention_report(project=project)
    assert {kind: part.would_go for kind, part in after.items()} == dict.fromkeys(KINDS, 0)
    assert {kind: part.kept for kind, part in after.items()} == {kind: part.kept for kind, part in report.items()}


def test_a_pass_is_bounded_and_the_next_one_carries_on(project: Project) -> None:
    _mixed(project)
    _keep_none(project)
    expected = {kind: part.would_go for kind, part in retention_report(project=project).items()}

    first = retention_pass(project=project, batch=1, rounds=2)
    assert first == {kind: min(2, expected[kind]) for kind in KINDS}
    rest = retention_pass(project=project, batch=1, rounds=100)
    assert {kind: first[kind] + rest[kind] for kind in KINDS} == expected


def test_a_pass_killed_mid_round_leaves_whole_rounds_and_the_next_pass_finishes(project: Project) -> None:
    _mixed(project)
    _keep_none(project)
    expected = {kind: part.would_go for kind, part in retention_report(project=project).items()}
    rounds_seen: list[str] = []

    def crash(name: str) -> None:
        rounds_seen.append(name)
        if name == "retention.checkpoints" and rounds_seen.count(name) == 2:
            raise RuntimeError("killed")  # in the second round, after its items, events, effects and snapshots

    faults.install(crash)
    try:
        with pytest.raises(RuntimeError):
            retention_pass(project=project, batch=1)
    finally:
        faults.install(None)
    # The first round stands (one row of each kind, audited); the second rolled back whole.
    assert retention_report(project=project)["items"].would_go == expected["items"] - 1
    pruned = AuditEntry.objects.filter(project=project, action="retention.pruned")
    assert [entry.data["removed"] for entry in pruned] == [{**dict.fromkeys(HISTORY_KINDS, 1), "runs": 0}]

    rest = retention_pass(project=project)
    assert {kind: rest[kind] + int(kind != "runs") for kind in KINDS} == expected


def test_each_round_is_audited_and_audit_entries_are_never_pruned(project: Project) -> None:
    _mixed(project)
    _keep_none(project)
    entries = list(AuditEntry.objects.filter(project=project).values_list("pk", flat=True))
    removed = retention_pass(project=project)

    assert set(entries) <= set(AuditEntry.objects.filter(project=project).values_list("pk", flat=True))
    pruned = AuditEntry.objects.get(project=project, action="retention.pruned")
    assert pruned.data["removed"] == removed and pruned.actor == "worker:retention"
    assert all(not report.breaks for report in audit_chain_verify(project_ids=[project.pk]))


def test_one_projects_policy_never_touches_another(project: Project, other_project: Project) -> None:
    _mixed(project)
    _mixed(other_project)
    other_before = _counts(other_project)
    _keep_none(project)
    retention_policy_set(project=other_project, actor=_operator(other_project), settings={})

    assert retention_pass(project=project)["events"] > 0
    assert retention_pass(project=other_project) == dict.fromkeys(KINDS, 0)
    assert _counts(other_project) == other_before


def test_the_policy_is_validated_and_its_changes_audited(project: Project) -> None:
    with pytest.raises(ValidationFailed):
        retention_policy_set(project=project, actor=_operator(project), settings={"items_forever": 3})
    with pytest.raises(ValidationFailed):
        retention_policy_set(project=project, actor=_operator(project), settings={"items_keep_last": -1})
    retention_policy_set(project=project, actor=_operator(project), settings={"items_keep_last": 5})
    entry = AuditEntry.objects.get(project=project, action="retention.policy_set")
    assert entry.data["after"]["items_keep_last"] == 5 and entry.data["before"]["items_keep_last"] is None


def test_the_owner_without_the_functions_door_cannot_delete_history(project: Project) -> None:
    """The prune function is the door: a plain DELETE of an event is refused even to the tables' owner
    unless it opens the door itself (runs_app migration 0013)."""
    run = _finished_run(project)
    _events(project, run, 1)
    with pytest.raises(Exception, match="DELETE refused"), connection.cursor() as cursor:
        cursor.execute("DELETE FROM runs_app_runevent WHERE run_id = %s", [run.pk])


def test_only_an_operator_of_the_project_sets_its_policy(project: Project, other_project: Project) -> None:
    """The policy decides what history is deleted: not an agent's call, nor an operator's of another project."""
    with pytest.raises(Forbidden) as refused:
        retention_policy_set(project=project, actor=AGENT, settings={"items_keep_last": 0})
    assert refused.value.code == "not_an_operator"
    with pytest.raises(NotFoundError):  # not a member: the project does not exist for them
        retention_policy_set(project=project, actor=_operator(other_project), settings={"items_keep_last": 0})
    reviewer = factories.make_user("rev-ret", role="reviewer", projects=[project])
    with pytest.raises(Forbidden):
        retention_policy_set(project=project, actor=Actor.for_user(reviewer), settings={"items_keep_last": 0})
    assert not RetentionPolicy.objects.filter(project=project).exists()
    assert not AuditEntry.objects.filter(project=project, action="retention.policy_set").exists()


def _seqs(session: Any) -> list[int]:
    return list(SessionItem.objects.filter(session=session).order_by("seq").values_list("seq", flat=True))


def test_items_keep_last_counts_the_items_there_are_not_the_seqs_handed_out(project: Project) -> None:
    # Gaps (a popped newest item, a trimmed range): the newest three *items* stay, as row_number() counted them.
    session = factories.make_session(project)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "user", "content": {"n": n}} for n in range(12)])
    SessionItem.objects.filter(session=session, seq__in=[5, 6, 12]).delete()
    short = factories.make_session(project)  # fewer items than the policy keeps: none go
    session_items_append(project=project, session_id=short.pk, items=[{"role": "user", "content": {"n": 0}}] * 2)
    _keep_none(project, items_keep_last=3)

    assert retention_report(project=project)["items"].would_go == 6
    assert retention_pass(project=project)["items"] == 6
    assert _seqs(session) == [9, 10, 11]
    assert _seqs(short) == [1, 2]


def test_an_item_past_its_age_goes_even_among_the_newest_kept_by_count(project: Project) -> None:
    session = factories.make_session(project)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "user", "content": {"n": n}} for n in range(4)])
    with connection.cursor() as cursor:  # seq 5, written three days ago (as an import would), then seq 6 now
        cursor.execute("INSERT INTO sessions_app_sessionitem (session_id, seq, role, content, created_at) "
                       "VALUES (%s, 5, 'user', '{}', now() - interval '3 days'), (%s, 6, 'user', '{}', now())",
                       [session.pk, session.pk])
    _keep_none(project, items_keep_last=2, items_max_age_days=1)

    assert retention_report(project=project)["items"].would_go == 5
    retention_pass(project=project)
    assert _seqs(session) == [6]
