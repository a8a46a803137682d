"""Scenario E: what an agent step costs through each ecosystem adapter (issue 34, "Speed"), against the same
operation through the Python client (`HarnessClient`, httpx, an Idempotency-Key on every POST).

Each adapter call is one request where the operation is one operation, so each should cost about what the client's
own call of that operation costs: the target is at least 1 / 1.5 of the client's ops/s. Black-box: the web server of
scenario A (granian, 2 WSGI workers, one per core), the MCP server as bin/start runs it beside it (`manage.py mcp`:
one uvicorn process; its own process group, stopped at the end), a real agent token of a project made for this run,
~1 KB payloads; each pair takes turns (`measure_turns`), each client a process.

    E1 store put            HarnessStore.put (a fresh key, ~1 KB value)      vs HarnessClient.store_put
    E2 store search         HarnessStore.search (query + filter, limit 10)   vs HarnessClient.store_search
    E3 append one item      MCP tool session_items_append (mcp library)      vs HarnessClient.append_items
    E4 memory search        MCP tool memory_search (k 10)                    vs HarnessClient.retrieve_memory
    E5 append one item      the TypeScript client's appendItems (node)       vs HarnessClient.append_items

The MCP rows use the `mcp` client library over streamable HTTP, one MCP session per client process, opened in its
setup (the handshake is not measured). E2 searches 3,000 stored items (~1 KB each) written in-process through
`memory_app.services.memory_put` before the rows; E4 retrieves from the project scope, which holds them and E1's
puts. E5's clients are node processes (`bench/ts_append_loop.mjs`), which take turns with the Python client's as
`measure_turns` does.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import subprocess
import time
import uuid
from array import array
from pathlib import Path
from typing import Any

from bench import procs
from bench.core import Measure, Settings, Subject, _merge, _Run, _run_clients, measure_turns
from bench.scenarios_http import agent_token
from bench.scenarios_store import _gap_free

ROOT = Path(__file__).resolve().parent.parent
TEXT_1K = ("The keeper climbs the stair at dusk; the lamp is cold and the storm is late. " * 13)[:1000]
ITEM_1K: dict[str, Any] = {"role": "user", "content": {"text": TEXT_1K}}
# The searched items: each carries one word of these (item i: WORDS[i % 25]) and a kind that alternates every 25
# items, so a query for one word with a filter on one kind matches 60 of the 3,000, of which limit 10 answers 10.
WORDS = ["amber", "birch", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kelp",
         "lichen", "marsh", "nettle", "ochre", "pewter", "quartz", "russet", "sable", "thistle", "umber", "violet",
         "willow", "yarrow", "zinnia"]
FILLED = 3000
QUERY_WORD = "garnet"
FILTER = {"kind": "fact"}


def _value(i: int) -> dict[str, Any]:
    word = WORDS[i % len(WORDS)]
    return {"text": f"{word} {TEXT_1K[:900]}", "word": word, "kind": "fact" if (i // len(WORDS)) % 2 == 0 else "note",
            "n": i}


class _World:
    """The run's project, token, servers and fixtures."""

    def __init__(self) -> None:
        from harness.models import Project

        self.tag = uuid.uuid4().hex[:8]
        self.project = Project.objects.create(slug=f"bench-e-{self.tag}", name=f"Bench E {self.tag}")
        self.token = agent_token(self.project.slug)
        self.web = _start_web()
        self.mcp: procs.Server | None = None
        self.session_id = _session(self.project)  # the provenance of every put (the default policy needs one)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.web.port}"

    def start_mcp(self) -> None:
        self.mcp = procs.start_mcp(name="bench-mcp")

    def stop(self) -> None:
        for server in (self.mcp, self.web):
            if server is not None:
                server.stop()


def _start_web() -> procs.Server:
    granian = getattr(procs, "start_granian", None)  # scenario A's server, where bench/procs.py has it
    if granian is not None:
        server: procs.Server = granian(workers=2, name="bench-ecosystem")
        return server
    return procs.start_gunicorn(workers=2, name="bench-ecosystem")


def _session(project: Any) -> int:
    from sessions_app.services import session_create

    return session_create(project=project, role="agent", memory_policy="session").pk


def _client(world: _World) -> Any:
    from harness_client import HarnessClient

    for name in ("httpx", "httpx2", "mcp"):  # one INFO line per request otherwise
        logging.getLogger(name).setLevel(logging.WARNING)
    return HarnessClient(world.url, world.token)


def _store(world: _World) -> Any:
    from harness_client.langgraph_store import HarnessStore

    return HarnessStore(_client(world), source_session_id=world.session_id)


