"""Experiment 27 (issue 19): a soak of mixed traffic on a cluster of its own with autovacuum on, as in production.

For `seconds` (20 minutes in full, about 30 s in the suite's quick form) client threads drive gunicorn with what
agents and reviewers do: keyed session-item and run-event appends (each key a row of the idempotency table),
compare-and-set task saves retried on 409, memory writes, reviewers' approvals that a Celery worker resumes
(its tool a counting server), and the reads of the runs list and a session's latest items. A sampler reads,
every `every` seconds, with SQL on the cluster: each table's heap and index size, live and dead tuples and
autovacuum runs, the idempotency table's rows and size, the connections by state; and from /proc the RSS of
every gunicorn and Celery process.

It passes when the service stays healthy and bounded: no 5xx and no status a client did not expect, the
connections never exceed what the processes may open (no leak), every run the reviewers approved succeeded with
its tool called once, the idempotency table holds no more rows than keyed requests were sent, the RSS of no
process grew by more than a bound over the second half (warm-up excluded), and (in full) autovacuum kept the
hot tables' dead tuples under a bound. The figures keep the whole series, so a slow leak shows as a slope.
"""

from __future__ import annotations

import contextlib
import http.client
import random
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.procs import children, rss_mb
from reliability.clusters import OwnPostgres, own_postgres, own_redis
from reliability.core import Result, command_for, experiment
from reliability.faults import child_env, processes
from reliability.outages import TERMINAL, Web, _adapters, _child, _sql, counting_tool
from tests.worker.support import Workers, wait_for

TITLE_27 = "Soak: mixed traffic for 20 minutes, autovacuum on; bloat, idempotency rows, connections and RSS bounded"
HOT_TABLES = ("sessions_app_sessionitem", "runs_app_runevent", "runs_app_task", "runs_app_run",
              "harness_idempotentrequest", "memory_app_memoryrecord", "runs_app_approvalrequest",
              "runs_app_externaleffect", "harness_auditentry")
# Production's autovacuum, except how often the launcher looks: the default minute would not come round in the
# quick form's 30 s.
QUICK_SETTINGS = {"autovacuum_naptime": "5s"}
EXPECTED = {200, 201, 409}  # 409: a task save that lost its compare-and-set, retried on a fresh read


class Traffic:
    """The mixed clients. Each counts what it sent and what came back, by operation and status."""

    def __init__(self, web: Web, made: dict, *, clients: int) -> None:
        self.web, self.made, self.clients = web, made, clients
        self.agent = {"Authorization": f"Bearer {made['agent_token']}"}
        self.reviewer = {"Authorization": f"Bearer {made['reviewer_token']}"}
        self.stop = threading.Event()
        self.counts: Counter[str] = Counter()
        self.keyed = 0
        self.approved: list[int] = []
        self._approvals = list(made["approvals"])
        self._lock = threading.Lock()
        self.threads = [threading.Thread(target=self._client, args=(i,), daemon=True) for i in range(clients)]

    def _count(self, op: str, status: int) -> None:
        with self._lock:
            self.counts[f"{op} {status}"] += 1

    def _post(self, op: str, path: str, body: dict, headers: dict, *, key: str = "") -> tuple[int, Any]:
        if key:
            headers = {**headers, "Idempotency-Key": key}
            with self._lock:
                self.keyed += 1
        try:
            status, _, data = self.web.request("POST", path, body, headers=headers, timeout=60)
        except (OSError, http.client.HTTPException):
            status, data = 0, None
        self._count(op, status)
        return status, data

    def _get(self, op: str, path: str) -> None:
        try:
            status = self.web.request("GET", path, headers=self.agent, timeout=60)[0]
        except (OSError, http.client.HTTPException):
            status = 0
        self._count(op, status)

    def _save_task(self, rng: random.Random) -> None:
        path = f"/api/v1/tasks/{self.made['task']}/"
        for _ in range(20):
            try:
                status, _, state = self.web.request("GET", path, headers=self.agent, timeout=60)
                self._count("task.read", status)
                status, _, _ = self.web.request("PATCH", path, {
                    "expected_version": state["version"],
                    "artifact_refs": {"soak": {"note": rng.randrange(10**6)}}}, headers=self.agent, timeout=60)
            except (OSError, http.client.HTTPException, TypeError, KeyError):
                status = 0
            self._count("task.save", status)
            if status != 409:
                return
            time.sleep(rng.uniform(0, 0.05))

    def _approve(self) -> None:
        with self._lock:
            approval = self._approvals.pop() if self._approvals else None
        if approval is None:
            return
        # The version a reviewer reads: a pending approval's first (nothing moves it before its decision).
        status, _ = self._post("approval.decide", f"/api/v1/approvals/{approval}/decision/",
                               {"decision": "approve", "expected_version": 1}, self.reviewer)
        if status == 200:
            with self._lock:
                self.approved.append(approval)

    def _client(self, i: int) -> None:
        rng = random.Random(27 + i)
        n = 0
        sessions, runs = self.made["sessions"], self.made["event_runs"]
        while not self.stop.is_set():
            n += 1
            roll = rng.random()
            if roll < 0.3:
                self._post("item.append", f"/api/v1/sessions/{rng.choice(sessions)}/items/",
                           {"items": [{"role": "user", "content": {"text": f"soak {i}-{n}", "pad": "x" * 200}}]},
                           self.agent, key=f"item-{i}-{n}")
            elif roll < 0.5:
                self._post("event.append", f"/api/v1/runs/{rng.choice(runs)}/events/",
                           {"kind": "soak.tick", "data": {"client": i, "n": n}}, self.agent, key=f"event-{i}-{n}")
            elif roll < 0.6:
                self._save_task(rng)
            elif roll < 0.68:  # an agent token's agent scope is its own identity (the token's name)
                self._post("memory.write", "/api/v1/memory/records/",
                           {"scope": "agent", "scope_key": "soak-agent", "content": f"Soak fact {i}-{n}.",
                            "source_run_id": rng.choice(runs)}, self.agent)
            elif roll < 0.72:
                self._approve()
            elif roll < 0.86:
                self._get("runs.list", "/api/v1/runs/?limit=50")
            else:
                self._get("items.latest", f"/api/v1/sessions/{rng.choice(sessions)}/items/latest/?limit=20")
            time.sleep(rng.uniform(0, 0.02))


