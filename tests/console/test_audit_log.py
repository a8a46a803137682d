"""The audit log page (/audit/): every entry of the user's projects, filtered by the URL, paged by seeking,
linked to its target, its data escaped; each project's chain verification, kept between checks."""

import datetime as dt
import html
import re
from io import StringIO
from typing import Any
from urllib.parse import urlencode

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_record
from harness.models import AuditEntry, AuditVerification, Project
from memory_app.models import MemoryRecord
from runs_app.models import Run
from runs_app.selectors.paging import seek_cursor
from tests import factories
from tests.harness.test_audit_chain import as_owner_without_triggers

pytestmark = pytest.mark.django_db
URL = reverse("audit_log")
VERIFY = reverse("audit_verify")
ALICE = Actor.for_agent("alice")


def shown(body: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'data-entry="(\d+)"', body)]


def listed(client: Client, **params: Any) -> list[int]:
    response = client.get(f"{URL}?{urlencode(params, doseq=True)}")
    assert response.status_code == 200
    return shown(response.content.decode())


def write(project: Project, n: int, *, action: str = "memory.accepted", actor: Actor = ALICE,
          target: Any = None, data: dict[str, Any] | None = None) -> list[AuditEntry]:
    return [audit_record(project=project, actor=actor, action=action, target=target or project,
                         data=data if data is not None else {"i": i}) for i in range(n)]


def chain_cell(body: str, slug: str) -> str:
    row = body.split(f'data-project="{slug}"', 1)[1].split("</tr>", 1)[0]
    cell = row.split('class="chain-state">', 1)[1].split("</td>", 1)[0]
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", cell)))


