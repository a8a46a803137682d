"""The suite's test databases: migrated once into a template, then cloned for each pytest-xdist worker.

Migrating an empty database costs ~30 s (most of it CPU), and each of bin/test's four workers used to pay it for its
own `test_harness_gwN` at the start of every run: two of the suite's minutes on this 2-core machine. Now the first
worker to arrive migrates `test_harness_template` (the test database's name, worker suffix dropped, `_template`
added) and every worker clones it with `CREATE DATABASE ... TEMPLATE`, which copies files and takes about a second.

The template keeps, in its COMMENT, a fingerprint of everything that decides what migrating produces: the migration
files, the SQL files they load, the kernel modules they import, Django's version and the installed apps. A run whose
fingerprint matches clones the template as it is, so a second run on the same server does not migrate at all; a new
or changed migration changes the fingerprint and the template is rebuilt first. `bin/test --create-db` rebuilds it
regardless (once per run: the template remembers which run built it). Building and cloning happen under one
PostgreSQL advisory lock, so workers arriving together wait for the one that builds instead of building four times,
and no clone copies a template that is half migrated.

The worker's database itself is pytest-django's as before (its name, its suffix, dropped at the end of the run).
"""

import hashlib
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import django
import psycopg
from django.conf import settings
from django.db import connections
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent
PG_DUMP, PSQL = (shutil.which(name) or f"/usr/bin/{name}" for name in ("pg_dump", "psql"))
# What migrating reads besides the migrations themselves (grep the migrations' imports when adding one).
SCHEMA_SOURCES = ("*/migrations/*.py", "*/sql/*.sql", "harness/sql_files.py", "harness/fields.py", "harness/audit.py",
                  "harness/roles.py")


def schema_fingerprint() -> str:
    """sha256 over the files that decide the schema, their paths included (a renamed migration counts), plus
    Django's version and the installed apps."""
    digest = hashlib.sha256(f"django {django.__version__}\n{settings.INSTALLED_APPS}\n".encode())
    files = sorted({path for pattern in SCHEMA_SOURCES for path in ROOT.glob(pattern) if ".venv" not in path.parts})
    for path in files:
        digest.update(f"{path.relative_to(ROOT)}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def template_name(test_name: str) -> str:
    """`test_harness_gw2` -> `test_harness_template`: one template for all the workers of one base name."""
    base, _, suffix = test_name.rpartition("_")
    stem = base if base and suffix.startswith("gw") and suffix[2:].isdigit() else test_name
    return f"{stem}_template"


def _maintenance(settings_dict: dict) -> psycopg.Connection:
    return psycopg.connect(host=settings_dict["HOST"] or "127.0.0.1", port=settings_dict["PORT"] or 5432,
                           user=settings_dict["USER"] or "postgres", password=settings_dict["PASSWORD"] or None,
                           dbname="postgres", autocommit=True, connect_timeout=10)


def _stamp_of(conn: psycopg.Connection, name: str) -> str | None:
    row = conn.execute("SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
                       [name]).fetchone()
    return None if row is None else row[0] or ""


def needs_build(stamp: str | None, fingerprint: str, run: str, *, rebuild: bool) -> bool:
    """Whether the template stamped `stamp` ("<fingerprint> <run that built it>", None: no template) must be
    migrated again before this run clones it."""
    built_for, _, built_by = (stamp or "").partition(" ")
    return built_for != fingerprint or (rebuild and built_by != run)


def _build(alias: str, name: str, stamp: str, conn: psycopg.Connection) -> None:
    """Migrate a fresh `name` with Django's own test-database creation (migrate, cache table), then stamp it."""
    connection = connections[alias]
    real_name, test_settings = connection.settings_dict["NAME"], connection.settings_dict.get("TEST", {})
    connection.settings_dict["TEST"] = {**test_settings, "NAME": name}
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False, keepdb=False)
    connection.close()  # CREATE DATABASE ... TEMPLATE refuses a template anyone is connected to
    connection.settings_dict["NAME"] = settings.DATABASES[alias]["NAME"] = real_name
    connection.settings_dict["TEST"] = test_settings  # the worker's own test name again, for whoever asks later
    conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(name), sql.Literal(stamp)))


@contextmanager
def _template_lock(conn: psycopg.Connection, template: str) -> Iterator[None]:
    conn.execute("SELECT pg_advisory_lock(hashtext(%s))", [f"harness-test-template:{template}"])
    try:
        yield
    finally:
        conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", [f"harness-test-template:{template}"])


def _clone(conn: psycopg.Connection, template: str, name: str) -> None:
    conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(template)))


def clone_template_as(name: str) -> None:
    """A fresh database `name` on the suite's server, a copy of the migrated template (for a test whose processes
    need a database of their own). The template must exist: depend on `django_db_setup`."""
    source = connections["default"].settings_dict
    template = template_name(source["NAME"])
    with _maintenance(source) as conn, _template_lock(conn, template):
        _clone(conn, template, name)


def clone_for_this_worker(run: str, alias: str = "default", *, rebuild: bool = False) -> Iterator[str]:
    """Point `alias` at a fresh clone of the template (building the template first when it is missing or stale, or
    when `rebuild` and no worker of this `run` has rebuilt it yet), yield the clone's name, then drop the clone.
    A generator: the suite's django_db_setup drives it."""
    connection = connections[alias]
    real_name = connection.settings_dict["NAME"]
    worker_name = connection.creation._get_test_db_name()
    template = template_name(worker_name)
    fingerprint = schema_fingerprint()
    with _maintenance(connection.settings_dict) as conn, _template_lock(conn, template):
        if needs_build(_stamp_of(conn, template), fingerprint, run, rebuild=rebuild):
            _build(alias, template, f"{fingerprint} {run}", conn)
        _clone(conn, template, worker_name)
    connection.close()
    connection.settings_dict["NAME"] = settings.DATABASES[alias]["NAME"] = worker_name
    try:
        yield worker_name
    finally:
        # FORCE: a process a test started may still hold a session (a server stopping as the run ends); the
        # database is this run's own, and Django's plain DROP would fail the last test's teardown over it.
        connection.close()
        connection.settings_dict["NAME"] = settings.DATABASES[alias]["NAME"] = real_name
        with _maintenance(connection.settings_dict) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(worker_name)))


def template_dump() -> bytes:
    """A plain-SQL pg_dump of the migrated template (no owners, no grants): what a test starting a PostgreSQL
    cluster of its own loads instead of migrating from nothing again. The template must exist: depend on
    `django_db_setup`."""
    source = connections["default"].settings_dict
    return subprocess.run(
        [PG_DUMP, "--no-owner", "--no-privileges", "-h", source["HOST"] or "127.0.0.1",
         "-p", str(source["PORT"] or 5432), "-U", source["USER"] or "postgres", "-d", template_name(source["NAME"])],
        capture_output=True, check=True, timeout=120).stdout


def copy_template_into(target_url: str) -> None:
    """Load the migrated template into another server's (empty) database."""
    subprocess.run([PSQL, "-q", "-v", "ON_ERROR_STOP=1", "-d", target_url.replace("postgres://", "postgresql://")],
                   input=template_dump(), capture_output=True, check=True, timeout=120)
