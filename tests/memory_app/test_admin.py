"""The admin moves memory only through the services, and edits write policies."""

import pytest
from django.contrib.auth.models import User

from harness.models import AuditEntry
from memory_app.models import MemoryRecord, MemoryWritePolicy
from memory_app.services import memory_write

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_(client, project):  # type: ignore[no-untyped-def]
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw-123456"))
    return client


def test_the_tombstone_action_deletes_through_the_service(admin_client_, project, agent, run):
    record = memory_write(project=project, actor=agent, scope="project", content="Old fact.",
                          source_run_id=run.pk).record
    response = admin_client_.post("/admin/memory_app/memoryrecord/", {
        "action": "tombstone", "_selected_action": [record.pk],
    })
    assert MemoryRecord.objects.get(pk=record.pk).status == "active"  # no reason given: refused
    response = admin_client_.post("/admin/memory_app/memoryrecord/", {
        "action": "tombstone", "_selected_action": [record.pk], "reason": "Stale.",
    })
    assert response.status_code == 302
    stored = MemoryRecord.objects.get(pk=record.pk)
    assert (stored.status, stored.deleted_by, stored.version) == ("deleted", "user:root", 2)
    assert AuditEntry.objects.get(action="memory.deleted", target_id=str(record.pk)).data["reason"] == "Stale."


def test_the_record_page_edits_nothing(admin_client_, project, agent, run):
    record = memory_write(project=project, actor=agent, scope="project", content="Fixed fact.",
                          source_run_id=run.pk).record
    page = admin_client_.get(f"/admin/memory_app/memoryrecord/{record.pk}/change/")
    assert page.status_code == 200
    assert b'name="content"' not in page.content and b'name="status"' not in page.content


def test_a_policy_with_a_broken_pattern_is_refused_and_a_good_one_audited(admin_client_, project):
    url = "/admin/memory_app/memorywritepolicy/add/"
    base = {"project": project.pk, "scope": "user", "decision": "hold", "max_chars": 500,
            "provenance_required": "on"}
    refused = admin_client_.post(url, {**base, "blocked_patterns": '["(unclosed"]'})
    assert refused.status_code == 200 and not MemoryWritePolicy.objects.exists()
    saved = admin_client_.post(url, {**base, "blocked_patterns": r'["\\bpassword\\b"]'})
    assert saved.status_code == 302
    policy = MemoryWritePolicy.objects.get()
    assert (policy.decision, policy.blocked_patterns) == ("hold", [r"\bpassword\b"])
    assert AuditEntry.objects.filter(action="memory.policy_saved").exists()
