"""Traces across real processes: bin/serve with OTEL_EXPORTER_OTLP_ENDPOINT set exports over OTLP/HTTP to a
collector this test runs on loopback, and the decision request (a gunicorn worker), the resume it queued (a
Celery pool process, reached through Redis) and the resume's tool call share one trace id: the context rode in
the task message's headers."""

import gzip
import json
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from runs_app.models import ApprovalRequest, RunStatus
from tests import factories
from tests.ops.cluster import free_port
from tests.subprocesses import ROOT
from tests.worker.support import demo_run, wait_for, wait_status

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


class Collector:
    """An OTLP/HTTP trace receiver: every span posted to /v1/traces, as (trace id, kind, name)."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, int, str]] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # the stdlib's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                for resource in request.resource_spans:
                    for scope in resource.scope_spans:
                        collector.spans.extend((span.trace_id.hex(), span.kind, span.name) for span in scope.spans)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def collector() -> Iterator[Collector]:
    found = Collector()
    yield found
    found.server.shutdown()
    found.server.server_close()


SERVER, CONSUMER, CLIENT = 2, 5, 3  # OTLP's SpanKind numbers


def test_a_decision_and_the_resume_it_queues_are_one_trace_across_processes(
        tmp_path: Path, broker, fake_service, live_database_url: str, collector: Collector  # type: ignore[no-untyped-def]
) -> None:
    run = demo_run()
    reviewer = factories.make_user("rita", role="reviewer", projects=[run.project])
    _, reviewer_token = factories.make_personal_token(reviewer)
    port = free_port()
    env = {
        **os.environ, "DATABASE_URL": live_database_url, "BIND": f"127.0.0.1:{port}", "WEB_WORKERS": "1",
        "WORKER_CONCURRENCY": "1", "HARNESS_VAR_DIR": str(tmp_path / "var"), "SECRET_KEY": "trace-" + "q8Wz" * 15,
        "ALLOWED_HOSTS": "127.0.0.1", "SECURE_COOKIES": "0", "DEBUG": "0", "HARNESS_WORKER_HEARTBEAT_SECONDS": "1",
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url, "OTEL_BSP_SCHEDULE_DELAY": "200",
        "OTEL_SERVICE_NAME": "harness-test", "PYTHONUNBUFFERED": "1",
        # Only the two processes the trace crosses: the database is migrated already, and beat and the MCP server
        # take no part in a decision's resume (each would cost a Django start on the shared cores).
        "HARNESS_ROLES": "web,worker", "HARNESS_MIGRATE": "0",
        "HARNESS_TOOL_ADAPTERS": json.dumps({"publish_chapter": {"kind": "http", "url": fake_service.url,
                                                                 "timeout": 10, "connect_timeout": 2}}),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    log_path = tmp_path / "serve.log"
    with log_path.open("w") as log:
        serve = subprocess.Popen([str(ROOT / "bin" / "serve")], cwd=ROOT, env=env, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10)
    try:
        def ready() -> bool:
            assert serve.poll() is None, log_path.read_text()[-4000:]
            try:
                return client.get("/readyz").status_code == 200
            except httpx.TransportError:
                return False

        wait_for(ready, timeout=60, what="/readyz")
        version = ApprovalRequest.objects.get(pk=run.pending_approval_id).version  # the version the reviewer read
        decided = client.post(f"/api/v1/approvals/{run.pending_approval_id}/decision/",
                              json={"decision": "approve", "expected_version": version},
                              headers={"Authorization": f"Bearer {reviewer_token}"})
        assert decided.status_code == 200, decided.text
        wait_status(run.pk, RunStatus.SUCCEEDED, timeout=60)

        def decision_trace() -> set[tuple[int, str]] | None:
            traces = {t for t, kind, name in collector.spans if kind == SERVER and "decision" in name}
            if not traces:
                return None
            (trace_id,) = traces
            kinds = {(kind, name) for t, kind, name in collector.spans if t == trace_id}
            tool_called = any(kind == CLIENT and name.startswith("POST") for kind, name in kinds)
            resumed = any(kind == CONSUMER and "worker.resume_run" in name for kind, name in kinds)
            return kinds if tool_called and resumed else None

        wait_for(decision_trace, timeout=30, what="the decision, the resume and the tool call in one trace")
    finally:
        client.close()
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=40)
        except subprocess.TimeoutExpired:
            os.killpg(serve.pid, signal.SIGKILL)
            raise
