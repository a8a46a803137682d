"""The resume's dry run (worker.dry_run, the approval page's checks before the decision) runs the worker's own
checks: for each way a resume fails before its call, the dry run names the failing check and the step, and the
real resume then blocks at that same step (worker parity)."""

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from runs_app.models import ApprovalRequest, Run, RunStatus, Task
from runs_app.resume import CheckState
from tests.worker.support import approve, demo_run, reviewer
from worker.dry_run import resume_dry_run
from worker.pipeline import resume_run_by_id

PASS, FAIL, UNKNOWN = CheckState.PASS, CheckState.FAIL, CheckState.UNKNOWN
OWNER = "worker:test:dry-run"


def _dry_run(run: Run, user: Any) -> dict[str, tuple[str, str, str]]:
    approval = ApprovalRequest.objects.get(pk=Run.objects.get(pk=run.pk).pending_approval_id)
    result = resume_dry_run(approval, reviewer_id=user.pk, reviewer_holds_role=True)
    return {line.key: (line.state, line.step, line.reason) for line in result.lines}


def _remove_adapters() -> Any:
    return override_settings(HARNESS_TOOL_ADAPTERS={})


def _change_artifact(run: Run) -> None:
    task = Task.objects.get(pk=run.task_id)
    Task.objects.filter(pk=task.pk).update(artifact_refs={**task.artifact_refs, "draft": {"sha256": "0" * 64}})


def _expire(run: Run) -> None:
    ApprovalRequest.objects.filter(pk=run.pending_approval_id).update(
        expires_at=timezone.now() - dt.timedelta(minutes=1))


def _spend_budget(run: Run) -> None:
    Run.objects.filter(pk=run.pk).update(token_budget=100, tokens_used=100)


def _tamper_checkpoint(run: Run) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        cursor.execute("UPDATE runs_app_checkpoint SET state = '{\"plan_version\": 1}'::json WHERE id = %s",
                       [run.last_checkpoint_id])
        cursor.execute("SET session_replication_role = origin")


# (what breaks, the dry run's failing line, the step the resume blocks at, whether a decision is still possible)
CASES: dict[str, tuple[Callable[[Run], None], str, str, bool]] = {
    "adapter removed": (lambda run: None, "capability", "capability", True),
    "artifact changed": (_change_artifact, "artifact_fingerprints", "artifact_fingerprints", True),
    "approval expired": (_expire, "approval_preconditions", "approval_preconditions", False),
    "budget spent": (_spend_budget, "limits", "budget", True),
    "checkpoint tampered": (_tamper_checkpoint, "checkpoint", "load", True),
}


@pytest.fixture
def pending(db):  # type: ignore[no-untyped-def]
    run = demo_run()
    return run, reviewer(run.project)


def test_an_untouched_run_passes_every_check_it_can_know(pending) -> None:
    run, rita = pending
    lines = _dry_run(run, rita)
    assert {key for key, (state, _, _) in lines.items() if state == UNKNOWN} == {"decision_audit", "lease"}
    assert all(state == PASS for key, (state, _, _) in lines.items() if key not in ("decision_audit", "lease"))
    assert lines["not_yet_consumed"][2] == "no effect is recorded under the approval's key yet"

    approve(run, rita)
    assert resume_run_by_id(run.pk, owner=OWNER) == "done"
    assert Run.objects.get(pk=run.pk).status == RunStatus.SUCCEEDED


@pytest.mark.parametrize("case", CASES)
def test_the_dry_run_fails_the_check_the_resume_then_blocks_at(pending, case: str) -> None:
    run, rita = pending
    breaks, line, step, decidable = CASES[case]
    breaks(run)
    with _remove_adapters() if case == "adapter removed" else override_settings():
        lines = _dry_run(run, rita)
        failing = {key: (s, reason) for key, (state, s, reason) in lines.items() if state == FAIL}
        assert set(failing) == {line}, failing
        assert failing[line][0] == step and failing[line][1]

        if decidable:
            approve(run, rita)
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"

    blocked = Run.objects.get(pk=run.pk)
    assert blocked.status == RunStatus.BLOCKED and blocked.blocked_step == step
    assert blocked.error["reason"] == failing[line][1]  # the same reason, from the same function


def test_after_the_decision_the_dry_run_checks_the_decision_as_made(pending) -> None:
    run, rita = pending
    approve(run, rita)
    lines = _dry_run(run, rita)
    assert lines["decision_audit"][0] == PASS and lines["approval_preconditions"][0] == PASS


def test_the_dry_run_writes_nothing(pending, django_assert_max_num_queries) -> None:
    run, rita = pending
    before = Run.objects.get(pk=run.pk)
    approval = ApprovalRequest.objects.get(pk=before.pending_approval_id)
    with django_assert_max_num_queries(2):  # the resume's load, and the approval's effect
        resume_dry_run(approval, reviewer_id=rita.pk, reviewer_holds_role=True)
    after = Run.objects.get(pk=run.pk)
    assert (after.version, after.status, after.lease_owner) == (before.version, before.status, before.lease_owner)
