"""`audit_record` writes its entry with one prepared INSERT (issue 14) instead of `save()`: the same row, chained by the
trigger, the returned instance as `save()` leaves it."""

import datetime as dt

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from harness.actors import Actor
from harness.audit import GENESIS, audit_chain_verify, audit_record, entry_content, entry_mac, link_hash
from harness.models import AuditEntry


@pytest.mark.django_db
def test_the_entry_is_one_insert_chained_by_the_trigger_and_its_mac_verifies(project):
    actor = Actor.for_agent("audit-test")
    data = {"reason": "ok", "nested": {"tuple": (1, 2), 3: "three"}, "none": None, "float": 0.5}
    with CaptureQueriesContext(connection) as queries, transaction.atomic():
        first = audit_record(project=project, actor=actor, action="memory.accepted", target=project, data=data)
    statements = [q["sql"].split()[0] for q in queries.captured_queries]
    assert [s for s in statements if s not in ("SAVEPOINT", "RELEASE")] == ["INSERT"]  # the test's own atomic()
    second = audit_record(project=project.pk, actor=actor, action="memory.deleted", target=project)
    assert first.pk and second.pk and first.pk != second.pk
    assert not first._state.adding and first._state.db == "default"
    assert first.data == {"reason": "ok", "nested": {"tuple": [1, 2], "3": "three"}, "none": None, "float": 0.5}
    rows = {e.pk: e for e in AuditEntry.objects.filter(pk__in=[first.pk, second.pk])}
    one, two = rows[first.pk], rows[second.pk]
    assert (one.project_id, one.actor, one.action, one.target_type, one.target_id, one.data, one.mac) == (
        project.pk, actor.label, "memory.accepted", "project", str(project.pk), first.data, first.mac)
    assert one.created_at == first.created_at and isinstance(one.created_at, dt.datetime)
    assert one.mac == entry_mac(entry_content(one))  # what the resume and verify_audit check, read back
    assert (one.seq, one.prev_hash, one.hash) == (1, GENESIS, link_hash(GENESIS, one.mac))
    assert (two.seq, two.prev_hash, two.hash) == (2, one.hash, link_hash(one.hash, two.mac))
    assert two.data == {}
    (report,) = audit_chain_verify(project_ids=[project.pk])
    assert report.breaks == []


@pytest.mark.django_db
def test_the_entry_rolls_back_with_its_transaction(project):
    class Boom(Exception):
        pass

    def write_then_fail() -> None:
        with transaction.atomic():
            audit_record(project=project, actor=Actor.for_agent("a"), action="memory.accepted", target=project)
            raise Boom

    with pytest.raises(Boom):
        write_then_fail()
    assert not AuditEntry.objects.filter(project=project).exists()
