"""A session's memory policy and role bind the memory writes made in its context (seed 002; issue 30, part 4), not
only its context projection: a session that keeps no memory refuses them, a semantic reviewer's are held. The
session is the one the write names: its source session, its source run's session, or a `session` scope's."""

import pytest

from harness.http.errors import ValidationFailed
from memory_app.models import MemoryRecord, MemoryStatus
from memory_app.services import memory_supersede, memory_write
from tests import factories
from tests.api.conftest import ApiClient

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("policy", ["none", "checkpoint_only"])
@pytest.mark.parametrize("named_by", ["source_session", "source_run", "session_scope"])
def test_a_session_that_keeps_no_memory_refuses_the_write(project, agent, policy, named_by) -> None:  # type: ignore[no-untyped-def]
    session = factories.make_session(project, memory_policy=policy)
    run = factories.make_run(project, session)
    named = {"source_session": {"scope": "user", "scope_key": "alice", "source_session_id": session.pk},
             "source_run": {"scope": "user", "scope_key": "alice", "source_run_id": run.pk},
             "session_scope": {"scope": "session", "scope_key": str(session.pk), "source_run_id": run.pk}}[named_by]
    result = memory_write(project=project, actor=agent, content="Alice likes tea.", **named)
    assert (result.outcome, result.code, result.record) == ("rejected", "session_keeps_no_memory", None)
    assert policy in result.reason and str(session.pk) in result.reason
    assert not MemoryRecord.objects.exists()


def test_a_semantic_reviewers_write_is_held_for_a_person(project, agent) -> None:  # type: ignore[no-untyped-def]
    session = factories.make_session(project, role="semantic_reviewer", memory_policy="external")
    result = memory_write(project=project, actor=agent, scope="project", content="Chapter 3 passes review.",
                          source_session_id=session.pk)
    assert (result.outcome, result.code) == ("held", "session_role_held")
    assert MemoryRecord.objects.get(pk=result.record.pk).status == MemoryStatus.HELD


def test_a_session_that_keeps_memory_writes_as_before(project, agent) -> None:  # type: ignore[no-untyped-def]
    for policy in ("bounded", "session", "external"):
        session = factories.make_session(project, memory_policy=policy)
        result = memory_write(project=project, actor=agent, scope="user", scope_key=policy,
                              content=f"kept under {policy}", source_session_id=session.pk)
        assert result.outcome == "accepted", policy


def test_a_supersede_in_a_session_that_keeps_no_memory_is_refused(project, agent, run) -> None:  # type: ignore[no-untyped-def]
    old = memory_write(project=project, actor=agent, scope="user", scope_key="alice", content="Alice likes tea.",
                       source_run_id=run.pk).record
    silent = factories.make_session(project, memory_policy="none")
    with pytest.raises(ValidationFailed) as refused:
        memory_supersede(project=project, actor=agent, record_id=old.pk, content="Alice likes coffee.",
                         source_session_id=silent.pk, expected_version=old.version)
    assert refused.value.code == "session_keeps_no_memory"
    assert MemoryRecord.objects.get(pk=old.pk).status == MemoryStatus.ACTIVE


def test_the_api_answers_422_with_the_code(project) -> None:  # type: ignore[no-untyped-def]
    session = factories.make_session(project, memory_policy="none")
    agent = ApiClient(factories.make_agent_token(project, name="writer")[1])
    body = {"scope": "user", "scope_key": "alice", "content": "Alice likes tea.", "source_session_id": session.pk}
    response = agent.post("/api/v1/memory/records/", body)
    assert response.status_code == 422 and response.json()["code"] == "session_keeps_no_memory"
    assert not MemoryRecord.objects.exists()
