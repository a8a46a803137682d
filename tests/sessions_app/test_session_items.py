import pytest
from django.db import IntegrityError, connection, transaction

from harness.actors import Actor
from harness.http.errors import ConflictError, NotFoundError, ValidationFailed
from sessions_app.models import SessionItem
from sessions_app.services import session_items_append, session_transition
from sessions_app.trimming import session_items_trim
from tests import factories
from tests.threads import run_concurrently


@pytest.mark.django_db
def test_batch_append_assigns_consecutive_seqs(project):
    session = factories.make_session(project)
    first = session_items_append(project=project, session_id=session.pk, items=[
        {"role": "user", "content": {"text": "hi"}}, {"role": "assistant", "content": "yo"}])
    second = session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": 3}],
                                  expected_last_seq=2)
    assert [i.seq for i in first + second] == [1, 2, 3]
    assert list(SessionItem.objects.filter(session=session).values_list("seq", "content")) == [
        (1, {"text": "hi"}), (2, "yo"), (3, 3)]


@pytest.mark.django_db
def test_optimistic_append_with_a_stale_seq_writes_nothing(project):
    session = factories.make_session(project)
    session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": "a"}])
    with pytest.raises(ConflictError) as caught:
        session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": "b"}],
                             expected_last_seq=0)
    assert caught.value.code == "seq_conflict"
    assert caught.value.extra["last_seq"] == 1
    assert SessionItem.objects.filter(session=session).count() == 1


@pytest.mark.django_db
def test_append_refuses_bad_input_and_other_tenants(project, other_project):
    session = factories.make_session(project)
    with pytest.raises(ValidationFailed):
        session_items_append(project=project, session_id=session.pk, items=[{"role": "wizard", "content": 1}])
    with pytest.raises(NotFoundError):
        session_items_append(project=other_project, session_id=session.pk, items=[{"role": "user", "content": 1}])
    foreign_run = factories.make_run(other_project)
    with pytest.raises(ValidationFailed):
        session_items_append(project=project, session_id=session.pk,
                             items=[{"role": "user", "content": 1, "run_id": foreign_run.pk}])
    assert SessionItem.objects.count() == 0


@pytest.mark.django_db
def test_a_terminated_session_takes_no_items(project):
    session = factories.make_session(project)
    for to in ("running", "terminated"):
        session = session_transition(project=project, session_id=session.pk, to=to, expected_version=session.version)
    with pytest.raises(ConflictError) as caught:
        session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": 1}])
    assert caught.value.code == "session_terminated"


@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_are_gap_free():
    project = factories.make_project("appenders")
    session = factories.make_session(project)
    results = run_concurrently(8, lambda i: session_items_append(
        project=project, session_id=session.pk, items=[{"role": "user", "content": i}] * 5))
    assert not [r for r in results if isinstance(r, Exception)]
    seqs = sorted(SessionItem.objects.filter(session=session).values_list("seq", flat=True))
    assert seqs == list(range(1, 41))


@pytest.mark.django_db
def test_items_are_append_only_in_the_database(project):
    session = factories.make_session(project)
    session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": "x"}])
    with pytest.raises(IntegrityError), transaction.atomic():
        SessionItem.objects.filter(session=session).update(content="rewritten")
    assert connection.vendor == "postgresql"


@pytest.mark.django_db
def test_trim_keeps_the_newest_items(project):
    session = factories.make_session(project)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "user", "content": i} for i in range(10)])
    trimmed = session_items_trim(project=project, session_id=session.pk, actor=Actor.for_agent("a"), keep_last=3)
    assert trimmed.removed == 7
    assert list(SessionItem.objects.filter(session=session).values_list("seq", flat=True)) == [8, 9, 10]
    # new items continue after the trimmed ones; seqs are never reused
    new = session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": "n"}])
    assert new[0].seq == 11
