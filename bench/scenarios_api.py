"""Scenario H: the headline table. What agents call, over HTTP, against the peers in-process (issue 14).

Black-box: a real server process (the production configuration, `SERVER` below), a real agent token, an
`Idempotency-Key` on every POST, ~1 KB payloads on both sides, each client a process holding one keep-alive
connection (http.client: the client's own CPU competes with the server on this 2-core machine, so it is kept
as thin as possible). Each pair takes turns (`measure_turns`). The peers run in-process, as their users run
them: LangGraph's `PostgresSaver` on its documented connection, the Agents SDK's `SQLAlchemySession` on
asyncpg, on the same PostgreSQL; both sides' tables are analyzed after they are filled.

    H1 append one item            POST /api/v1/sessions/{id}/items/          vs SQLAlchemySession.add_items
    H2 newest 50 of 10,000 items  GET  /api/v1/sessions/{id}/items/latest/   vs SQLAlchemySession.get_items(limit=50)
                                                                             and the read floor (bench/floor_app.py)
    H3 checkpoint write (a chain) POST /api/v1/checkpoints/                  vs PostgresSaver.put
H1 and H3 are measured against the write floor too (bench/floor_app.py): the targets of issue 35 are ratios to the
floors (bench/run.py, TARGETS).
    H4 lineage of 1,000           GET  /api/v1/checkpoints/{id}/lineage/     vs PostgresSaver.list (jit=off, and stock)
"""

from __future__ import annotations

import asyncio
import http.client
import uuid
from typing import TYPE_CHECKING, Any

import orjson
import psycopg

from bench import procs
from bench.core import Measure, Settings, Subject, measure_turns
from bench.scenarios_http import agent_token
from bench.scenarios_store import (
    _gap_free,
    _lg_tables,
    _new_run,
    _new_session,
    _project,
    _read_fixture,
    _sdk_count,
    _sdk_url,
    chain_intact,
    lg_checkpoint,
    lg_connection,
    pg_url,
)
from harness.models import Project
from runs_app.models import Checkpoint
from runs_app.services import checkpoint_create
from sessions_app.models import SessionItem

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

# ~1 KB payloads, the same on both sides of each pair.
TEXT_1K = ("The keeper climbs the stair at dusk; the lamp is cold and the storm is late. " * 13)[:1000]
ITEM_1K = {"role": "user", "content": {"text": TEXT_1K}}
SDK_ITEM_1K: Any = {"role": "user", "content": TEXT_1K}  # an SDK input item
STATE_1K = {"completed": ["outline", "draft"], "notes": TEXT_1K}

# The server the headline measures: granian's WSGI workers, one per core, one request at a time each (one
# database connection each), keeping connections alive. Measured against gunicorn's sync workers, which
# close every connection after its response, in scenario 5's comparison rows.
SERVER: dict[str, Any] = {"kind": "granian", "workers": 2}


def _start_server() -> procs.Server:
    return procs.start_granian(workers=SERVER["workers"], name="bench-api")


FLOOR = "HTTP floor: bare WSGI app, one INSERT (no Django)"
READ_FLOOR = "HTTP read floor: bare WSGI app, one SELECT of 50 (no Django)"


def _start_floor() -> procs.Server:
    """bench/floor_app.py on the same server and workers as ours: what one HTTP write costs at the least."""
    return procs.start_granian(workers=SERVER["workers"], name="bench-floor", app="bench.floor_app:application",
                               env={"BENCH_FLOOR_DATABASE_URL": pg_url()})


def _floor_subject(floor_port: int, body: bytes) -> Subject:
    """POSTs `body` to the floor app, as the harness subject POSTs it to the API (headers and key included)."""
    def setup(i: int) -> dict:
        return {"http": _Http(floor_port, "floor")}

    def post(s: dict) -> None:
        s["http"].post("/", body)

    return Subject(FLOOR, setup, post)


def _read_floor_subject(floor_port: int) -> Subject:
    """GETs the floor app's newest 50 of 10,000 ~1 KB rows (bench/floor_app.py), with the agent's header, as the
    harness subject GETs the newest 50 items."""
    from bench import floor_app

    floor_app.read_fixture(pg_url(), orjson.dumps(ITEM_1K["content"]).decode())

    def setup(i: int) -> dict:
        return {"http": _Http(floor_port, "floor")}

    def get(s: dict) -> None:
        s["last"] = s["http"].get("/latest")

    return Subject(READ_FLOOR, setup, get)


class _Http:
    """One keep-alive connection with the agent's headers; every POST gets a fresh Idempotency-Key.

    Without a token (a peer server with no auth, scenario L) it sends no Authorization header."""

    def __init__(self, port: int, token: str | None) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.auth = {"Authorization": f"Bearer {token}"} if token else {}

    def get(self, path: str) -> bytes:
        self.conn.request("GET", path, headers=self.auth)
        return self._answer(200)

    def post(self, path: str, body: bytes, expected: int = 201) -> bytes:
        self.conn.request("POST", path, body=body, headers={
            **self.auth, "Content-Type": "application/json", "Content-Length": str(len(body)),
            "Idempotency-Key": uuid.uuid4().hex})
        return self._answer(expected)

    def _answer(self, expected: int) -> bytes:
        response = self.conn.getresponse()
        payload = response.read()
        if response.status != expected:
            raise RuntimeError(f"answered {response.status}: {payload[:300]!r}")
        return payload


