"""The hot statements are prepared once per connection; everything else is not, and the switch turns it off."""

from collections.abc import Iterator

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from harness.models import Project
from sessions_app.services import session_items_append
from tests import factories


def _prepared(fragment: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE statement LIKE %s", [f"%{fragment}%"])
        return [row[0] for row in cursor.fetchall()]


@pytest.fixture
def threshold() -> Iterator[None]:
    connection.ensure_connection()
    saved = connection.connection.prepare_threshold
    yield
    connection.connection.prepare_threshold = saved


@pytest.mark.django_db
def test_the_append_is_prepared_once_and_the_orm_is_not(project: Project, threshold: None) -> None:
    session = factories.make_session(project)
    for n in range(3):
        session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": n}])
    assert len(_prepared("INSERT INTO sessions_app_sessionitem")) == 1
    list(Project.objects.filter(slug="nothing"))  # an ORM query: bound on the client, never prepared
    assert _prepared('"harness_project"."slug"') == []


@pytest.mark.django_db(transaction=True)
def test_with_prepared_statements_off_nothing_is_prepared(project: Project, threshold: None) -> None:
    connection.close()  # a new connection: nothing prepared on it yet
    connection.ensure_connection()
    connection.connection.prepare_threshold = None  # what DATABASE_PREPARED_STATEMENTS=0 configures
    session = factories.make_session(project)
    items = session_items_append(project=project, session_id=session.pk, items=[{"role": "user", "content": 1}])
    assert items[0].seq == 1
    assert _prepared("INSERT INTO sessions_app_sessionitem") == []


@pytest.mark.django_db
def test_fetch_instance_maps_columns_by_name_and_defers_the_rest(project: Project) -> None:
    from harness.db import fetch_instance, returning
    from runs_app.models import Run

    run = factories.make_run(project, cursor={"node": "draft"})
    # Columns out of the model's order, and only some of them.
    partial = fetch_instance(Run, "SELECT metrics, cursor, status, id FROM runs_app_run WHERE id = %s", [run.pk])
    assert (partial.pk, partial.status, partial.cursor, partial.metrics) == (run.pk, run.status, {"node": "draft"},
                                                                              run.metrics)
    assert "session_id" in partial.get_deferred_fields()
    assert partial.session_id == run.session_id  # loaded on access
    whole = fetch_instance(Run, "UPDATE runs_app_run SET version = version WHERE id = %s " + returning(Run), [run.pk])  # noqa: S608 - the model's columns
    assert whole is not None and whole.get_deferred_fields() == set() and whole.cursor == {"node": "draft"}
    assert fetch_instance(Run, "SELECT id FROM runs_app_run WHERE id = %s", [run.pk + 10**6]) is None


@pytest.mark.django_db(transaction=True)
def test_a_prepared_statement_first_in_a_request_survives_a_dropped_connection(project: Project) -> None:
    from harness.http.auth import token_lookup
    from harness.models import ApiToken

    token, secret = factories.make_agent_token(project, name="survivor")
    assert token_lookup(ApiToken.hash_secret(secret)) is not None
    assert connection.health_check_enabled
    connection.connection.close()  # the server dropped the persistent connection between requests
    connection.health_check_done = False  # what the start of the next request resets
    with CaptureQueriesContext(connection) as queries:
        found = token_lookup(ApiToken.hash_secret(secret))
    assert found is not None and found.pk == token.pk
    assert connection.health_check_done  # the lookup stood in for the check
    assert len(queries) == 2  # the failed try, then the lookup on a new connection


@pytest.mark.django_db(transaction=True)
def test_a_request_on_a_healthy_connection_costs_no_health_check_round_trip(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.http.auth import token_lookup
    from harness.models import ApiToken

    _, secret = factories.make_agent_token(project, name="healthy")
    token_lookup(ApiToken.hash_secret(secret))
    checks: list[bool] = []
    usable = connection.is_usable
    monkeypatch.setattr(connection, "is_usable", lambda: checks.append(True) or usable())
    connection.health_check_done = False  # a new request
    with CaptureQueriesContext(connection) as queries:
        assert token_lookup(ApiToken.hash_secret(secret)) is not None
        session = factories.make_session(project)
    assert len([q for q in queries if "harness_apitoken" in (q["sql"] or "")]) == 1
    assert session.pk and checks == []  # Django's SELECT 1 never ran: the lookup was the check
