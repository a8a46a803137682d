"""A PostgreSQL primary, a streaming replica made with pg_basebackup, and PgBouncer in transaction mode, all
started on loopback by the test itself (its own small cluster on free ports: the suite's server is not touched),
and stopped at the end. PostgreSQL refuses to run as root, so the servers run as the `postgres` system user.
"""

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

RUN_AS = "postgres"
RUNUSER = shutil.which("runuser") or "/usr/sbin/runuser"
APT_GET = shutil.which("apt-get") or "/usr/bin/apt-get"


def _bin(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not candidates:
        raise RuntimeError(f"{name} is not installed (Debian's postgresql package has it)")
    return candidates[-1]


def _as_postgres(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([RUNUSER, "-u", RUN_AS, "--", *argv], capture_output=True, text=True, timeout=120,
                          **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{argv[0]}: {done.stdout}{done.stderr}"
    return done


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")
        time.sleep(0.2)


@dataclass
class Server:
    data: Path
    port: int

    def url(self, dbname: str = "harness") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{dbname}"

    def start(self) -> None:
        _as_postgres([_bin("pg_ctl"), "-D", str(self.data), "-w", "-t", "60", "-l", str(self.data / "server.log"),
                      "-o", f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.data}",
                      "start"])

    def stop(self) -> None:
        subprocess.run([RUNUSER, "-u", RUN_AS, "--", _bin("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                        "stop"], capture_output=True, timeout=60)

    def query(self, sql: str, dbname: str = "harness") -> list[tuple]:
        with psycopg.connect(self.url(dbname), autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(sql)
            return cursor.fetchall() if cursor.description else []


def primary(root: Path) -> Server:
    """A fresh cluster that accepts replication from loopback, with an empty database `harness`."""
    server = Server(root / "primary", free_port())
    _as_postgres([_bin("initdb"), "-D", str(server.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-sync"])
    with (server.data / "pg_hba.conf").open("w") as hba:
        hba.write("local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n")
    with (server.data / "postgresql.conf").open("a") as conf:
        conf.write("\nwal_level = replica\nmax_wal_senders = 4\nfsync = off\nshared_buffers = 16MB\n")
    server.start()
    server.query("CREATE DATABASE harness", dbname="postgres")
    return server


def replica_of(source: Server, root: Path) -> Server:
    """pg_basebackup of `source` with -R (standby.signal and primary_conninfo written), started: a streaming
    replica, read-only, replaying the primary's WAL."""
    server = Server(root / "replica", free_port())
    _as_postgres([_bin("pg_basebackup"), "-h", "127.0.0.1", "-p", str(source.port), "-U", "postgres", "-D",
                  str(server.data), "-R", "-X", "stream", "--no-sync",
                  # An immediate checkpoint: the default (spread) waits for most of checkpoint_timeout, ~90 s here.
                  "--checkpoint=fast"])
    server.start()
    return server


def caught_up(source: Server, replica: Server, timeout: float = 30) -> None:
    """Wait until the replica has replayed everything the primary had written when this was called."""
    (target,), = source.query("SELECT pg_current_wal_lsn()::text", dbname="postgres")
    deadline = time.monotonic() + timeout
    while True:
        (done,), = replica.query(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn", dbname="postgres")
        if done:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the replica did not reach {target} in {timeout}s")
        time.sleep(0.1)


@dataclass
class PgBouncer:
    port: int
    proc: subprocess.Popen = field(repr=False)

    def url(self, dbname: str = "harness") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{dbname}"

    def stop(self) -> None:
        """SIGTERM to the whole group (runuser and PgBouncer under it: runuser does not pass signals on);
        for PgBouncer SIGTERM is the immediate shutdown (SIGINT would wait for every client to leave)."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=15)
                break
            except subprocess.TimeoutExpired:
                continue
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                os.killpg(self.proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


def ensure_pgbouncer() -> str:
    """PgBouncer from Debian's packages, installed here when missing (the suite is its only user)."""
    found = shutil.which("pgbouncer") or (os.path.exists("/usr/sbin/pgbouncer") and "/usr/sbin/pgbouncer")
    if found:
        return str(found)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run([APT_GET, "update", "-qq"], check=True, env=env, capture_output=True, timeout=300)
    subprocess.run([APT_GET, "install", "-y", "-qq", "--no-install-recommends", "pgbouncer"], check=True, env=env,
                   capture_output=True, timeout=300)
    return "/usr/sbin/pgbouncer"


def pgbouncer(target: Server, root: Path, *, pool_size: int = 4) -> PgBouncer:
    """PgBouncer in transaction mode in front of `target`: every client transaction borrows one of `pool_size`
    server connections and gives it back at its end."""
    binary = ensure_pgbouncer()
    folder = root / "pgbouncer"
    folder.mkdir()
    port = free_port()
    (folder / "userlist.txt").write_text('"postgres" ""\n')
    (folder / "pgbouncer.ini").write_text(f"""[databases]
harness = host=127.0.0.1 port={target.port} dbname=harness
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {folder}/userlist.txt
pool_mode = transaction
default_pool_size = {pool_size}
max_client_conn = 200
ignore_startup_parameters = extra_float_digits,options
logfile = {folder}/pgbouncer.log
""")
    shutil.chown(folder, RUN_AS)
    for path in folder.iterdir():
        shutil.chown(path, RUN_AS)
    proc = subprocess.Popen([RUNUSER, "-u", RUN_AS, "--", binary, str(folder / "pgbouncer.ini")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    _wait_port(port)
    return PgBouncer(port, proc)


def workspace() -> Path:
    """A folder the postgres user owns (pytest's tmp_path is root's alone)."""
    root = Path(tempfile.mkdtemp(prefix="harness-topology-"))
    shutil.chown(root, RUN_AS)
    return root
