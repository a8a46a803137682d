"""Pops and appends of one session at the same time: each pop takes a different item, none is lost or
taken twice, and no seq is handed out again."""

import pytest

from harness.actors import Actor
from harness.models import Project
from sessions_app.models import SessionItem
from sessions_app.services import session_item_pop, session_items_append
from tests import factories
from tests.threads import run_concurrently

AGENT = Actor.for_agent("popper")


@pytest.mark.django_db(transaction=True)
def test_concurrent_pops_each_take_a_different_item(project: Project) -> None:
    session = factories.make_session(project)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "user", "content": n} for n in range(1, 7)])

    results = run_concurrently(8, lambda _: session_item_pop(project=project, session_id=session.pk, actor=AGENT))

    popped = sorted(r.item.seq for r in results if r.item is not None)
    assert popped == [1, 2, 3, 4, 5, 6]  # 6 items, 8 pops: each item once, two pops found none
    assert sum(1 for r in results if r.item is None) == 2
    assert not SessionItem.objects.filter(session=session).exists()


@pytest.mark.django_db(transaction=True)
def test_pops_racing_appends_never_see_a_seq_twice(project: Project) -> None:
    session = factories.make_session(project)
    session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": 0}])

    def act(i: int) -> object:
        if i % 2:
            return session_item_pop(project=project, session_id=session.pk, actor=AGENT)
        return session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": i}])

    results = run_concurrently(8, act)

    assert not [r for r in results if isinstance(r, BaseException)]
    appended = [r[0].seq for r in results if isinstance(r, list)]
    popped = [r.item.seq for r in results if not isinstance(r, list) and r.item is not None]
    left = list(SessionItem.objects.filter(session=session).values_list("seq", flat=True))
    assert sorted(appended) == [2, 3, 4, 5]
    assert sorted(popped + left) == [1, 2, 3, 4, 5]  # every item is popped once or still there
    session.refresh_from_db()
    assert session.last_seq == 5
