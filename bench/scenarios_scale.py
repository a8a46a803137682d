"""Scenario S: web and worker processes scaled out on one database (issue 35, section 4).

Two web processes stand in for two machines behind a load balancer: two granian servers (scenario H's server,
one worker process each) on two ports, with the clients split between them (client i talks to port i % 2), as a
round-robin balancer would spread connections. Two `celery -A config worker` processes (solo pool) take the
resumes from one Redis broker. Everything shares one PostgreSQL database, as it would in production.

    S1 append, 1 web process vs 2        POST /api/v1/sessions/{id}/items/ (~1 KB, Idempotency-Key), taking turns
    S2 the two web processes' curve       the same append at 1, 2, 4, 8 and 16 clients: where it stops growing
    S3 resumes, 1 worker process vs 2     scenario 7's burst (approvals decided, resume messages sent at once)
    S4 both at once                       8 clients appending through the two web processes while two workers
                                          drain a burst of resumes: what one host serves of each, together

Per process: each web process's share comes from the rows its clients stored (every acknowledged append is
checked to be stored, gap-free), each worker's from the resumes its lease owner string signed in the run's
events. CPU is read from /proc around each measurement: the web processes', the workers', and this database's
PostgreSQL backends' (pg_stat_activity, persistent connections): CPU per request does not depend on how busy the
shared machine is, and it is what the sizing in docs/operations/scaling.md is computed from.

On this 2-core host the two "machines" share the same two cores: two processes cannot serve twice one's rate
here, and the figures show that the second process adds only what the cores have left. What they do show is
that the processes share nothing but the database (no lost or doubled write, no run resumed twice) and what one
request costs each tier, from which a fleet on separate hosts is sized.
"""

from __future__ import annotations

import time
from typing import Any

import orjson
from django.db import connection

from bench import procs
from bench.core import Measure, Settings, Subject, measure, measure_turns
from bench.scenarios_api import ITEM_1K, _Http
from bench.scenarios_http import agent_token
from bench.scenarios_store import _gap_free, _new_session, _project
from bench.scenarios_worker import _burst, _cpu_seconds, _decide_all, resume_check, resumed_of, reviewer, waiting_run
from runs_app.models import Run, RunEvent
from sessions_app.models import SessionItem

CURVE = (1, 2, 4, 8, 16)  # S2's client counts
ONE_WEB = "1 web process (granian, 1 worker)"
TWO_WEB = "2 web processes (2 granians x 1 worker, clients split)"


def _start_web(count: int, tag: str) -> list[procs.Server]:
    return [procs.start_granian(workers=1, name=f"bench-scale-{tag}-{i}") for i in range(count)]


def _pids(servers: list[procs.Server]) -> list[int]:
    return [pid for server in servers for pid in server.worker_pids()]