def _server_rss(*servers: procs.Server | None) -> int:
    return round(sum(max(procs.rss_mb(pid) for pid in s.worker_pids()) for s in servers if s is not None))


# --- E1 store put, E2 store search ----------------------------------------------------------------------------


def _e1_put(settings: Settings, world: _World) -> list[Measure]:
    from memory_app.models import MemoryRecord

    out: list[Measure] = []
    for clients in settings.clients:
        ns_store = ("project", "bench-e1", f"store-{clients}")
        ns_client = ("project", "bench-e1", f"client-{clients}")

        def store_setup(i: int, ns: tuple[str, ...] = ns_store) -> dict[str, Any]:
            return {"store": _store(world), "ns": ns, "prefix": f"{i}-{uuid.uuid4().hex[:8]}", "n": 0}

        def client_setup(i: int, ns: tuple[str, ...] = ns_client) -> dict[str, Any]:
            return {"hc": _client(world), "ns": ns, "prefix": f"{i}-{uuid.uuid4().hex[:8]}", "n": 0}

        def store_put(s: dict[str, Any]) -> None:
            s["n"] += 1
            s["store"].put(s["ns"], f"{s['prefix']}-{s['n']}", _value(s["n"]))

        def client_put(s: dict[str, Any]) -> None:
            s["n"] += 1
            answer = s["hc"].store_put(s["ns"], f"{s['prefix']}-{s['n']}", _value(s["n"]),
                                       source_session_id=world.session_id)
            if answer["outcome"] != "accepted":
                raise RuntimeError(f"put {answer['outcome']}: {answer.get('reason')}")

        ours, theirs = measure_turns("E1 store put (one ~1 KB value)", [
            Subject("HarnessStore.put", store_setup, store_put),
            Subject("HarnessClient.store_put", client_setup, client_put),
        ], clients=clients, settings=settings)
        for m, ns in ((ours, ns_store), (theirs, ns_client)):
            # Every acknowledged put is one active record under its namespace (a held or merged one would not be).
            stored = MemoryRecord.objects.filter(project=world.project, namespace=list(ns), status="active").count()
            m.extra["check"] = stored == m.extra["acknowledged"]
            m.extra["stored"] = stored
        out += [ours, theirs]
    return out


def _fill(world: _World) -> tuple[str, ...]:
    """FILLED items under one namespace, through the service the put endpoint calls (valid by construction)."""
    from harness.actors import Actor
    from memory_app.services import memory_put

    namespace = ("project", "bench-e2", "items")
    actor = Actor.for_agent("bench-e-fill")
    for i in range(FILLED):
        result = memory_put(project=world.project, actor=actor, namespace=list(namespace), key=f"item-{i}",
                            value=_value(i), source_session_id=world.session_id)
        if result.record is None or result.outcome != "accepted":
            raise RuntimeError(f"fill: {result.outcome} {result.reason}")
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_app_memoryrecord")
    return namespace


def _expected_hits(keys: list[str]) -> bool:
    """10 items, each of the queried word and the filtered kind."""
    values = [_value(int(key.removeprefix("item-"))) for key in keys]
    return len(values) == 10 and all(v["word"] == QUERY_WORD and v["kind"] == FILTER["kind"] for v in values)


def _e2_search(settings: Settings, world: _World, namespace: tuple[str, ...]) -> list[Measure]:
    def store_setup(i: int) -> dict[str, Any]:
        return {"store": _store(world)}

    def client_setup(i: int) -> dict[str, Any]:
        return {"hc": _client(world)}

    def store_search(s: dict[str, Any]) -> list[str]:
        found = s["store"].search(namespace, query=QUERY_WORD, filter=FILTER, limit=10)
        if len(found) != 10:
            raise RuntimeError(f"found {len(found)}")
        return [item.key for item in found]

    def client_search(s: dict[str, Any]) -> list[str]:
        found = s["hc"].store_search(namespace, query=QUERY_WORD, filter=FILTER, limit=10)
        if len(found) != 10:
            raise RuntimeError(f"found {len(found)}")
        return [row["key"] for row in found]

    out: list[Measure] = []
    for clients in settings.clients:
        ours, theirs = measure_turns(f"E2 store search (query + filter, 10 of {FILLED:,})", [
            Subject("HarnessStore.search", store_setup, store_search),
            Subject("HarnessClient.store_search", client_setup, client_search),
        ], clients=clients, settings=settings)
        via_store = store_search(store_setup(0))
        via_client = client_search(client_setup(0))
        ours.extra["check"] = theirs.extra["check"] = via_store == via_client and _expected_hits(via_store)
        out += [ours, theirs]
    return out


