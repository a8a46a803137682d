"""Trimming a session's history from the console: the operator's forms (CSRF, confirm box, the last_seq they
saw), the same service and audit as the API, and who may not."""

import pytest
from django.test import Client
from django.urls import reverse

from harness.models import AuditEntry, Project
from sessions_app.models import Session, SessionItem
from sessions_app.services import session_items_append
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(project: Project) -> Session:
    session = factories.make_session(project, ref="S-trim")
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "user", "content": {"n": i}} for i in range(8)])
    return Session.objects.get(pk=session.pk)


def _seqs(session: Session) -> list[int]:
    return list(SessionItem.objects.filter(session=session).order_by("seq").values_list("seq", flat=True))


def test_an_operator_trims_and_compacts_through_the_page_forms_with_csrf(session: Session, operator) -> None:  # type: ignore[no-untyped-def]
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    page = client.get(reverse("sessions:session_timeline", args=[session.pk])).content.decode()
    assert 'id="trim-form"' in page and 'id="compact-form"' in page and "csrfmiddlewaretoken" in page
    token = page.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    trim = reverse("sessions:session_trim", args=[session.pk])

    assert client.post(trim, {"keep_last": 6, "confirm": "on"}).status_code == 403  # no CSRF token
    unconfirmed = client.post(trim, {"keep_last": 6, "csrfmiddlewaretoken": token})
    assert unconfirmed.status_code == 400 and _seqs(session) == list(range(1, 9))

    done = client.post(trim, {"keep_last": 6, "expected_last_seq": 8, "confirm": "on", "csrfmiddlewaretoken": token})
    assert done.status_code == 302 and _seqs(session) == [3, 4, 5, 6, 7, 8]

    compact = client.post(reverse("sessions:session_compact", args=[session.pk]), {
        "first_seq": 3, "last_seq": 6, "role": "system", "summary": "Items 3-6: the user asked about lamps.",
        "expected_last_seq": 8, "confirm": "on", "csrfmiddlewaretoken": token})
    assert compact.status_code == 302
    assert list(SessionItem.objects.filter(session=session).order_by("seq").values_list("seq", "content")) == [
        (6, "Items 3-6: the user asked about lamps."), (7, {"n": 6}), (8, {"n": 7})]
    assert [(a.action, a.actor) for a in AuditEntry.objects.order_by("pk")] == [
        ("session.items_trimmed", "user:otto"), ("session.items_compacted", "user:otto")]


def test_a_stale_page_is_refused_and_says_why(session: Session, operator_client) -> None:  # type: ignore[no-untyped-def]
    session_items_append(project=session.project, session_id=session.pk, items=[{"role": "user", "content": "x"}])
    response = operator_client.post(reverse("sessions:session_trim", args=[session.pk]),
                                    {"keep_last": 0, "expected_last_seq": 8, "confirm": "on"})
    assert response.status_code == 409 and "last seq is 9, not 8" in response.content.decode()
    assert len(_seqs(session)) == 9


def test_a_reviewer_and_another_projects_operator_cannot_trim(session: Session, reviewer_client, other_project,  # type: ignore[no-untyped-def]
                                                              client_for) -> None:
    page = reviewer_client.get(reverse("sessions:session_timeline", args=[session.pk])).content.decode()
    assert 'id="trim-form"' not in page
    body = {"keep_last": 0, "confirm": "on"}
    assert reviewer_client.post(reverse("sessions:session_trim", args=[session.pk]), body).status_code == 403
    outsider = client_for(factories.make_user("oscar", role="operator", projects=[other_project]))
    assert outsider.post(reverse("sessions:session_trim", args=[session.pk]), body).status_code == 404
    assert len(_seqs(session)) == 8


def test_the_session_page_counts_the_items_held_and_their_seq_range_after_retention(  # type: ignore[no-untyped-def]
    session: Session, project: Project, operator, reviewer_client,
) -> None:
    from harness.actors import Actor
    from runs_app.retention import retention_pass, retention_policy_set

    url = reverse("sessions:session_timeline", args=[session.pk])
    assert "8 items (seq 1..8)" in reviewer_client.get(url).content.decode()

    retention_policy_set(project=project, actor=Actor.of(operator), settings={"items_keep_last": 3})
    retention_pass(project=project)

    assert _seqs(session) == [6, 7, 8]
    page = reviewer_client.get(url).content.decode()
    assert "3 items held (seq 6..8) of 8 appended; 5 removed by trim, compaction or retention" in page
    assert "8 items" not in page
