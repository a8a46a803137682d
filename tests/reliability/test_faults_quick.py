"""The fault experiments of issue 7 (reliability/faults.py) at their quick counts, one test each.

Each asserts the experiment's verdict and its key figures; the full counts run with bin/reliability.
"""

import pytest
from django.conf import LazySettings

from harness.ops import faults as fault_points
from reliability import faults
from runs_app.models import Run, RunStatus
from runs_app.services import run_claim, run_metrics_merge
from worker import pipeline
from worker.recovery import recovery_candidates

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_1_claim_race_every_run_is_claimed_exactly_once_by_one_process() -> None:
    result = faults.claim_race(quick=True)
    figures = result.figures
    assert result.passed, figures
    assert figures["claims"] == figures["runs"]
    assert (figures["double_claims"], figures["left"], figures["owner_mismatches"]) == (0, 0, 0)


def test_2_version_cas_one_writer_wins_the_rest_conflict_and_the_version_moves_once() -> None:
    result = faults.version_cas(quick=True)
    figures = result.figures
    assert result.passed, figures
    for write in ("task_save", "run_transition"):
        assert figures[write]["successes"] == 1
        assert figures[write]["conflicts"] == figures["writers"] - 1
        assert figures[write]["version_after"] == figures[write]["version_before"] + 1


def test_3_lost_update_soak_through_http_counts_every_acknowledged_increment_once() -> None:
    result = faults.lost_update_soak(quick=True)
    figures = result.figures
    assert result.passed, figures
    assert figures["final_count"] == figures["expected"] == figures["version_delta"]
    assert figures["unexpected_statuses"] == []


def test_4_a_paused_worker_past_its_lease_is_fenced_off_and_the_chain_never_forks() -> None:
    result = faults.stale_lease_fencing(quick=True)
    figures = result.figures
    assert result.passed, figures
    assert figures["trials_all_a_writes_refused"] == figures["trials"]
    assert figures["a_writes_accepted"] == 0
    assert figures["forks"] == 0


@pytest.mark.worker
def test_5_kill_9_around_the_external_call_never_calls_a_tool_twice_and_recovers_within_twice_the_lease() -> None:
    # The tool ignores keys (every call acts): raw calls are counted, and an unproven outcome waits for a person.
    result = faults.kill_around_side_effects(quick=True)
    figures = result.figures
    assert result.passed, figures
    assert figures["max_calls_per_key"] <= 1 and figures["keys_called_twice_or_more"] == 0
    assert figures["succeeded"] + figures["blocked_at_unknown_effect"] == figures["runs"]
    assert figures["succeeded_called_once"] == figures["succeeded"]
    assert figures["max_seconds_orphaned_past_lease"] <= figures["lease_seconds"]


@pytest.mark.worker
def test_6_a_killed_worker_child_loses_no_task_and_a_poison_task_ends_blocked() -> None:
    result = faults.worker_loss(quick=True)
    figures = result.figures
    assert result.passed, figures
    loss = figures["loss"]
    assert loss["succeeded"] + loss["blocked_at_unknown_effect"] == loss["runs"]
    assert loss["max_calls_per_key"] <= 1 and loss["succeeded_called_once"] == loss["succeeded"]
    assert figures["poison"]["status"] == "blocked"
    assert figures["poison"]["starts_after_blocked"] == 0
    assert figures["poison_before_claim"]["status"] == "blocked"
    assert figures["poison_before_claim"]["starts_after_blocked"] == 0


def test_7_a_rolled_back_creation_sends_no_resume_message() -> None:
    result = faults.transactional_enqueue(quick=True)
    figures = result.figures
    assert result.passed, figures
    assert figures["messages_for_rolled_back"] == 0
    assert figures["messages"] == figures["committed"]


def test_8_one_idempotency_key_sent_many_times_at_once_has_one_effect_and_one_reply() -> None:
    result = faults.idempotent_replay(quick=True)
    figures = result.figures
    assert result.passed, figures
    assert figures["effects"] == 1
    assert figures["distinct_replies"] == 1


def test_19_gunicorn_killed_mid_request_a_keyed_post_is_written_once_and_answered_with_it() -> None:
    result = faults.web_kill_mid_request(quick=True)
    figures = result.figures
    assert result.passed, figures
    keyed = figures["keyed"]
    assert keyed["first_attempts_killed"] >= len(faults.WEB_CRASH_POINTS)
    assert keyed["written_once"] == keyed["operations"] == keyed["answered_201"]
    assert (keyed["max_writes_per_operation"], keyed["answers_naming_another_write"]) == (1, 0)
    assert keyed["retries_met_409_in_progress"] == 0
    # Without a key the reply is lost with the process after the commit, and the retry writes again.
    assert figures["unkeyed"]["written_twice_or_more"] >= 1


def test_15_concurrent_identical_memory_writes_give_one_record_and_retrievals_leak_nothing() -> None:
    result = faults.memory_races_and_scopes(quick=True)
    figures = result.figures
    assert result.passed, figures
    assert figures["records_per_round"] == [1] * figures["rounds"]
    assert figures["leaks"] == 0
    assert figures["cross_project_404"] == figures["cross_project_tries"]


# --- findings, kept fixed ----------------------------------------------------------------------


def _approved_demo_run() -> Run:
    run = faults.demo_run(faults.fresh_project("finding"))
    faults.approve(run, faults.reviewer_for(run.project))
    faults.broker_client().flushdb()  # nothing consumes the resume message here
    return Run.objects.get(pk=run.pk)


def test_a_duplicate_resume_at_the_attempt_limit_leaves_the_last_live_attempt_alone(settings: LazySettings) -> None:
    settings.HARNESS_RESUME_MAX_ATTEMPTS = 2
    run = _approved_demo_run()
    run_claim(project=run.project_id, run_id=run.pk, owner="worker:live:1:a", lease_seconds=60)
    run_metrics_merge(project=run.project_id, run_id=run.pk, metrics={}, increment={"attempts": 2})

    assert pipeline.resume_run_by_id(run.pk, owner="worker:duplicate:2:b", lease_seconds=5) == "stopped"

    run.refresh_from_db()
    assert (run.status, run.lease_owner) == (RunStatus.WAITING_APPROVAL, "worker:live:1:a")


class _WorkerDied(BaseException):
    """Stands for SIGKILL at a crash point: nothing in the resume may catch it."""


def test_a_run_whose_every_start_dies_before_the_claim_is_blocked_not_restarted_forever(
    settings: LazySettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.HARNESS_RESUME_MAX_ATTEMPTS = 2
    run = _approved_demo_run()

    def die_in_load(name: str) -> None:
        if name == "load":
            raise _WorkerDied

    monkeypatch.setattr(fault_points, "_hook", die_in_load)
    for attempt in range(2):
        with pytest.raises(_WorkerDied):
            pipeline.resume_run_by_id(run.pk, owner=f"worker:w:{attempt}:x", lease_seconds=5)

    assert pipeline.resume_run_by_id(run.pk, owner="worker:w:2:x", lease_seconds=5) == "blocked"
    run.refresh_from_db()
    assert (run.status, run.blocked_step) == (RunStatus.BLOCKED, "load")
    assert "without reaching its claim" in (run.error or {})["reason"]
    assert run.metrics.get("attempts", 0) == 0
    assert run.pk not in recovery_candidates()  # and the blocking resume was acknowledged: nothing restarts it
