"""Helpers for the worker tests: a fake idempotent HTTP service, worker processes, bounded waits."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

from django.contrib.auth.models import User

from demo.scenario import demo_scenario_create
from harness.actors import Actor
from harness.models import Project
from runs_app.models import Run, RunEvent
from runs_app.services import approval_decide
from tests import factories

ROOT = Path(__file__).resolve().parents[2]
LOG_DIR = ROOT / "test-artifacts" / "worker"
T = TypeVar("T")


def wait_for(predicate: Callable[[], T], *, timeout: float = 30.0, interval: float = 0.2, what: str = "") -> T:
    """Poll until `predicate()` is truthy; fail with `what` at the deadline (never sleeps unbounded)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")
        time.sleep(interval)


class FakeService:
    """An external API on loopback that deduplicates by the Idempotency-Key header, as idempotent ones do,
    or (`dedupe=False`) one that ignores the key, so every request is a side effect and a second call shows.

    `requests[key]` counts every POST that arrived; `executions[key]` counts the side effects that
    actually happened (the first request per key when deduplicating). `delay` slows every response down;
    `raw`, when set, is the body of every 2xx answer instead of the JSON result (sent as text/plain).
    """

    def __init__(self, *, dedupe: bool = True) -> None:
        self.requests: dict[str, int] = defaultdict(int)
        self.executions: dict[str, int] = defaultdict(int)
        self.results: dict[str, dict] = {}
        self.delay = 0.0
        self.status = 200
        self.raw: bytes | None = None
        self.dedupe = dedupe
        self._lock = threading.Lock()
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # the stdlib's name
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                key = self.headers.get("Idempotency-Key", "")
                with service._lock:
                    service.requests[key] += 1
                    if not service.dedupe or key not in service.results:
                        service.executions[key] += 1
                        service.results[key] = {
                            "published": True, "execution": sum(service.executions.values()),
                            "arguments": body.get("arguments"), "url": "/published/1",
                        }
                    result = service.results[key]
                if service.delay:
                    time.sleep(service.delay)
                payload = json.dumps(result if service.status == 200 else {"error": "no"}).encode()
                raw = service.raw is not None and service.status == 200
                if raw:
                    payload = service.raw or b""
                self.send_response(service.status)
                self.send_header("Content-Type", "text/plain" if raw else "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/publish"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> "FakeService":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class WorkerProcess:
    name: str
    proc: subprocess.Popen
    log_path: Path
    _log: Any = field(repr=False, default=None)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_ready(self, timeout: float = 40.0) -> None:
        wait_for(lambda: " ready." in self.log() or self.proc.poll() is not None, timeout=timeout,
                 what=f"worker {self.name} to be ready")
        assert self.proc.poll() is None, f"worker {self.name} exited:\n{self.log()[-3000:]}"

    def kill_group(self) -> None:
        """SIGKILL the worker and its embedded beat child (they share a process group)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        """A service restart: SIGTERM (warm shutdown), then SIGKILL if it lingers."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill_group()
        if self._log:
            self._log.close()

    def exited(self, timeout: float = 30.0) -> int:
        return self.proc.wait(timeout=timeout)


class Workers:
    """Starts `celery -A tests.worker.crash_app worker --beat` processes on the test database and Redis db."""

    def __init__(self, *, database_url: str, tmp_path: Path, adapters: dict) -> None:
        self.database_url = database_url
        self.tmp_path = tmp_path
        self.adapters = adapters
        self.started: list[WorkerProcess] = []

    def start(self, name: str, *, crash_at: str = "", lease_seconds: int = 3, wait: bool = True,
              extra_env: dict | None = None) -> WorkerProcess:
        env = {
            **os.environ,
            "DATABASE_URL": self.database_url,
            "HARNESS_TOOL_ADAPTERS": json.dumps(self.adapters),
            "HARNESS_WORKER_LEASE_SECONDS": str(lease_seconds),
            "HARNESS_RECOVERY_INTERVAL_SECONDS": "1",
            "CELERY_VISIBILITY_TIMEOUT": "10",
            "PYTHONUNBUFFERED": "1",
            **(extra_env or {}),
        }
        env.pop("HARNESS_CRASH_AT", None)
        if crash_at:
            env["HARNESS_CRASH_AT"] = crash_at
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        index = len(self.started)
        log_path = LOG_DIR / f"{os.getpid()}-{index}-{name}.log"
        log = log_path.open("w")
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "tests.worker.crash_app", "worker", "--beat", "--pool", "solo",
             "-n", f"{name}-{index}@%h", "--without-gossip", "--without-mingle", "--loglevel", "INFO",
             "--schedule", str(self.tmp_path / f"beat-{index}")],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            # Its own process group, so teardown also reaches the beat child a `kill -9` orphans.
            start_new_session=True,
        )
        worker = WorkerProcess(name=name, proc=proc, log_path=log_path, _log=log)
        self.started.append(worker)
        if wait:
            worker.wait_ready()
        return worker

    def stop_all(self) -> None:
        for worker in self.started:
            worker.kill_group()
            if worker._log:
                worker._log.close()


def keyed_adapters(service: FakeService) -> dict[str, dict[str, object]]:
    """HARNESS_TOOL_ADAPTERS for the demo's publish_chapter tool at `service`, declared as honouring keys."""
    return {"publish_chapter": {"kind": "http", "url": service.url, "honours_idempotency_key": True}}


def demo_run(project: Project | None = None) -> Run:
    project = project or factories.make_project("novelforge")
    return demo_scenario_create(project=project)


def reviewer(project: Project, username: str = "rita") -> User:
    return factories.make_user(username, role="reviewer", projects=[project])


def approve(run: Run, user: User) -> None:
    approval_decide(project=run.project_id, approval_id=run.pending_approval_id, actor=Actor.for_user(user),
                    decision="approve")


def run_status(run_id: int) -> str:
    return Run.objects.values_list("status", flat=True).get(pk=run_id)


def wait_status(run_id: int, status: str, *, timeout: float = 30.0) -> Run:
    wait_for(lambda: run_status(run_id) == status, timeout=timeout, what=f"run {run_id} to be {status}")
    return Run.objects.get(pk=run_id)


def events(run_id: int, prefix: str = "") -> list[RunEvent]:
    return list(RunEvent.objects.filter(run_id=run_id, kind__startswith=prefix).order_by("seq"))