def _sample(cluster: OwnPostgres, web: Web, workers: Workers, at: float) -> dict[str, Any]:
    tables = {name: [round(heap / 1024), round(index / 1024), live, dead, autovacuums]
              for name, heap, index, live, dead, autovacuums in _sql(cluster, """
        SELECT relname, pg_relation_size(relid), pg_indexes_size(relid), n_live_tup, n_dead_tup, autovacuum_count
          FROM pg_stat_user_tables WHERE relname = ANY(%s) ORDER BY relname""", [list(HOT_TABLES)])}
    connections = dict(_sql(cluster, "SELECT coalesce(state, 'none'), count(*) FROM pg_stat_activity "
                                     "WHERE datname = 'harness' AND pid <> pg_backend_pid() GROUP BY 1", []))
    idem_rows, idem_kb = _sql(cluster, "SELECT count(*), pg_total_relation_size('harness_idempotentrequest') / 1024 "
                                       "FROM harness_idempotentrequest", [])[0]
    rss = {f"gunicorn-{pid}": round(rss_mb(pid), 1) for pid in children(web.proc.pid)}
    for worker in workers.started:
        for pid in [worker.proc.pid, *children(worker.proc.pid)]:
            rss[f"celery-{pid}"] = round(rss_mb(pid), 1)
    return {"t": round(at, 1), "connections": connections, "idempotency_rows": idem_rows,
            "idempotency_kb": idem_kb, "rss_mb": rss, "tables": tables}


@experiment(27, TITLE_27)
def soak(quick: bool) -> Result:
    """1. Its own cluster (autovacuum on), migrated; a setup child makes the sessions, runs, task and tokens.
    2. gunicorn (3 sync workers), one Celery worker with its beat (recovery pass every 5 s), a counting tool.
    3. `clients` threads of mixed traffic for `seconds`; a sample every `every` seconds.
    4. Then every approved run must finish; the series and the verdict."""
    seconds, every, clients, runs = (30, 5, 4, 6) if quick else (1200, 30, 8, 200)
    web_workers = 3
    started = time.monotonic()
    fake = counting_tool(delay=0.05)
    samples: list[dict[str, Any]] = []
    # Its own broker too: run ids of its own cluster must never reach another database's workers.
    with own_postgres("soak", settings=QUICK_SETTINGS if quick else {}) as cluster, own_redis("soak") as broker, \
            processes("soak") as procs, tempfile.TemporaryDirectory(prefix="reliability-soak-") as tmp:
        env = child_env(DATABASE_URL=cluster.url(), CELERY_BROKER_URL=broker.url())
        made = _child("soak_setup", {"runs": runs, "sessions": 4, "event_runs": 4}, env)
        pool = Workers(database_url=cluster.url(), tmp_path=Path(tmp), adapters=_adapters(fake))
        try:
            pool.start("soak", lease_seconds=10, wait=False, extra_env={"HARNESS_RECOVERY_INTERVAL_SECONDS": "5",
                                                                    "CELERY_BROKER_URL": broker.url()})
            web = Web(procs, env=env, workers=web_workers)
            pool.started[0].wait_ready(timeout=90)
            traffic = Traffic(web, made, clients=clients)
            begin = time.monotonic()
            for thread in traffic.threads:
                thread.start()
            samples.append(_sample(cluster, web, pool, 0.0))
            while time.monotonic() - begin < seconds:
                time.sleep(min(every, max(0.0, seconds - (time.monotonic() - begin))))
                samples.append(_sample(cluster, web, pool, time.monotonic() - begin))
            traffic.stop.set()
            for thread in traffic.threads:
                thread.join(90)
            approved_runs = [run for run, approval in zip(made["runs"], made["approvals"], strict=True)
                             if approval in traffic.approved]

            def approved_finished() -> bool:
                return len(_sql(cluster, "SELECT 1 FROM runs_app_run WHERE id = ANY(%s) AND status = ANY(%s)",
                                [approved_runs, list(TERMINAL)])) == len(approved_runs)

            with contextlib.suppress(AssertionError):
                wait_for(approved_finished, timeout=120, interval=0.5)
            samples.append(_sample(cluster, web, pool, time.monotonic() - begin))
            run_status = Counter(status for (status,) in _sql(
                cluster, "SELECT status FROM runs_app_run WHERE id = ANY(%s)", [approved_runs]))
            keys = [k for (k,) in _sql(cluster, "SELECT idempotency_key FROM runs_app_approvalrequest "
                                                "WHERE run_id = ANY(%s)", [approved_runs])]
            alive = web.proc.poll() is None and all(w.proc.poll() is None for w in pool.started)
        finally:
            pool.stop_all()
    fake.stop()
    return _verdict(quick, samples, traffic, run_status, keys, fake.executions, alive, web_workers,
                    round(time.monotonic() - started, 1))


