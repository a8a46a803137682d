"""Memory curation from the console: supersede, delete with confirmation, bulk, and the held queue."""

import pytest
from django.urls import reverse

from harness.actors import Actor
from memory_app.models import MemoryRecord, MemoryStatus
from memory_app.services import memory_write
from tests.console.scenario import Scene

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def test_inline_edit_supersedes_and_records_the_editor(scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    old = scene.memory
    form = operator_client.get(reverse("memory:record_edit", args=[old.pk]) + "?part=record-card", **HTMX)
    assert 'id="save-supersede"' in form.content.decode() and "<html" not in form.content.decode()
    response = operator_client.post(
        reverse("memory:record_edit", args=[old.pk]), {"content": "The bug is in auth.py:42", "version": old.version,
                                                     "reason": "wrong file"},
        **HTMX,
    )
    assert response.status_code == 200
    old.refresh_from_db()
    assert old.status == MemoryStatus.SUPERSEDED
    new = MemoryRecord.objects.get(pk=old.superseded_by.pk)
    assert new.status == MemoryStatus.ACTIVE and new.provenance_kind == "edited"
    assert new.source_person.username == "otto"
    body = response.content.decode()
    assert f"Record {old.pk} is now superseded" in body
    assert response["HX-Push-Url"] == reverse("memory:record_detail", args=[new.pk])
    # The chain reads both ways.
    for record in (old, new):
        chain = operator_client.get(reverse("memory:record_detail", args=[record.pk])).content.decode()
        assert f'data-record="{old.pk}"' in chain and f'data-record="{new.pk}"' in chain


def test_a_stale_edit_loses_and_says_so(scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    old = scene.memory
    url = reverse("memory:record_edit", args=[old.pk])
    first = {"content": "first", "version": old.version, "reason": "r"}
    assert operator_client.post(url, first, **HTMX).status_code == 200
    response = operator_client.post(url, {"content": "second", "version": old.version, "reason": "r"}, **HTMX)
    assert 'class="notice"' in response.content.decode()
    assert MemoryRecord.objects.filter(content="second").count() == 0


def test_delete_needs_confirmation_then_leaves_a_tombstone(scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    url = reverse("memory:record_delete", args=[scene.memory.pk])
    assert 'id="confirm-delete"' in operator_client.get(url).content.decode()
    assert operator_client.post(url, {"version": scene.memory.version}).status_code == 400
    assert MemoryRecord.objects.get(pk=scene.memory.pk).status == MemoryStatus.ACTIVE
    response = operator_client.post(url, {"version": scene.memory.version, "confirm": "on", "reason": "obsolete"})
    assert response.status_code == 302
    record = MemoryRecord.objects.get(pk=scene.memory.pk)
    assert record.status == MemoryStatus.DELETED and record.deleted_by == "user:otto" and record.deleted_at


def test_bulk_delete_and_expire(scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    actor = Actor.for_agent("coder")
    ids = [
        memory_write(  # type: ignore[union-attr]
            project=scene.project, actor=actor, scope="project", content=f"fact {i}", source_run_id=scene.run.pk
        ).record.pk
        for i in range(4)
    ]
    bulk = reverse("memory:record_bulk")
    response = operator_client.post(bulk, {"ids": ids[:2], "action": "delete", "confirm": "on", "reason": "test facts"})
    assert response.status_code == 302
    assert set(MemoryRecord.objects.filter(pk__in=ids[:2]).values_list("status", flat=True)) == {MemoryStatus.DELETED}
    operator_client.post(reverse("memory:record_bulk"), {"ids": ids[2:], "action": "expire", "confirm": "on"})
    expired = MemoryRecord.objects.filter(pk__in=ids[2:])
    assert all(r.expires_at is not None and r.status == MemoryStatus.ACTIVE for r in expired)
    stale = operator_client.get(reverse("memory:record_list") + "?freshness=stale").content.decode()
    assert all(f'data-record="{pk}"' in stale for pk in ids[2:])
    # Without the confirmation box nothing happens.
    operator_client.post(reverse("memory:record_bulk"), {"ids": [scene.memory.pk], "action": "delete", "reason": "r"})
    assert MemoryRecord.objects.get(pk=scene.memory.pk).status == MemoryStatus.ACTIVE


def test_held_records_are_listed_and_reviewed(scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    from memory_app.models import MemoryWritePolicy

    MemoryWritePolicy.objects.create(project=scene.project, scope="user", decision="hold")
    held = memory_write(
        project=scene.project, actor=Actor.for_agent("coder"), scope="user", scope_key="u1", content="Likes tabs",
        source_run_id=scene.run.pk,
    ).record
    assert held is not None and held.status == MemoryStatus.HELD
    page = operator_client.get(reverse("memory:held_list")).content.decode()
    assert f'data-record="{held.pk}"' in page and "Likes tabs" in page
    operator_client.post(reverse("memory:held_review", args=[held.pk]), {"version": held.version, "decision": "accept"})
    assert MemoryRecord.objects.get(pk=held.pk).status == MemoryStatus.ACTIVE


def test_list_filters(scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    url = reverse("memory:record_list")
    assert f'data-record="{scene.memory.pk}"' in operator_client.get(url + "?text=login&scope=project").content.decode()
    assert f'data-record="{scene.memory.pk}"' not in operator_client.get(url + "?text=nothing").content.decode()
    assert f'data-record="{scene.memory.pk}"' not in operator_client.get(url + "?provenance=told").content.decode()
    fragment = operator_client.get(url + "?status=active&part=record-table", **HTMX).content.decode()
    assert fragment.lstrip().startswith('<form id="record-table"') and f'data-record="{scene.memory.pk}"' in fragment


def test_a_conflict_is_shown_and_resolved_by_keeping_the_other_record(scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    other = memory_write(
        project=scene.project, actor=Actor.for_agent("tester"), scope="project", subject="login-bug",
        content="The login bug lives in session.py", source_run_id=scene.run.pk,
    ).record
    assert other is not None
    page = operator_client.get(reverse("memory:record_detail", args=[scene.memory.pk])).content.decode()
    assert 'id="conflicts"' in page and f'data-record="{other.pk}"' in page
    response = operator_client.post(
        reverse("memory:record_resolve", args=[scene.memory.pk]), {"keep": other.pk, "version": scene.memory.version}
    )
    assert response.status_code == 302 and response["Location"] == reverse("memory:record_detail", args=[other.pk])
    scene.memory.refresh_from_db()
    assert scene.memory.status == MemoryStatus.SUPERSEDED and scene.memory.superseded_by_id == other.pk


def test_bulk_has_no_default_action_and_delete_asks_why(scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    page = operator_client.get(reverse("memory:record_list")).content.decode()
    assert '<option value="" selected>Choose an action…</option>' in page
    assert '<option value="delete" selected' not in page
    bulk = reverse("memory:record_bulk")
    # No action picked: nothing happens, and the page says what to do.
    response = operator_client.post(bulk, {"ids": [scene.memory.pk], "confirm": "on"}, follow=True)
    assert "Choose what to do with the selected records." in response.content.decode()
    response = operator_client.post(bulk, {"ids": [scene.memory.pk], "action": "delete", "confirm": "on"}, follow=True)
    assert "a reason is required" in response.content.decode()
    assert MemoryRecord.objects.get(pk=scene.memory.pk).status == MemoryStatus.ACTIVE


def test_delete_and_edit_pages_ask_why_and_audit_it(scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    from harness.models import AuditEntry

    record = scene.memory
    delete = reverse("memory:record_delete", args=[record.pk])
    assert 'name="reason"' in operator_client.get(delete).content.decode()
    refused = operator_client.post(delete, {"version": record.version, "confirm": "on"})
    assert refused.status_code == 400 and "a reason is required" in refused.content.decode()
    edit = reverse("memory:record_edit", args=[record.pk])
    refused = operator_client.post(edit, {"content": "New words.", "version": record.version}, **HTMX)
    assert "a reason is required" in refused.content.decode()
    assert MemoryRecord.objects.get(pk=record.pk).status == MemoryStatus.ACTIVE
    operator_client.post(delete, {"version": record.version, "confirm": "on", "reason": "Out of date."})
    entry = AuditEntry.objects.get(action="memory.deleted", target_id=str(record.pk))
    assert entry.data["reason"] == "Out of date." and entry.data["scope"] == record.scope
