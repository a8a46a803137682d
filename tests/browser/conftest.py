"""Browser tests: Debian's Chromium (headless, via Playwright) against pytest-django's live server.

Never `playwright install`: the system Chromium is launched by path. bin/test sets
DJANGO_ALLOW_ASYNC_UNSAFE=true, which Django's database fixtures need next to Playwright's loop.
"""

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    return {**browser_type_launch_args, "executable_path": "/usr/bin/chromium", "args": CHROMIUM_ARGS,
            "headless": True}


@pytest.fixture
def shot() -> Any:
    """Save a screenshot of the page as a test artifact (test-artifacts/console-<name>.png)."""
    ARTIFACTS.mkdir(exist_ok=True)

    def save(page: Any, name: str) -> None:
        page.screenshot(path=str(ARTIFACTS / f"console-{name}.png"), full_page=True)

    return save


@pytest.fixture
def login(live_server: Any) -> Any:
    def go(page: Any, username: str, password: str = "pw-123456") -> None:
        page.goto(f"{live_server.url}/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")

    return go


def _database_url() -> str:
    from django.db import connection

    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def celery_worker(transactional_db: None, live_server: Any) -> Iterator[subprocess.Popen]:
    """A real `celery -A config worker` on this test's database and broker, stopped after the test.

    It depends on transactional_db so it stops before the database is flushed. The broker's Redis
    database (this helper's own) is emptied first: a message left by an earlier test names a run
    that no longer exists.
    """
    import redis
    from django.conf import settings

    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    ARTIFACTS.mkdir(exist_ok=True)
    # One log per pytest process: xdist workers run browser tests side by side.
    log = open(ARTIFACTS / f"console-celery-worker-{os.getpid()}.log", "wb")  # noqa: SIM115 - closed below
    env = {**os.environ, "DATABASE_URL": _database_url(), "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
           "DJANGO_SETTINGS_MODULE": "config.settings"}
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("celery")), "-A", "config", "worker", "--pool=solo",
         "--concurrency=1", "--without-gossip", "--without-mingle", "--without-heartbeat",
         "-n", f"console-browser-{os.getpid()}@%h", "--loglevel=INFO"],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ARTIFACTS.parent,
    )
    try:
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        log.close()
