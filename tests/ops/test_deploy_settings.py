"""The production configuration: `manage.py check --deploy` is clean, and secrets can come from files."""

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from harness.env import DECLARED, EnvVar, env_secret
from tests.subprocesses import ROOT, child_env

PRODUCTION_SECRET = "pr0d-" + "Zq8!xW3#vB6$" * 5  # 65 characters, many distinct


def _production_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = child_env(ALLOWED_HOSTS="console.example.com", HARNESS_VAR_DIR=str(tmp_path))
    # bin/test's relaxations are not production's.
    for name in ("SECURE_COOKIES", "DEBUG", "HARNESS_DEMO", "SECRET_KEY", "HARNESS_API_RATE", "HARNESS_LOGIN_RATE",
                 "DJANGO_ALLOW_ASYNC_UNSAFE"):
        env.pop(name, None)
    return {**env, **extra}


def _check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_check_deploy_is_clean_in_the_production_configuration_with_the_secret_key_from_a_file(
        tmp_path: Path) -> None:
    key_file = tmp_path / "secret_key"
    key_file.write_text(PRODUCTION_SECRET + "\n")
    done = _check_deploy(_production_env(tmp_path, SECRET_KEY_FILE=str(key_file)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout, done.stdout


def test_check_deploy_fails_with_plain_http_cookies(tmp_path: Path) -> None:
    """The check is real: the relaxations bin/test uses are exactly what it reports."""
    done = _check_deploy(_production_env(tmp_path, SECRET_KEY=PRODUCTION_SECRET, SECURE_COOKIES="0"))
    assert done.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in done.stderr, done.stderr


def test_a_secret_comes_from_the_variable_or_from_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    # A test's own secret, declared for this test only (the readers refuse an undeclared name).
    monkeypatch.setitem(DECLARED, "HC_TEST_SECRET", EnvVar("HC_TEST_SECRET", "secret", "fallback", "A test's.",
                                                           "process"))
    monkeypatch.delenv("HC_TEST_SECRET", raising=False)
    monkeypatch.delenv("HC_TEST_SECRET_FILE", raising=False)
    assert env_secret("HC_TEST_SECRET") == "fallback"
    monkeypatch.setenv("HC_TEST_SECRET", "from-env")
    assert env_secret("HC_TEST_SECRET") == "from-env"

    secret_file = tmp_path / "s"
    secret_file.write_text("postgres://app:p%40ss@db:5432/harness\n")
    monkeypatch.setenv("HC_TEST_SECRET_FILE", str(secret_file))
    with pytest.raises(ImproperlyConfigured, match="not both"):
        env_secret("HC_TEST_SECRET")
    monkeypatch.delenv("HC_TEST_SECRET")
    assert env_secret("HC_TEST_SECRET") == "postgres://app:p%40ss@db:5432/harness"  # one trailing newline dropped

    secret_file.write_text("")
    with pytest.raises(ImproperlyConfigured, match="is empty"):
        env_secret("HC_TEST_SECRET")
    monkeypatch.setenv("HC_TEST_SECRET_FILE", str(tmp_path / "missing"))
    with pytest.raises(ImproperlyConfigured, match="cannot be read"):
        env_secret("HC_TEST_SECRET")


def test_the_database_url_comes_from_its_file(tmp_path: Path) -> None:
    url_file = tmp_path / "database_url"
    env = child_env()
    url_file.write_text(env.pop("DATABASE_URL") + "\n")
    env["DATABASE_URL_FILE"] = str(url_file)
    done = subprocess.run([sys.executable, "-c", "import django; django.setup(); from django.db import connection; "
                           "connection.ensure_connection(); print(connection.settings_dict['NAME'])"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == url_file.read_text().strip().rsplit("/", 1)[1]