def _sdk_session(name: str) -> Any:
    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

    return SQLAlchemySession.from_url(name, url=_sdk_url(), create_tables=True)


def _analyze() -> None:
    """What autovacuum would have done after the fixtures' inserts (this machine runs with it off)."""
    with psycopg.connect(pg_url(), autocommit=True) as conn:
        conn.execute("ANALYZE")


# --- H1 -----------------------------------------------------------------------------------------------

def append_subject(port: int, token: str, sessions: list[int], body: bytes) -> Subject:
    """Ours: each client appends `body` to its own session (sessions[i]), one POST per op (H1, L2)."""
    def setup(i: int) -> dict:
        return {"http": _Http(port, token), "path": f"/api/v1/sessions/{sessions[i]}/items/"}

    def post(s: dict) -> None:
        s["http"].post(s["path"], body)

    return Subject("harness API", setup, post)


def _h1_append(settings: Settings, port: int, token: str, floor_port: int) -> list[Measure]:
    project = _project()
    body = orjson.dumps({"items": [ITEM_1K]})
    tag = uuid.uuid4().hex[:8]
    out: list[Measure] = []
    for clients in settings.clients:
        sessions = [_new_session(project) for _ in range(clients)]

        def sdk_setup(i: int, clients: int = clients) -> dict:
            return {"loop": asyncio.new_event_loop(), "session": _sdk_session(f"bench-h1-{tag}-{clients}-{i}")}

        async def sdk(s: dict) -> None:
            await s["session"].add_items([SDK_ITEM_1K])

        m, peer, floor = measure_turns("H1 append one item", [
            append_subject(port, token, sessions, body),
            Subject("Agents SDK SQLAlchemySession.add_items", sdk_setup, sdk),
            _floor_subject(floor_port, body),
        ], clients=clients, settings=settings)
        stored = SessionItem.objects.filter(session_id__in=sessions).count()
        m.extra["check"] = stored == m.extra["acknowledged"] and _gap_free(sessions)
        peer.extra["check"] = _sdk_count(f"bench-h1-{tag}-{clients}-%") == peer.extra["acknowledged"]
        out += [m, peer, floor]
    return out


# --- H2 -----------------------------------------------------------------------------------------------

def _h2_newest(settings: Settings, port: int, token: str, floor_port: int) -> list[Measure]:
    sid, sdk_name = _read_fixture(_project())
    _analyze()
    path = f"/api/v1/sessions/{sid}/items/latest/?limit=50"
    out: list[Measure] = []

    def ours_setup(i: int) -> dict:
        return {"http": _Http(port, token)}

    def ours(s: dict) -> None:
        s["last"] = s["http"].get(path)

    def sdk_setup(i: int) -> dict:
        return {"loop": asyncio.new_event_loop(), "session": _sdk_session(sdk_name)}

    async def sdk(s: dict) -> None:
        items = await s["session"].get_items(limit=50)
        if len(items) != 50:
            raise RuntimeError(f"the SDK read {len(items)} items")

    floor = _read_floor_subject(floor_port)
    for clients in settings.clients:
        m, peer, floor_m = measure_turns("H2 newest 50 of 10,000 items", [
            Subject("harness API", ours_setup, ours),
            Subject("Agents SDK get_items(limit=50)", sdk_setup, sdk),
            floor,
        ], clients=clients, settings=settings)
        answer = orjson.loads(_Http(port, token).get(path))
        m.extra["check"] = [item["seq"] for item in answer["items"]] == list(range(9951, 10001))
        floor_m.extra["check"] = [row["seq"] for row in orjson.loads(_Http(floor_port, "floor").get("/latest"))] == \
            list(range(9951, 10001))
        out += [m, peer, floor_m]
    return out


# --- H3 -----------------------------------------------------------------------------------------------

def checkpoint_chain_subject(port: int, token: str, runs: list[int]) -> Subject:
    """Ours: each client continues its own run's chain (runs[i]) with a ~1 KB state, one POST per op (H3, L1)."""
    def setup(i: int) -> dict:
        # Every round continues its run's chain from the checkpoint the last round left.
        last = Checkpoint.objects.filter(run_id=runs[i]).order_by("-id").values_list("id", flat=True).first()
        return {"http": _Http(port, token), "run": runs[i], "last": last}

    def post(s: dict) -> None:
        body = orjson.dumps({"run": s["run"], "parent": s["last"], "label": "step", "state": STATE_1K,
                             "cursor": {"node": "draft"}})
        s["last"] = orjson.loads(s["http"].post("/api/v1/checkpoints/", body))["id"]

    return Subject("harness API", setup, post)


