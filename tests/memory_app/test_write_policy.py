"""Every write is judged by the scope's policy and says what was decided and why."""

import pytest

from harness.http.errors import Forbidden
from harness.models import AuditEntry
from memory_app.models import MemoryRecord, MemoryWritePolicy
from memory_app.services import memory_review, memory_write
from tests import factories

pytestmark = pytest.mark.django_db


def test_an_accepted_write_is_stored_active_with_its_provenance(project, agent, run):
    result = memory_write(project=project, actor=agent, scope="user", scope_key="alice", subject="tea",
                          content="Alice drinks green tea.", provenance_kind="told", source_run_id=run.pk)
    assert (result.outcome, result.code) == ("accepted", "accepted")
    assert "default" in result.reason
    record = MemoryRecord.objects.get(pk=result.record.pk)
    assert (record.status, record.version, record.source_run_id, record.source_note) == (
        "active", 1, run.pk, "agent:writer")
    assert record.policy_decision == "accept"


@pytest.mark.parametrize(
    ("policy", "content", "with_source", "code"),
    [
        ({"max_chars": 10}, "far longer than ten characters", True, "too_long"),
        ({"blocked_patterns": [r"\b\d{16}\b"]}, "card 4111111111111111 on file", True, "blocked_pattern"),
        ({"provenance_required": True}, "an unsourced rumour", False, "provenance_required"),
        ({"decision": "reject"}, "anything at all", True, "scope_refused"),
        ({}, "   ", True, "empty"),
    ],
)
def test_a_rejected_write_stores_nothing_and_says_why(project, agent, run, policy, content, with_source, code):
    MemoryWritePolicy.objects.create(project=project, scope="user", **policy)
    result = memory_write(project=project, actor=agent, scope="user", scope_key="alice", content=content,
                          source_run_id=run.pk if with_source else None)
    assert (result.outcome, result.code, result.record) == ("rejected", code, None)
    assert result.reason
    assert not MemoryRecord.objects.exists()
    entry = AuditEntry.objects.get(action="memory.write_rejected")
    assert content.strip() not in str(entry.data) or not content.strip()


def test_without_provenance_required_an_unsourced_write_is_accepted(project, agent):
    MemoryWritePolicy.objects.create(project=project, scope="agent", provenance_required=False)
    result = memory_write(project=project, actor=agent, scope="agent", scope_key="writer", content="I like lists.")
    assert result.outcome == "accepted"


def test_a_hold_policy_holds_the_write_until_an_operator_approves_it(project, agent, run, operator_actor):
    MemoryWritePolicy.objects.create(project=project, scope="project", decision="hold")
    held = memory_write(project=project, actor=agent, scope="project", content="The sea is north.",
                        source_run_id=run.pk)
    assert (held.outcome, held.record.status) == ("held", "held")
    approved = memory_review(project=project, actor=operator_actor, record_id=held.record.pk, approve=True)
    assert (approved.status, approved.version) == ("active", 2)
    assert AuditEntry.objects.filter(action="memory.review_approved", target_id=str(approved.pk)).exists()


def test_an_operator_rejects_a_held_record(project, agent, run, operator_actor):
    MemoryWritePolicy.objects.create(project=project, scope="project", decision="hold")
    held = memory_write(project=project, actor=agent, scope="project", content="Maybe east.", source_run_id=run.pk)
    rejected = memory_review(project=project, actor=operator_actor, record_id=held.record.pk, approve=False)
    assert rejected.status == "rejected"


def test_a_reviewer_cannot_review_held_memory(project, agent, run):
    MemoryWritePolicy.objects.create(project=project, scope="project", decision="hold")
    held = memory_write(project=project, actor=agent, scope="project", content="Maybe west.", source_run_id=run.pk)
    reviewer = factories.make_user("rita", role="reviewer", projects=[project])
    from harness.actors import Actor

    with pytest.raises(Forbidden):
        memory_review(project=project, actor=Actor.for_user(reviewer), record_id=held.record.pk, approve=True)
    assert MemoryRecord.objects.get(pk=held.record.pk).status == "held"


def test_the_same_fact_in_other_words_case_and_spacing_is_merged(project, agent, run):
    first = memory_write(project=project, actor=agent, scope="user", scope_key="alice",
                         content="Alice drinks  green tea.", source_run_id=run.pk)
    again = memory_write(project=project, actor=agent, scope="user", scope_key="alice",
                         content="  alice DRINKS green tea. ", source_run_id=run.pk)
    assert (again.outcome, again.code, again.record.pk) == ("merged", "duplicate", first.record.pk)
    assert again.record.last_confirmed_at is not None
    assert MemoryRecord.objects.count() == 1
    elsewhere = memory_write(project=project, actor=agent, scope="user", scope_key="bob",
                             content="Alice drinks green tea.", source_run_id=run.pk)
    assert elsewhere.outcome == "accepted"


def test_a_session_scope_names_a_session_of_this_project(project, other_project, agent, run):
    from harness.http.errors import ValidationFailed

    foreign = factories.make_session(other_project)
    with pytest.raises(ValidationFailed):
        memory_write(project=project, actor=agent, scope="session", scope_key=str(foreign.pk), content="x",
                     source_run_id=run.pk)
    ok = memory_write(project=project, actor=agent, scope="session", scope_key=str(run.session_id), content="x",
                      source_run_id=run.pk)
    assert ok.outcome == "accepted"
