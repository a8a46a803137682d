"""Traces (harness.ops.tracing): one trace from the reviewer's decision request to the resume's tool call.

The decision (Django) commits, its on-commit hook queues the resume (Celery, eager here: the task runs inside
the request's context, as a worker continues the context the message's headers carry), the resume reads and
writes the database (psycopg) and calls the tool over HTTP (requests), all under the request's trace id.
"""

import json
from collections.abc import Iterator

import pytest
from django.test import Client, override_settings
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from config import celery_app
from harness.ops.tracing import tracing_configure, tracing_unconfigure
from runs_app.models import ApprovalRequest, RunStatus
from tests import factories
from tests.worker.support import FakeService, demo_run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    assert tracing_configure(exporter=exporter)
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        yield exporter
    finally:
        celery_app.conf.task_always_eager = eager
        tracing_unconfigure()


@pytest.fixture
def tool() -> Iterator[FakeService]:
    service = FakeService().start()
    yield service
    service.stop()


def test_one_trace_from_the_decision_request_to_the_resumes_tool_call(spans: InMemorySpanExporter,
                                                                      tool: FakeService) -> None:
    run = demo_run()
    reviewer = factories.make_user("rita", role="reviewer", projects=[run.project])
    _, secret = factories.make_personal_token(reviewer)
    adapters = {"publish_chapter": {"kind": "http", "url": tool.url, "timeout": 10, "connect_timeout": 2}}
    version = ApprovalRequest.objects.get(pk=run.pending_approval_id).version  # the version the reviewer read
    with override_settings(HARNESS_TOOL_ADAPTERS=adapters):
        response = Client().post(f"/api/v1/approvals/{run.pending_approval_id}/decision/",
                                 json.dumps({"decision": "approve", "expected_version": version}),
                                 content_type="application/json",
                                 HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert response.status_code == 200, response.content
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and sum(tool.requests.values()) == 1

    finished = spans.get_finished_spans()
    request = next(s for s in finished if s.kind == SpanKind.SERVER and "decision" in s.name)
    task = next(s for s in finished if s.kind == SpanKind.CONSUMER and "worker.resume_run" in s.name)
    call = next(s for s in finished if s.kind == SpanKind.CLIENT and s.attributes.get("http.request.method",
                s.attributes.get("http.method")) == "POST")
    queries = [s for s in finished if s.kind == SpanKind.CLIENT and s.attributes.get("db.system",
               s.attributes.get("db.system.name")) == "postgresql"]
    trace_id = request.context.trace_id
    assert task.context.trace_id == trace_id and call.context.trace_id == trace_id
    assert any(q.context.trace_id == trace_id for q in queries)

    by_id = {s.context.span_id: s for s in finished}

    def ancestors(span):  # type: ignore[no-untyped-def]
        while span.parent is not None and span.parent.span_id in by_id:
            span = by_id[span.parent.span_id]
            yield span

    assert task in list(ancestors(call)) and request in list(ancestors(task))
