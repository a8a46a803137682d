"""Servers an experiment starts for itself, so it may crash, restart or flush them: a PostgreSQL cluster and a
redis-server, each on its own loopback port and in its own temporary directory.

The machine's shared PostgreSQL (5432) and Redis (6379) serve every other test and agent: an experiment never
stops, restarts or flushes them. These are the experiment's own, torn down when it ends.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import psycopg
import redis

from reliability.faults import ROOT, free_port

DATABASE = "harness"
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
PSQL = shutil.which("psql") or "/usr/bin/psql"


def _server_user() -> str | None:
    """PostgreSQL refuses to run as root: as root the cluster belongs to `postgres`."""
    return "postgres" if os.geteuid() == 0 else None


class OwnPostgres:
    """A cluster of the experiment's own (initdb, pg_ctl): 127.0.0.1:<free port>, socket in its directory.

    `settings` are the server's `-c` options; autovacuum stays on, as in production (the shared test server
    runs with it off).
    """

    def __init__(self, label: str, *, settings: dict[str, str] | None = None) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=f"harness-{label}-"))
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        self.port = free_port()
        self.settings = {"listen_addresses": "127.0.0.1", "unix_socket_directories": str(self.dir),
                         "autovacuum": "on", "max_connections": "100", **(settings or {})}
        user = _server_user()
        if user:
            entry = pwd.getpwnam(user)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        self.user = user

    def _pg(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        # S603: fixed argv to PostgreSQL's own tools, no shell; the only variables are our directory and port.
        return subprocess.run(list(argv), user=self.user, check=check, capture_output=True, text=True,
                              cwd=self.dir)

    def init(self) -> OwnPostgres:
        self._pg("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8")
        return self

    def start(self) -> float:
        """Start and wait until it accepts connections; the moment it did (time.monotonic())."""
        options = " ".join([f"-p {self.port}"] + [f"-c {key}={value}" for key, value in self.settings.items()])
        self._pg("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "120", "start")
        return time.monotonic()

    def stop(self, mode: str = "fast") -> None:
        """`immediate` is a crash (no checkpoint; the restart replays the WAL); `fast` a clean shutdown."""
        self._pg("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "120", "stop", check=False)

    def url(self, database: str = DATABASE) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def connect(self, database: str = DATABASE) -> psycopg.Connection:
        return psycopg.connect(host="127.0.0.1", port=self.port, user="postgres", dbname=database, autocommit=True)

    def create_database(self, database: str = DATABASE) -> None:
        with self.connect("postgres") as conn:
            conn.execute(f'CREATE DATABASE "{database}"')

    def migrate(self, database: str = DATABASE) -> None:
        """Django's migrations into it, as a deploy would run them. With RELIABILITY_SCHEMA_DUMP naming a plain
        pg_dump of a fully migrated database (the test suite's quick forms pass their template's,
        tests/template_db.py), that is loaded instead: the same schema without ~30 s of migrating per experiment."""
        dump = os.environ.get("RELIABILITY_SCHEMA_DUMP")
        if dump:
            with open(dump, "rb") as schema:  # read here: the file need not be readable by the server's user
                subprocess.run([PSQL, "-q", "-v", "ON_ERROR_STOP=1", "-d", self.url(database).replace(
                    "postgres://", "postgresql://")], stdin=schema, check=True, capture_output=True)
            return
        env = {**os.environ, "DATABASE_URL": self.url(database), "DJANGO_SETTINGS_MODULE": "config.settings"}
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env,
                       check=True, capture_output=True)

    def server_log(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)


@contextmanager
def own_postgres(label: str, *, settings: dict[str, str] | None = None) -> Iterator[OwnPostgres]:
    """A migrated cluster of the experiment's own, removed at the end however the experiment ended."""
    cluster = OwnPostgres(label, settings=settings)
    try:
        cluster.init()
        cluster.start()
        cluster.create_database()
        cluster.migrate()
        yield cluster
    finally:
        cluster.destroy()


class OwnRedis:
    """A redis-server of the experiment's own on a free loopback port, no persistence (a restart is empty)."""

    def __init__(self, label: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=f"harness-{label}-redis-"))
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    def start(self) -> float:
        log = (self.dir / "redis.log").open("a")
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.dir)], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + 30
        while True:
            with suppress(redis.ConnectionError):
                if self.client().ping():
                    return time.monotonic()
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"redis-server on {self.port} did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGKILL the server (its own process group): whatever it held is gone."""
        if self.proc is not None and self.proc.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.proc.pid, 9)
            self.proc.wait(timeout=10)

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@contextmanager
def own_redis(label: str) -> Iterator[OwnRedis]:
    server = OwnRedis(label)
    try:
        server.start()
        yield server
    finally:
        server.destroy()
