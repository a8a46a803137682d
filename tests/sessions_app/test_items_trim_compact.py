"""Trimming and compacting a session's history (issue 20, part 2) through the API: what goes, what is recorded
(range, hash, one audit entry), what stays unchanged (every other record), and what a pending approval pins."""

from typing import Any

import pytest
from django.forms.models import model_to_dict

from harness.actors import Actor
from harness.canonical import digest
from harness.models import AuditEntry, Project
from memory_app.models import ContextSnapshot, MemoryRecord
from memory_app.services import memory_write
from runs_app.models import ApprovalRequest, Checkpoint, ExternalEffect, Run, Task
from runs_app.services import approval_decide, checkpoint_create, effect_intend
from sessions_app.models import SessionItem
from sessions_app.services import session_items_append, session_transition
from sessions_app.trimming import APPROVAL_PAGE_ITEMS, session_items_compact, session_items_trim
from tests import factories
from tests.api.conftest import World, build_world

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def waiting_world(project: Project) -> World:
    return build_world(project, "acme")  # a run of its session waits on a pending approval


@pytest.fixture
def world(waiting_world: World) -> World:
    # The other tests start from a session nobody waits on.
    ApprovalRequest.objects.filter(pk=waiting_world.approval.pk).update(status="cancelled")
    return waiting_world


def _append(world: World, count: int, run_id: int | None = None) -> list[SessionItem]:
    return session_items_append(project=world.project, session_id=world.session.pk,
                                items=[{"role": "user", "content": {"n": i}, "run_id": run_id} for i in range(count)])


def _seqs(world: World) -> list[int]:
    return list(SessionItem.objects.filter(session=world.session).order_by("seq").values_list("seq", flat=True))


def _url(world: World, tail: str) -> str:
    return f"/api/v1/sessions/{world.session.pk}/items/{tail}"


def _rows(model: Any, **where: Any) -> list[dict[str, Any]]:
    return [model_to_dict(row) | {"updated": getattr(row, "updated_at", None)}
            for row in model.objects.filter(**where).order_by("pk")]


def test_keep_last_n_removes_the_older_items_records_range_and_hash_in_one_audit_entry(world: World) -> None:
    items = _append(world, 12)
    gone = [{"seq": i.seq, "role": i.role, "content": i.content, "run": None} for i in items[:9]]

    response = world.agent.post(_url(world, "trim/"), {"keep_last": 3})

    assert response.status_code == 200, response.content
    assert response.json() == {"removed": 9, "first_seq": 1, "last_seq": 9, "replaced_hash": digest(gone),
                               "summary": None, "session_last_seq": 12}
    assert _seqs(world) == [10, 11, 12]
    audit = AuditEntry.objects.filter(action="session.items_trimmed")
    assert [(a.actor, a.target_id, a.data) for a in audit] == [
        ("agent:acme-agent", str(world.session.pk),
         {"keep_last": 3, "removed": 9, "first_seq": 1, "last_seq": 9, "replaced_hash": digest(gone)})]
    # Numbering goes on from last_seq: no seq is handed out twice.
    assert _append(world, 1)[0].seq == 13
    # Nothing more to trim: no removal, no audit entry.
    again = world.agent.post(_url(world, "trim/"), {"keep_last": 10})
    assert again.json()["removed"] == 0 and audit.count() == 1


def test_keep_last_counts_items_not_seqs_when_pops_left_gaps(world: World) -> None:
    _append(world, 6)
    SessionItem.objects.filter(session=world.session, seq__in=[4, 5]).delete()  # gaps: 1 2 3 6

    trimmed = session_items_trim(project=world.project, session_id=world.session.pk, actor=Actor.for_agent("a"),
                                 keep_last=2)

    assert (trimmed.removed, trimmed.first_seq, trimmed.last_seq) == (2, 1, 2)
    assert _seqs(world) == [3, 6]


def test_compaction_replaces_the_range_with_the_summary_at_the_ranges_newest_seq(world: World) -> None:
    items = _append(world, 8)
    replaced = [{"seq": i.seq, "role": i.role, "content": i.content, "run": None} for i in items[1:5]]

    response = world.agent.post(_url(world, "compact/"), {
        "first_seq": 2, "last_seq": 5, "summary": {"role": "system", "content": {"summary": "the user said 1-4"}},
        "expected_last_seq": 8})

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["removed"], body["first_seq"], body["last_seq"]) == (4, 2, 5)
    assert body["replaced_hash"] == digest(replaced)
    assert body["summary"]["seq"] == 5 and body["summary"]["content"] == {"summary": "the user said 1-4"}
    stored = list(SessionItem.objects.filter(session=world.session).order_by("seq").values_list("seq", "content"))
    assert stored == [(1, {"n": 0}), (5, {"summary": "the user said 1-4"}), (6, {"n": 5}), (7, {"n": 6}),
                      (8, {"n": 7})]
    [audit] = AuditEntry.objects.filter(action="session.items_compacted")
    assert audit.data == {"first_seq": 2, "last_seq": 5, "removed": 4, "replaced_hash": digest(replaced),
                          "summary_item": body["summary"]["id"], "summary_seq": 5}
    # The remaining items are the same rows, untouched (append-only: a trigger refuses UPDATE anyway).
    assert {i.pk for i in (items[0], *items[5:])} < set(SessionItem.objects.values_list("pk", flat=True))
    assert world.session.__class__.objects.get(pk=world.session.pk).last_seq == 8


