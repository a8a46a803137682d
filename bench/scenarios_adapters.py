"""Scenario A: the LangGraph checkpointer as its users run it, `HarnessSaver` over HTTP, against LangGraph's
`PostgresSaver` in-process (issue 15, "Speed").

Black-box: a real server process (granian's WSGI workers when bench/procs.py has them, else gunicorn's sync
workers; 2, one per core), a real agent token, the client package's `HarnessSaver` (httpx, an
Idempotency-Key on every POST) in each client process; PostgresSaver on its documented connection, on the same
PostgreSQL. ~1 KB of channel values on both sides. Each pair takes turns (`measure_turns`); both sides' tables
are analyzed after they are filled.

    A1 put (a chain)          HarnessSaver.put        vs PostgresSaver.put
    A2 get_tuple (newest)     HarnessSaver.get_tuple  vs PostgresSaver.get_tuple
    A3 list of 1,000          HarnessSaver.list       vs PostgresSaver.list (jit=off, and stock)

and the OpenAI Agents SDK session the same way, `HarnessSession` (AsyncHarnessClient, httpx) against the SDK's
`SQLAlchemySession` on asyncpg, ~1 KB items:

    A4 add_items (one item)   HarnessSession.add_items              vs SQLAlchemySession.add_items
    A5 newest 50 of 10,000    HarnessSession.get_items(limit=50)    vs SQLAlchemySession.get_items(limit=50)
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

import psycopg

from bench import procs
from bench.core import Measure, Settings, Subject, measure_turns
from bench.scenarios_http import agent_token
from bench.scenarios_store import (
    _gap_free,
    _lg_tables,
    _project,
    _read_fixture,
    _sdk_count,
    _sdk_url,
    lg_connection,
    pg_url,
)

TEXT_1K = ("The keeper climbs the stair at dusk; the lamp is cold and the storm is late. " * 13)[:1000]
VALUES_1K = {"notes": TEXT_1K, "completed": ["outline", "draft"]}


def _start_server() -> procs.Server:
    granian = getattr(procs, "start_granian", None)  # the headline's server, where bench/procs.py has it
    if granian is not None:
        server: procs.Server = granian(workers=2, name="bench-adapters")
        return server
    return procs.start_gunicorn(workers=2, name="bench-adapters")


def _checkpoint(n: int, previous: Any) -> tuple[Any, dict[str, Any]]:
    """A checkpoint as a graph loop writes it (two channels; `notes` changes every step) and its new versions."""
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.base.id import uuid6

    cp: dict[str, Any] = dict(empty_checkpoint())
    cp["id"] = str(uuid6(clock_seq=n))
    cp["channel_values"] = {"notes": f"{n} {TEXT_1K}", "completed": VALUES_1K["completed"]}
    versions = dict((previous or {}).get("channel_versions", {}))
    new_versions = {"notes": f"{n:032}.0"}
    if "completed" not in versions:
        new_versions["completed"] = f"{n:032}.0"
    cp["channel_versions"] = {**versions, **new_versions}
    return cp, new_versions


def _saver(port: int, token: str) -> Any:
    from harness_client import HarnessClient

    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
    from harness_client.langgraph import HarnessSaver

    return HarnessSaver(client=HarnessClient(f"http://127.0.0.1:{port}", token))


def _chain_subjects(port: int, token: str, threads: list[str]) -> tuple[Subject, Subject, Subject, Subject]:
    """put (each client continues its own thread's chain) and get_tuple (its newest), for both savers."""

    def ours_setup(i: int) -> dict[str, Any]:
        saver = _saver(port, token)
        config: Any = {"configurable": {"thread_id": f"ours-{threads[i]}", "checkpoint_ns": ""}}
        latest = saver.get_tuple(config)  # continue the thread the last round left
        return {"saver": saver, "config": latest.config if latest else config,
                "cp": latest.checkpoint if latest else None, "n": latest.metadata["step"] if latest else 0}

    def lg_setup(i: int) -> dict[str, Any]:
        from langgraph.checkpoint.postgres import PostgresSaver

        saver = PostgresSaver(lg_connection(jit=True))
        config: Any = {"configurable": {"thread_id": f"lg-{threads[i]}", "checkpoint_ns": ""}}
        latest = saver.get_tuple(config)
        return {"saver": saver, "config": latest.config if latest else config,
                "cp": latest.checkpoint if latest else None, "n": latest.metadata["step"] if latest else 0}

    def put(s: dict[str, Any]) -> None:
        s["n"] += 1
        cp, new_versions = _checkpoint(s["n"], s["cp"])
        s["config"] = s["saver"].put(s["config"], cp, {"source": "loop", "step": s["n"], "parents": {}},
                                     new_versions)
        s["cp"] = cp

    def get(s: dict[str, Any]) -> None:
        if s["saver"].get_tuple({"configurable": {"thread_id": s["config"]["configurable"]["thread_id"],
                                                  "checkpoint_ns": ""}}) is None:
            raise RuntimeError("no checkpoint")

    return (Subject("HarnessSaver.put (HTTP)", ours_setup, put), Subject("LangGraph PostgresSaver.put", lg_setup, put),
            Subject("HarnessSaver.get_tuple (HTTP)", ours_setup, get),
            Subject("LangGraph PostgresSaver.get_tuple", lg_setup, get))


def _analyze() -> None:
    with psycopg.connect(pg_url(), autocommit=True) as conn:
        conn.execute("ANALYZE runs_app_checkpoint, runs_app_checkpointwrite, runs_app_run, checkpoints, "
                     "checkpoint_blobs, checkpoint_writes")


def _a1_a2(settings: Settings, port: int, token: str) -> list[Measure]:
    out: list[Measure] = []
    for clients in settings.clients:
        threads = [f"bench-a-{uuid.uuid4().hex[:8]}-{i}" for i in range(clients)]
        ours_put, lg_put, ours_get, lg_get = _chain_subjects(port, token, threads)
        out += measure_turns("A1 put (a chain)", [ours_put, lg_put], clients=clients, settings=settings)
        _analyze()
        out += measure_turns("A2 get_tuple (newest)", [ours_get, lg_get], clients=clients, settings=settings)
        ours = _saver(port, token)
        for m in out[-4:]:
            if m.subject.startswith("HarnessSaver"):
                # Every thread's chain is whole: each checkpoint's parent is the one before it.
                m.extra["check"] = all(_chain_whole(ours, f"ours-{t}") for t in threads)
    return out


def _chain_whole(saver: Any, thread: str) -> bool:
    tuples = list(saver.list({"configurable": {"thread_id": thread, "checkpoint_ns": ""}}))
    return bool(tuples) and all(a.parent_config and a.parent_config["configurable"]["checkpoint_id"]
                                == b.config["configurable"]["checkpoint_id"]
                                for a, b in zip(tuples, tuples[1:], strict=False))


def _a3_list(settings: Settings, port: int, token: str) -> list[Measure]:
    from langgraph.checkpoint.postgres import PostgresSaver

    thread = f"bench-a3-{uuid.uuid4().hex[:8]}"
    ours_filler = _saver(port, token)
    with lg_connection(jit=True) as conn:
        theirs_filler = PostgresSaver(conn)
        for filler in (ours_filler, theirs_filler):
            config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
            previous = None
            for n in range(1, 1001):
                cp, new_versions = _checkpoint(n, previous)
                config = filler.put(config, cp, {"source": "loop", "step": n, "parents": {}}, new_versions)
                previous = cp
    _analyze()
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}

    def ours_setup(i: int) -> dict[str, Any]:
        return {"saver": _saver(port, token)}

    def lg_setup_for(jit: bool) -> Any:
        def setup(i: int) -> dict[str, Any]:
            return {"saver": PostgresSaver(lg_connection(jit=jit))}
        return setup

    def listed(s: dict[str, Any]) -> None:
        count = sum(1 for _ in s["saver"].list(config))
        if count != 1000:
            raise RuntimeError(f"listed {count}")

    def share_setup(i: int) -> dict[str, Any]:
        # The answer fetched once: what is measured is only what the client does with it.
        saver = _saver(port, token)
        raw = saver.client._http.get("threads/checkpoints/", params={"thread_id": thread, "checkpoint_ns": ""}).content
        return {"saver": saver, "raw": raw}

    def client_share(s: dict[str, Any]) -> None:
        from harness_client.threads import thread_checkpoints_from_json

        # The client's own work in a list(): decoding the answer as the client does (the standard library's
        # json, exact for any integer) and building LangGraph's tuples, as PostgresSaver builds them too.
        tuples = [s["saver"]._tuple(stored) for stored in thread_checkpoints_from_json(json.loads(s["raw"]))]
        if len(tuples) != 1000:
            raise RuntimeError(f"decoded {len(tuples)}")

    out: list[Measure] = []
    for clients in settings.clients:
        m, off, stock, share = measure_turns("A3 list of 1,000", [
            Subject("HarnessSaver.list (HTTP)", ours_setup, listed),
            Subject("LangGraph PostgresSaver.list (jit=off)", lg_setup_for(False), listed),
            Subject("LangGraph PostgresSaver.list (stock)", lg_setup_for(True), listed),
            # A bound, not a rival: the client's share alone (no HTTP, no server). When it is under 2x
            # PostgresSaver.list (jit=off), no server can bring HarnessSaver.list to the 2x target.
            Subject("bound: HarnessSaver.list's client share only (decode + tuples)", share_setup, client_share),
        ], clients=clients, settings=settings)
        ours = list(ours_filler.list(config))
        theirs = list(PostgresSaver(lg_connection(jit=True)).list(config))
        m.extra["check"] = [(t.checkpoint["channel_values"], t.metadata) for t in ours] == [
            (t.checkpoint["channel_values"], t.metadata) for t in theirs]
        out += [m, off, stock, share]
    return out


