"""The suite's databases are clones of one migrated template (tests/template_db.py)."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests import template_db


def test_a_template_is_named_for_the_test_database_without_its_worker():
    assert template_db.template_name("test_harness_gw3") == "test_harness_template"
    assert template_db.template_name("test_harness") == "test_harness_template"
    assert template_db.template_name("test_my_gwen") == "test_my_gwen_template"


def test_a_template_is_rebuilt_when_the_schema_changed_or_when_asked_once_per_run():
    fresh = "abc run-1"
    assert not template_db.needs_build(fresh, "abc", "run-2", rebuild=False)
    assert template_db.needs_build(fresh, "abd", "run-2", rebuild=False)  # a migration changed
    assert template_db.needs_build(None, "abc", "run-2", rebuild=False)  # no template yet
    assert template_db.needs_build("", "abc", "run-2", rebuild=False)  # a database nobody stamped
    assert template_db.needs_build(fresh, "abc", "run-2", rebuild=True)  # --create-db: this run has not built it
    assert not template_db.needs_build(fresh, "abc", "run-1", rebuild=True)  # ... another worker of it has


def test_the_fingerprint_covers_the_migrations_and_the_sql_they_load(tmp_path, monkeypatch):
    for path in ("app/migrations/0001_initial.py", "app/sql/f.v1.sql", "harness/audit.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("one")
    monkeypatch.setattr(template_db, "ROOT", tmp_path)
    before = template_db.schema_fingerprint()
    for path in ("app/migrations/0001_initial.py", "app/sql/f.v1.sql", "harness/audit.py"):
        (tmp_path / path).write_text("two")
        assert template_db.schema_fingerprint() != before, path
        (tmp_path / path).write_text("one")
    (tmp_path / "app" / "views.py").write_text("not schema")
    assert template_db.schema_fingerprint() == before


@pytest.mark.django_db
def test_this_workers_database_is_a_clone_of_the_template_stamped_with_todays_schema():
    # Read from this worker's own database (pg_database is shared): a session on the template itself would make
    # a worker cloning it at this moment fail.
    template = template_db.template_name(connection.settings_dict["NAME"])
    with connection.cursor() as cursor:
        cursor.execute("SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", [template])
        (stamp,) = cursor.fetchone()
    assert stamp.split()[0] == template_db.schema_fingerprint()
    assert connection.settings_dict["NAME"] != template
    executor = MigrationExecutor(connection)
    assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []  # every migration on disk is applied
