"""A person's memory delete or edit says why (issue 32): refused without a reason (400 `reason_required`) at the
API, and the reason lands in the audit entry's data with what changed, never the content."""

import pytest

from harness.models import AuditEntry
from memory_app.models import MemoryRecord
from tests.memory_app.test_api import BASE, World, client_for, world  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


def _audit(action: str, record: MemoryRecord) -> dict:  # type: ignore[type-arg]
    return AuditEntry.objects.get(action=action, target_id=str(record.pk)).data  # type: ignore[no-any-return]


def test_delete_without_a_reason_is_refused_then_the_reason_is_audited(world: World) -> None:  # noqa: F811
    operator = client_for(world, "operator")
    url = f"{BASE}/records/{world.record.pk}/delete/"
    for body in ({"expected_version": 1}, {"expected_version": 1, "reason": "  "}):
        refused = operator.post(url, body, format="json")
        assert (refused.status_code, refused.json()["code"]) == (400, "reason_required")
    assert MemoryRecord.objects.get(pk=world.record.pk).status == "active"
    assert operator.post(url, {"expected_version": 1, "reason": "The sea moved."}, format="json").status_code == 200
    data = _audit("memory.deleted", world.record)
    assert data["reason"] == "The sea moved."
    assert (data["scope"], data["subject"], data["content_hash"]) == ("project", "sea", world.record.content_hash)
    assert "content" not in data


def test_an_operators_edit_needs_a_reason_an_agents_own_edit_does_not(world: World) -> None:  # noqa: F811
    url = f"{BASE}/records/{world.record.pk}/supersede/"
    operator = client_for(world, "operator")
    refused = operator.post(url, {"content": "The sea is south.", "expected_version": 1}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (400, "reason_required")
    edited = operator.post(url, {"content": "The sea is south.", "expected_version": 1, "reason": "Checked a map."},
                           format="json")
    assert edited.status_code == 201
    data = _audit("memory.superseded", world.record)
    assert data["reason"] == "Checked a map." and data["by"] == edited.json()["id"]
    assert data["content_length"] == {"from": len("The sea is north."), "to": len("The sea is south.")}
    assert data["content_hash"]["from"] == world.record.content_hash != data["content_hash"]["to"]
    mine = client_for(world, "agent").post(f"{BASE}/records/{edited.json()['id']}/supersede/",
                                           {"content": "The sea is east.", "expected_version": 1}, format="json")
    assert mine.status_code in (201, 403)  # the operator's edit is not the agent's: not_owner, never reason_required
    assert mine.json().get("code") != "reason_required"


def test_bulk_delete_needs_one_reason_for_all(world: World) -> None:  # noqa: F811
    operator = client_for(world, "operator")
    refused = operator.post(f"{BASE}/records/bulk-delete/", {"project": "acme", "ids": [world.record.pk]},
                            format="json")
    assert (refused.status_code, refused.json()["code"]) == (400, "reason_required")
    done = operator.post(f"{BASE}/records/bulk-delete/",
                         {"project": "acme", "ids": [world.record.pk], "reason": "Cleanup."}, format="json")
    assert done.json()["done"] == [world.record.pk]
    assert _audit("memory.deleted", world.record)["reason"] == "Cleanup."
