"""The quick (CI) form of security experiments 9-14 and 16 (reliability/security.py); full counts:
`bin/reliability --only 9,10,11,12,13,14,16`.

Each experiment commits its rows (threads, gunicorn and the browser read them), hence transactional_db.
"""

import pytest
from django.test import Client

from harness.actors import Actor
from reliability import security

QUICK = True  # the experiments' CI form (they take `quick` positionally, as the registry calls them)


def _check(result: security.Result) -> dict:
    assert result.passed, result.figures
    return result.figures


@pytest.mark.django_db(transaction=True)
def test_9_competing_reviewers_one_decision_and_no_execution_after_a_rejection() -> None:
    figures = _check(security.competing_reviewers(QUICK))
    assert figures["not_exactly_one_decision"] == 0
    assert figures["executions_after_rejection"] == 0
    assert figures["approved_executed_not_once"] == 0
    assert figures["audit_entries_not_one"] == 0


@pytest.mark.django_db(transaction=True)
def test_10_self_approval_and_tampering_are_refused_every_time() -> None:
    figures = _check(security.self_approval_and_tampering(QUICK))
    assert figures["self_approval_decisions"] == 0
    assert figures["tampered_refused"] == figures["tampered_trials"] > 0
    assert figures["tampered_executions"] == 0
    assert figures["executed_digest_mismatch"] == 0


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["approved_arguments_and_fingerprint", "rejection_rewritten", "decision_forged"])
def test_resume_checks_the_approval_row_against_the_audited_decision(kind: str) -> None:
    """Regression (experiment 10): a row rewritten to agree with itself was executed before the
    resume compared it with the decision's append-only audit entry; and (issue 19, defect 7) a decision
    nobody made, the row rewritten and an agreeing audit entry inserted over SQL, was executed before the
    resume checked the entry's mac and its place in the chain."""
    from runs_app.models import Run

    with security.sandbox():
        project = security.new_project("reg10")
        session = security.factories.make_session(project)
        reviewer = security.new_user(project, "rev", "reviewer")
        key = f"reg10-{kind}-{project.slug}"
        run, approval = security.waiting_run(project, session, key=key, arguments={"to": "acme", "amount": 1})
        decision = "reject" if kind == "rejection_rewritten" else "approve"
        if kind not in security.UNDECIDED_TAMPERS:
            security.approval_decide(project=project.pk, approval_id=approval.pk, actor=Actor.for_user(reviewer),
                                     decision=decision, reason="no")
        approval.refresh_from_db()
        security._tamper(kind, approval, reviewer_id=reviewer.pk)
        assert security.resume_run_by_id(run.pk) == "blocked"
        assert Run.objects.get(pk=run.pk).blocked_step == "approval_preconditions"
        assert security.calls_for(key) == []


@pytest.mark.django_db(transaction=True)
def test_11_another_projects_principals_get_404_on_every_object_endpoint() -> None:
    figures = _check(security.tenant_isolation(QUICK))
    assert figures["operations"] >= 25
    assert figures["successes"] == 0
    assert figures["fit_caller_not_404"] == 0
    assert figures["refusals_that_differ_for_a_missing_id"] == 0


@pytest.mark.django_db(transaction=True)
def test_16_every_decision_and_memory_change_is_audited_and_the_log_cannot_be_rewritten() -> None:
    figures = _check(security.audit_log(QUICK))
    assert figures["changes"] >= 30
    assert figures["changes_without_audit"] == 0
    assert figures["audited_api"] and figures["audited_console"] and figures["audited_admin"]
    assert figures["orm_update_refused"] == figures["orm_delete_refused"] == 1
    assert figures["sql_update_refused"] == figures["sql_delete_refused"] == 1
    # As the runtime role (issue 19, defect 7): TRUNCATE, the history of runs, and the ways around triggers.
    assert all(figures[f"{name}_refused"] == 1 for name in security.HISTORY_REWRITES)
    assert figures["forged_entry_detected"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["run", "task", "policy"])
def test_admin_moves_and_policy_deletions_are_audited(kind: str) -> None:
    """Regression (experiment 16): these admin paths changed state without an audit entry."""
    from harness.models import AuditEntry

    with security.sandbox():
        doors = security._Doors()
        call = {
            "run": lambda: doors.admin_action("runs_app/run", "move_to_cancelled",
                                              security.factories.make_run(doors.project, doors.session).pk),
            "task": lambda: doors.admin_action("runs_app/task", "move_to_abandoned",
                                               security.factories.make_task(doors.project).pk),
            "policy": lambda: security._admin_policy_delete(doors),
        }[kind]
        assert call().status_code == 302
        action = {"run": "run.cancelled", "task": "task.abandoned", "policy": "memory.policy_deleted"}[kind]
        entry = AuditEntry.objects.get(project=doors.project, action=action)
        assert entry.actor == f"user:{doors.person.username}"


@pytest.mark.django_db(transaction=True)
def test_13_limits_through_gunicorn_413_over_the_body_limit_400_too_deep_never_500() -> None:
    figures = _check(security.request_limits(QUICK))
    assert figures["server_errors"] == 0
    assert figures["unexpected"] == 0
    assert figures["status_413"] >= 6


def test_a_chunked_body_is_refused_not_read_as_empty(client: Client) -> None:
    """Regression (experiment 13): under WSGI a chunked body reached the views as an empty body."""
    response = client.generic("POST", "/api/v1/sessions/", b'{"role": "writer"}', "application/json",
                              CONTENT_LENGTH="", HTTP_TRANSFER_ENCODING="chunked")
    assert response.status_code == 411
    assert response.json()["code"] == "length_required"


def test_the_depth_scan_stops_at_the_first_bracket_past_the_limit() -> None:
    from harness.http.middleware import json_depth

    assert json_depth(b"[" * 40 + b"]" * 40) == 40
    assert json_depth(b"[" * 40 + b"]" * 40, stop_above=32) == 33
    assert json_depth(b'{"a": "[[[["}', stop_above=0) == 1


@pytest.mark.django_db(transaction=True)
def test_14_the_whole_schema_holds_under_schemathesis() -> None:
    figures = _check(security.schema_fuzz(QUICK))
    assert figures["cases"] >= 150
    assert figures["failing_operations"] == 0


@pytest.mark.django_db(transaction=True)
def test_12_console_csrf_crawl_and_stored_xss_in_chromium() -> None:
    figures = _check(security.console_safety(QUICK))
    assert figures["csrf_refused"] == figures["csrf_posts"] > 0
    assert figures["gets_that_wrote"] == 0
    assert figures["payloads"] == 50
    assert figures["pages_with_xss_marker"] == figures["dialogs"] == figures["stray_requests"] == 0
    assert figures["detector_control_caught"] == 1