SDK_ITEM_1K: Any = {"role": "user", "content": TEXT_1K}  # an SDK input item, the same on both sides


def _harness_session(port: int, token: str, ref: str) -> dict[str, Any]:
    import asyncio

    from harness_client.agents import HarnessSession

    return {"loop": asyncio.new_event_loop(),
            "session": HarnessSession(ref, base_url=f"http://127.0.0.1:{port}", token=token)}


def _sql_session(ref: str) -> dict[str, Any]:
    import asyncio

    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

    return {"loop": asyncio.new_event_loop(),
            "session": SQLAlchemySession.from_url(ref, url=_sdk_url(), create_tables=True)}


def _a4_a5_session(settings: Settings, port: int, token: str) -> list[Measure]:
    from sessions_app.models import Session, SessionItem

    project = _project()
    out: list[Measure] = []
    tag = uuid.uuid4().hex[:8]

    async def add(s: dict[str, Any]) -> None:
        await s["session"].add_items([SDK_ITEM_1K])

    for clients in settings.clients:
        refs = [f"bench-a4-{tag}-{clients}-{i}" for i in range(clients)]

        def ours_add_setup(i: int, refs: list[str] = refs) -> dict[str, Any]:
            return _harness_session(port, token, refs[i])

        def theirs_add_setup(i: int, refs: list[str] = refs) -> dict[str, Any]:
            return _sql_session(refs[i])

        ours, theirs = measure_turns("A4 add_items (one item)", [
            Subject("HarnessSession.add_items (HTTP)", ours_add_setup, add),
            Subject("Agents SDK SQLAlchemySession.add_items", theirs_add_setup, add),
        ], clients=clients, settings=settings)
        sessions = list(Session.objects.filter(project=project, ref__in=refs).values_list("pk", flat=True))
        ours.extra["check"] = len(sessions) == clients and _gap_free(sessions) and (
            SessionItem.objects.filter(session_id__in=sessions).count() == ours.extra["acknowledged"])
        theirs.extra["check"] = _sdk_count(f"bench-a4-{tag}-{clients}-%") == theirs.extra["acknowledged"]
        out += [ours, theirs]

    _, ref = _read_fixture(project)  # the same 10,000-item session of ours (by its ref) and of the SDK's
    with psycopg.connect(pg_url(), autocommit=True) as conn:
        conn.execute("ANALYZE sessions_app_session, sessions_app_sessionitem, agent_sessions, agent_messages")

    async def newest(s: dict[str, Any]) -> None:
        items = await s["session"].get_items(limit=50)
        if len(items) != 50:
            raise RuntimeError(f"read {len(items)} items")

    def ours_setup(i: int) -> dict[str, Any]:
        return _harness_session(port, token, ref)

    def theirs_setup(i: int) -> dict[str, Any]:
        return _sql_session(ref)

    for clients in settings.clients:
        out += measure_turns("A5 newest 50 of 10,000", [
            Subject("HarnessSession.get_items(limit=50) (HTTP)", ours_setup, newest),
            Subject("Agents SDK get_items(limit=50)", theirs_setup, newest),
        ], clients=clients, settings=settings)
    return out


def scenario_adapters(settings: Settings) -> list[Measure]:
    _lg_tables()
    token = agent_token(_project().slug)
    server = _start_server()
    out: list[Measure] = []
    try:
        for part in (_a1_a2, _a3_list, _a4_a5_session):
            measures = part(settings, server.port, token)
            rss = round(max(procs.rss_mb(pid) for pid in server.worker_pids()))
            for m in measures:
                if m.subject.startswith(("HarnessSaver", "HarnessSession")):
                    m.extra["server_rss_mb"] = rss
            out += measures
    finally:
        server.stop()
    return out


SCENARIOS: dict[str, Any] = {"A": scenario_adapters}