def test_entries_are_newest_first_and_each_filter_is_a_query_parameter(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    run = factories.make_run(project, ref="R-1")
    approved = write(project, 1, action="approval.approved", actor=Actor.for_agent("rita"), target=run,
                     data={"reason": "looks right"})[0]
    memory = write(project, 2, action="memory.accepted")
    deleted = write(project, 1, action="memory.deleted", data={"why": "stale lighthouse"})[0]
    everything = [deleted.pk, memory[1].pk, memory[0].pk, approved.pk]
    assert listed(reviewer_client) == everything
    assert listed(reviewer_client, actor="agent:rita") == [approved.pk]
    assert listed(reviewer_client, action="memory.deleted") == [deleted.pk]
    assert listed(reviewer_client, action="memory.") == [deleted.pk, memory[1].pk, memory[0].pk]  # the family
    assert listed(reviewer_client, target_type="run", target_id=str(run.pk)) == [approved.pk]
    assert listed(reviewer_client, q="LIGHTHOUSE") == [deleted.pk]  # text in the data
    assert listed(reviewer_client, q="rita") == [approved.pk]  # and in the actor
    assert listed(reviewer_client, project="acme", action="approval.approved") == [approved.pk]
    assert listed(reviewer_client, project="globex") == []  # not the user's: nothing, not an error
    # A date range: an entry of last week is outside "since yesterday".
    week_ago = timezone.now() - dt.timedelta(days=7)
    old = AuditEntry(project=project, actor="user:old", action="memory.accepted", target_type="project",
                     target_id=str(project.pk), created_at=week_ago)
    old.save(force_insert=True)  # the trigger chains it (its mac is empty: the chain check would say so)
    cut = (timezone.localtime() - dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")  # a datetime-local input
    assert listed(reviewer_client, created_after=cut) == everything
    assert listed(reviewer_client, created_before=cut) == [old.pk]
    # A bad value is named beside the form and not applied; the others still are.
    body = reviewer_client.get(f"{URL}?created_after=yesterday&action=memory.deleted").content.decode()
    assert 'id="filter-errors"' in body and shown(body) == [deleted.pk]


def test_pages_seek_older_and_back_to_newer(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    made = write(project, 120)
    newest_first = [e.pk for e in reversed(made)]
    body = reviewer_client.get(URL).content.decode()
    assert shown(body) == newest_first[:50] and 'id="audit-newer"' not in body
    older = re.search(r'href="\?after=([\d.]+)" id="audit-older"', body)
    assert older
    second = reviewer_client.get(f"{URL}?after={older[1]}").content.decode()
    assert shown(second) == newest_first[50:100]
    third_cursor = re.search(r'after=([\d.]+)" id="audit-older"', second)
    assert third_cursor
    third = reviewer_client.get(f"{URL}?after={third_cursor[1]}").content.decode()
    assert shown(third) == newest_first[100:] and 'id="audit-older"' not in third
    back = re.search(r'before=([\d.]+)" id="audit-newer"', third)
    assert back
    assert shown(reviewer_client.get(f"{URL}?before={back[1]}").content.decode()) == newest_first[50:100]
    # Filters travel with the cursor.
    filtered = reviewer_client.get(f"{URL}?action=memory.accepted&after={older[1]}").content.decode()
    assert shown(filtered) == newest_first[50:100] and "action=memory.accepted&amp;after=" in filtered


def test_another_projects_entries_never_appear(project, other_project, reviewer_client, operator_client) -> None:  # type: ignore[no-untyped-def]
    mine = write(project, 2)
    write(other_project, 3, data={"secret": "globex-only"})
    for params in ({}, {"project": "globex"}, {"q": "globex-only"}, {"target_type": "project"}):
        body = reviewer_client.get(f"{URL}?{urlencode(params)}").content.decode()
        table = body.split('id="audit-table"', 1)[1]
        assert set(shown(body)) <= {e.pk for e in mine} and "globex" not in table
        assert 'data-project="globex"' not in body  # nor its chain
    # Verifying another project's chain is a 404, and stores nothing.
    assert operator_client.post(VERIFY, {"project": "globex"}).status_code == 404
    assert not AuditVerification.objects.filter(project=other_project).exists()


def test_each_entry_links_to_its_target(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    run = factories.make_run(project, ref="R-linked")
    record = MemoryRecord.objects.create(project=project, scope="project", content="fact", content_hash="h",
                                         provenance_kind="observed")
    write(project, 1, action="approval.approved", target=run)
    write(project, 1, action="memory.accepted", target=record)
    write(project, 1, action="memory.policy_saved")  # a project: no page of its own to link to
    body = reviewer_client.get(URL).content.decode()
    assert f'href="{reverse("runs:run_inspector", args=[run.pk])}" class="target-link"' in body
    assert f'href="{reverse("memory:record_detail", args=[record.pk])}" class="target-link"' in body
    assert body.count('class="target-link"') == 2
    assert reviewer_client.get(reverse("runs:run_inspector", args=[run.pk])).status_code == 200


def test_an_entrys_data_and_actor_are_escaped(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    payload = "<script>alert(1)</script>"
    write(project, 1, actor=Actor.for_agent(payload), data={"reason": payload, payload: "<img src=x onerror=alert(2)>"})
    body = reviewer_client.get(URL).content.decode()
    assert "<script>alert" not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body  # shown, as text
    assert '<pre class="audit-data">' in body


def test_verification_is_kept_incremental_and_finds_a_tampered_entry(project, operator_client) -> None:  # type: ignore[no-untyped-def]
    write(project, 3)
    assert "never verified (3 entries)" in chain_cell(operator_client.get(URL).content.decode(), "acme")
    # A page load walks nothing: the state is what the last check stored.
    with CaptureQueriesContext(connection) as ctx:
        operator_client.get(URL)
    assert not [q for q in ctx.captured_queries if '"harness_auditentry"."seq" ASC' in q["sql"]]

    response = operator_client.post(VERIFY, {"project": "acme"}, follow=True)
    body = response.content.decode()
    assert "sound up to entry 3" in body and "verified up to entry 3" in chain_cell(body, "acme")
    state = AuditVerification.objects.get(project=project)
    assert (state.verified_seq, state.entries_walked, state.checked_by) == (3, 3, "user:otto")

    write(project, 2)
    assert "2 newer entries not verified yet" in chain_cell(operator_client.get(URL).content.decode(), "acme")
    operator_client.post(VERIFY, {"project": "acme"})
    state.refresh_from_db()
    # Only the two new entries were walked, from the one verified before.
    assert (state.verified_seq, state.entries_walked, state.from_start, state.breaks) == (5, 2, False, 0)

    # The owner alters entry 2 without re-chaining: its mac no longer verifies. A check from the last
    # verified entry cannot see that far back; a check from the first entry does.
    as_owner_without_triggers("UPDATE harness_auditentry SET actor = 'user:someone-else' "
                              "WHERE project_id = %s AND seq = 2", [project.pk])
    operator_client.post(VERIFY, {"project": "acme"})
    assert AuditVerification.objects.get(project=project).breaks == 0
    body = operator_client.post(VERIFY, {"project": "acme", "from_start": "on"}, follow=True).content.decode()
    state.refresh_from_db()
    entry_2 = AuditEntry.objects.get(project=project, seq=2)
    assert (state.breaks, state.broken_seq, state.broken_entry_id, state.verified_seq) == (1, 2, entry_2.pk, 1)
    cell = chain_cell(body, "acme")
    assert f"broken at entry 2 (id {entry_2.pk}): the entry's mac does not verify" in cell
    assert "sound up to entry 1" in cell and "is broken" in body
    # And the next check from there still finds it (it starts from the sound prefix, entry 1).
    operator_client.post(VERIFY, {"project": "acme"})
    assert AuditVerification.objects.get(project=project).broken_seq == 2


def test_a_chain_rewritten_up_to_the_verified_entry_is_reported(project, operator_client) -> None:  # type: ignore[no-untyped-def]
    write(project, 3)
    operator_client.post(VERIFY, {"project": "acme"})
    # The owner re-chained the log: the entry the last check ended at has another hash now.
    as_owner_without_triggers("UPDATE harness_auditentry SET hash = repeat('ab', 32) "
                              "WHERE project_id = %s AND seq = 3", [project.pk])
    write(project, 1)
    operator_client.post(VERIFY, {"project": "acme"})
    state = AuditVerification.objects.get(project=project)
    assert state.broken_seq == 3 and "is not the one verified before" in state.broken_reason
    assert state.verified_seq == 0  # nothing is known sound: the next check walks from the first entry


def test_only_operators_verify_and_the_form_needs_its_csrf_token(project, reviewer_client, operator) -> None:  # type: ignore[no-untyped-def]
    write(project, 1)
    assert 'class="inline verify-form"' not in reviewer_client.get(URL).content.decode()
    assert reviewer_client.post(VERIFY, {"project": "acme"}).status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(operator)
    assert strict.post(VERIFY, {"project": "acme"}).status_code == 403
    assert not AuditVerification.objects.exists()
    body = strict.get(URL).content.decode()
    assert 'class="inline verify-form"' in body
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body)
    assert token
    assert strict.post(VERIFY, {"project": "acme", "csrfmiddlewaretoken": token[1]}).status_code == 302
    assert AuditVerification.objects.get(project=project).verified_seq == 1


def test_verify_audit_updates_the_state_the_page_shows(project, other_project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    write(project, 2)
    write(other_project, 2)
    call_command("verify_audit", stdout=StringIO())
    body = reviewer_client.get(URL).content.decode()
    assert "verified up to entry 2" in chain_cell(body, "acme") and "manage.py verify_audit" in body
    write(project, 1)
    out = StringIO()
    call_command("verify_audit", "--project", "acme", "--since-last", stdout=out)
    assert "acme: ok, 1 entries walked" in out.getvalue()
    assert AuditVerification.objects.get(project=project).verified_seq == 3
    as_owner_without_triggers("DELETE FROM harness_auditentry WHERE project_id = %s AND seq = 3", [project.pk])
    with pytest.raises(CommandError):
        call_command("verify_audit", "--project", "acme", "--since-last", stdout=StringIO())
    state = AuditVerification.objects.get(project=project)
    assert (state.broken_seq, state.breaks) == (3, 2)  # the entry it started from, and the head past the end
    assert "entry 3, the last one verified before, is missing" in state.broken_reason


def _count(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def test_query_count_does_not_grow_with_entries(project, other_project, client_for) -> None:  # type: ignore[no-untyped-def]
    both = client_for(factories.make_user("bo", role="operator", projects=[project, other_project]))
    run = factories.make_run(project)

    def grow(n: int) -> None:
        for p in (project, other_project):
            write(p, n, action="approval.approved", target=run if p == project else p)

    pages = [URL, f"{URL}?action=approval.&q=i&target_type=run", f"{URL}?project=acme"]
    grow(10)
    sixth = AuditEntry.objects.order_by("-created_at", "-id")[5]
    pages.append(f"{URL}?after={seek_cursor(sixth.created_at, sixth.pk)}")
    few = [_count(both, url) for url in pages]
    grow(300)
    many = [_count(both, url) for url in pages]
    assert many == few, (few, many)
    assert Run.objects.count() == 1
