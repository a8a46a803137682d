"""Retrieval hands out only active, fresh, in-scope records; expiry, deletion and erase keep their promises."""

import datetime as dt
import random

import pytest
from django.db import connection
from django.utils import timezone

from harness.actors import Actor
from harness.http.errors import Forbidden
from harness.models import AuditEntry
from memory_app.context import context_project
from memory_app.filters import MemoryRecordFilter
from memory_app.models import ContextSnapshot, MemoryRecord
from memory_app.policy import content_hash
from memory_app.selectors import memory_list, memory_retrieve, memory_retrieve_scopes
from memory_app.services import (
    memory_bulk_delete,
    memory_bulk_expire,
    memory_delete,
    memory_erase,
    memory_expire,
    memory_supersede,
    memory_write,
)
from runs_app.models import Task
from sessions_app.services import session_items_append
from sessions_app.trimming import session_items_trim
from tests import factories

pytestmark = pytest.mark.django_db


def _fact(project, scope, key, text, **extra):
    return MemoryRecord(project=project, scope=scope, scope_key=key, content=text, content_hash=content_hash(text),
                        provenance_kind="told", source_note="agent:writer", **extra)


def test_a_thousand_retrievals_in_one_users_scope_return_nothing_of_another_user_or_project(project, other_project):
    words = ["tea", "sea", "lamp", "storm", "keeper", "boat", "north", "rope"]
    rows = []
    for user in ("alice", "bob", "carol"):
        for i, word in enumerate(words * 3):
            rows.append(_fact(project, "user", user, f"{user} fact {i}: {word} and {words[i % 5]}"))
    for i, word in enumerate(words * 3):
        rows.append(_fact(other_project, "user", "alice", f"globex alice fact {i}: {word}"))
        rows.append(_fact(project, "project", "", f"project-wide fact {i}: {word}"))
    MemoryRecord.objects.bulk_create(rows)
    alice = set(
        MemoryRecord.objects.filter(project=project, scope="user", scope_key="alice").values_list("pk", flat=True)
    )
    rng = random.Random(4)

    seen: set[int] = set()
    for _ in range(1000):
        query = rng.choice([None, *words, "tea OR storm", "keeper -boat"])
        found = memory_retrieve(project=project, scope="user", scope_key="alice", query=query, k=rng.randint(1, 20))
        ids = {r.pk for r in found}
        assert ids <= alice
        seen |= ids

    assert seen == alice  # the loop really retrieved things, not 1,000 empty answers


@pytest.mark.parametrize("query", [None, "storm keeper", "lamp"])
def test_retrieving_several_scopes_at_once_is_each_scopes_retrieval_in_the_order_asked(project, other_project, query):
    from django.test.utils import CaptureQueriesContext

    words = ["storm", "keeper", "lamp", "rope"]
    rows = [_fact(project, scope, key, f"{scope} {key} fact {i}: {words[i % 4]} {words[(i * 3) % 4]}")
            for scope, key in (("project", ""), ("session", "7"), ("agent", "writer"), ("agent", "reader"))
            for i in range(9)]
    rows += [_fact(other_project, "project", "", f"globex fact {i}: storm keeper lamp") for i in range(9)]
    MemoryRecord.objects.bulk_create(rows)
    scopes = [("agent", "writer"), ("project", ""), ("session", "7")]
    one_by_one = [r.pk for scope, key in scopes for r in memory_retrieve(
        project=project, scope=scope, scope_key=key, query=query, k=4, any_term=True)]
    with CaptureQueriesContext(connection) as queries:
        together = memory_retrieve_scopes(project=project, scopes=scopes, query=query, k=4, any_term=True)
    assert [r.pk for r in together] == one_by_one and len(one_by_one) >= 6
    assert len(queries.captured_queries) == 1


def test_full_text_search_ranks_matches_and_the_gin_index_can_serve_it(project):
    MemoryRecord.objects.bulk_create([
        _fact(project, "project", "", "The lighthouse lamp burns whale oil."),
        _fact(project, "project", "", "Lamps, lamps and more lamps: the lamp room is full of lamps."),
        _fact(project, "project", "", "The keeper rows to town on Sundays."),
    ])
    found = memory_retrieve(project=project, scope="project", query="lamp")
    assert [r.content[:5] for r in found] == ["Lamps", "The l"]
    assert memory_retrieve(project=project, scope="project", query="rowing keepers")[0].content.startswith("The keeper")
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        from memory_app.selectors import _text_match

        # Unfiltered by project so the planner's only index choice is the text index.
        plan = _text_match(MemoryRecord.objects.all(), "lamp").explain()
    assert "memory_content_fts" in plan


