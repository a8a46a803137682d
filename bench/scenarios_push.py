"""Scenario P: the push (issue 35, section 3): how soon an agent waiting on an approval learns its decision, and
what waiting costs the database.

Black-box on the server side: `manage.py mcp` (the ASGI process serving the waits beside /mcp, one LISTEN
connection) as bin/start runs it; the waiters are long polls (`GET /api/v1/approvals/{id}/wait/`, httpx, one
asyncio loop in this process) with an agent token; the decisions are `approval_decide` in this process's own
database connection (a reviewer's decision, committed as the console commits it).

    P1 decision -> agent sees it   100 agents waiting (each one decided is replaced by a new waiter, so 99-100
                                   wait at every decision); decisions one at a time, 100 ms apart. Latency from
                                   the decision's commit to the waiter's answer (p50 target <= 20 ms), and from
                                   the call that decides (its own commit included).
    P2 1,000 waiters at rest       1,000 long polls open on 1,000 pending approvals: the database connections
                                   the server holds and the transactions per second it runs while they wait,
                                   against the same server idle, and polling's cost at the client's default 1 s
                                   (one GET per waiter per second: counted, not run).
"""

from __future__ import annotations

import asyncio
import threading
import time
from array import array
from typing import Any

from bench import procs
from bench.core import Measure, Settings, _percentile
from bench.scenarios_http import agent_token

P50_TARGET_MS = 20.0
GAP = 0.1  # s between decisions (P1)


def _fixture(slug: str, count: int) -> tuple[Any, str, list[int]]:
    from harness.actors import Actor
    from harness.models import Project
    from runs_app.models import RunStatus
    from runs_app.services import approval_request_create, run_create, run_transition
    from sessions_app.services import session_create

    project = Project.objects.get_or_create(slug=slug, defaults={"name": slug})[0]
    token = agent_token(slug)
    ids = []
    for n in range(count):
        session = session_create(project=project, role="manager", memory_policy="bounded").pk
        run = run_create(project=project, session_id=session).pk
        run_transition(project=project, run_id=run, to=RunStatus.RUNNING, expected_version=None)
        ids.append(approval_request_create(project=project, run_id=run, tool="mail.send", arguments={"n": n},
                                           idempotency_key=f"push-{time.time_ns()}-{n}",
                                           actor=Actor.for_agent("bench")).pk)
    return project, token, ids


def _reviewer(project: Any) -> Any:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from harness.actors import Actor
    from harness.models import Membership

    user, _ = get_user_model().objects.get_or_create(username=f"push-reviewer-{project.slug}")
    user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    Membership.objects.get_or_create(project=project, user=user)
    return Actor.for_user(user)


class _Probe:
    """The database's own counters, read on a connection of the probe's own (not Django's: the waiters' loop is
    async, and the bench's Django connection is closed while it counts the server's)."""

    def __init__(self) -> None:
        import psycopg

        from harness.push.hub import conninfo

        self.conn = psycopg.connect(**conninfo(), autocommit=True)

    def connections(self) -> int:
        """Client connections to the bench database but this probe's (the push server's, at that moment)."""
        row = self.conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                "AND pid <> pg_backend_pid() AND backend_type = 'client backend'").fetchone()
        return int(row[0]) if row else 0

    def transactions(self) -> int:
        self.conn.execute("SELECT pg_stat_clear_snapshot()")
        row = self.conn.execute("SELECT xact_commit + xact_rollback FROM pg_stat_database "
                                "WHERE datname = current_database()").fetchone()
        return int(row[0]) if row else 0

    def rate_at_rest(self, seconds: float) -> float:
        """Transactions/s of the whole database over `seconds`, less this probe's own (its two reads)."""
        first = self.transactions()
        time.sleep(seconds)
        return max(0.0, (self.transactions() - first - 2) / seconds)

    def until_quiet(self, quiet: float, limit: float) -> None:
        """Until the database ran no transaction (but this probe's) for `quiet` seconds, or `limit` passed."""
        deadline, quiet_since, last = time.perf_counter() + limit, time.perf_counter(), self.transactions()
        while time.perf_counter() < deadline and time.perf_counter() - quiet_since < quiet:
            time.sleep(0.25)
            now = self.transactions()
            if now - last > 2:  # more than this probe's own two statements
                quiet_since = time.perf_counter()
            last = now

    def close(self) -> None:
        self.conn.close()


