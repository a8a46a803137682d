"""The SQL functions and triggers' files (harness.sql_files): named by object and version, each version installed
by one migration in version order, and the migrated database saying exactly what each object's latest file says
(so a hand edit to a file without a migration fails here)."""

import re

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from harness.sql_files import InstallSQL, SQLFile, execute, latest, versions

pytestmark = pytest.mark.django_db

APPS = ("runs_app", "sessions_app", "notify_app", "bundles_app")


def _installed_in_order() -> list[tuple[str, SQLFile]]:
    """Every file a migration installs going forward, with the migration, in the order a fresh migrate runs them."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    plan = [node for leaf in sorted(loader.graph.leaf_nodes()) for node in loader.graph.forwards_plan(leaf)]
    seen: list[tuple[str, SQLFile]] = []
    done = set()
    for node in plan:
        if node in done:
            continue
        done.add(node)
        migration = loader.graph.nodes[node]
        operations = list(migration.operations)
        for operation in operations:
            operations.extend(getattr(operation, "database_operations", []))
            if isinstance(operation, InstallSQL):
                seen.extend((f"{node[0]}.{node[1]}", s) for s in operation.forward if isinstance(s, SQLFile))
    return seen


def test_every_file_is_installed_by_one_migration_in_version_order() -> None:
    installed = _installed_in_order()
    files = [sql_file for _, sql_file in installed]
    assert len(files) == len(set(files)), "a file is installed twice"
    for app in APPS:
        for obj, numbered in versions(app).items():
            assert [n for n, _ in numbered] == list(range(1, len(numbered) + 1)), f"{app}/sql/{obj}: gap in versions"
            order = [files.index(f) for _, f in numbered if f in files]
            assert len(order) == len(numbered), f"{app}/sql/{obj}: a version no migration installs"
            assert order == sorted(order), f"{app}/sql/{obj}: versions installed out of order"


def _objects() -> tuple[dict[str, str], dict[str, str]]:
    """The public schema's own functions (not an extension's) and triggers, as PostgreSQL writes them back."""
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT p.oid::regprocedure::text, coalesce(p.proacl::text, ''), pg_get_functiondef(p.oid)
              FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = current_schema()
               AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')""")
        functions = {name: acl + "\n" + definition for name, acl, definition in cursor.fetchall()}
        cursor.execute("""
            SELECT t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t
              JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = current_schema() AND NOT t.tgisinternal""")
        triggers = dict(cursor.fetchall())
    return functions, triggers


def test_the_database_says_what_each_objects_latest_file_says() -> None:
    current = {obj: sql_file for app in APPS for obj, sql_file in latest(app).items()}
    functions, triggers = _objects()
    assert {f"{name}.trigger" for name in triggers} == {obj for obj in current if obj.endswith(".trigger")}
    assert {name.split("(")[0] for name in functions} == {obj for obj in current if not obj.endswith(".trigger")}

    # Re-install every latest file in this test's transaction (rolled back): PostgreSQL's own account of each object
    # must not move. Functions first (a trigger names its function); a trigger file says CREATE TRIGGER.
    ordered = sorted(current.values(), key=lambda f: ".trigger." in f.name)
    with connection.cursor() as cursor:
        for sql_file in ordered:
            sql = re.sub(r"^CREATE TRIGGER ", "CREATE OR REPLACE TRIGGER ", sql_file.text(), flags=re.M)
            execute(cursor, [sql])
    assert _objects() == (functions, triggers)


def test_an_edit_without_a_migration_is_seen() -> None:
    """The check above can fail: a changed body reads differently once installed."""
    functions, _ = _objects()
    sql = latest("runs_app")["harness_refuse_rewrite"].text().replace("refused", "refused (edited)")
    with connection.cursor() as cursor:
        execute(cursor, [sql])
    assert _objects()[0] != functions


@pytest.mark.parametrize("app", APPS)
def test_each_apps_sql_readme_names_every_objects_current_file(app: str) -> None:
    """`<app>/sql/README.md` is where a reader looks for an object's current SQL: its table names every object
    once, with the file that is that object's latest version (so a new vN without the README's row fails)."""
    from harness.sql_files import sql_dir

    rows = re.findall(r"^\| `(\w+)`( \(trigger\))? \| `([\w.]+)` \|", (sql_dir(app) / "README.md").read_text(),
                      flags=re.MULTILINE)
    listed = {name + (".trigger" if trigger else ""): file for name, trigger, file in rows}
    assert len(listed) == len(rows), "an object is listed twice"
    assert listed == {obj: sql_file.name for obj, sql_file in latest(app).items()}
