"""Bulk decisions from the inbox: each checked row is one `approval_decide` bound to the version and
fingerprint the page showed, and reports its own result; a row that changed since is refused, not decided."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from harness.actors import Actor
from harness.models import AuditEntry, Project
from runs_app.models import ApprovalRequest, ApprovalStatus, RunEvent, RunStatus
from runs_app.services import approval_decide, approval_request_create, run_transition
from tests import factories
from tests.console.scenario import Scene

pytestmark = pytest.mark.django_db
BULK = reverse("runs:approval_bulk")


def ask(project: Project, ref: str, *, by: Actor | None = None, tool: str = "mail.send") -> ApprovalRequest:
    session = factories.make_session(project, ref=f"S-{ref}")
    run = factories.make_run(project, session, ref=ref, active_agent="coder")
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(
        project=project, run_id=run.pk, tool=tool, arguments={"to": f"{ref}@example.com"},
        idempotency_key=f"k-{ref}", actor=by or Actor.for_agent("coder"),
    )


def shown(client: Client) -> dict[int, str]:
    """The inbox as the reviewer's page shows it: each row's checkbox value, by approval id."""
    body = client.get(reverse("runs:approval_inbox")).content.decode()
    values = re.findall(r'name="item" value="([^"]+)"', body)
    return {int(value.split(":")[0]): value for value in values}


def results(response) -> dict[int, str]:  # type: ignore[no-untyped-def]
    body = response.content.decode()
    rows = re.findall(r'class="bulk-result (?:decided|refused)" data-approval="(\d+)" data-code="([a-z_]+)"', body)
    return {int(pk): code for pk, code in rows}


def test_the_inbox_shows_and_binds_each_rows_fingerprint(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    approval = scene.approval
    assert shown(reviewer_client) == {
        approval.pk: f"{approval.pk}:{approval.version}:{approval.action_fingerprint}"}
    body = reviewer_client.get(reverse("runs:approval_inbox")).content.decode()
    assert f'title="{approval.action_fingerprint}"' in body and 'id="bulk-approve"' in body


def test_bulk_approve_decides_each_through_the_service_and_reports_each(scene: Scene, project,
                                                                        reviewer_client) -> None:  # type: ignore[no-untyped-def]
    second = ask(project, "R-200")
    rows = shown(reviewer_client)
    response = reviewer_client.post(BULK, {"decision": "approve", "item": list(rows.values())})
    assert response.status_code == 200
    assert results(response) == {scene.approval.pk: "approved", second.pk: "approved"}
    for pk in rows:
        approval = ApprovalRequest.objects.get(pk=pk)
        assert approval.status == ApprovalStatus.APPROVED and approval.decided_by.username == "rita"
        assert approval.approved_fingerprint == approval.action_fingerprint
        assert AuditEntry.objects.filter(action="approval.approved", target_id=str(pk)).count() == 1
        assert RunEvent.objects.filter(run_id=approval.run_id, kind="approval.approved").count() == 1


def test_an_item_decided_since_the_page_loaded_is_refused_and_the_others_decided(scene: Scene, project,
                                                                                reviewer_client) -> None:  # type: ignore[no-untyped-def]
    second = ask(project, "R-200")
    rows = shown(reviewer_client)
    ruth = factories.make_user("ruth", role="reviewer", projects=[project])
    approval_decide(project=project, approval_id=second.pk, actor=Actor.of(ruth), decision="reject",
                    reason="not now")  # after rita's page loaded
    response = reviewer_client.post(BULK, {"decision": "approve", "item": list(rows.values())})
    assert results(response) == {scene.approval.pk: "approved", second.pk: "already_decided"}
    assert "Already rejected by ruth" in response.content.decode()
    stale = ApprovalRequest.objects.get(pk=second.pk)
    assert stale.status == ApprovalStatus.REJECTED and stale.decided_by.username == "ruth"
    assert not AuditEntry.objects.filter(action="approval.approved", target_id=str(second.pk)).exists()


def test_an_item_whose_fingerprint_is_not_the_one_shown_is_refused(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    approval = scene.approval
    forged = f"{approval.pk}:{approval.version}:{'0' * 64}"
    response = reviewer_client.post(BULK, {"decision": "approve", "item": [forged]})
    assert results(response) == {approval.pk: "fingerprint_changed"}
    assert ApprovalRequest.objects.get(pk=approval.pk).status == ApprovalStatus.PENDING


def test_a_stale_version_is_refused(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    approval = scene.approval
    stale = f"{approval.pk}:{approval.version + 1}:{approval.action_fingerprint}"
    response = reviewer_client.post(BULK, {"decision": "approve", "item": [stale]})
    assert results(response) == {approval.pk: "version_conflict"}
    assert ApprovalRequest.objects.get(pk=approval.pk).status == ApprovalStatus.PENDING


def test_a_reviewer_cannot_bulk_decide_their_own_request(scene: Scene, project, reviewer, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    own = ask(project, "R-own", by=Actor.of(reviewer))
    rows = shown(reviewer_client)
    response = reviewer_client.post(BULK, {"decision": "approve", "item": list(rows.values())})
    assert results(response) == {scene.approval.pk: "approved", own.pk: "self_approval"}
    assert ApprovalRequest.objects.get(pk=own.pk).status == ApprovalStatus.PENDING


def test_bulk_reject_needs_a_reason_and_then_records_it(scene: Scene, project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    second = ask(project, "R-200")
    rows = list(shown(reviewer_client).values())
    refused = reviewer_client.post(BULK, {"decision": "reject", "reason": "  ", "item": rows})
    assert refused.status_code == 400 and 'id="bulk-error"' in refused.content.decode()
    assert ApprovalRequest.objects.filter(status=ApprovalStatus.PENDING).count() == 2
    response = reviewer_client.post(BULK, {"decision": "reject", "reason": "batch of spam", "item": rows})
    assert results(response) == {scene.approval.pk: "rejected", second.pk: "rejected"}
    assert set(ApprovalRequest.objects.values_list("decision_reason", flat=True)) == {"batch of spam"}


def test_a_malformed_or_empty_selection_decides_nothing(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    assert reviewer_client.post(BULK, {"decision": "approve"}).status_code == 400
    assert reviewer_client.post(BULK, {"decision": "approve", "item": [str(scene.approval.pk)]}).status_code == 400
    assert reviewer_client.post(BULK, {"decision": "maybe", "item": list(shown(reviewer_client).values())}
                                ).status_code == 400
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.PENDING


def test_another_projects_approval_is_not_found_and_untouched(scene: Scene, other_scene: Scene,
                                                              reviewer_client) -> None:  # type: ignore[no-untyped-def]
    theirs = other_scene.approval
    item = f"{theirs.pk}:{theirs.version}:{theirs.action_fingerprint}"
    response = reviewer_client.post(BULK, {"decision": "approve", "item": [item]})
    assert results(response) == {theirs.pk: "not_found"}
    assert ApprovalRequest.objects.get(pk=theirs.pk).status == ApprovalStatus.PENDING


def test_an_operator_cannot_bulk_decide_and_sees_no_checkboxes(scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    assert shown(operator_client) == {}
    item = f"{scene.approval.pk}:{scene.approval.version}:{scene.approval.action_fingerprint}"
    assert operator_client.post(BULK, {"decision": "approve", "item": [item]}).status_code == 403
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.PENDING


def test_the_bulk_form_needs_the_csrf_token(scene: Scene, reviewer) -> None:  # type: ignore[no-untyped-def]
    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer)
    body = client.get(reverse("runs:approval_inbox")).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body)
    assert token is not None  # the form carries it
    item = f"{scene.approval.pk}:{scene.approval.version}:{scene.approval.action_fingerprint}"
    assert client.post(BULK, {"decision": "approve", "item": [item]}).status_code == 403
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.PENDING
    response = client.post(BULK, {"decision": "approve", "item": [item], "csrfmiddlewaretoken": token[1]})
    assert results(response) == {scene.approval.pk: "approved"}
