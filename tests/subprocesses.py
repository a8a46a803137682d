"""Start project processes (manage.py, python -c, celery) against the test database."""

import os
import subprocess
import sys
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def test_database_url() -> str:
    s = connection.settings_dict
    host = s.get("HOST") or "127.0.0.1"
    port = s.get("PORT") or 5432
    user = s.get("USER") or "postgres"
    return f"postgres://{user}@{host}:{port}/{s['NAME']}"


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"DATABASE_URL": test_database_url(), "DJANGO_SETTINGS_MODULE": "config.settings"})
    env.update(extra)
    return env


def run_python(code: str, *, stdin: str = "", env: dict[str, str] | None = None, timeout: float = 60) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], input=stdin, capture_output=True, text=True, cwd=ROOT,
        env=env or child_env(), timeout=timeout,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