def test_expired_and_stale_records_drop_out_of_retrieval_and_stay_in_storage(project, agent, run, operator_actor):
    now = timezone.now()
    kept = memory_write(project=project, actor=agent, scope="project", content="Fresh.", source_run_id=run.pk).record
    lapsed = memory_write(project=project, actor=agent, scope="project", content="Lapsed.", source_run_id=run.pk,
                          expires_at=now - dt.timedelta(minutes=1)).record
    stale = memory_write(project=project, actor=agent, scope="project", content="Stale.", source_run_id=run.pk,
                         valid_until=now - dt.timedelta(seconds=1)).record
    expired_now = memory_write(project=project, actor=agent, scope="project", content="Expire me.",
                               source_run_id=run.pk).record
    memory_expire(project=project, actor=operator_actor, record_id=expired_now.pk)

    assert [r.pk for r in memory_retrieve(project=project, scope="project")] == [kept.pk]
    for record in (lapsed, stale, expired_now):
        stored = MemoryRecord.objects.get(pk=record.pk)
        assert (stored.status, bool(stored.content)) == ("active", True)
    stale_ones = MemoryRecordFilter({"fresh": "false"}, queryset=memory_list(project_ids=[project.pk])).qs
    assert {r.pk for r in stale_ones} == {lapsed.pk, stale.pk, expired_now.pk}


def test_writing_a_lapsed_fact_again_renews_it(project, agent, run):
    old = memory_write(project=project, actor=agent, scope="project", content="Renew me.", source_run_id=run.pk,
                       expires_at=timezone.now() - dt.timedelta(days=1)).record
    again = memory_write(project=project, actor=agent, scope="project", content="renew me.", source_run_id=run.pk)
    assert (again.outcome, again.record.pk, again.record.expires_at) == ("merged", old.pk, None)
    assert [r.pk for r in memory_retrieve(project=project, scope="project")] == [old.pk]


def test_a_deleted_record_leaves_retrieval_and_keeps_a_tombstone(project, agent, run, operator_actor):
    record = memory_write(project=project, actor=agent, scope="user", scope_key="alice", content="Gone soon.",
                          source_run_id=run.pk).record
    memory_delete(project=project, actor=operator_actor, record_id=record.pk, expected_version=1, reason="r")

    assert memory_retrieve(project=project, scope="user", scope_key="alice") == []
    stored = MemoryRecord.objects.get(pk=record.pk)
    assert (stored.status, stored.deleted_by, stored.content) == ("deleted", "user:olga", "Gone soon.")
    assert stored.deleted_at is not None
    assert AuditEntry.objects.filter(action="memory.deleted", target_id=str(record.pk), actor="user:olga").exists()


def test_a_reviewer_or_an_agent_cannot_delete_memory(project, agent, run):
    record = memory_write(project=project, actor=agent, scope="project", content="Keep.", source_run_id=run.pk).record
    reviewer = factories.make_user("rita", role="reviewer", projects=[project])
    for actor in (Actor.for_user(reviewer), agent):
        with pytest.raises(Forbidden):
            memory_delete(project=project, actor=actor, record_id=record.pk, reason="r")
    assert MemoryRecord.objects.get(pk=record.pk).status == "active"


def test_erase_removes_the_content_of_the_record_its_history_and_every_snapshot(project, agent, operator_actor):
    # An `external` session: its context holds memory retrieved on request (memory_app.context).
    run = factories.make_run(project, factories.make_session(project, memory_policy="external"), active_agent="writer")
    secret = "Alice's door code is 4471."
    v1 = memory_write(project=project, actor=agent, scope="project", subject="door code", content=secret,
                      source_run_id=run.pk).record
    snapshot_v1 = context_project(project=project, run_id=run.pk, budget_chars=1000, query="Alice code")
    v2 = memory_supersede(project=project, actor=agent, record_id=v1.pk, content="Alice's door code is 9912.",
                          source_run_id=run.pk)
    snapshot_v2 = context_project(project=project, run_id=run.pk, budget_chars=1000, query="Alice code")
    other = memory_write(project=project, actor=agent, scope="project", content="The sea is north.",
                         source_run_id=run.pk).record
    assert v1.pk in snapshot_v1.memory_ids and v2.pk in snapshot_v2.memory_ids

    erased = memory_erase(project=project, actor=operator_actor, record_id=v2.pk)

    assert sorted(erased) == sorted([v1.pk, v2.pk])
    for pk in erased:
        stored = MemoryRecord.objects.get(pk=pk)
        assert (stored.status, stored.content, stored.subject) == ("deleted", "", "")
        assert stored.erased_at is not None and stored.deleted_by == "user:olga"
    assert MemoryRecord.objects.get(pk=other.pk).content == "The sea is north."
    for snapshot in ContextSnapshot.objects.all():
        assert "door code" not in str(snapshot.content) and "4471" not in str(snapshot.content)
    assert memory_retrieve(project=project, scope="project") == [MemoryRecord.objects.get(pk=other.pk)]
    everything = " ".join(str(e.data) for e in AuditEntry.objects.all())
    assert "4471" not in everything and "9912" not in everything and "door code" not in everything
    assert AuditEntry.objects.filter(action="memory.erased", target_id=str(v2.pk)).exists()


