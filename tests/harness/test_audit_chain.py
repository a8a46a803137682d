"""The audit log's hash chain and macs (issue 19, defect 7; harness/audit.py, runs_app migration 0013).

Each entry carries its project's next seq, the previous entry's hash and a mac of its content; the chain is
computed by a trigger under the project's head row lock, so concurrent writers never fork it. An entry
inserted over SQL (no valid mac), one taken out of the middle, or one cut off the end, is reported by
`manage.py verify_audit`; the resume refuses a forged decision (tests/reliability/test_security_quick.py).
"""

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from harness.actors import Actor
from harness.audit import GENESIS, audit_chain_verify, audit_record, link_hash
from harness.models import AuditChainHead, AuditEntry, Project
from tests import factories
from tests.threads import run_concurrently

AGENT = Actor.for_agent("chain-test")


def _write(project: Project, n: int) -> None:
    for i in range(n):
        audit_record(project=project, actor=AGENT, action="memory.accepted", target=project, data={"i": i})


def _breaks(project: Project) -> list[tuple[int | None, str]]:
    (report,) = audit_chain_verify(project_ids=[project.pk])
    return [(b.seq, b.reason) for b in report.breaks]


def as_owner_without_triggers(sql: str, params: list[Any]) -> None:
    """What only a superuser (the suite's role) can do: rewrite the log with its triggers off."""
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        try:
            cursor.execute(sql, params)
        finally:
            cursor.execute("RESET session_replication_role")


@pytest.mark.django_db
def test_each_entry_links_to_the_one_before_it_per_project() -> None:
    a, b = factories.make_project("chain-a"), factories.make_project("chain-b")
    _write(a, 3)
    _write(b, 2)
    rows = list(AuditEntry.objects.filter(project=a).order_by("seq").values_list("seq", "prev_hash", "hash", "mac"))
    assert [r[0] for r in rows] == [1, 2, 3]
    assert rows[0][1] == GENESIS
    for (_, _, before, _), (_, prev, hash_, mac) in zip(rows, rows[1:], strict=False):
        assert prev == before and hash_ == link_hash(prev, mac)
    assert list(AuditEntry.objects.filter(project=b).order_by("seq").values_list("seq", flat=True)) == [1, 2]
    assert AuditChainHead.objects.get(project=a).hash == rows[-1][2]
    assert _breaks(a) == [] and _breaks(b) == []


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_queue_on_the_head_and_never_fork_the_chain() -> None:
    project = factories.make_project("chain-race")
    results = run_concurrently(12, lambda i: audit_record(project=project, actor=AGENT, action="memory.accepted",
                                                          target=project, data={"writer": i}))
    assert not [r for r in results if isinstance(r, Exception)], results
    seqs = sorted(seq for seq in AuditEntry.objects.filter(project=project).values_list("seq", flat=True) if seq)
    assert seqs == list(range(1, 13))
    assert _breaks(project) == []


@pytest.mark.django_db
def test_an_entry_inserted_over_sql_is_chained_but_its_mac_gives_it_away() -> None:
    project = factories.make_project("chain-forged")
    _write(project, 2)
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO harness_auditentry (project_id, actor, action, target_type, target_id, data, "
                       "created_at, prev_hash, hash, mac) VALUES (%s, 'user:mallory', 'approval.approved', "
                       "'approvalrequest', '7', '{}', now(), 'x', 'y', repeat('ab', 32))", [project.pk])
    forged = AuditEntry.objects.get(project=project, actor="user:mallory")
    assert forged.seq == 3 and forged.prev_hash != "x"  # the trigger, not the writer, placed it
    assert _breaks(project) == [(3, "the entry's mac does not verify: it was not written by the application, "
                                    "or was altered")]
    _write(project, 1)  # the chain goes on past it
    assert [seq for seq, _ in _breaks(project)] == [3]


@pytest.mark.django_db
def test_an_entry_taken_out_of_the_middle_or_off_the_end_is_reported() -> None:
    middle, end = factories.make_project("chain-middle"), factories.make_project("chain-end")
    _write(middle, 4)
    _write(end, 3)
    as_owner_without_triggers("DELETE FROM harness_auditentry WHERE project_id = %s AND seq = 2", [middle.pk])
    as_owner_without_triggers("DELETE FROM harness_auditentry WHERE project_id = %s AND seq = 3", [end.pk])
    assert _breaks(middle) == [(2, "entries 2..2 of the chain are missing")]
    assert _breaks(end) == [(3, "the head names entry 3, the chain ends at entry 2: entries were taken off its end")]


@pytest.mark.django_db
def test_an_entry_altered_by_the_owner_is_reported() -> None:
    project = factories.make_project("chain-altered")
    _write(project, 2)
    as_owner_without_triggers("UPDATE harness_auditentry SET actor = 'user:someone-else' "
                               "WHERE project_id = %s AND seq = 1", [project.pk])
    assert [seq for seq, _ in _breaks(project)] == [1]


@pytest.mark.django_db
def test_verify_audit_prints_each_chain_and_fails_on_a_broken_one() -> None:
    good, bad = factories.make_project("verify-good"), factories.make_project("verify-bad")
    _write(good, 2)
    _write(bad, 2)
    out = StringIO()
    call_command("verify_audit", "--project", "verify-good", stdout=out)
    head = AuditChainHead.objects.get(project=good)
    assert f"verify-good: ok, 2 entries, head #2 {head.hash}" in out.getvalue()
    as_owner_without_triggers("DELETE FROM harness_auditentry WHERE project_id = %s AND seq = 1", [bad.pk])
    out = StringIO()
    with pytest.raises(CommandError, match="broken"):
        call_command("verify_audit", stdout=out)
    assert "verify-bad: BROKEN" in out.getvalue() and "verify-good: ok" in out.getvalue()