def _h3_checkpoint(settings: Settings, port: int, token: str, floor_port: int) -> list[Measure]:
    project = _project()
    _lg_tables()
    out: list[Measure] = []
    for clients in settings.clients:
        runs = [_new_run(project) for _ in range(clients)]
        threads = [f"bench-h3-{uuid.uuid4().hex[:8]}-{i}" for i in range(clients)]

        def lg_setup(i: int, threads: list[str] = threads) -> dict:
            from langgraph.checkpoint.postgres import PostgresSaver

            saver = PostgresSaver(lg_connection(jit=True))
            config: RunnableConfig = {"configurable": {"thread_id": threads[i], "checkpoint_ns": ""}}
            latest = saver.get_tuple(config)  # continue the thread the last round left
            return {"saver": saver, "config": latest.config if latest else config,
                    "n": latest.metadata.get("step", 0) if latest else 0}

        def lg(s: dict) -> None:
            s["n"] += 1
            s["config"] = s["saver"].put(s["config"], lg_checkpoint(s["n"], STATE_1K),
                                         {"source": "loop", "step": s["n"]}, {"state": s["n"]})

        floor_body = orjson.dumps({"run": runs[0], "parent": 1, "label": "step", "state": STATE_1K,
                                   "cursor": {"node": "draft"}})
        m, peer, floor = measure_turns("H3 checkpoint write", [
            checkpoint_chain_subject(port, token, runs),
            Subject("LangGraph PostgresSaver.put", lg_setup, lg),
            _floor_subject(floor_port, floor_body),
        ], clients=clients, settings=settings)
        m.extra["check"] = all(chain_intact(run) for run in runs) and \
            Checkpoint.objects.filter(run_id__in=runs).count() == m.extra["acknowledged"]
        out += [m, peer, floor]
    return out


# --- H4 -----------------------------------------------------------------------------------------------

def lineage_fixture(project: Project, depth: int = 1000) -> int:
    """A run with a chain of `depth` ~1 KB checkpoints; the newest one's id (H4, L4)."""
    rid = _new_run(project)
    last: int | None = None
    for n in range(depth):
        last = checkpoint_create(project=project.pk, run_id=rid, parent_id=last, state=STATE_1K,
                                 cursor={"n": n}).pk
    assert last is not None
    return last


def lineage_intact(answer: bytes, depth: int = 1000) -> bool:
    """The lineage read answered `depth` checkpoints, each one's parent the next (H4, L4)."""
    chain = orjson.loads(answer)
    return len(chain) == depth and all(a["parent"] == b["id"] for a, b in zip(chain, chain[1:], strict=False))


def _h4_lineage(settings: Settings, port: int, token: str, floor_port: int) -> list[Measure]:
    from langgraph.checkpoint.postgres import PostgresSaver

    project = _project()
    _lg_tables()
    last = lineage_fixture(project)
    thread = f"bench-h4-{uuid.uuid4().hex[:8]}"
    with lg_connection(jit=True) as conn:
        saver = PostgresSaver(conn)
        config: RunnableConfig = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        for n in range(1, 1001):
            config = saver.put(config, lg_checkpoint(n, STATE_1K), {"step": n}, {"state": n})
    _analyze()
    path = f"/api/v1/checkpoints/{last}/lineage/"

    def ours_setup(i: int) -> dict:
        return {"http": _Http(port, token)}

    def ours(s: dict) -> None:
        s["http"].get(path)

    def lg_setup_for(jit: bool) -> Any:
        def setup(i: int) -> dict:
            return {"saver": PostgresSaver(lg_connection(jit=jit))}
        return setup

    def lg(s: dict) -> None:
        count = sum(1 for _ in s["saver"].list({"configurable": {"thread_id": thread, "checkpoint_ns": ""}}))
        if count != 1000:
            raise RuntimeError(f"LangGraph listed {count}")

    out: list[Measure] = []
    for clients in settings.clients:
        m, off, stock = measure_turns("H4 lineage of 1,000", [
            Subject("harness API", ours_setup, ours),
            Subject("LangGraph PostgresSaver.list (jit=off)", lg_setup_for(False), lg),
            Subject("LangGraph PostgresSaver.list (stock)", lg_setup_for(True), lg),
        ], clients=clients, settings=settings)
        m.extra["check"] = lineage_intact(_Http(port, token).get(path))
        out += [m, off, stock]
    return out


def scenario_api(settings: Settings) -> list[Measure]:
    token = agent_token(_project().slug)
    server, floor = _start_server(), _start_floor()
    out: list[Measure] = []
    try:
        for part in (_h1_append, _h2_newest, _h3_checkpoint, _h4_lineage):
            measures = part(settings, server.port, token, floor.port)
            rss = round(max(procs.rss_mb(pid) for pid in server.worker_pids()))
            for m in measures:
                if m.subject == "harness API":
                    m.extra["server_rss_mb"] = rss
            out += measures
    finally:
        server.stop()
        floor.stop()
    return out


SCENARIOS: dict[str, Any] = {"H": scenario_api}