def _backends() -> list[int]:
    """This database's server processes: the web processes' persistent connections among them."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
        return [row[0] for row in cursor.fetchall()]


def _cpu(pids: list[int]) -> float:
    return sum(_cpu_seconds(pid) for pid in pids)


class _DatabaseCpu:
    """CPU of this database's backends between start() and seconds(): each backend's growth, one that connected
    in between counted from 0 (the web processes connect on their first request)."""

    def start(self) -> _DatabaseCpu:
        self.before = {pid: _cpu_seconds(pid) for pid in _backends()}
        return self

    def seconds(self) -> float:
        return sum(max(0.0, _cpu_seconds(pid) - self.before.get(pid, 0.0)) for pid in _backends())


class _Append:
    """The append subject through `servers`: client i appends to its own session through server i % n."""

    def __init__(self, servers: list[procs.Server], token: str, clients: int, name: str) -> None:
        project = _project()
        self.servers, self.name = servers, name
        self.sessions = [_new_session(project) for _ in range(clients)]
        self.body = orjson.dumps({"items": [ITEM_1K]})
        ports, sessions, body = [s.port for s in servers], self.sessions, self.body

        def setup(i: int) -> dict:
            return {"http": _Http(ports[i % len(ports)], token), "path": f"/api/v1/sessions/{sessions[i]}/items/"}

        def op(s: dict) -> None:
            s["http"].post(s["path"], body)

        self.subject = Subject(name, setup, op)

    def per_server(self) -> list[int]:
        """Items stored through each server (its clients' sessions)."""
        n = len(self.servers)
        stored = dict(SessionItem.objects.filter(session_id__in=self.sessions).values_list("session_id")
                      .annotate(n=_count()).values_list("session_id", "n"))
        return [sum(stored.get(sid, 0) for i, sid in enumerate(self.sessions) if i % n == k) for k in range(n)]

    def check(self, m: Measure) -> None:
        stored = self.per_server()
        m.extra["check"] = sum(stored) == m.extra["acknowledged"] and _gap_free(self.sessions)
        total = sum(stored) or 1
        if len(stored) > 1:
            m.extra["per_process_ops_s"] = "/".join(f"{m.ops_per_s * part / total:,.0f}" for part in stored)


def _count() -> Any:
    from django.db.models import Count

    return Count("id")


def _with_cpu(m: Measure, web: list[int], cpu_web: float, cpu_db: float) -> None:
    """CPU ms per request of the web processes and of the database's backends, over every acknowledged request
    (the warm-ups' too: the CPU was read around them)."""
    requests = max(1, m.extra["acknowledged"])
    m.extra["web_cpu_ms_per_req"] = round(cpu_web / requests * 1000, 2)
    m.extra["db_cpu_ms_per_req"] = round(cpu_db / requests * 1000, 2)
    m.extra["web_processes"] = len(web)


# --- S1 and S2: the web tier -----------------------------------------------------------------------------

def _s1_web(settings: Settings, token: str) -> list[Measure]:
    clients = max(settings.clients)
    one, two = _start_web(1, "one"), _start_web(2, "two")
    try:
        a, b = _Append(one, token, clients, ONE_WEB), _Append(two, token, clients, TWO_WEB)
        # CPU is read around the turns: each server is idle while the other's subject runs.
        db_cpu = _DatabaseCpu().start()
        before = (_cpu(_pids(one)), _cpu(_pids(two)))
        m_one, m_two = measure_turns("S1 append, 1 vs 2 web processes", [a.subject, b.subject], clients=clients,
                                     settings=settings)
        after = (_cpu(_pids(one)), _cpu(_pids(two)), db_cpu.seconds())
        a.check(m_one)
        b.check(m_two)
        # The database's CPU is shared by both subjects' turns: split in proportion to their requests.
        db = after[2]
        acked = m_one.extra["acknowledged"] + m_two.extra["acknowledged"] or 1
        _with_cpu(m_one, _pids(one), after[0] - before[0], db * m_one.extra["acknowledged"] / acked)
        _with_cpu(m_two, _pids(two), after[1] - before[1], db * m_two.extra["acknowledged"] / acked)
        m_two.extra["vs_one_process"] = f"{m_two.ops_per_s / (m_one.ops_per_s or 1):.2f}x"
    finally:
        for server in (*one, *two):
            server.stop()
    return [m_one, m_two]


def _s2_curve(settings: Settings, token: str) -> list[Measure]:
    two = _start_web(2, "curve")
    out: list[Measure] = []
    try:
        for clients in CURVE:
            subject = _Append(two, token, clients, TWO_WEB)
            db_cpu = _DatabaseCpu().start()
            before = _cpu(_pids(two))
            m = measure("S2 append through 2 web processes, by clients", TWO_WEB, setup=subject.subject.setup,
                        op=subject.subject.op, clients=clients, settings=settings)
            web_cpu, db = _cpu(_pids(two)) - before, db_cpu.seconds()
            subject.check(m)
            _with_cpu(m, _pids(two), web_cpu, db)
            out.append(m)
    finally:
        for server in two:
            server.stop()
    return out


# --- S3: the worker tier ---------------------------------------------------------------------------------

def _owner_pid(owner: str) -> int | None:
    """The process id in a worker's lease owner string (worker.lease.worker_owner: prefix host:pid:nonce)."""
    try:
        return int(owner.rsplit(":", 2)[-2])
    except (ValueError, IndexError):
        return None


def _resumed_by(run_ids: list[int]) -> tuple[dict[int, int], bool]:
    """Resumes per worker process id, from the owner (worker:host:pid:nonce) each run's result binding recorded,
    and whether every run was bound exactly once (no run resumed twice by the two workers)."""
    rows = list(RunEvent.objects.filter(run_id__in=run_ids, kind="resume.bind_result")
                .values_list("run_id", "data"))
    counts: dict[int, int] = {}
    for _, data in rows:
        pid = _owner_pid(str((data or {}).get("owner", "")))
        if pid is not None:
            counts[pid] = counts.get(pid, 0) + 1
    once = len(rows) == len(run_ids) == len({run_id for run_id, _ in rows})
    return counts, once


def _s3_workers(settings: Settings) -> list[Measure]:
    """scenario 7's burst (bench/worker_cycle.py's version, which reads each party's CPU around the resumes
    only: the workers' and this database's backends', the poll's among them)."""
    from bench import worker_cycle

    project = _project()
    user = reviewer(project)
    n = max(60, int(settings.duration * 40))
    out: list[Measure] = []
    for count in (1, 2):
        workers = [procs.start_celery_worker(name=f"bench-scale-worker-{count}-{i}") for i in range(count)]
        pids = [w.proc.pid for w in workers]
        try:
            worker_cycle._burst(project, user, 4 * count, pids, 0.002)  # warm: each process's first resumes
            first = Run.objects.order_by("-id").values_list("id", flat=True).first() or 0
            figures = worker_cycle._burst(project, user, n, pids, 0.002)
            runs = list(Run.objects.filter(id__gt=first, project=project, bound_result__isnull=False)
                        .values_list("id", flat=True))
            by_pid, once = _resumed_by(runs)
            rss = max(procs.rss_mb(pid) for pid in pids)
        finally:
            for w in workers:
                w.stop()
        cycles = figures["cycles"]
        split = [by_pid.get(pid, 0) for pid in pids]
        m = Measure("S3 resumes, 1 vs 2 worker processes",
                    f"{count} worker process{'es' if count > 1 else ''} (solo pool)", count, int(cycles),
                    figures["seconds"], 0.0, 0.0, rss,
                    extra={"check": once and sum(split) == cycles,
                           "cycles_per_s": round(cycles / figures["seconds"], 1),
                           "worker_cpu_ms_per_resume": round(figures["workers"], 2),
                           "db_cpu_ms_per_resume": round(figures["postgres"], 2),
                           "per_process_resumes": "/".join(str(x) for x in split),
                           "per_process_cycles_s": "/".join(f"{x / figures['seconds']:.1f}" for x in split)})
        out.append(m)
    out[1].extra["vs_one_process"] = f"{out[1].extra['cycles_per_s'] / (out[0].extra['cycles_per_s'] or 1):.2f}x"
    return out


# --- S4: both tiers at once -------------------------------------------------------------------------------

def _s4_together(settings: Settings, token: str) -> list[Measure]:
    """The resume messages are sent first (the workers start on them at once), then the clients append through
    the two web processes for the measurement's time; the resumes done by then are counted."""
    from worker.tasks import enqueue_resume

    project = _project()
    user = reviewer(project)
    clients = max(settings.clients)
    n = max(200, int((settings.duration + settings.warmup) * 150))  # more than two workers drain in the window
    web = _start_web(2, "together")
    workers = [procs.start_celery_worker(name=f"bench-scale-together-{i}") for i in range(2)]
    pids = [w.proc.pid for w in workers]
    try:
        _burst(project, user, 8, pids)
        runs = [waiting_run(project, i) for i in range(n)]
        befores = dict(Run.objects.filter(pk__in=[rid for rid, _ in runs]).values_list("pk", "last_checkpoint_id"))
        held, _ = _decide_all(project, user, runs)
        pending = [(rid, befores[rid]) for rid in held]
        subject = _Append(web, token, clients, TWO_WEB + " + 2 workers resuming")
        cpu0 = (_cpu(_pids(web)), _cpu(pids))
        t0 = time.perf_counter()
        for run_id in held:
            enqueue_resume(run_id)
        m = measure("S4 appends and resumes together", subject.name, setup=subject.subject.setup,
                    op=subject.subject.op, clients=clients, settings=settings)
        seconds = time.perf_counter() - t0
        done = resumed_of(pending)
        cpu1 = (_cpu(_pids(web)), _cpu(pids))
        # Let the rest finish before the workers stop, so the next scenario finds an empty queue.
        deadline = time.perf_counter() + 120
        while len(resumed_of(pending)) < len(pending) and time.perf_counter() < deadline:
            time.sleep(0.05)
    finally:
        for server in (*web, *workers):
            server.stop()
    subject.check(m)
    m.extra["resumes_in_window"] = len(done)
    m.extra["resume_cycles_s"] = round(len(done) / seconds, 1)
    m.extra["web_cpu_s"] = round(cpu1[0] - cpu0[0], 2)
    m.extra["worker_cpu_s"] = round(cpu1[1] - cpu0[1], 2)
    m.extra["check"] = m.extra["check"] and all(resume_check(rid) for rid in list(done)[:50])
    if len(done) >= len(pending):
        m.extra["note"] = "every resume finished inside the window: raise n to keep the workers busy throughout"
    return [m]


def scenario_scale(settings: Settings) -> list[Measure]:
    token = agent_token(_project().slug)
    out = [*_s1_web(settings, token), *_s2_curve(settings, token), *_s3_workers(settings), *_s4_together(settings,
                                                                                                         token)]
    out[-1].extra["section"] = _section(out)
    return out


def _section(measures: list[Measure]) -> str:
    s1 = [m for m in measures if m.scenario.startswith("S1")]
    s2 = [m for m in measures if m.scenario.startswith("S2")]
    s3 = [m for m in measures if m.scenario.startswith("S3")]
    s4 = [m for m in measures if m.scenario.startswith("S4")]
    lines = ["## S scaled out on one database: two web processes, two worker processes", "",
             "| tier | setup | clients | ops/s | per process | CPU ms / op (process) | DB CPU ms / op |",
             "| --- | --- | ---: | ---: | --- | ---: | ---: |"]
    for m in s1 + s2:
        lines.append(f"| web (append) | {m.subject} | {m.clients} | {m.ops_per_s:,.0f} | "
                     f"{m.extra.get('per_process_ops_s', '-')} | {m.extra['web_cpu_ms_per_req']:.2f} | "
                     f"{m.extra['db_cpu_ms_per_req']:.2f} |")
    for m in s3:
        lines.append(f"| worker (resume) | {m.subject} | - | {m.extra['cycles_per_s']:.1f} | "
                     f"{m.extra.get('per_process_cycles_s', '-')} | {m.extra['worker_cpu_ms_per_resume']:.2f} | "
                     f"{m.extra['db_cpu_ms_per_resume']:.2f} |")
    for m in s4:
        lines.append(f"| both | {m.subject} | {m.clients} | {m.ops_per_s:,.0f} appends + "
                     f"{m.extra['resume_cycles_s']:.1f} resumes | - | - | - |")
    return "\n".join(lines) + "\n"


SCENARIOS: dict[str, Any] = {"S": scenario_scale}
