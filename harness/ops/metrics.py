"""Prometheus metrics: what processes count in memory, and what the database holds, read at scrape time.

Counted in process memory, never with a database round trip (the agent API's hot path stays as it was):
request latency and status by route (harness.ops.observe), resumes by outcome and their duration (worker.tasks),
the time each Celery task waited in the queue (harness.ops.task_observe). Under gunicorn, granian or Celery's prefork
pool each process writes its own files in PROMETHEUS_MULTIPROC_DIR (bin/serve sets it and empties it at start)
and /metrics adds them up, so every web process and every worker on the machine is in one scrape.

Read from the database when scraped (a few aggregate queries, cheap next to a scrape interval): pending
approvals by age, blocked runs by step, effects by state, memory held for review, the worker's last
heartbeat and its queue lag. The feature apps own those queries (settings.HARNESS_METRICS_COLLECTORS: the
kernel imports no app); each is a collector object with `collect()`.

/metrics answers only a request with `Authorization: Bearer $HARNESS_METRICS_TOKEN` (404 without the setting,
401 with a wrong token), and never from a cache; bind it to the inside as well (docs/operations/production.md).
"""

import hmac
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.module_loading import import_string
from django.views.decorators.cache import never_cache
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from harness.env import env_str
from harness.models import WorkerHeartbeat

# A route is the URL pattern (`api/v1/runs/<id:pk>/`), never the path itself: one series per endpoint.
HTTP_REQUESTS = Counter("harness_http_requests_total", "HTTP requests answered, by route and status.",
                        ["method", "route", "status"])
HTTP_LATENCY = Histogram("harness_http_request_duration_seconds", "Time to answer an HTTP request, by route.",
                         ["method", "route"],
                         buckets=(0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0))
# The MCP server's tool calls (harness.mcp), by tool and the status of the REST request each one is; that request
# is counted by HTTP_REQUESTS too, under its own route.
MCP_TOOL_CALLS = Counter("harness_mcp_tool_calls_total", "MCP tool calls, by tool and their REST request's status.",
                         ["tool", "status"])
TASK_QUEUE_LAG = Histogram("harness_task_queue_lag_seconds",
                           "Time between a Celery task's sending and its start in a worker, by task.", ["task"],
                           buckets=(0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 300.0, 1800.0))


def multiprocess_dir() -> str:
    return env_str("PROMETHEUS_MULTIPROC_DIR")


class _ThisProcess:
    """The default registry (this process's counters) inside the scrape's registry, when not multiprocess."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


class WorkerStateCollector:
    """The newest worker heartbeat: its age (what /readyz judges) and how long that beat waited in the queue."""

    def collect(self) -> Iterator[Metric]:
        newest = WorkerHeartbeat.objects.newest()
        age = GaugeMetricFamily("harness_worker_heartbeat_age_seconds",
                                "Seconds since the newest worker heartbeat (absent: no worker has ever beaten).")
        lag = GaugeMetricFamily("harness_worker_queue_lag_seconds",
                                "How long the newest heartbeat task waited in the queue before a worker ran it.")
        if newest is not None:
            age.add_metric([], newest.age_seconds)
            lag.add_metric([], newest.queue_lag_seconds)
        yield age
        yield lag


def scrape_registry() -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    if multiprocess_dir():
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    else:
        registry.register(_ThisProcess())
    for path in settings.HARNESS_METRICS_COLLECTORS:
        registry.register(import_string(path)())
    return registry


def _authorized(request: HttpRequest) -> bool | None:
    """None: metrics are off (no token configured); else whether the request carries the token."""
    expected: str = settings.HARNESS_METRICS_TOKEN
    if not expected:
        return None
    given = request.META.get("HTTP_AUTHORIZATION", "")
    return hmac.compare_digest(given.encode(), f"Bearer {expected}".encode())


@never_cache
def metrics_view(request: HttpRequest) -> HttpResponse:
    allowed = _authorized(request)
    if allowed is None:
        return HttpResponse(status=404)
    if not allowed:
        response = HttpResponse("The metrics need their bearer token.\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = "Bearer"
        return response
    return HttpResponse(generate_latest(scrape_registry()), content_type=CONTENT_TYPE_LATEST)


# Each (method, route, status)'s two labelled series, looked up once per process: `labels()` builds and locks its
# way to the same child object on every call (about half of this function's CPU on every request). As many
# entries as the labelled series themselves, which the registry holds anyway.
_request_series: dict[tuple[str, str, int], tuple[Any, Any]] = {}


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    series = _request_series.get((method, route, status))
    if series is None:
        series = _request_series[(method, route, status)] = (
            HTTP_REQUESTS.labels(method, route, str(status)), HTTP_LATENCY.labels(method, route))
    series[0].inc()
    series[1].observe(seconds)
