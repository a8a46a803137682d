"""Deciding approvals from the console: approve, reject with a reason, edit and approve, races."""

import json

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from harness.canonical import action_fingerprint
from harness.models import AuditEntry
from runs_app.models import ApprovalRequest, ApprovalStatus, RunEvent
from tests import factories
from tests.console.scenario import Scene, build_scene
from tests.threads import run_concurrently

HTMX = {"HTTP_HX_REQUEST": "true"}


def url(name: str, scene: Scene) -> str:
    return reverse(f"runs:{name}", args=[scene.approval.pk])


@pytest.mark.django_db
class TestDecisions:
    def test_approve_records_the_requested_fingerprint_and_shows_the_trace(self, scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
        response = reviewer_client.post(url("approval_approve", scene), {"version": scene.approval.version}, **HTMX)
        assert response.status_code == 200
        approval = ApprovalRequest.objects.get(pk=scene.approval.pk)
        assert approval.status == ApprovalStatus.APPROVED
        assert approval.decided_by.username == "rita"
        assert approval.approved_fingerprint == approval.action_fingerprint
        body = response.content.decode()
        # Polls while the run waits, and at once when the push says it changed (issue 35).
        assert 'id="resume-trace"' in body and 'hx-trigger="every 1s, harness-push from:body"' in body
        assert "approval.approved" in body  # the trace starts at the decision
        decided = RunEvent.objects.get(run=scene.run, kind="approval.approved")
        # each event with its data as compact JSON (runs_app.presentation.events), escaped
        assert f"<code>{escape(json.dumps(decided.data, sort_keys=True, ensure_ascii=False))}</code>" in body
        assert AuditEntry.objects.filter(action="approval.approved", target_id=str(approval.pk)).count() == 1

    def test_a_plain_post_redirects_back_to_the_page(self, scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
        response = reviewer_client.post(url("approval_approve", scene), {"version": scene.approval.version})
        assert response.status_code == 302 and response["Location"] == url("approval_detail", scene)

    def test_reject_needs_a_reason(self, scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
        response = reviewer_client.post(url("approval_reject", scene), {"reason": "   "}, **HTMX)
        assert response.status_code == 200
        assert "This field is required" in response.content.decode() or "needs a reason" in response.content.decode()
        assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.PENDING
        assert reviewer_client.post(url("approval_reject", scene), {"reason": ""}).status_code == 400

    def test_reject_with_a_reason_records_it(self, scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
        response = reviewer_client.post(
            url("approval_reject", scene), {"version": scene.approval.version, "reason": "Never force-push"}, **HTMX
        )
        approval = ApprovalRequest.objects.get(pk=scene.approval.pk)
        assert approval.status == ApprovalStatus.REJECTED and approval.decision_reason == "Never force-push"
        assert "Never force-push" in response.content.decode()
        assert RunEvent.objects.filter(run=scene.run, kind="approval.rejected").exists()

    def test_edit_and_approve_records_a_new_fingerprint(self, scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
        edited = {"branch": "fix/login-2", "remote": "origin", "force": False}
        response = reviewer_client.post(
            url("approval_edit_approve", scene),
            {
                "version": scene.approval.version,
                "arguments": '{"branch": "fix/login-2", "remote": "origin", "force": false}',
                "reason": "rename",
            },
            **HTMX,
        )
        approval = ApprovalRequest.objects.get(pk=scene.approval.pk)
        assert approval.status == ApprovalStatus.APPROVED
        assert approval.approved_arguments == edited
        assert approval.approved_fingerprint == action_fingerprint("git.push", edited)
        assert approval.approved_fingerprint != approval.action_fingerprint
        body = response.content.decode()
        assert approval.approved_fingerprint in body and "edited" in body

    def test_edit_with_invalid_json_is_refused(self, scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
        response = reviewer_client.post(url("approval_edit_approve", scene), {"arguments": "{nope"}, **HTMX)
        assert "Not valid JSON" in response.content.decode()
        assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.PENDING

    def test_the_losing_reviewer_is_told_who_decided(self, scene, project, reviewer_client, client_for) -> None:  # type: ignore[no-untyped-def]
        other = client_for(factories.make_user("ruth", role="reviewer", projects=[project]))
        version = scene.approval.version
        assert reviewer_client.post(url("approval_approve", scene), {"version": version}, **HTMX).status_code == 200
        response = other.post(url("approval_reject", scene), {"version": version, "reason": "no"}, **HTMX)
        body = response.content.decode()
        assert 'id="conflict"' in body and "Already approved by rita" in body
        approval = ApprovalRequest.objects.get(pk=scene.approval.pk)
        assert approval.status == ApprovalStatus.APPROVED and approval.decided_by.username == "rita"
        # Without htmx the loser gets a 409 page saying the same.
        plain = other.post(url("approval_approve", scene), {"version": version})
        assert plain.status_code == 409 and "Already approved by rita" in plain.content.decode()


@pytest.mark.django_db(transaction=True)
def test_competing_reviewers_at_once_one_decision_stands(project) -> None:  # type: ignore[no-untyped-def]
    scene = build_scene(project)
    users = [factories.make_user(name, role="reviewer", projects=[project]) for name in ("rita", "ruth")]
    moves = [(users[0], "approve"), (users[1], "reject")]

    def decide(i: int) -> str:
        user, decision = moves[i]
        client = Client()
        client.force_login(user)
        data = {"version": scene.approval.version, "reason": "race"}
        return client.post(url(f"approval_{decision}", scene), data, **HTMX).content.decode()

    pages = run_concurrently(2, decide, timeout=30)
    assert not [p for p in pages if isinstance(p, BaseException)], pages
    results = {user.username: page for (user, _), page in zip(moves, pages, strict=True)}
    approval = ApprovalRequest.objects.select_related("decided_by").get(pk=scene.approval.pk)
    winner = approval.decided_by.username
    loser = "ruth" if winner == "rita" else "rita"
    assert approval.status in (ApprovalStatus.APPROVED, ApprovalStatus.REJECTED)
    assert f"Already {approval.status} by {winner}" in results[loser]
    assert 'id="conflict"' not in results[winner]
    assert AuditEntry.objects.filter(target_type="approvalrequest", target_id=str(approval.pk)).count() == 1


@pytest.mark.django_db
def test_a_tool_with_no_schema_says_so_and_a_raw_edit_without_a_reason_is_refused(scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    """Issue 32: the page says the arguments were not checked; an edit needs a reason (nothing decided without)."""
    page = reviewer_client.get(url("approval_detail", scene)).content.decode()
    assert "No declared schema: the arguments were not checked." in page
    assert 'id="typed-edit"' not in page and 'id="raw-edit"' in page  # the raw JSON form alone
    response = reviewer_client.post(url("approval_edit_approve", scene), {
        "version": scene.approval.version, "arguments": json.dumps({"branch": "x"}), "reason": " "}, **HTMX)
    assert "An edit needs a reason" in response.content.decode()
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.PENDING
