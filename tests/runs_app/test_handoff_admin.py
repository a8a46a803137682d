"""The admin lists handoffs read-only and cancels them through `handoff_cancel` (audited), never by editing."""

import datetime as dt

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from harness.actors import Actor
from harness.models import AuditEntry
from runs_app.models import Handoff, HandoffStatus, Run, RunStatus
from runs_app.services import handoff_issue, run_transition
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, db):  # type: ignore[no-untyped-def]
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


def _issued(project) -> Handoff:  # type: ignore[no-untyped-def]
    origin = factories.make_run(project)
    run_transition(project=project, run_id=origin.pk, to=RunStatus.RUNNING, expected_version=None)
    receiver = factories.make_session(project, role="specialist")
    return handoff_issue(project=project, origin_run_id=origin.pk, receiver_session_id=receiver.pk,
                         objective="Research the lamp.", inputs=[], allowed_capabilities=[],
                         output_schema={"type": "object"}, deadline=timezone.now() + dt.timedelta(hours=1),
                         actor=Actor.for_agent("writer"))


def test_the_admin_cancels_through_the_service_and_the_origin_run_goes_back(admin_client, project) -> None:  # type: ignore[no-untyped-def]
    handoff = _issued(project)
    assert admin_client.get(f"/admin/runs_app/handoff/{handoff.pk}/change/").status_code == 200

    admin_client.post("/admin/runs_app/handoff/", {"action": "cancel", "_selected_action": [handoff.pk]})

    assert Handoff.objects.get(pk=handoff.pk).status == HandoffStatus.CANCELLED
    origin = Run.objects.get(pk=handoff.origin_run_id)
    assert origin.status == RunStatus.RUNNING and origin.bound_result["outcome"] == "cancelled"
    assert AuditEntry.objects.filter(action="handoff.cancelled", target_id=str(handoff.pk)).count() == 1


def test_the_admin_cannot_edit_add_or_delete_a_handoff(admin_client, project) -> None:  # type: ignore[no-untyped-def]
    handoff = _issued(project)
    admin_client.post(f"/admin/runs_app/handoff/{handoff.pk}/change/", {"status": "returned", "packet": "{}"})
    stored = Handoff.objects.get(pk=handoff.pk)
    assert (stored.status, stored.packet) == (HandoffStatus.ISSUED, handoff.packet)
    assert admin_client.get("/admin/runs_app/handoff/add/").status_code == 403
    assert admin_client.get(f"/admin/runs_app/handoff/{handoff.pk}/delete/").status_code == 403