def test_compaction_refuses_an_empty_range_a_stale_seq_and_a_terminated_session(world: World) -> None:
    _append(world, 3)
    summary = {"content": "s"}
    empty = world.agent.post(_url(world, "compact/"), {"first_seq": 4, "last_seq": 9, "summary": summary})
    stale = world.agent.post(_url(world, "compact/"),
                             {"first_seq": 1, "last_seq": 2, "summary": summary, "expected_last_seq": 2})
    backwards = world.agent.post(_url(world, "compact/"), {"first_seq": 3, "last_seq": 2, "summary": summary})
    assert (empty.status_code, empty.json()["code"]) == (409, "empty_range")
    assert (stale.status_code, stale.json()["code"]) == (409, "seq_conflict")
    assert (backwards.status_code, backwards.json()["code"]) == (400, "invalid_range")
    for to in ("running", "terminated"):
        session_transition(project=world.project, session_id=world.session.pk, to=to, expected_version=None)
    ended = world.agent.post(_url(world, "trim/"), {"keep_last": 0})
    assert (ended.status_code, ended.json()["code"]) == (409, "session_terminated")
    assert _seqs(world) == [1, 2, 3]
    assert not AuditEntry.objects.filter(action__startswith="session.items_").exists()


def test_another_project_and_a_reader_token_cannot_trim(world: World, other_project: Project) -> None:
    _append(world, 4)
    other = build_world(other_project, "globex")
    assert other.agent.post(_url(world, "trim/"), {"keep_last": 0}).status_code == 404
    assert world.reader.post(_url(world, "trim/"), {"keep_last": 0}).status_code == 403
    assert _seqs(world) == [1, 2, 3, 4]


def test_an_item_a_pending_approval_shows_cannot_be_trimmed_until_it_is_decided(waiting_world: World) -> None:
    world, approval = waiting_world, waiting_world.approval
    _append(world, APPROVAL_PAGE_ITEMS + 5, run_id=world.waiting_run.pk)
    # The model saw item 2 for this run (its context snapshot lists it).
    ContextSnapshot.objects.create(project=world.project, run=world.waiting_run, item_seqs=[2], budget_chars=10,
                                   used_chars=1)

    shown_on_page = world.agent.post(_url(world, "trim/"), {"keep_last": APPROVAL_PAGE_ITEMS - 1})
    shown_to_model = world.agent.post(_url(world, "compact/"),
                                      {"first_seq": 1, "last_seq": 3, "summary": {"content": "s"}})

    assert shown_on_page.status_code == 409 and shown_on_page.json()["code"] == "item_shown_by_pending_approval"
    assert shown_on_page.json()["approval"] == approval.pk
    assert shown_on_page.json()["seqs"] == [2, 6]  # the snapshot's item, and the page's oldest shown item
    assert shown_to_model.json()["seqs"] == [2]
    assert len(_seqs(world)) == APPROVAL_PAGE_ITEMS + 5
    # What the approval does not show may go: items 3..5 are neither on its page nor in the snapshot.
    assert world.agent.post(_url(world, "compact/"),
                            {"first_seq": 3, "last_seq": 5, "summary": {"content": "s"}}).status_code == 200

    reviewer = factories.make_user("rita", role="reviewer", projects=[world.project])
    approval_decide(project=world.project, approval_id=approval.pk, actor=Actor.for_user(reviewer),
                    decision="reject", reason="no")
    assert world.agent.post(_url(world, "trim/"), {"keep_last": 1}).status_code == 200
    assert _seqs(world) == [APPROVAL_PAGE_ITEMS + 5]


def test_trimming_changes_no_task_checkpoint_approval_effect_or_memory_record(world: World) -> None:
    items = _append(world, 20, run_id=world.run.pk)
    checkpoint_create(project=world.project, run_id=world.run.pk, label="after talk", state={"step": 2},
                      task_id=world.task.pk)
    effect_intend(project=world.project, idempotency_key="acme-2", tool="publish", arguments={"n": 2},
                  run_id=world.running_run.pk)  # a running run: only one that acts declares an action
    memory_write(project=world.project, actor=Actor.for_agent("a"), scope="session", scope_key=str(world.session.pk),
                 content="Prefers short chapters.", source_session_id=world.session.pk, source_item_seq=items[1].seq)
    before = {model.__name__: _rows(model, project=world.project)
              for model in (Task, Run, Checkpoint, ApprovalRequest, ExternalEffect, MemoryRecord)}

    assert world.agent.post(_url(world, "compact/"),
                            {"first_seq": 1, "last_seq": 10, "summary": {"content": "s"}}).status_code == 200
    assert world.agent.post(_url(world, "trim/"), {"keep_last": 5}).status_code == 200

    after = {model.__name__: _rows(model, project=world.project)
             for model in (Task, Run, Checkpoint, ApprovalRequest, ExternalEffect, MemoryRecord)}
    assert after == before
    assert _seqs(world) == [16, 17, 18, 19, 20]


def test_the_service_refuses_a_bad_role_and_a_missing_summary(world: World) -> None:
    _append(world, 2)
    from harness.http.errors import ValidationFailed

    with pytest.raises(ValidationFailed):
        session_items_compact(project=world.project, session_id=world.session.pk, actor=Actor.for_agent("a"),
                              first_seq=1, last_seq=2, summary="s", role="narrator")
    with pytest.raises(ValidationFailed):
        session_items_compact(project=world.project, session_id=world.session.pk, actor=Actor.for_agent("a"),
                              first_seq=1, last_seq=2, summary=None)
    assert _seqs(world) == [1, 2]