def test_erase_of_a_deleted_record_still_wipes_its_content(project, agent, run, operator_actor):
    record = memory_write(project=project, actor=agent, scope="project", content="Wipe me.",
                          source_run_id=run.pk).record
    memory_delete(project=project, actor=operator_actor, record_id=record.pk, reason="r")
    memory_erase(project=project, actor=operator_actor, record_id=record.pk)
    assert MemoryRecord.objects.get(pk=record.pk).content == ""


def test_bulk_delete_and_expire_report_each_record(project, other_project, agent, run, operator_actor):
    ids = [memory_write(project=project, actor=agent, scope="project", content=f"Fact {i}.",
                        source_run_id=run.pk).record.pk for i in range(4)]
    foreign = MemoryRecord.objects.create(project=other_project, scope="project", content="x", content_hash="x",
                                          provenance_kind="told")
    deleted = memory_bulk_delete(project=project, actor=operator_actor, record_ids=ids[:2] + [foreign.pk], reason="r")
    assert deleted.done == ids[:2] and list(deleted.failed) == [foreign.pk]
    expired = memory_bulk_expire(project=project, actor=operator_actor, record_ids=ids)
    assert expired.done == ids[2:] and set(expired.failed) == set(ids[:2])
    assert memory_retrieve(project=project, scope="project") == []
    assert MemoryRecord.objects.get(pk=foreign.pk).status == "active"


def test_trimming_a_sessions_history_changes_no_task_state_and_no_memory_record(project, agent):
    session = factories.make_session(project)
    task = factories.make_task(project, plan=["outline", "draft"], completed_nodes=["outline"])
    run = factories.make_run(project, session, task_id=task.pk)
    items = session_items_append(project=project, session_id=session.pk, items=[
        {"role": "user", "content": {"text": f"message {i}"}, "run_id": run.pk} for i in range(10)
    ])
    record = memory_write(project=project, actor=agent, scope="session", scope_key=str(session.pk),
                          content="The user prefers short chapters.", provenance_kind="told",
                          source_session_id=session.pk, source_item_seq=items[2].seq).record
    task_before = Task.objects.filter(pk=task.pk).values().get()
    memory_before = MemoryRecord.objects.filter(pk=record.pk).values().get()

    assert session_items_trim(project=project, session_id=session.pk, actor=agent, keep_last=2).removed == 8

    assert Task.objects.filter(pk=task.pk).values().get() == task_before
    assert MemoryRecord.objects.filter(pk=record.pk).values().get() == memory_before
    assert [r.pk for r in memory_retrieve(project=project, scope="session", scope_key=str(session.pk))] == [record.pk]


def test_context_projection_stays_in_budget_and_records_exactly_what_was_handed_over(project, agent):
    # `external`: the run's own items, and memory retrieved for the query (memory_app.context).
    run = factories.make_run(project, factories.make_session(project, memory_policy="external"), active_agent="writer")
    session_items_append(project=project, session_id=run.session_id, items=[
        {"role": "user" if i % 2 else "assistant", "content": {"text": f"turn {i:02d} " + "x" * 40}, "run_id": run.pk}
        for i in range(30)
    ])
    relevant = memory_write(project=project, actor=agent, scope="project", content="The lamp burns whale oil.",
                            source_run_id=run.pk).record
    mine = memory_write(project=project, actor=agent, scope="agent", scope_key="writer",
                        content="I write in short lamp-lit scenes.", source_run_id=run.pk).record
    memory_write(project=project, actor=agent, scope="user", scope_key="alice", content="Alice likes lamps.",
                 source_run_id=run.pk)
    memory_write(project=project, actor=agent, scope="project", content="The lamp is broken.", source_run_id=run.pk,
                 expires_at=timezone.now() - dt.timedelta(days=1))

    memory_write(project=project, actor=agent, scope="project", content="Unrelated: the rope is frayed.",
                 source_run_id=run.pk)

    snapshot = context_project(project=project, run_id=run.pk, budget_chars=400, query="Light the lamp tonight")

    stored = ContextSnapshot.objects.get(pk=snapshot.pk)
    assert stored.run_id == run.pk and stored.query == "Light the lamp tonight"
    assert stored.used_chars <= 400
    assert set(stored.memory_ids) == {relevant.pk, mine.pk}  # not another user's, not the expired one
    texts = [i["text"] for i in stored.content["items"]]
    assert stored.item_seqs == list(range(31 - len(texts), 31))  # the most recent, contiguous, in order
    assert texts[-1].startswith("turn 29")
    assert stored.used_chars == sum(map(len, texts)) + sum(len(m["content"]) for m in stored.content["memory"])
    assert stored.used_chars + 45 > 400  # the window was filled as far as the budget allows
