import pytest

from harness.http.errors import NotFoundError, ValidationFailed
from sessions_app.models import SessionItem
from sessions_app.selectors import session_items_latest
from sessions_app.services import session_items_append
from tests import factories


@pytest.mark.django_db
def test_latest_items_are_the_newest_oldest_first_with_decoded_content(project):
    session = factories.make_session(project)
    run = factories.make_run(project, session=session)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "user", "content": {"n": n, "text": "ü"}} for n in range(1, 8)])
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "tool", "content": [1, "two"], "run_id": run.pk}])

    latest = session_items_latest(project=project, session_id=session.pk, limit=3)

    assert [item["seq"] for item in latest] == [6, 7, 8]
    assert latest[0]["content"] == {"n": 6, "text": "ü"}
    assert latest[-1] | {"id": 0, "created_at": None} == {
        "id": 0, "session": session.pk, "seq": 8, "role": "tool", "content": [1, "two"], "run": run.pk,
        "created_at": None}
    everything = session_items_latest(project=project.pk, session_id=session.pk, limit=50)
    stored = SessionItem.objects.filter(session=session).order_by("seq")
    assert [(i["id"], i["seq"], i["created_at"]) for i in everything] == [(s.pk, s.seq, s.created_at) for s in stored]


@pytest.mark.django_db
def test_latest_items_of_an_empty_session_is_empty_and_another_tenants_is_not_found(project, other_project):
    session = factories.make_session(project)
    assert session_items_latest(project=project, session_id=session.pk) == []
    session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": "secret"}])
    with pytest.raises(NotFoundError):
        session_items_latest(project=other_project, session_id=session.pk)
    with pytest.raises(NotFoundError):
        session_items_latest(project=project, session_id=session.pk + 10_000)
    with pytest.raises(ValidationFailed):
        session_items_latest(project=project, session_id=session.pk, limit=0)


@pytest.mark.django_db
def test_latest_items_are_the_api_items_whatever_the_content(project):
    from sessions_app.api import ItemOutSerializer

    session = factories.make_session(project)
    contents = ['a "quoted" back\\slash\ttab\nnewline', 0, -1.5, True, [], {}, {"b": 1, "a": [None]},
                "\u2028 ünïcode — ✓", 2**62]
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "assistant", "content": c} for c in contents])
    latest = session_items_latest(project=project, session_id=session.pk)
    expected = [ItemOutSerializer(i).data for i in SessionItem.objects.filter(session=session).order_by("seq")]
    rendered = [{**item, "created_at": ItemOutSerializer().fields["created_at"].to_representation(item["created_at"])}
                for item in latest]
    assert rendered == expected
