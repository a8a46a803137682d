"""Server processes the HTTP, worker and memory scenarios start: gunicorn, granian, the MCP server and a Celery
worker.

Every process is started in its own process group and stopped by that group's id (never by name),
so a crashed scenario leaves nothing behind; `atexit` stops what a scenario forgot.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LOG_DIR = ROOT / "var" / "bench"
_started: list[subprocess.Popen] = []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    """Resident memory of one process (VmRSS), in MB; 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


@dataclass
class Server:
    name: str
    proc: subprocess.Popen
    log_path: Path
    port: int = 0
    extra: dict = field(default_factory=dict)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def worker_pids(self) -> list[int]:
        """gunicorn: the forked workers; a solo Celery worker: itself."""
        return children(self.proc.pid) or [self.proc.pid]

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
            except ProcessLookupError:
                pass
        if self.proc in _started:
            _started.remove(self.proc)


def _spawn(name: str, argv: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[subprocess.Popen, Path]:
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    log_path = LOG_DIR / f"{name}-{os.getpid()}.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(argv, cwd=cwd, env={**os.environ, "PYTHONUNBUFFERED": "1", **env}, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    _started.append(proc)
    return proc, log_path


def _wait(predicate: Any, proc: subprocess.Popen, what: str, log_path: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited:\n{log_path.read_text(errors='replace')[-3000:]}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} not ready after {timeout}s:\n{log_path.read_text(errors='replace')[-3000:]}")
        time.sleep(0.1)


def _serving(proc: subprocess.Popen, log_path: Path, *, name: str, port: int, workers: int,
             timeout: float = 60.0) -> Server:
    """The server once its port answers and all its worker processes are forked (none for a one-process server)."""
    def ready() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return len(children(proc.pid)) >= workers
        except OSError:
            return False

    _wait(ready, proc, name, log_path, timeout=timeout)
    return Server(name=name, proc=proc, log_path=log_path, port=port)


# The servers count every token's requests as production does (the throttle's cost is in the figures) against a
# rate no scenario reaches: a bench drives thousands of calls a second with one token.
BENCH_API_RATE = "100000000/min"


def start_gunicorn(*, workers: int = 2, threads: int = 1, pool: bool = False, gthread: bool = False,
                   env: dict | None = None,
                   name: str = "gunicorn") -> Server:
    """gunicorn on 127.0.0.1, `workers` processes; threads > 1 (or `gthread`) uses the gthread worker class,
    which keeps connections alive (the sync worker closes each after its response).

    With `pool` each worker gets a psycopg pool sized to its threads (opened lazily, after the fork);
    without, each thread keeps one persistent connection (CONN_MAX_AGE).
    """
    port = free_port()
    server_env = {"SECURE_COOKIES": "0", "HARNESS_API_RATE": BENCH_API_RATE, **(env or {})}
    if pool:
        server_env["DATABASE_POOL_MAX_SIZE"] = str(threads)
    else:
        server_env.setdefault("DATABASE_CONN_MAX_AGE", "600")
    argv = [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
            "--workers", str(workers), "--keep-alive", "30", "--backlog", "256",
            "--error-logfile", "-", "--log-level", "warning", "--graceful-timeout", "5"]
    if threads > 1 or gthread:
        argv += ["--worker-class", "gthread", "--threads", str(threads)]
    proc, log_path = _spawn(name, argv, server_env)

    return _serving(proc, log_path, name=name, port=port, workers=workers)


def start_granian(*, workers: int = 2, threads: int = 1, env: dict | None = None, name: str = "granian",
                  app: str = "config.wsgi:application") -> Server:
    """granian (a Rust HTTP server) serving the WSGI application on 127.0.0.1: `workers` processes, each
    running the application on `threads` threads (each with one persistent database connection), keeping
    client connections alive."""
    port = free_port()
    server_env = {"SECURE_COOKIES": "0", "DATABASE_CONN_MAX_AGE": "600", "HARNESS_API_RATE": BENCH_API_RATE,
                  **(env or {})}
    argv = [str(Path(sys.executable).parent / "granian"), "--interface", "wsgi", app,
            "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers),
            "--blocking-threads", str(threads), "--no-ws", "--log-level", "warning", "--workers-kill-timeout", "5"]
    proc, log_path = _spawn(name, argv, server_env)

    return _serving(proc, log_path, name=name, port=port, workers=workers)


def start_mcp(*, env: dict | None = None, name: str = "bench-mcp") -> Server:
    """`manage.py mcp` (harness.mcp: uvicorn, one process, tool calls on its worker threads) on 127.0.0.1, as
    bin/start runs it beside the web server; ready once its port answers."""
    port = free_port()
    server_env = {"SECURE_COOKIES": "0", "DATABASE_CONN_MAX_AGE": "600", "HARNESS_API_RATE": BENCH_API_RATE,
                  **(env or {})}
    argv = [sys.executable, "manage.py", "mcp", "--bind", f"127.0.0.1:{port}"]
    proc, log_path = _spawn(name, argv, server_env)
    return _serving(proc, log_path, name=name, port=port, workers=0, timeout=90)


def start_celery_worker(*, env: dict | None = None, name: str = "bench-worker") -> Server:
    """`celery -A config worker` (solo pool: one process, whose memory is the worker's) with the bench's
    no-op task included."""
    argv = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "solo", "--include",
            "bench.celery_tasks", "-n", f"{name}-{os.getpid()}@%h", "--without-gossip", "--without-mingle",
            "--without-heartbeat", "--loglevel", "WARNING"]
    proc, log_path = _spawn(name, argv, {"CELERY_WORKER_READY_LOG": "1", **(env or {})})
    from bench.celery_tasks import ping_worker

    _wait(lambda: ping_worker(timeout=1.0), proc, name, log_path, timeout=90)
    return Server(name=name, proc=proc, log_path=log_path)


@atexit.register
def _stop_leftovers() -> None:
    for proc in list(_started):
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
