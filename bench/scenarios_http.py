"""Scenario 5: the append over HTTP, through gunicorn and the real API endpoint, vs the Agents SDK in-process.

Clients are processes holding one keep-alive connection each (http.client: the client's own CPU
competes with the server on this 2-core machine, so it is kept as thin as possible).
"""

from __future__ import annotations

import http.client
import io
import json
import uuid
from typing import Any

from django.core.management import call_command

from bench import procs
from bench.core import Measure, Settings, measure
from bench.scenarios_store import ITEM, _gap_free, _new_session, _project, scenario_append_sdk
from sessions_app.models import SessionItem

# The server configuration the scenario's main row uses, and the others compared with it at 8 clients.
# Sync workers, one per core: in quick runs they served 1.3-1.8x the requests of gthread with 4 threads
# at 8 clients (Python-bound requests on 2 cores gain nothing from threads, and lose to their switching).
BEST = {"workers": 2, "threads": 1, "pool": False}
ALTERNATIVES = [
    {"workers": 4, "threads": 1, "pool": False},
    {"workers": 2, "threads": 4, "pool": False},
    {"workers": 2, "threads": 4, "pool": True},
]


def agent_token(project_slug: str) -> str:
    out = io.StringIO()
    call_command("create_agent_token", project=project_slug, name=f"bench-{uuid.uuid4().hex[:6]}", stdout=out,
                 stderr=io.StringIO())
    return out.getvalue().strip().splitlines()[-1]


def label(config: dict) -> str:
    kind = f"gthread {config['threads']} threads" if config["threads"] > 1 else "sync"
    conns = "psycopg pool" if config["pool"] else "persistent connections"
    return f"{config['workers']} workers, {kind}, {conns}"


def _http_setup(port: int, token: str, sessions: list[int]) -> Any:
    def setup(i: int) -> dict:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        body = json.dumps({"items": [ITEM]}).encode()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                   "Content-Length": str(len(body))}
        return {"conn": conn, "path": f"/api/v1/sessions/{sessions[i]}/items/", "body": body, "headers": headers}

    return setup


def _http_append(s: dict) -> None:
    conn: http.client.HTTPConnection = s["conn"]
    conn.request("POST", s["path"], body=s["body"], headers=s["headers"])
    response = conn.getresponse()
    payload = response.read()
    if response.status != 201:
        raise RuntimeError(f"append answered {response.status}: {payload[:300]!r}")


def measure_http_append(settings: Settings, *, config: dict, clients: int, subject: str, token: str) -> Measure:
    project = _project()
    sessions = [_new_session(project) for _ in range(clients)]
    server = procs.start_gunicorn(workers=config["workers"], threads=config["threads"], pool=config["pool"],
                                  name="bench-gunicorn")
    try:
        m = measure("5 append item over HTTP", subject, clients=clients, settings=settings,
                    setup=_http_setup(server.port, token, sessions), op=_http_append)
        m.extra["server_rss_mb"] = round(max(procs.rss_mb(pid) for pid in server.worker_pids()))
    finally:
        server.stop()
    stored = SessionItem.objects.filter(session_id__in=sessions).count()
    m.extra["check"] = stored == m.extra["acknowledged"] and _gap_free(sessions)
    return m


def scenario_http_append(settings: Settings) -> list[Measure]:
    project = _project()
    token = agent_token(project.slug)
    out: list[Measure] = []
    for clients in settings.clients:
        out.append(measure_http_append(settings, config=BEST, clients=clients, subject="harness API (gunicorn)",
                                       token=token))
        out[-1].extra["server"] = label(BEST)
        out.append(scenario_append_sdk(settings, clients=clients, scenario="5 append item over HTTP"))
    # The server configurations compared, at 8 clients (the load).
    for config in ALTERNATIVES:
        m = measure_http_append(settings, config=config, clients=max(settings.clients), token=token,
                                subject=f"harness API ({label(config)})")
        out.append(m)
    return out


SCENARIOS: dict[str, Any] = {"5": scenario_http_append}
