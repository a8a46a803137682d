"""Duplicates merge and supersedes land once, also when writers race on separate connections."""


import pytest

from harness.actors import Actor
from harness.http.errors import ConflictError, Forbidden
from harness.models import AuditEntry
from memory_app.models import MemoryRecord
from memory_app.selectors import memory_chain, memory_conflicts, memory_retrieve
from memory_app.services import memory_supersede, memory_write
from tests import factories
from tests.threads import run_concurrently


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_identical_writes_store_one_record(project, run):
    agent = Actor.for_agent("writer")

    results = run_concurrently(20, lambda i: memory_write(
        project=project, actor=agent, scope="user", scope_key="alice", subject="tea",
        content="Alice drinks green tea." if i % 2 else "alice drinks GREEN tea.", source_run_id=run.pk,
    ))

    assert not [r for r in results if isinstance(r, Exception)], results
    assert MemoryRecord.objects.count() == 1
    stored = MemoryRecord.objects.get()
    assert sorted(r.outcome for r in results) == ["accepted"] + ["merged"] * 19
    assert {r.record.pk for r in results} == {stored.pk}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("with_version", [True, False], ids=["expected-version", "status-only"])
def test_concurrent_supersedes_of_one_record_let_exactly_one_win(project, run, with_version):
    agent = Actor.for_agent("writer")
    original = memory_write(project=project, actor=agent, scope="project", subject="keeper",
                            content="The keeper is Tomas.", source_run_id=run.pk).record

    results = run_concurrently(8, lambda i: memory_supersede(
        project=project, actor=agent, record_id=original.pk, content=f"The keeper is Tomas, version {i}.",
        source_run_id=run.pk, expected_version=original.version if with_version else None,
    ))

    winners = [r for r in results if isinstance(r, MemoryRecord)]
    losers = [r for r in results if isinstance(r, ConflictError)]
    assert len(winners) == 1 and len(losers) == 7, results
    assert {loser.code for loser in losers} == {"already_superseded"}  # they lost a race, not asked for a wrong move
    assert MemoryRecord.objects.filter(status="active").get().pk == winners[0].pk
    original.refresh_from_db()
    assert (original.status, original.superseded_by_id) == ("superseded", winners[0].pk)
    assert MemoryRecord.objects.count() == 2  # the losers' inserts rolled back


@pytest.mark.django_db
def test_conflicting_writes_are_a_conflict_then_a_supersede_resolves_it(project, run, operator_actor):
    agent = Actor.for_agent("writer")
    blue = memory_write(project=project, actor=agent, scope="user", scope_key="alice", subject="favourite colour",
                        content="Alice's favourite colour is blue.", source_run_id=run.pk)
    green = memory_write(project=project, actor=agent, scope="user", scope_key="alice", subject="favourite colour",
                         content="Alice's favourite colour is green.", source_run_id=run.pk)

    assert green.outcome == "accepted" and green.conflicts == [blue.record.pk]
    [conflict] = memory_conflicts(project=project)
    assert (conflict.scope_key, conflict.subject) == ("alice", "favourite colour")
    assert [r.pk for r in conflict.records] == [blue.record.pk, green.record.pk]

    kept = memory_supersede(project=project, actor=operator_actor, record_id=blue.record.pk,
                            replacement_id=green.record.pk)

    assert kept.pk == green.record.pk
    assert memory_conflicts(project=project) == []
    assert [r.pk for r in memory_retrieve(project=project, scope="user", scope_key="alice")] == [green.record.pk]
    chain = memory_chain(project=project, record_id=green.record.pk)
    assert [r.pk for r in chain.before] == [blue.record.pk]


@pytest.mark.django_db
def test_superseding_with_content_equal_to_the_other_side_resolves_onto_it(project, run, operator_actor):
    agent = Actor.for_agent("writer")
    a = memory_write(project=project, actor=agent, scope="project", subject="sea", content="The sea is north.",
                     source_run_id=run.pk).record
    b = memory_write(project=project, actor=agent, scope="project", subject="sea", content="The sea is south.",
                     source_run_id=run.pk).record
    kept = memory_supersede(project=project, actor=operator_actor, record_id=a.pk, content="the sea is SOUTH.",
                            reason="r")
    assert kept.pk == b.pk
    assert MemoryRecord.objects.get(pk=a.pk).superseded_by_id == b.pk


@pytest.mark.django_db
def test_a_supersede_keeps_the_old_version_readable_and_the_chain_navigable_both_ways(project, run, operator_actor):
    agent = Actor.for_agent("writer")
    v1 = memory_write(project=project, actor=agent, scope="project", subject="keeper",
                      content="The keeper is Tomas.", source_run_id=run.pk).record
    v2 = memory_supersede(project=project, actor=agent, record_id=v1.pk, content="The keeper is Tomás.",
                          source_run_id=run.pk)
    v3 = memory_supersede(project=project, actor=operator_actor, record_id=v2.pk,
                          content="The keeper is Tomás Ferreira.", reason="r")

    assert MemoryRecord.objects.get(pk=v1.pk).content == "The keeper is Tomas."
    assert (v3.provenance_kind, v3.source_person_id, v3.subject) == ("edited", operator_actor.user.pk, "keeper")
    from_middle = memory_chain(project=project, record_id=v2.pk)
    assert [r.pk for r in from_middle.versions] == [v1.pk, v2.pk, v3.pk]
    assert [r.pk for r in memory_chain(project=project, record_id=v1.pk).after] == [v2.pk, v3.pk]
    assert [r.pk for r in memory_chain(project=project, record_id=v3.pk).before] == [v1.pk, v2.pk]
    actions = list(AuditEntry.objects.filter(action="memory.superseded").values_list("target_id", flat=True))
    assert sorted(actions) == sorted([str(v1.pk), str(v2.pk)])


@pytest.mark.django_db
def test_an_agent_supersedes_only_what_it_wrote(project, run):
    mine = memory_write(project=project, actor=Actor.for_agent("writer"), scope="project", content="Mine.",
                        source_run_id=run.pk).record
    with pytest.raises(Forbidden) as caught:
        memory_supersede(project=project, actor=Actor.for_agent("reviewer-bot"), record_id=mine.pk, content="Ours.")
    assert caught.value.code == "not_owner"
    assert MemoryRecord.objects.get(pk=mine.pk).status == "active"


@pytest.mark.django_db
def test_a_stale_expected_version_is_a_conflict(project, run, operator_actor):
    agent = Actor.for_agent("writer")
    record = memory_write(project=project, actor=agent, scope="project", content="Fact.", source_run_id=run.pk).record
    with pytest.raises(ConflictError) as caught:
        memory_supersede(project=project, actor=operator_actor, record_id=record.pk, content="Fact 2.", reason="r",
                         expected_version=record.version + 5)
    assert caught.value.code == "version_conflict"
    assert MemoryRecord.objects.count() == 1


@pytest.mark.django_db
def test_another_projects_record_is_not_found(project, other_project, run):
    from harness.http.errors import NotFoundError

    record = memory_write(project=project, actor=Actor.for_agent("writer"), scope="project", content="Ours.",
                          source_run_id=run.pk).record
    outsider = factories.make_user("otto", role="operator", projects=[other_project])
    with pytest.raises(NotFoundError):
        memory_supersede(project=other_project, actor=Actor.for_user(outsider), record_id=record.pk, content="Theirs.")
