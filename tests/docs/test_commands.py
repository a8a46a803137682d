"""Every command the README and the docs show works as shown (issue 31, part 1).

Each page's ```bash blocks run in order, in one `bash -euo pipefail` shell at the repository root, against a
console of their own: `bin/serve`'s web server (the production start; no worker, so a block cannot wait on a
resume) with `DEBUG=0` and the suite's settings (bin/test), on a fresh database copied from a template that is
migrated and has the demo loaded, as bin/start leaves its database.
The shell gets what a reader's second shell beside `bin/start` has, and nothing of this test's environment:
`.venv/bin` on PATH, `HARNESS_URL` (the console), `DATABASE_URL` (its database, which is what manage.py finds by
default beside bin/start) and a scratch HARNESS_VAR_DIR. So a block that needs a token makes one, a key comes
from a command that exists on a stock Debian (a missing one fails the block, even where `bash -e` does not
stop), and a curl that gets an error fails the block with its body.

```sh blocks are not run; each carries a `<!-- not run: why -->` comment, checked here too.
"""

import os
import re
import shlex
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest
from psycopg import sql
from psycopg.rows import TupleRow

from tests import template_db
from tests.docs.blocks import ROOT, Block, bash_blocks, blocks_by_page, fenced_blocks, pages
from tests.parallel import worker_suffix
from tests.worker.support import wait_for

PAGES = blocks_by_page()
# What bin/test exports for the suite, given to the console (DEBUG pinned off: the blocks must work without it).
SUITE_VARIABLES = ("SECRET_KEY", "SECURE_COOKIES", "HARNESS_DEMO", "ALLOWED_HOSTS", "HARNESS_API_RATE",
                   "HARNESS_LOGIN_RATE", "HARNESS_WEBHOOK_ALLOW_PRIVATE", "CELERY_BROKER_URL")
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
_NOT_FOUND = re.compile(r": command not found$", re.MULTILINE)
BLOCKS_TIMEOUT = 180  # seconds for one page's blocks together: they are meant to be short-lived


def _url_with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path="/" + name))


def _admin_connection() -> psycopg.Connection[TupleRow]:
    return psycopg.connect(_url_with_database(os.environ["DATABASE_URL"], "postgres"), autocommit=True)


def _drop(name: str) -> None:
    with _admin_connection() as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _console_env(database_url: str, **extra: str) -> dict[str, str]:
    """The console's environment: the suite's settings from bin/test, and nothing else of this process's."""
    suite = {name: os.environ[name] for name in SUITE_VARIABLES if name in os.environ}
    return {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8", **suite,
            "DEBUG": "0", "DATABASE_URL": database_url, "PYTHONUNBUFFERED": "1", **extra}