def _verdict(quick: bool, samples: list[dict[str, Any]], traffic: Traffic, run_status: Counter[str], keys: list[str],
             tool_calls: dict[str, int], alive: bool, web_workers: int, wall: float) -> Result:
    statuses = Counter(int(key.split()[-1]) for key in traffic.counts.elements())
    unexpected = {key: count for key, count in traffic.counts.items() if int(key.split()[-1]) not in EXPECTED}
    max_connections = max(sum(s["connections"].values()) for s in samples)
    # gunicorn's sync workers hold one connection each; the Celery worker one, its beat none or one; the
    # recovery pass runs in the worker. Anything above that is a connection nobody closes.
    connection_bound = web_workers + 2
    half = [s for s in samples if s["t"] >= samples[-1]["t"] / 2]
    growth = {}
    for name in half[-1]["rss_mb"]:
        first = half[0]["rss_mb"].get(name)
        if first:
            growth[name] = round(half[-1]["rss_mb"][name] / first, 3)
    rss_bound = 1.5 if quick else 1.2
    end = samples[-1]
    dead_ratio = {name: round(dead / max(1, live), 3) for name, (_, _, live, dead, _) in end["tables"].items()
                  if live + dead >= 1000}
    autovacuums = {name: row[4] for name, row in end["tables"].items()}
    series = {
        "t": [s["t"] for s in samples],
        "connections": [sum(s["connections"].values()) for s in samples],
        "idempotency_rows": [s["idempotency_rows"] for s in samples],
        "idempotency_kb": [s["idempotency_kb"] for s in samples],
        "rss_mb_total": [round(sum(s["rss_mb"].values()), 1) for s in samples],
        "heap_kb": {name: [s["tables"].get(name, [0])[0] for s in samples] for name in HOT_TABLES},
        "index_kb": {name: [s["tables"].get(name, [0, 0])[1] for s in samples] for name in HOT_TABLES},
        "dead_tuples": {name: [s["tables"].get(name, [0, 0, 0, 0])[3] for s in samples] for name in HOT_TABLES},
    }
    figures: dict[str, Any] = {
        "seconds": samples[-1]["t"], "clients": traffic.clients, "requests": sum(traffic.counts.values()),
        "by_operation": dict(sorted(traffic.counts.items())), "statuses": dict(statuses),
        "unexpected": unexpected, "keyed_requests": traffic.keyed,
        "idempotency_rows_end": end["idempotency_rows"], "idempotency_kb_end": end["idempotency_kb"],
        "max_connections": max_connections, "connection_bound": connection_bound,
        "connections_end": end["connections"],
        "rss_growth_second_half": growth, "rss_growth_bound": rss_bound,
        "dead_tuple_ratio_end": dead_ratio, "autovacuum_runs": autovacuums,
        "approved": len(traffic.approved), "approved_runs_by_status": dict(run_status),
        "max_executions_per_key": max((tool_calls.get(k, 0) for k in keys), default=0),
        "processes_alive": alive, "series": series, "wall_seconds": wall,
    }
    passed = (not unexpected and figures["requests"] > 0 and max_connections <= connection_bound
              and end["idempotency_rows"] <= traffic.keyed
              and all(ratio <= rss_bound for ratio in growth.values())
              and run_status == Counter({"succeeded": len(traffic.approved)})
              and (not keys or figures["max_executions_per_key"] == 1) and alive)
    if not quick:  # autovacuum's naptime is production's minute: only the full soak gives it time to act
        passed = passed and all(ratio <= 0.5 for ratio in dead_ratio.values())
    return Result(number=27, title=TITLE_27, passed=passed, figures=figures, command=command_for(27, quick),
                  notes="The series are sampled every 30 s in full (every 5 s quick). Autovacuum is production's "
                        "(naptime 1 min; 5 s in the quick form so it acts within 30 s). Dead tuple ratios are "
                        "of tables with at least 1000 tuples.")