# --- E3 MCP append, E4 MCP memory search ---------------------------------------------------------------------


def _mcp_setup(world: _World) -> dict[str, Any]:
    """One MCP session, opened (initialize handshake) by a task that holds it until teardown: the `mcp` library's
    client is an anyio context, entered and left in the same task."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    assert world.mcp is not None
    url = f"http://127.0.0.1:{world.mcp.port}/mcp"
    for name in ("httpx2", "mcp"):  # one INFO line per request otherwise
        logging.getLogger(name).setLevel(logging.WARNING)
    loop = asyncio.new_event_loop()
    ready: asyncio.Future[Any] = loop.create_future()
    done = asyncio.Event()

    async def hold() -> None:
        try:
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {world.token}"}, timeout=30) as http, \
                    Client(streamable_http_client(url, http_client=http)) as client:
                ready.set_result(client)
                await done.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    holder = loop.create_task(hold())
    client = loop.run_until_complete(ready)
    return {"loop": loop, "client": client, "done": done, "holder": holder}


def _mcp_teardown(s: dict[str, Any]) -> None:
    s["done"].set()
    s["loop"].run_until_complete(s["holder"])


async def _tool(s: dict[str, Any], name: str, arguments: dict[str, Any]) -> Any:
    result = await s["client"].call_tool(name, arguments)
    if result.is_error:
        raise RuntimeError(f"{name}: {result.structured_content}")
    return result.structured_content


def _e3_append(settings: Settings, world: _World) -> list[Measure]:
    from sessions_app.models import SessionItem

    out: list[Measure] = []
    for clients in settings.clients:
        mcp_sessions = [_session(world.project) for _ in range(clients)]
        client_sessions = [_session(world.project) for _ in range(clients)]

        def mcp_setup(i: int, sessions: list[int] = mcp_sessions) -> dict[str, Any]:
            return {**_mcp_setup(world), "session": sessions[i]}

        async def mcp_append(s: dict[str, Any]) -> None:
            await _tool(s, "session_items_append", {"session_id": s["session"], "items": [ITEM_1K]})

        def client_setup(i: int, sessions: list[int] = client_sessions) -> dict[str, Any]:
            return {"hc": _client(world), "session": sessions[i]}

        def client_append(s: dict[str, Any]) -> None:
            s["hc"].append_items(s["session"], [ITEM_1K])

        ours, theirs = measure_turns("E3 append one item (~1 KB)", [
            Subject("MCP tool session_items_append", mcp_setup, mcp_append, _mcp_teardown),
            Subject("HarnessClient.append_items", client_setup, client_append),
        ], clients=clients, settings=settings)
        for m, sessions in ((ours, mcp_sessions), (theirs, client_sessions)):
            m.extra["check"] = _gap_free(sessions) and (
                SessionItem.objects.filter(session_id__in=sessions).count() == m.extra["acknowledged"])
        out += [ours, theirs]
    return out


def _e4_memory_search(settings: Settings, world: _World) -> list[Measure]:
    def mcp_setup(i: int) -> dict[str, Any]:
        return _mcp_setup(world)

    async def mcp_search(s: dict[str, Any]) -> list[int]:
        found = (await _tool(s, "memory_search", {"scope": "project", "q": QUERY_WORD, "k": 10}))["results"]
        if len(found) != 10:
            raise RuntimeError(f"found {len(found)}")
        return [r["id"] for r in found]

    def client_setup(i: int) -> dict[str, Any]:
        return {"hc": _client(world)}

    def client_search(s: dict[str, Any]) -> list[int]:
        found = s["hc"].retrieve_memory(scope="project", q=QUERY_WORD, k=10)
        if len(found) != 10:
            raise RuntimeError(f"found {len(found)}")
        return [r.id for r in found]

    out: list[Measure] = []
    for clients in settings.clients:
        ours, theirs = measure_turns(f"E4 memory search (k 10 of {FILLED:,})", [
            Subject("MCP tool memory_search", mcp_setup, mcp_search, _mcp_teardown),
            Subject("HarnessClient.retrieve_memory", client_setup, client_search),
        ], clients=clients, settings=settings)
        state = mcp_setup(0)
        via_mcp = state["loop"].run_until_complete(mcp_search(state))
        _mcp_teardown(state)
        via_client = client_search(client_setup(0))
        from memory_app.models import MemoryRecord

        words = set(MemoryRecord.objects.filter(pk__in=via_mcp).values_list("value__word", flat=True))
        ours.extra["check"] = theirs.extra["check"] = via_mcp == via_client and words == {QUERY_WORD}
        out += [ours, theirs]
    return out


# --- E5 the TypeScript client's append ------------------------------------------------------------------------

TS_LOOP = ROOT / "bench" / "ts_append_loop.mjs"


def _ts_build() -> None:
    """client/typescript compiled with its pinned tsc (bin/bench's `bin/setup --typescript` installed it), as its
    tests build it: the loop imports dist/."""
    ts = ROOT / "client" / "typescript"
    tsc = ts / "node_modules" / ".bin" / "tsc"
    node = shutil.which("node")
    if node is None or not tsc.exists():
        raise RuntimeError("E5 needs node and client/typescript's npm packages: bin/setup --typescript")
    built = subprocess.run([node, str(tsc), "-p", str(ts)], cwd=ts, capture_output=True, text=True, timeout=300,
                           check=False)
    if built.returncode != 0:
        raise RuntimeError(f"tsc failed:\n{built.stdout}\n{built.stderr}")


def _ts_round(world: _World, sessions: list[int], seconds: float, warmup: float) -> _Run:
    """`len(sessions)` node processes, each appending to its own session for `seconds` after `warmup`; their
    latencies merged as bench.core merges its client processes'."""
    env = {**os.environ, "HARNESS_URL": world.url, "HARNESS_TOKEN": world.token}
    start_at = time.time() + 1.5 + 0.2 * len(sessions)  # a barrier: every process starts its warm-up then
    nodes = [subprocess.Popen(["node", str(TS_LOOP), "--session", str(sid), "--seconds", str(seconds),  # noqa: S607
                               "--warmup", str(warmup), "--start-at", str(start_at)],
                              env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for sid in sessions]
    latencies = array("d")
    ops = acked = 0
    rss = 0.0
    for node in nodes:
        stdout, stderr = node.communicate(timeout=seconds + warmup + 120)
        if node.returncode != 0:
            raise RuntimeError(f"TS client loop failed: {stderr[-2000:]}")
        result = json.loads(stdout.strip().splitlines()[-1])
        latencies.extend(result["latencies_ms"])
        ops += result["ops"]
        acked += result["acknowledged"]
        rss = max(rss, result["rss_mb"])
    return _Run(ops=ops, latencies=latencies, peak_rss_mb=rss, acknowledged=acked)


def _e5_ts_append(settings: Settings, world: _World) -> list[Measure]:
    from sessions_app.models import SessionItem

    out: list[Measure] = []
    per_round = settings.duration / settings.rounds
    for clients in settings.clients:
        ts_sessions = [_session(world.project) for _ in range(clients)]
        client_sessions = [_session(world.project) for _ in range(clients)]

        def client_setup(i: int, sessions: list[int] = client_sessions) -> dict[str, Any]:
            return {"hc": _client(world), "session": sessions[i]}

        def client_append(s: dict[str, Any]) -> None:
            s["hc"].append_items(s["session"], [ITEM_1K])

        python = Subject("HarnessClient.append_items", client_setup, client_append)
        # Turns as measure_turns takes them (node processes cannot be forked from here): each round the node
        # clients, then the Python clients, each for a third of the time after its own warm-up.
        ts_runs: list[_Run] = []
        py_runs: list[_Run] = []
        for _ in range(settings.rounds):
            ts_runs.append(_ts_round(world, ts_sessions, per_round, settings.warmup))
            py_runs.append(_run_clients(python, clients=clients, duration=per_round, warmup=settings.warmup))
        ours = _merge("E5 append one item (~1 KB)", "TypeScript client appendItems (node)", clients,
                      settings.duration, ts_runs)
        theirs = _merge("E5 append one item (~1 KB)", "HarnessClient.append_items", clients, settings.duration,
                        py_runs)
        for m, sessions in ((ours, ts_sessions), (theirs, client_sessions)):
            m.extra["check"] = _gap_free(sessions) and (
                SessionItem.objects.filter(session_id__in=sessions).count() == m.extra["acknowledged"])
        out += [ours, theirs]
    return out


def scenario_ecosystem(settings: Settings) -> list[Measure]:
    world = _World()
    out: list[Measure] = []
    try:
        world.start_mcp()
        namespace = _fill(world)
        _ts_build()
        parts: list[Any] = [_e1_put, lambda s, w: _e2_search(s, w, namespace), _e3_append, _e4_memory_search,
                            _e5_ts_append]
        for part in parts:
            measures = part(settings, world)
            rss = _server_rss(world.web, world.mcp)
            for m in measures:
                m.extra["servers_rss_mb"] = rss
            out += measures
    finally:
        world.stop()
    return out


SCENARIOS: dict[str, Any] = {"E": scenario_ecosystem}
