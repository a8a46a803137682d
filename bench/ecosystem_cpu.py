"""CPU per call of scenario E3's and E5's appends, each side apart: where an MCP tool call's or a TypeScript client
call's extra cost goes (bench/README.md, "The ecosystem adapters").

One client, calls one after another (no contention), the server processes' CPU read from /proc before and after:

- the MCP tool `session_items_append` through the `mcp` library: the client process's CPU, the MCP server's, the
  HTTP requests per call and the database transactions per call (pg_stat_database); then the same with the MCP
  server answering each POST as plain JSON instead of an SSE stream (the SDK's `json_response=True`, which turns off
  the server's requests to the client during a call: an experiment, not the shipped configuration);
- `HarnessClient.append_items`: the client's CPU, the web workers' (granian), the transactions per call;
- the TypeScript client's `appendItems` in one node process: its CPU (process.cpuUsage, all its threads).

`--explain` instead: `EXPLAIN ANALYZE` of E4's retrieval (`memory_retrieve` of the project scope, the query word) in
the newest scenario E project with its fill, and the time of E2's store search there, in-process.

    bin/setup --typescript && export DATABASE_URL=postgres://postgres@127.0.0.1:5432/harness_bench \\
        SECRET_KEY=bench-only DEBUG=0 ALLOWED_HOSTS=127.0.0.1,localhost SECURE_COOKIES=0 \\
        HARNESS_API_RATE=100000000/min
    .venv/bin/python -m bench.ecosystem_cpu [--calls 300]
    .venv/bin/python -m bench.ecosystem_cpu --explain     # after a bin/bench --only E
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CLK = os.sysconf("SC_CLK_TCK")
TS_CPU = """
import { HarnessClient } from "%s";
const client = new HarnessClient(), sid = Number(process.argv[1]), n = Number(process.argv[2]);
const item = { role: "user", content: { text: "x".repeat(1000) } };
for (let i = 0; i < 50; i++) await client.appendItems(sid, [item]);
const u0 = process.cpuUsage(), t0 = performance.now();
for (let i = 0; i < n; i++) await client.appendItems(sid, [item]);
const u = process.cpuUsage(u0);
console.log(JSON.stringify({ wall_ms: (performance.now() - t0) / n, cpu_ms: (u.user + u.system) / 1000 / n }));
"""


def _cpu(pids: list[int]) -> float:
    """User + system seconds of every thread of these processes."""
    total = 0
    for pid in pids:
        for tid in os.listdir(f"/proc/{pid}/task"):
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total / CLK


def _transactions(*, settle: bool = False) -> int:
    """The database's committed transactions so far. `settle`: after 11 s, when every idle backend has reported its
    counts (PostgreSQL 15 flushes a busy backend's statistics at most once a second, an idle one within 10 s)."""
    import psycopg

    if settle:
        time.sleep(11)
    from bench.scenarios_store import pg_url

    with psycopg.connect(pg_url(), autocommit=True) as conn:
        row = conn.execute("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").fetchone()
        return int(row[0]) if row else 0


def _serve_mcp_json(bind: str) -> None:
    """`manage.py mcp` with the SDK's json_response=True (the experiment's server)."""
    from django.core.management import call_command
    from mcp.server.lowlevel.server import Server

    Server.streamable_http_app = functools.partialmethod(  # type: ignore[method-assign,assignment]
        Server.streamable_http_app, json_response=True)
    call_command("mcp", bind=bind)


def _start_mcp_json() -> Any:
    from bench import procs

    port = procs.free_port()
    proc, log = procs._spawn("bench-mcp-json", [sys.executable, "-m", "bench.ecosystem_cpu", "--serve-mcp-json",
                                                f"127.0.0.1:{port}"],
                             {"DATABASE_CONN_MAX_AGE": "600", "HARNESS_API_RATE": procs.BENCH_API_RATE})
    return procs._serving(proc, log, name="bench-mcp-json", port=port, workers=0, timeout=90)


def _mcp(world: Any, calls: int, label: str) -> None:
    import httpx2

    from bench import scenarios_ecosystem as e

    state = e._mcp_setup(world)
    session = e._session(world.project)
    sent: list[str] = []
    original = httpx2.AsyncClient.send

    async def counting(self: Any, request: Any, **kwargs: Any) -> Any:
        sent.append(request.method)
        return await original(self, request, **kwargs)

    async def appends(n: int) -> None:
        for _ in range(n):
            await e._tool(state, "session_items_append", {"session_id": session, "items": [e.ITEM_1K]})

    state["loop"].run_until_complete(appends(30))
    httpx2.AsyncClient.send = counting  # type: ignore[method-assign]
    try:
        x0 = _transactions(settle=True)
        c0, s0, t0 = time.process_time(), _cpu([world.mcp.proc.pid]), time.perf_counter()
        state["loop"].run_until_complete(appends(calls))
        wall = time.perf_counter() - t0
        client, server = time.process_time() - c0, _cpu([world.mcp.proc.pid]) - s0
        xacts = _transactions(settle=True) - x0 - 1
    finally:
        httpx2.AsyncClient.send = original  # type: ignore[method-assign]
    e._mcp_teardown(state)
    print(f"MCP session_items_append ({label}): {wall / calls * 1000:.2f} ms wall; CPU ms per call: client "
          f"{client / calls * 1000:.2f}, MCP server {server / calls * 1000:.2f}; HTTP requests per call "
          f"{len(sent) / calls:.2f}; database transactions per call {xacts / calls:.2f}", flush=True)


def _python(world: Any, calls: int) -> None:
    from bench import scenarios_ecosystem as e

    hc = e._client(world)
    session = e._session(world.project)
    for _ in range(30):
        hc.append_items(session, [e.ITEM_1K])
    workers = world.web.worker_pids()
    x0 = _transactions(settle=True)
    c0, w0, t0 = time.process_time(), _cpu(workers), time.perf_counter()
    for _ in range(calls):
        hc.append_items(session, [e.ITEM_1K])
    wall = time.perf_counter() - t0
    client, web, xacts = time.process_time() - c0, _cpu(workers) - w0, _transactions(settle=True) - x0 - 1
    print(f"HarnessClient.append_items: {wall / calls * 1000:.2f} ms wall; CPU ms per call: client "
          f"{client / calls * 1000:.2f}, web workers {web / calls * 1000:.2f}; database transactions per call "
          f"{xacts / calls:.2f}", flush=True)


def _typescript(world: Any, calls: int) -> None:
    from bench import scenarios_ecosystem as e

    session = e._session(world.project)
    script = TS_CPU % (ROOT / "client" / "typescript" / "dist" / "src" / "index.js").as_uri()
    env = {**os.environ, "HARNESS_URL": world.url, "HARNESS_TOKEN": world.token}
    done = subprocess.run(["node", "--input-type=module", "-e", script, str(session), str(calls)],  # noqa: S607
                          env=env, capture_output=True, text=True, timeout=300, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"TypeScript appendItems (node): {result['wall_ms']:.2f} ms wall; CPU ms per call: client (node) "
          f"{result['cpu_ms']:.2f}", flush=True)


def _explain() -> None:
    from django.db import connection
    from django.utils import timezone

    from bench import scenarios_ecosystem as e
    from harness.models import Project
    from memory_app.models import MemoryRecord
    from memory_app.selectors import _retrieval, store_search

    filled = MemoryRecord.objects.filter(namespace=["project", "bench-e2", "items"]).values("project_id")
    project = Project.objects.filter(slug__startswith="bench-e-", pk__in=filled).order_by("-id").first()
    if project is None:
        raise SystemExit("no scenario E project: run bin/bench --only E first")
    retrieval = _retrieval(project, "project", "", e.QUERY_WORD, 10, timezone.now(), False)[:10]
    sql, params = retrieval.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
        print(f"{project.slug}: E4's retrieval", *(row[0] for row in cursor.fetchall()), sep="\n")
    t0 = time.perf_counter()
    found = store_search(project=project, caller=None, namespace_prefix=["project", "bench-e2", "items"],
                         query=e.QUERY_WORD, filters=e.FILTER, limit=10)
    print(f"E2's store search: {len(found)} items in {(time.perf_counter() - t0) * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--explain", action="store_true", help="EXPLAIN E4's retrieval in the newest E project")
    parser.add_argument("--serve-mcp-json", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    if args.serve_mcp_json:
        _serve_mcp_json(args.serve_mcp_json)
        return
    if args.explain:
        _explain()
        return
    from bench import scenarios_ecosystem as e

    e._ts_build()
    world = e._World()
    try:
        world.start_mcp()
        _mcp(world, args.calls, "as shipped: SSE answers")
        assert world.mcp is not None
        world.mcp.stop()
        world.mcp = _start_mcp_json()
        _mcp(world, args.calls, "experiment: json_response=True")
        for _ in range(2):
            _python(world, args.calls)
            _typescript(world, args.calls)
    finally:
        world.stop()


if __name__ == "__main__":
    main()
