"""Checks are clean, no model change lacks a migration, and bad settings stop the process at start-up.

(Migrations applying from nothing are tested twice where users meet them: the suite's own template database,
tests/template_db.py, is migrated from an empty database over TCP whenever a migration changes, and the console
crawl, tests/console/test_crawl.py, runs `bin/start`, whose first `migrate` fills a fresh embedded server reached by
the default URL.)

SQLite is not supported: a sqlite:// DATABASE_URL stops the process at start-up.
"""

import subprocess
import sys

import pytest

from tests.subprocesses import ROOT, child_env


def _manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=240)


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
