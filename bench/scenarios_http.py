"""Scenario 5: the append over HTTP, through gunicorn and the real API endpoint, vs the Agents SDK in-process.

Clients are processes holding one keep-alive connection each (http.client: the client's own CPU
competes with the server on this 2-core machine, so it is kept as thin as possible).
"""

from __future__ import annotations

import http.client
import io
import json
import uuid
from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

from django.core.management import call_command

from bench import procs
from bench.core import Measure, Settings, Subject, measure, measure_turns
from bench.scenarios_store import ITEM, _gap_free, _new_session, _project, sdk_append_subject
from sessions_app.models import SessionItem


class ServerConfig(TypedDict):
    """A gunicorn configuration, as procs.start_gunicorn takes it."""

    workers: int
    threads: int
    pool: bool
    gthread: NotRequired[bool]
    granian: NotRequired[bool]  # granian's WSGI workers instead of gunicorn's


# The server configuration the scenario's main row uses, and the others compared with it at 8 clients.
# Sync workers, one per core: in quick runs they served 1.3-1.8x the requests of gthread with 4 threads
# at 8 clients (Python-bound requests on 2 cores gain nothing from threads, and lose to their switching).
BEST: ServerConfig = {"workers": 2, "threads": 1, "pool": False}
ALTERNATIVES: list[ServerConfig] = [
    {"workers": 2, "threads": 1, "pool": False, "granian": True},
    {"workers": 2, "threads": 1, "pool": False, "gthread": True},
    {"workers": 4, "threads": 1, "pool": False},
    {"workers": 2, "threads": 4, "pool": False},
    {"workers": 2, "threads": 4, "pool": True},
]


def agent_token(project_slug: str) -> str:
    out = io.StringIO()
    call_command("create_agent_token", project=project_slug, name=f"bench-{uuid.uuid4().hex[:6]}", stdout=out,
                 stderr=io.StringIO())
    return out.getvalue().strip().splitlines()[-1]


def label(config: ServerConfig) -> str:
    if config.get("granian"):
        return f"granian, {config['workers']} workers, {config['threads']} thread each, persistent connections"
    threads = f"{config['threads']} thread{'s' if config['threads'] > 1 else ''}"
    kind = f"gthread {threads}" if config["threads"] > 1 or config.get("gthread") else "sync"
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


def http_append_subject(settings: Settings, *, config: ServerConfig, clients: int, subject: str, token: str,
                        run: Callable[[Subject], list[Measure]]) -> list[Measure]:
    """Serve the append from gunicorn in `config` while `run` measures the HTTP subject (with whatever
    it takes turns with); checks that every acknowledged append is stored, gap-free."""
    project = _project()
    sessions = [_new_session(project) for _ in range(clients)]
    if config.get("granian"):
        server = procs.start_granian(workers=config["workers"], threads=config["threads"], name="bench-granian")
    else:
        server = procs.start_gunicorn(workers=config["workers"], threads=config["threads"], pool=config["pool"],
                                      gthread=config.get("gthread", False), name="bench-gunicorn")
    try:
        measures = run(Subject(subject, _http_setup(server.port, token, sessions), _http_append))
        m = next(m for m in measures if m.subject == subject)
        m.extra["server_rss_mb"] = round(max(procs.rss_mb(pid) for pid in server.worker_pids()))
    finally:
        server.stop()
    stored = SessionItem.objects.filter(session_id__in=sessions).count()
    m.extra["check"] = stored == m.extra["acknowledged"] and _gap_free(sessions)
    return measures


def scenario_http_append(settings: Settings) -> list[Measure]:
    project = _project()
    token = agent_token(project.slug)
    out: list[Measure] = []
    scenario = "5 append item over HTTP"
    for clients in settings.clients:
        sdk, sdk_check = sdk_append_subject()

        def take_turns(http: Subject, sdk: Subject = sdk, clients: int = clients) -> list[Measure]:
            return measure_turns(scenario, [http, sdk], clients=clients, settings=settings)

        ours, sdk_m = http_append_subject(
            settings, config=BEST, clients=clients, subject="harness API (gunicorn)", token=token, run=take_turns)
        ours.extra["server"] = label(BEST)
        sdk_m.extra["check"] = sdk_check(sdk_m)
        out += [ours, sdk_m]
    # The server configurations compared, at 8 clients (the load).
    clients = max(settings.clients)
    for config in ALTERNATIVES:
        out += http_append_subject(
            settings, config=config, clients=clients, subject=f"harness API ({label(config)})", token=token,
            run=lambda http: [measure(scenario, http.name, setup=http.setup, op=http.op, clients=clients,
                                      settings=settings)])
    return out


SCENARIOS: dict[str, Any] = {"5": scenario_http_append}