async def _wait(http: Any, base: str, approval: int, timeout: float) -> Any:
    answer = await http.get(f"{base}/api/v1/approvals/{approval}/wait/", params={"timeout": f"{timeout}"})
    answer.raise_for_status()
    return answer.json()


def _p1(settings: Settings, server: procs.Server) -> Measure:
    import httpx

    waiting, decisions = 100, (40 if settings.duration <= 2 else 200)
    project, token, ids = _fixture("bench-push-p1", waiting + decisions)
    actor = _reviewer(project)
    base = f"http://127.0.0.1:{server.port}"
    seen_at: dict[int, float] = {}
    committed_at: dict[int, float] = {}
    called_at: dict[int, float] = {}
    answers: dict[int, Any] = {}

    async def waiter(http: Any, approval: int) -> None:
        body = await _wait(http, base, approval, 60)
        while not body["done"]:  # its timeout: an agent waits again
            body = await _wait(http, base, approval, 60)
        seen_at[approval] = time.perf_counter()
        answers[approval] = body

    def decide_all(order: list[int], started: threading.Event) -> None:
        from django.db import connections

        from runs_app.services import approval_decide

        started.wait()
        probe = _Probe()
        try:
            # The 100 first waits have made their first reads (the server only waits now), bounded well inside the
            # waits' 60 s, so that no decision meets the waits' own timeout and re-read.
            probe.until_quiet(1.5, 8)
        finally:
            probe.close()
        for approval in order:
            called_at[approval] = time.perf_counter()
            approval_decide(project=project, approval_id=approval, actor=actor, decision="approve", reason="ok")
            committed_at[approval] = time.perf_counter()
            # One decision at a time, each seen before the next: the latency of a wake, not of a queue of them.
            time.sleep(GAP)
        connections.close_all()  # this thread's connection is not the server's (P2 counts those)

    async def main() -> None:
        limits = httpx.Limits(max_connections=waiting + 50, max_keepalive_connections=waiting + 50)
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=90, limits=limits) as http:
            pending = list(ids[waiting:])
            tasks: set[asyncio.Task[None]] = set()

            def start(approval: int) -> None:
                task = asyncio.ensure_future(waiter(http, approval))
                task.add_done_callback(replace)
                tasks.add(task)

            def replace(task: asyncio.Task[None]) -> None:
                tasks.discard(task)
                if pending and not task.cancelled():  # the decided agent's place is taken by another waiting one
                    start(pending.pop(0))

            for approval in ids[:waiting]:
                start(approval)
            started = threading.Event()
            order = ids[:decisions]  # the first 100 are waited on now; the next ones as their places free up
            decider = threading.Thread(target=decide_all, args=(order, started), daemon=True)
            decider.start()
            started.set()
            while decider.is_alive() or any(a not in seen_at for a in order):
                await asyncio.sleep(0.05)
                if not decider.is_alive() and time.perf_counter() - max(committed_at.values(), default=0) > 70:
                    break
            for task in tasks:
                task.cancel()

    t0 = time.perf_counter()
    asyncio.run(main())
    seconds = time.perf_counter() - t0
    decided = [a for a in committed_at if a in seen_at]
    after_commit = array("d", sorted((seen_at[a] - committed_at[a]) * 1000 for a in decided))
    after_call = array("d", sorted((seen_at[a] - called_at[a]) * 1000 for a in decided))
    correct = all(answers[a]["done"] and answers[a]["approval"]["status"] == "approved" for a in decided)
    p50 = _percentile(after_commit, 0.5)
    met = p50 <= P50_TARGET_MS
    section = "\n".join([
        "## P1: decision -> agent sees it (the push, 100 agents waiting)", "",
        f"- {len(decided)} decisions, 100 long polls open at each (manage.py mcp, one LISTEN connection)",
        f"- from the decision's commit: p50 {p50:.1f} ms, p90 {_percentile(after_commit, 0.9):.1f} ms, "
        f"p99 {_percentile(after_commit, 0.99):.1f} ms, max {max(after_commit, default=float('nan')):.1f} ms",
        f"- from the decide call's start (its own commit included): p50 {_percentile(after_call, 0.5):.1f} ms",
        f"- target p50 <= {P50_TARGET_MS:g} ms: **{'met' if met else 'not met'}**",
        "- polling at the client's default (1 s, growing by half to 10 s): a decision waits 0.5 s on average for "
        "the first poll, more later", ""])
    return Measure(scenario="P1 decision -> agent sees it (100 waiting)", subject="push long poll (manage.py mcp)",
                   clients=waiting, ops=len(decided), seconds=seconds, p50_ms=p50,
                   p99_ms=_percentile(after_commit, 0.99), peak_rss_mb=0.0,
                   extra={"check": correct and len(decided) == decisions, "target": f"p50<={P50_TARGET_MS:g}ms",
                          "met": "yes" if met else "no", "section": section})