@pytest.fixture(scope="module")
def template_database(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database with the demo loaded once for this module (one per xdist worker), as bin/start leaves its own;
    each page's database is a fresh copy of it. It starts as a copy of the suite's migrated template
    (tests/template_db.py): the same schema `migrate` makes, without migrating again."""
    base = urlsplit(os.environ["DATABASE_URL"]).path.lstrip("/")
    name = f"{base}_docs{worker_suffix()}_template"
    template_db.clone_template_as(name)
    url = _url_with_database(os.environ["DATABASE_URL"], name)
    try:
        scratch = tmp_path_factory.mktemp("demo")
        env = _console_env(url, HOME=str(scratch), HARNESS_VAR_DIR=str(scratch / "var"))
        # What bin/start does before it serves (its `migrate` has nothing left to do): the pages' commands run
        # beside it, on its demo.
        done = subprocess.run([str(ROOT / ".venv/bin/python"), "manage.py", "load_demo", "--with-users"], env=env,
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        yield name
    finally:
        _drop(name)


@pytest.fixture
def fresh_database(template_database: str, request: pytest.FixtureRequest) -> Iterator[str]:
    name = template_database.removesuffix("_template") + f"_{request.node.callspec.indices['page']}"
    _drop(name)
    with _admin_connection() as conn:
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name),
                                                                      sql.Identifier(template_database)))
    try:
        yield _url_with_database(os.environ["DATABASE_URL"], name)
    finally:
        _drop(name)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def console(fresh_database: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """bin/serve's web server alone on the fresh database: its URL, and its log."""
    port = _free_port()
    env = _console_env(fresh_database, HARNESS_ROLES="web", HARNESS_MIGRATE="0", WEB_WORKERS="1",
                       BIND=f"127.0.0.1:{port}", HARNESS_VAR_DIR=str(tmp_path / "console-var"),
                       # gunicorn puts its control socket under HOME: one of its own, beside other consoles.
                       HOME=str(tmp_path / "console-home"))
    log_path = tmp_path / "console.log"
    with log_path.open("w") as log:
        serve = subprocess.Popen([str(ROOT / "bin" / "serve")], cwd=ROOT, env=env, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        assert serve.poll() is None, log_path.read_text()[-4000:]
        try:
            return httpx.get(url + "/healthz", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_for(answers, timeout=60, what="the console's /healthz")
        yield url, log_path
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(serve.pid, signal.SIGKILL)
            serve.wait(timeout=10)


def _run_blocks(blocks: list[Block], *, url: str, database_url: str, work: Path) -> tuple[int, int]:
    """Runs the blocks in one shell; (exit status, index of the block that was running when it stopped)."""
    work.mkdir()
    driver = [f"cd {shlex.quote(str(ROOT))}"]
    for index, block in enumerate(blocks):
        (work / f"{index}.sh").write_text(block.text)
        at = shlex.quote(str(work))
        driver.append(f"echo {index} > {at}/progress")
        driver.append(f"source {at}/{index}.sh > {at}/{index}.out 2> {at}/{index}.err")
    (work / "driver.sh").write_text("\n".join(driver) + "\n")
    env = {"PATH": f"{ROOT}/.venv/bin:{SYSTEM_PATH}", "HOME": str(work), "LANG": "C.UTF-8",
           "HARNESS_URL": url, "DATABASE_URL": database_url, "HARNESS_VAR_DIR": str(work / "var")}
    # No stdin: a block that waits for input ends instead of hanging the test. A group of its own, so a block
    # that overstays is stopped with everything it started.
    with (work / "driver.log").open("w") as log:
        shell = subprocess.Popen(["/bin/bash", "-euo", "pipefail", str(work / "driver.sh")], cwd=ROOT, env=env,
                                 stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True)
    try:
        status = shell.wait(timeout=BLOCKS_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(shell.pid, signal.SIGKILL)
        shell.wait(timeout=10)
        status = -1
    return status, int((work / "progress").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_pages_bash_blocks_run_as_shown(page: str, console: tuple[str, Path], fresh_database: str,
                                           tmp_path: Path) -> None:
    url, log_path = console
    blocks = PAGES[page]
    work = tmp_path / "blocks"
    status, index = _run_blocks(blocks, url=url, database_url=fresh_database, work=work)
    ended = f"took over {BLOCKS_TIMEOUT}s" if status == -1 else f"exited {status}"
    if status == 0:
        assert index == len(blocks) - 1, "a block ended the shell early (exit 0), so the blocks after it never ran"
        # A command missing inside $(...) in an argument does not stop `bash -e`: `-H "Idempotency-Key:
        # $(uuidgen)"` on a machine without uuidgen sends an empty header, and the write succeeds without a key.
        # Bash still says so on stderr.
        missing = [i for i in range(len(blocks)) if _NOT_FOUND.search((work / f"{i}.err").read_text())]
        if missing:
            status, index, ended = 127, missing[0], "ran a command that is not installed"
    if status != 0:
        block = blocks[index]
        pytest.fail(
            f"{page}, the bash block at line {block.line} {ended}:\n{block.text}"
            f"--- stdout\n{(work / f'{index}.out').read_text()}\n--- stderr\n{(work / f'{index}.err').read_text()}"
            f"\n--- the console's log (last lines)\n{log_path.read_text()[-2000:]}"
        )


def test_the_collector_finds_the_readmes_and_the_quickstarts_blocks() -> None:
    """So the test above cannot pass by running nothing."""
    assert len(PAGES.get("README.md", [])) >= 1
    assert len(PAGES.get("docs/quickstart.md", [])) >= 2
    assert "create_agent_token" in PAGES["README.md"][0].text
    assert any("/items/latest/" in block.text for block in PAGES["docs/quickstart.md"])


def test_the_collector_takes_bash_fences_only_with_their_lines() -> None:
    text = ("# T\n\n```bash\necho one\n```\n\n<!-- not run: forever -->\n```sh\nbin/start\n```\n```python\nx = 1\n```\n"
            "1. a step:\n\n    ```bash\n    echo two\n      echo indented\n    ```\n")
    assert [(b.line, b.lang, b.above) for b in fenced_blocks(text)] == [
        (3, "bash", "# T"), (8, "sh", "<!-- not run: forever -->"), (11, "python", "```"), (16, "bash", "1. a step:"),
    ]
    assert [b.text for b in bash_blocks(text)] == ["echo one\n", "echo two\n  echo indented\n"]


@pytest.mark.parametrize("page", pages())
def test_every_sh_block_says_why_it_is_not_run(page: str) -> None:
    """A ```sh block is a deliberate exception to "the suite runs it": the comment above it names the reason."""
    for block in fenced_blocks((ROOT / page).read_text(), page):
        if block.lang == "sh":
            assert re.fullmatch(r"<!-- not run: .+ -->", block.above), f"{page}:{block.line} says not why it is not run"
