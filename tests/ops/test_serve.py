"""bin/serve, the production start, as a real set of processes: gunicorn (2 sync workers), the MCP server, a Celery
worker (prefork, 2 children) and beat, on the test database (migrated and granted by its owner, served as the runtime
role harness_app) and this suite's Redis db.

One agent's day through it, then a SIGTERM: the probes answer by address, an approval decided over HTTP is
resumed by the worker, /metrics adds up the web and worker processes (prometheus multiprocess), the decision's
request id reaches the worker's log lines, no line carries a token, a password or memory content, and the
stop leaves no process behind. Every wait is bounded.
"""

import json
import os
import re
import signal
import socket
import subprocess
import uuid
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families

from runs_app.models import ApprovalRequest, RunStatus
from tests import factories
from tests.client.conftest import run_async
from tests.subprocesses import ROOT
from tests.worker.support import demo_run, wait_for, wait_status

# The reviewer logs in to bin/serve's gunicorn, which checks the password with the default hashers.
pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True),
              pytest.mark.real_password_hasher]

SECRET_KEY = "serve-smoke-" + "k7Qz9" * 12
METRICS_TOKEN = "metrics-" + uuid.uuid4().hex


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def _sum(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _mcp_refuses_no_token(url: str) -> bool:
    try:
        return httpx2.post(url, json={}, timeout=5).status_code == 401
    except httpx2.TransportError:
        return False


async def _mcp_call(url: str, token: str, name: str, arguments: dict) -> Any:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http, \
            Client(streamable_http_client(url, http_client=http)) as client:
        return await client.call_tool(name, arguments)


def test_bin_serve_runs_the_web_server_worker_and_beat_and_stops_them_all(
        tmp_path: Path, broker, fake_service, live_database_url: str) -> None:  # type: ignore[no-untyped-def]
    run = demo_run()
    reviewer = factories.make_user(f"rita-{uuid.uuid4().hex[:6]}", role="reviewer", projects=[run.project],
                                   password="correct-horse-battery-staple")
    _, reviewer_token = factories.make_personal_token(reviewer)
    _, agent_token = factories.make_agent_token(run.project, name="smoke-agent")
    port, mcp_port = _free_port(), _free_port()
    env = {
        # As production: the owner migrates and grants, every process connects as the runtime role.
        **os.environ, "DATABASE_URL": live_database_url.replace("postgres://postgres@", "postgres://harness_app@"),
        "MIGRATION_DATABASE_URL": live_database_url, "HARNESS_RUNTIME_ROLE": "harness_app",
        "BIND": f"127.0.0.1:{port}", "MCP_BIND": f"127.0.0.1:{mcp_port}", "WEB_WORKERS": "2",
        "WORKER_CONCURRENCY": "2", "HARNESS_VAR_DIR": str(tmp_path / "var"), "SECRET_KEY": SECRET_KEY,
        "ALLOWED_HOSTS": "console.example.com,127.0.0.1", "SECURE_COOKIES": "0", "DEBUG": "0",
        "LOG_FORMAT": "json", "HARNESS_METRICS_TOKEN": METRICS_TOKEN, "HARNESS_WORKER_HEARTBEAT_SECONDS": "1",
        "HARNESS_RECOVERY_INTERVAL_SECONDS": "1", "PYTHONUNBUFFERED": "1",
        "HARNESS_TOOL_ADAPTERS": json.dumps({"publish_chapter": {"kind": "http", "url": fake_service.url,
                                                                 "timeout": 10, "connect_timeout": 2}}),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    log_path = tmp_path / "serve.log"
    with log_path.open("w") as log:
        serve = subprocess.Popen([str(ROOT / "bin" / "serve")], cwd=ROOT, env=env, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    client = httpx.Client(base_url=base, timeout=10)
    try:
        def answers(path: str, status: int) -> bool:
            assert serve.poll() is None, log_path.read_text()[-4000:]
            try:
                return client.get(path).status_code == status
            except httpx.TransportError:
                return False

        wait_for(lambda: answers("/healthz", 200), timeout=60, what="/healthz")
        # A probe comes by the machine's address, not the public host name: no 400 for the Host header.
        assert client.get("/healthz", headers={"Host": "10.1.2.3:8000"}).status_code == 200
        wait_for(lambda: answers("/readyz", 200), timeout=60, what="/readyz (the worker's heartbeat)")
        assert "no-store" in client.get("/readyz").headers["Cache-Control"]

        # A console login (its password must not reach a log line), and an agent's memory write.
        login = client.get("/login/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text)
        assert csrf is not None
        logged_in = client.post("/login/", data={"username": reviewer.username,
                                                 "password": "correct-horse-battery-staple",
                                                 "csrfmiddlewaretoken": csrf.group(1)})
        assert logged_in.status_code == 302, logged_in.text[:500]
        memory_text = f"the editor prefers tea {uuid.uuid4().hex}"
        written = client.post("/api/v1/memory/records/", headers={"Authorization": f"Bearer {agent_token}"},
                              json={"scope": "project", "content": memory_text, "source_run_id": run.pk})
        assert written.status_code in (200, 201), written.text

        # The MCP server (the `mcp` role): a tool call is the REST call, made in its process, counted below.
        mcp_url = f"http://127.0.0.1:{mcp_port}/mcp"
        wait_for(lambda: _mcp_refuses_no_token(mcp_url), timeout=60, what="the MCP server")
        found = run_async(_mcp_call(mcp_url, agent_token, "memory_search", {"scope": "project", "q": "tea"}))
        assert not found.is_error and found.structured_content is not None, found.content
        assert memory_text in [r["content"] for r in found.structured_content["results"]]

        request_id = f"smoke-{uuid.uuid4().hex[:12]}"
        version = ApprovalRequest.objects.get(pk=run.pending_approval_id).version  # the version the reviewer read
        decided = client.post(f"/api/v1/approvals/{run.pending_approval_id}/decision/",
                              headers={"Authorization": f"Bearer {reviewer_token}", "X-Request-ID": request_id},
                              json={"decision": "approve", "expected_version": version})
        assert decided.status_code == 200, decided.text
        assert decided.headers["X-Request-ID"] == request_id
        wait_status(run.pk, RunStatus.SUCCEEDED, timeout=60)

        assert client.get("/metrics").status_code == 401
        def scraped() -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
            response = client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
            assert response.status_code == 200
            return _samples(response.text)

        # The worker's children write the resume counters; the web process's /metrics reads them.
        samples = wait_for(lambda: (s := scraped()) and _sum(s, "harness_resumes_total", outcome="done") >= 1 and s,
                           timeout=30, what="the resume in /metrics")
        assert _sum(samples, "harness_resume_duration_seconds_count", outcome="done") >= 1
        assert _sum(samples, "harness_http_requests_total", route="api/v1/approvals/<id:pk>/decision/",
                    status="200") == 1
        assert _sum(samples, "harness_task_queue_lag_seconds_count", task="worker.resume_run") >= 1
        assert _sum(samples, "harness_http_requests_total", route="api/v1/memory/retrieve/", status="200") == 1
        assert ("harness_worker_heartbeat_age_seconds", frozenset()) in samples
    finally:
        client.close()
        serve.send_signal(signal.SIGTERM)
        try:
            code = serve.wait(timeout=40)
        except subprocess.TimeoutExpired:
            os.killpg(serve.pid, signal.SIGKILL)
            raise
        finally:
            text = log_path.read_text(errors="replace")
    assert code == 143, text[-3000:]
    wait_for(lambda: not _group_alive(serve.pid), timeout=20, what="every process of bin/serve to end")

    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert lines, text[-2000:]
    in_worker = [line for line in lines if line.get("request_id") == request_id and line.get("celery_task_id")]
    assert any(line.get("run") == run.pk and line.get("celery_task") == "worker.resume_run" for line in in_worker), \
        [line for line in lines if line.get("request_id") == request_id]
    for secret in (agent_token, reviewer_token, METRICS_TOKEN, "correct-horse-battery-staple", memory_text,
                   SECRET_KEY):
        assert secret not in text