def _p2(settings: Settings, server: procs.Server) -> Measure:
    import httpx

    count, window = 1000, (5.0 if settings.duration <= 2 else 15.0)
    project, token, ids = _fixture("bench-push-p2", count)
    base = f"http://127.0.0.1:{server.port}"
    from django.db import connections

    connections.close_all()  # the bench's own connection is not the server's
    probe = _Probe()
    idle_connections = probe.connections()
    idle_rate = probe.rate_at_rest(window)
    result: dict[str, Any] = {}

    async def main() -> None:
        loop = asyncio.get_running_loop()
        limits = httpx.Limits(max_connections=count + 10, max_keepalive_connections=count + 10)
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120, limits=limits) as http:
            tasks = [asyncio.ensure_future(_wait(http, base, a, 60)) for a in ids]
            # Every wait has made its first read once the database is at rest (no transaction for 1 s).
            quiet_since, last = time.perf_counter(), await loop.run_in_executor(None, probe.transactions)
            deadline = time.perf_counter() + 45
            while time.perf_counter() < deadline:
                await asyncio.sleep(0.5)
                now = await loop.run_in_executor(None, probe.transactions)
                if now - last > 2:
                    quiet_since = time.perf_counter()
                last = now
                if time.perf_counter() - quiet_since > 1.5:
                    break
            result["connections"] = await loop.run_in_executor(None, probe.connections)
            result["rate"] = await loop.run_in_executor(None, probe.rate_at_rest, window)
            result["open"] = sum(1 for t in tasks if not t.done())
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    t0 = time.perf_counter()
    try:
        asyncio.run(main())
    finally:
        probe.close()
    section = "\n".join([
        "## P2: 1,000 agents waiting at rest (the push)", "",
        f"- long polls open while measured: {result['open']} of {count}",
        f"- database connections (every client of the bench database but the probe's: the push server's LISTEN "
        f"and its read threads' persistent connections): "
        f"{result['connections']} with 1,000 waiting, {idle_connections} with the server idle",
        f"- transactions/s at rest over {window:g} s: {result['rate']:.1f} with 1,000 waiting, "
        f"{idle_rate:.1f} idle",
        "- polling at the client's default 1 s instead: 1,000 GETs/s (each at least one statement, and a web "
        "worker's time), falling to 100/s at the 10 s ceiling", ""])
    return Measure(scenario="P2 1,000 waiters at rest", subject="push long poll (manage.py mcp)", clients=count,
                   ops=result["open"], seconds=time.perf_counter() - t0, p50_ms=0.0, p99_ms=0.0, peak_rss_mb=0.0,
                   extra={"check": result["open"] == count, "connections": result["connections"],
                          "xact_per_s": f"{result['rate']:.1f}", "section": section})


def scenario_push(settings: Settings) -> list[Measure]:
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
    server = procs.start_mcp(name="bench-push")
    try:
        return [_p1(settings, server), _p2(settings, server)]
    finally:
        server.stop()


SCENARIOS: dict[str, Any] = {"P": scenario_push}
