"""Scenarios 8 (growth) and 9 (memory of the web and resume workers over a soak).

8: the console's session timeline, approvals inbox, run lineage, runs list and audit log pages (Django's test Client,
   logged in as a reviewer), the latest-checkpoint read and a scoped memory retrieval, each on a
   1,000-row and a 100,000-row fixture (memory: 1,000 and 1,000,000 records): the time ratio and
   the number of queries (every statement counted) of large to small.
9: the resume worker resumes 10,000 runs as fast as it can (phase 1), then gunicorn serves those
   pages (and API traffic) on the 100,000-row fixture in a soak of mixed traffic while the worker
   keeps resuming as part of the mix (phase 2): resident memory under 250 MB throughout and growth
   under 10% from the end of the soak's warm-up to its end, for each web worker and the resume worker.

The fixtures are two projects (bench-growth-1000, bench-growth-100000) built once with bench.bulk
and reused by later runs while their row counts still match.
"""

from __future__ import annotations

import http.client
import json
import multiprocessing as mp
import os
import statistics
import time
import urllib.parse
import uuid
from array import array
from collections.abc import Callable, Collection
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from typing import Any

from django.db import connection, connections, transaction
from django.db.models import Q, Sum
from django.test import Client

from bench import bulk, procs
from bench.core import Measure, Settings, _percentile
from bench.retention_growth import scenario_retention
from bench.scenarios_api import TEXT_1K
from bench.scenarios_http import BEST, agent_token
from bench.scenarios_store import ITEM, STATE, latest_checkpoint
from bench.scenarios_worker import REVIEWER_PASSWORD, resumed_of, reviewer, waiting_run
from harness.actors import Actor
from harness.audit import audit_record
from harness.models import AuditChainHead, AuditEntry, Project
from memory_app.models import MemoryRecord
from memory_app.selectors import memory_retrieve
from memory_app.services import memory_write
from runs_app.models import Checkpoint, Run, RunStatus
from runs_app.selectors.paging import seek_cursor
from runs_app.services import approval_decide, checkpoint_create, run_create, run_transition
from sessions_app.models import Session, SessionItem
from sessions_app.services import NewItem, session_create, session_items_append

SMALL = 1_000  # the fixture every larger one is compared with
GROWTH_SIZE = 100_000  # the large fixture's size unless `--growth-size` says otherwise
TIMELINE_MAX = 100_000  # items in one session: past this a fixture spreads its items over more sessions
AUDIT_MAX = 100_000  # audit entries: each copy goes through the chaining trigger (358 s a million)
SCOPE_SIZE = 1_000  # memory records per agent scope: the retrieved scope always holds this many
WORDS = ["lighthouse", "storm", "keeper", "harbour", "chapter", "draft", "outline", "reader", "publish", "title",
         "island", "lamp", "tide", "ship", "wreck", "rope", "fog", "bell", "cliff", "gull", "night", "dawn",
         "signal", "beacon", "logbook", "oil", "wick", "lens", "tower", "stairs", "door", "window", "sea",
         "wind", "rain", "salt", "boat", "net", "fish", "shore"]
QUERY = "lighthouse keeper"
RATIO_TARGET = 1.5
RSS_LIMIT_MB = 250.0
SOAK_CLIENTS = 4
SOAK_RATE = 5.0  # requests per second per soak client, at most
GROWTH_LIMIT = 0.10
PHASE1_IN_FLIGHT = 8  # decided approvals queued ahead of the resume worker in phase 1: it never idles
SOAK_IN_FLIGHT = 4  # and during the soak, where it shares the cores with the web traffic
RESUME_BOUND = 120.0  # seconds from a decision to its run resumed; later counts as never resumed
FILLER_ITEM: NewItem = {"role": "user", "content": {"text": TEXT_1K}}  # the other sessions' items, ~1 KB each
AUDIT_BATCH = 5_000  # audit entries copied per statement
CLONE_BATCH = 100_000  # waiting runs copied per round of statements


@dataclass(frozen=True)
class Shape:
    """How many rows of each kind a growth fixture of `size` holds.

    Up to TIMELINE_MAX every kind holds `size` rows (the 1,000 and 100,000 fixtures, as before). Beyond it the
    project holds `size` items, TIMELINE_MAX of them in the timeline session and the rest in sessions of
    TIMELINE_MAX ~1 KB items each, and a tenth of `size` in each of the lineage chain and the waiting runs
    (10,000,000: 10M items, 100,000 in one session, 1M checkpoints in the chain, 1M runs in the inbox)."""

    size: int
    items: int  # across the project
    timeline: int  # in the timeline session
    lineage: int  # checkpoints in the lineage run's chain
    runs: int  # runs waiting on a pending approval each (the inbox, the runs list)
    memory: int
    audit: int

    @classmethod
    def of(cls, size: int) -> Shape:
        memory = SMALL if size <= SMALL else 1_000_000
        if size <= TIMELINE_MAX:
            return cls(size, size, size, size, size, memory, min(size, AUDIT_MAX))
        return cls(size, size, TIMELINE_MAX, size // 10, size // 10, memory, AUDIT_MAX)


@dataclass(frozen=True)
class Fixture:
    shape: Shape
    project_id: int
    session_id: int  # the timeline: `shape.timeline` items
    lineage_run_id: int  # a run with a `shape.lineage`-long checkpoint chain
    approvals: int  # pending approvals in the project (the inbox)

    @property
    def rows(self) -> int:
        return self.shape.size

    @property
    def memory(self) -> int:
        return self.shape.memory


# --- fixtures -----------------------------------------------------------------------------------


def fixture(shape: Shape) -> Fixture:
    slug = f"bench-growth-{shape.size}"
    project = Project.objects.filter(slug=slug).first()
    if project is not None:
        found = _existing(project, shape)
        if found is not None:
            return _with_audit_entries(found)
        # Incomplete (an interrupted build): set it aside under another slug and build anew.
        Project.objects.filter(pk=project.pk).update(slug=f"{slug}-stale-{uuid.uuid4().hex[:6]}")
    return _with_audit_entries(_build(slug, shape))


def _with_audit_entries(f: Fixture) -> Fixture:
    """At least `shape.audit` audit entries in the project (the audit log's pages), added apart from the rest so a
    fixture built before the log was measured is topped up rather than rebuilt. The copies are chained by
    the trigger like any entry; their macs are the template's, so a chain check would call them altered
    (the page shows the last check, it never walks the chain)."""
    head = AuditChainHead.objects.filter(project_id=f.project_id).values_list("seq", flat=True).first() or 0
    wanted = f.shape.audit
    if head >= wanted:
        return f
    template = audit_record(project=f.project_id, actor=Actor.for_agent("bench"), action="approval.approved",
                            target=Run(pk=f.lineage_run_id), data={"i": 0})
    # In statements of AUDIT_BATCH: the trigger updates the project's head row once per entry, and within
    # one transaction each update walks every version of that row made before it (quadratic in the batch).
    for done in range(0, wanted - head - 1, AUDIT_BATCH):
        bulk.clone("harness_auditentry", template.pk, count=min(AUDIT_BATCH, wanted - head - 1 - done), overrides={
            "created_at": "t.created_at + (g + %(done)s) * interval '1 millisecond'",
            "data": "jsonb_build_object('i', g + %(done)s)",
            "action": "CASE WHEN (g + %(done)s) %% 10 = 0 THEN 'memory.accepted' ELSE t.action END"},
            params={"done": done})
    bulk.analyze("harness_auditentry")
    return f


def _existing(project: Project, shape: Shape) -> Fixture | None:
    session = Session.objects.filter(project=project, ref="growth-timeline").first()
    run = Run.objects.filter(project=project, ref="growth-lineage").first()
    if session is None or run is None:
        return None
    approvals = _count("runs_app_approvalrequest", project.pk, "status = 'pending'")
    # The project's items by its sessions' last_seq (each filler session's items and its last_seq are set in
    # one transaction), not count(*): that would read 10 GB at 10,000,000.
    items = Session.objects.filter(Q(ref="growth-timeline") | Q(ref__startswith="growth-filler-"),
                                   project=project).aggregate(n=Sum("last_seq"))["n"]
    if (SessionItem.objects.filter(session=session).count() != shape.timeline or items != shape.items
            or Checkpoint.objects.filter(run=run).count() != shape.lineage or approvals != shape.runs
            or MemoryRecord.objects.filter(project=project).count() != shape.memory):
        return None
    return Fixture(shape, project.pk, session.pk, run.pk, approvals)


def _count(table: str, project_id: int, where: str) -> int:
    with connection.cursor() as cursor:
        # `table` and `where` are this module's literals; the project id is bound.
        cursor.execute(f"SELECT count(*) FROM {table} WHERE project_id = %s AND {where}", [project_id])  # noqa: S608
        return cursor.fetchone()[0]


def _build(slug: str, shape: Shape) -> Fixture:
    """Build a growth fixture: one template row per kind through the services, the rest copied in SQL.

    1. The timeline: a session with `shape.timeline` items (seq 1..timeline) and one run; then, past
       TIMELINE_MAX, sessions of TIMELINE_MAX ~1 KB items each until the project holds `shape.items`.
    2. The inbox: `shape.runs` runs each waiting for its own pending approval.
    3. The lineage: a run with a chain of `shape.lineage` checkpoints (each the parent of the next).
    4. Memory: `shape.memory` records in agent scopes of SCOPE_SIZE each, words drawn from WORDS.
    Every index is in place while the rows go in: the fixture is the real schema, as it would have grown.
    """
    started = time.perf_counter()
    project = Project.objects.create(slug=slug, name=slug)
    reviewer(project)
    session = session_create(project=project, role="writer", memory_policy="bounded", ref="growth-timeline")
    first = session_items_append(project=project, session_id=session.pk, items=[ITEM])[0]
    bulk.clone("sessions_app_sessionitem", first.pk, count=shape.timeline - 1, overrides={
        "seq": "g + 1", "created_at": "t.created_at + g * interval '1 millisecond'"})
    bulk.execute("UPDATE sessions_app_session SET last_seq = %s WHERE id = %s", [shape.timeline, session.pk])
    _filler_sessions(project, shape.items - shape.timeline, started)

    run_id, approval_id = waiting_run(project, 0)
    for done in range(0, shape.runs - 1, CLONE_BATCH):
        _clone_waiting_runs(run_id, approval_id, min(CLONE_BATCH, shape.runs - 1 - done), offset=done)
    _progress(started, f"{shape.runs:,} waiting runs")

    lineage_run = run_create(project=project, session_id=session.pk, ref="growth-lineage")
    run_transition(project=project, run_id=lineage_run.pk, to=RunStatus.RUNNING, expected_version=None)
    root = checkpoint_create(project=project.pk, run_id=lineage_run.pk, state=STATE, cursor={"n": 0})
    # Checkpoints are append-only (a trigger refuses UPDATE): the chain's ids are drawn first so each
    # copy is inserted with its parent already set.
    ids = bulk.clone("runs_app_checkpoint", root.pk, source=(
        "(SELECT g, nextval(pg_get_serial_sequence('runs_app_checkpoint', 'id')) AS nid "
        "FROM generate_series(1, %(count)s) AS g ORDER BY g) AS s"), overrides={
        "id": "s.nid", "depth": "s.g", "parent_id": "COALESCE(lag(s.nid) OVER (ORDER BY s.g), t.id)",
        "cursor": "jsonb_build_object('n', s.g)", "created_at": "t.created_at + s.g * interval '1 millisecond'"},
        count=shape.lineage - 1)
    _progress(started, f"a chain of {shape.lineage:,} checkpoints")
    bulk.execute("UPDATE runs_app_run SET last_checkpoint_id = %s WHERE id = %s", [ids[-1] if ids else root.pk,
                                                                                  lineage_run.pk])

    template = memory_write(project=project, actor=Actor.for_agent("bench"), scope="agent", scope_key="agent-0",
                            content="note 0 on lighthouse and keeper", source_session_id=session.pk,
                            source_item_seq=1).record
    assert template is not None
    words = "ARRAY[" + ", ".join(f"'{w}'" for w in WORDS) + "]"
    content = (f"'note ' || g || ' on ' || ({words})[1 + mod(g, {len(WORDS)})] || ' and ' || "
               f"({words})[1 + mod(g / {len(WORDS)}, {len(WORDS)})]")
    bulk.clone("memory_app_memoryrecord", template.pk, count=shape.memory - 1, overrides={
        "scope_key": f"'agent-' || (g / {SCOPE_SIZE})",
        "content": content,
        "content_hash": f"encode(sha256(convert_to({content}, 'UTF8')), 'hex')",
        "created_at": "t.created_at - g * interval '1 second'",
        "updated_at": "t.updated_at - g * interval '1 second'",
        "last_confirmed_at": "NULL",
    })
    bulk.analyze("sessions_app_sessionitem", "runs_app_run", "runs_app_approvalrequest", "runs_app_checkpoint",
                 "memory_app_memoryrecord")
    print(f"  built fixture {slug} ({shape}) in {time.perf_counter() - started:.0f} s", flush=True)
    return Fixture(shape, project.pk, session.pk, lineage_run.pk, shape.runs)


def _progress(started: float, what: str) -> None:
    print(f"    {time.perf_counter() - started:6.0f} s: {what}", flush=True)


def _filler_sessions(project: Project, items: int, started: float) -> None:
    """`items` more items in the project, TIMELINE_MAX ~1 KB items a session (one statement and one
    transaction a session, with its last_seq: a build cut short leaves whole sessions, which _existing sums)."""
    if items <= 0:
        return
    template = session_create(project=project, role="writer", memory_policy="bounded", ref="growth-filler-0")
    first = session_items_append(project=project, session_id=template.pk, items=[FILLER_ITEM])[0]
    with transaction.atomic():
        bulk.clone("sessions_app_sessionitem", first.pk, count=min(items, TIMELINE_MAX) - 1, overrides={
            "seq": "g + 1", "created_at": "t.created_at + g * interval '1 millisecond'"})
        bulk.execute("UPDATE sessions_app_session SET last_seq = %s WHERE id = %s",
                     [min(items, TIMELINE_MAX), template.pk])
    for done in range(TIMELINE_MAX, items, TIMELINE_MAX):
        count = min(TIMELINE_MAX, items - done)
        with transaction.atomic():
            (session_id,) = bulk.clone("sessions_app_session", template.pk, count=1, overrides={
                "last_seq": "0", "ref": "'growth-filler-' || %(n)s"}, params={"n": done // TIMELINE_MAX})
            bulk.clone("sessions_app_sessionitem", first.pk, count=count, overrides={
                "session_id": "%(session)s", "seq": "g",
                "created_at": "t.created_at + (g + %(done)s) * interval '1 millisecond'"},
                params={"session": session_id, "done": done})
            bulk.execute("UPDATE sessions_app_session SET last_seq = %s WHERE id = %s", [count, session_id])
        if (done // TIMELINE_MAX) % 10 == 9:
            _progress(started, f"{done + count:,} filler items")


def _clone_waiting_runs(run_id: int, approval_id: int, count: int, offset: int = 0) -> list[tuple[int, int]]:
    """`count` copies of a run waiting at its gate: each with its own checkpoint and pending approval
    (created `offset` + 1.. milliseconds after the template, so batches of copies stay in order)."""
    if count <= 0:
        return []
    runs = bulk.clone("runs_app_run", run_id, count=count, overrides={
        "pending_approval_id": "NULL", "last_checkpoint_id": "NULL", "ref": "''",
        "created_at": "t.created_at + (g + %(offset)s) * interval '1 millisecond'"}, params={"offset": offset})
    checkpoint_id = Run.objects.values_list("last_checkpoint_id", flat=True).get(pk=run_id)
    bulk.clone("runs_app_checkpoint", checkpoint_id, over=runs, overrides={"run_id": "s.g"})
    bulk.clone("runs_app_approvalrequest", approval_id, over=runs, overrides={
        "run_id": "s.g", "idempotency_key": "t.idempotency_key || '-' || s.g",
        "created_at": "t.created_at + (s.ord + %(offset)s) * interval '1 millisecond'"}, params={"offset": offset})
    bulk.execute("""
        UPDATE runs_app_run r SET pending_approval_id = a.id, last_checkpoint_id = c.id
          FROM runs_app_approvalrequest a, runs_app_checkpoint c
         WHERE a.run_id = r.id AND c.run_id = r.id AND r.id = ANY(%(runs)s)""", {"runs": runs})
    with connection.cursor() as cursor:  # one array parameter, not an IN list of `count` values
        cursor.execute("SELECT id, pending_approval_id FROM runs_app_run WHERE id = ANY(%s) ORDER BY id", [runs])
        return [tuple(row) for row in cursor.fetchall()]


# --- 8. growth ------------------------------------------------------------------------------------


def _operations(f: Fixture, client: Client) -> dict[str, Callable[[], Any]]:
    def page(url: str) -> Callable[[], Any]:
        def get() -> None:
            response = client.get(url)
            if response.status_code != 200:
                raise RuntimeError(f"{url} answered {response.status_code}")
        return get

    last_checkpoint = Run.objects.values_list("last_checkpoint_id", flat=True).get(pk=f.lineage_run_id)
    # A cursor halfway down the runs list (newest first): a deep page, reached by seeking, not by offset.
    middle = Run.objects.filter(project_id=f.project_id).order_by("-created_at", "-id").values_list(
        "created_at", "id")[f.shape.runs // 2]
    deep = seek_cursor(*middle)
    entry = AuditEntry.objects.filter(project_id=f.project_id).order_by("-created_at", "-id").values_list(
        "created_at", "id")[f.shape.audit // 2]
    return {
        "session timeline page": page(f"/sessions/{f.session_id}/"),
        "API newest 50 items": page(f"/api/v1/sessions/{f.session_id}/items/latest/?limit=50"),
        "API lineage (up to 1,000)": page(f"/api/v1/checkpoints/{last_checkpoint}/lineage/"),
        "approvals inbox page": page("/approvals/"),
        "run lineage page": page(f"/runs/{f.lineage_run_id}/lineage/"),
        "runs list page": page("/runs/"),
        "runs list, a deep page of a status": page(f"/runs/?status=waiting_approval&after={deep}"),
        "audit log page": page("/audit/"),
        "audit log, a deep page of an action": page(f"/audit/?action=memory.accepted&after={seek_cursor(*entry)}"),
        "latest checkpoint read": lambda: latest_checkpoint(f.lineage_run_id, f.project_id),
        "memory retrieval (agent scope, query)": lambda: _retrieve(f),
    }


def _retrieve(f: Fixture) -> None:
    found = memory_retrieve(project=f.project_id, scope="agent", scope_key="agent-0", query=QUERY, k=10)
    if not found:
        raise RuntimeError("the scoped retrieval found nothing")


class QueryCounter:
    """Counts statements as they run (CaptureQueriesContext loses a request's queries: Django's
    request_started signal resets the log it reads)."""

    def __init__(self) -> None:
        self.sql: list[str] = []

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.sql.append(sql)
        return execute(sql, params, many, context)


def _timed(op: Callable[[], Any], budget: float) -> tuple[array, int]:
    """At least 5 calls and `budget` seconds of them (2,000 at most), after a warm call and a counted one."""
    op()  # warm: templates compiled, plans cached
    counter = QueryCounter()
    with connection.execute_wrapper(counter):
        op()
    times = array("d")
    end = time.perf_counter() + budget
    while (time.perf_counter() < end or len(times) < 5) and len(times) < 2000:
        t0 = time.perf_counter()
        op()
        times.append((time.perf_counter() - t0) * 1000)
    return times, len(counter.sql)


def scenario_growth(settings: Settings) -> list[Measure]:
    """Each operation on the small and the large fixture in turns (`settings.rounds` of them, as measure_turns
    does): the machine's load drifts, and both sizes see the same drift. Then the retention rows."""
    turn = max(0.5, settings.duration / 4) / settings.rounds
    fixtures = [fixture(Shape.of(size)) for size in (SMALL, settings.growth_size)]
    clients = []
    for f in fixtures:
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(reviewer(Project.objects.get(pk=f.project_id)))
        clients.append(_operations(f, client))
    times: dict[tuple[str, int], array] = {}
    queries: dict[tuple[str, int], int] = {}
    for name in clients[0]:
        for _ in range(settings.rounds):
            for f, ops in zip(fixtures, clients, strict=True):
                took, counted = _timed(ops[name], turn)
                times.setdefault((name, f.rows), array("d")).extend(took)
                queries[(name, f.rows)] = counted
    out: list[Measure] = []
    for f in fixtures:
        for name in clients[0]:
            took = times[(name, f.rows)]
            size = f.memory if name.startswith("memory") else f.rows
            out.append(Measure("8 growth", f"{name} @ {size:,}", 1, len(took), sum(took) / 1000,
                               statistics.median(took), _percentile(array("d", sorted(took)), 0.99), 0.0,
                               extra={"queries": queries[(name, f.rows)]}))
    small, large = fixtures
    lines = [f"## 8 growth: the {large.rows:,} fixture against the {small.rows:,} one", "",
             "| operation | p50 ms @ small | p50 ms @ large | time ratio | target | queries small / large | met |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    all_met = True
    for name in clients[0]:
        t_small, t_large = (statistics.median(times[(name, f.rows)]) for f in fixtures)
        q_small, q_large = (queries[(name, f.rows)] for f in fixtures)
        ratio = t_large / t_small if t_small else float("inf")
        met = ratio <= RATIO_TARGET and q_small == q_large
        all_met &= met
        lines.append(f"| {name} | {t_small:.2f} | {t_large:.2f} | {ratio:.2f}x | <= {RATIO_TARGET}x | "
                     f"{q_small} / {q_large} | {'yes' if met else '**no**'} |")
    lines += ["", f"small: {_describe(small.shape)}; large: {_describe(large.shape)}. Target: time ratio at "
              f"most {RATIO_TARGET}x and the same number of statements; {settings.rounds} interleaved turns "
              "of each operation at each size.", ""]
    out[-1].extra["section"] = "\n".join(lines)
    out[-1].extra["targets_met"] = all_met
    print(out[-1].extra["section"], flush=True)
    if not settings.growth_retention:
        return out
    retention = scenario_retention(settings)
    print(retention[-1].extra["section"], flush=True)
    return out + retention


def _describe(shape: Shape) -> str:
    return (f"{shape.items:,} items ({shape.timeline:,} in the timeline session), a {shape.lineage:,}-checkpoint "
            f"lineage, {shape.runs:,} waiting runs (the inbox, the runs list), {shape.memory:,} memory records, "
            f"{shape.audit:,} audit entries")


# --- 9. memory over a soak ------------------------------------------------------------------------


def _login(port: int, username: str, password: str) -> str:
    """Log in through the console's form; returns the Cookie header for later requests."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/login/")
    response = conn.getresponse()
    response.read()
    cookies = _cookies(response)
    body = urllib.parse.urlencode({"username": username, "password": password,
                                   "csrfmiddlewaretoken": cookies["csrftoken"]})
    conn.request("POST", "/login/", body=body, headers={
        "Content-Type": "application/x-www-form-urlencoded", "Cookie": _cookie_header(cookies),
        "Referer": f"http://127.0.0.1:{port}/login/"})
    response = conn.getresponse()
    response.read()
    cookies.update(_cookies(response))
    if response.status != 302 or "sessionid" not in cookies:
        raise RuntimeError(f"login answered {response.status}")
    conn.close()
    return _cookie_header(cookies)


def _cookies(response: http.client.HTTPResponse) -> dict[str, str]:
    found = {}
    for header, value in response.getheaders():
        if header.lower() == "set-cookie":
            name, _, rest = value.partition("=")
            found[name] = rest.split(";", 1)[0]
    return found


def _cookie_header(cookies: dict[str, str]) -> str:
    return "; ".join(f"{k}={v}" for k, v in cookies.items())


def _soak_client(index: int, port: int, requests_: list[tuple[str, str, bytes | None, dict]], end: float,
                 out: Any) -> None:
    """One keep-alive connection cycling through the mixed requests at SOAK_RATE until `end`.

    Paced, not flat out: a soak is steady traffic, and the resume worker shares the two cores.
    """
    done, failed, first_error = 0, 0, ""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        k = index
        next_at = time.time()
        while time.time() < end:
            next_at += 1.0 / SOAK_RATE
            time.sleep(max(0.0, next_at - time.time()))
            method, path, body, headers = requests_[k % len(requests_)]
            k += 1
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            payload = response.read()
            if response.status >= 300:
                failed += 1
                first_error = first_error or f"{method} {path}: {response.status} {payload[:200]!r}"
            done += 1
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        first_error = first_error or f"{type(exc).__name__}: {exc}"
        failed += 1
    finally:
        out.put((done, failed, first_error))
        out.close()
        out.join_thread()  # flush the report before the hard exit below
        os._exit(0)


def _soak_requests(f: Fixture, token: str, cookie: str, append_session: int, run_id: int) -> list:
    """One cycle of the soak's mix: mostly agent API calls, and each console page once."""
    page = {"Cookie": cookie}
    api = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    item = json.dumps({"items": [ITEM]}).encode()
    append = ("POST", f"/api/v1/sessions/{append_session}/items/", item, api)
    return [
        append,
        ("GET", f"/api/v1/sessions/{append_session}/", None, api),
        ("GET", f"/sessions/{f.session_id}/", None, page),
        append,
        ("GET", f"/api/v1/runs/{run_id}/", None, api),
        ("GET", f"/api/v1/sessions/{append_session}/items/", None, api),
        append,
        ("GET", "/approvals/", None, page),
        ("GET", f"/api/v1/runs/{run_id}/events/", None, api),
        append,
        ("GET", f"/api/v1/checkpoints/?run={run_id}", None, api),
        ("GET", f"/api/v1/sessions/{append_session}/items/latest/?limit=50", None, api),
        ("GET", f"/runs/{f.lineage_run_id}/lineage/", None, page),
        append,
        ("GET", "/api/v1/approvals/?status=pending", None, api),
    ]


class RssSampler:
    def __init__(self, pids: Callable[[], dict[str, int]]) -> None:
        self.pids = pids
        self.samples: dict[str, list[tuple[float, float]]] = {}

    def sample(self) -> None:
        now = time.time()
        for name, pid in self.pids().items():
            self.samples.setdefault(name, []).append((now, procs.rss_mb(pid)))

    def at(self, name: str, when: float) -> float:
        """The sample closest to `when`."""
        return min(self.samples[name], key=lambda s: abs(s[0] - when))[1]

    def peak(self, name: str) -> float:
        return max(v for _, v in self.samples[name])


def _collect(pending: list[tuple[int, int]], done: list[int]) -> list[tuple[int, int]]:
    """Move the resumed runs of `pending` (run id, checkpoint before) to `done`; returns the rest.

    One statement for all of them: the poll shares the cores with the worker."""
    now = resumed_of(pending)
    done += [run_id for run_id, _ in pending if run_id in now]
    return [(run_id, before) for run_id, before in pending if run_id not in now]


class Feeder:
    """Decides the approvals of a pool of waiting runs, keeping up to `in_flight` decided and not yet
    resumed; a run not resumed within RESUME_BOUND of its decision goes to `lost`."""

    def __init__(self, project: Project, user: Any, pool: list[tuple[int, int]]) -> None:
        self.project, self.user, self.pool = project, user, pool
        self.next = 0
        self.pending: list[tuple[int, int]] = []
        self.decided_at: dict[int, float] = {}
        self.done: list[int] = []
        self.lost: list[int] = []

    def step(self, in_flight: int, feed: bool) -> None:
        self.pending = _collect(self.pending, self.done)
        now = time.time()
        self.lost += [rid for rid, _ in self.pending if now - self.decided_at[rid] > RESUME_BOUND]
        self.pending = [p for p in self.pending if p[0] not in self.lost]
        while feed and len(self.pending) < in_flight and self.next < len(self.pool):
            rid, aid = self.pool[self.next]
            self.next += 1
            before = Run.objects.values_list("last_checkpoint_id", flat=True).get(pk=rid)
            approval_decide(project=self.project, approval_id=aid, actor=Actor.for_user(self.user), decision="approve")
            self.decided_at[rid] = time.time()
            self.pending.append((rid, before))


def _waiting_pool(project: Project, count: int, exclude: Collection[int] = ()) -> list[tuple[int, int]]:
    """`count` runs of `project` waiting for a pending approval: those a previous soak left, then copies."""
    found = [w for w in Run.objects.filter(project=project, status=RunStatus.WAITING_APPROVAL,
                                           pending_approval__status="pending")
             .order_by("id").values_list("id", "pending_approval_id")[:count + len(exclude)]
             if w[0] not in exclude][:count]
    if len(found) < count:
        template = waiting_run(project, 0)
        found += [template, *_clone_waiting_runs(*template, count - len(found) - 1)]
    return found


def scenario_memory(settings: Settings) -> list[Measure]:
    soak = settings.soak_seconds
    resumes_wanted = settings.resumes
    f = fixture(Shape.of(GROWTH_SIZE))
    # The soak's own writes (appends, runs to resume) go to a project of their own, so the fixture
    # stays as scenario 8 measures it; the reviewer sees both.
    project = Project.objects.get_or_create(slug="bench-soak", defaults={"name": "bench-soak"})[0]
    user = reviewer(Project.objects.get(pk=f.project_id), project)
    token = agent_token(project.slug)
    append_session = session_create(project=project, role="writer", memory_policy="bounded").pk
    phase1 = Feeder(project, user, _waiting_pool(project, resumes_wanted))
    pids: dict[str, int] = {}
    sampler = RssSampler(lambda: pids)
    worker = procs.start_celery_worker(name="bench-soak-worker")
    web: procs.Server | None = None
    soak_clients: list[BaseProcess] = []
    try:
        pids["resume worker"] = worker.proc.pid
        # Phase 1: the resume worker alone, resuming `resumes_wanted` runs back to back.
        phase1_start = time.time()
        phase1_cap = phase1_start + max(600.0, resumes_wanted * 0.5)  # ~0.05 s each is expected
        next_sample = 0.0
        while len(phase1.done) < resumes_wanted and not phase1.lost and time.time() < phase1_cap:
            if time.time() >= next_sample:
                sampler.sample()
                next_sample = time.time() + 1.0
            phase1.step(PHASE1_IN_FLIGHT, feed=True)
            time.sleep(0.02)
        phase1_seconds = time.time() - phase1_start
        sampler.sample()
        after_phase1 = procs.rss_mb(worker.proc.pid)
        # Phase 2's pool: more than the worker could resume in the soak at phase 1's pace.
        rate = len(phase1.done) / phase1_seconds if phase1_seconds else 0.0
        taken = {rid for rid, _ in phase1.pool}
        soak_feed = Feeder(project, user, _waiting_pool(project, int(rate * soak * 1.25) + 20, taken))

        web = procs.start_gunicorn(workers=BEST["workers"], threads=BEST["threads"], pool=BEST["pool"],
                                   name="bench-soak-web")
        cookie = _login(web.port, user.username, REVIEWER_PASSWORD)
        requests_ = _soak_requests(f, token, cookie, append_session, phase1.pool[0][0])
        for i, pid in enumerate(web.worker_pids()):
            pids[f"web worker {i + 1}"] = pid
        connections.close_all()
        ctx = mp.get_context("fork")
        queue = ctx.Queue()
        start = time.time()
        end = start + soak
        warm_until = start + max(5.0, soak * 0.1)
        soak_clients = [ctx.Process(target=_soak_client, args=(i, web.port, requests_, end, queue))
                        for i in range(SOAK_CLIENTS)]
        for proc in soak_clients:
            proc.start()
        # Phase 2: the soak; the worker resumes as part of the mix, a few decided approvals in flight.
        # After the soak the ones in flight land (each within RESUME_BOUND, or it is lost).
        while time.time() < end or soak_feed.pending:
            now = time.time()
            if now >= next_sample:
                sampler.sample()
                next_sample = now + 1.0
            soak_feed.step(SOAK_IN_FLIGHT, feed=now < end)
            time.sleep(0.05)
        results = [queue.get(timeout=120) for _ in soak_clients]
        for proc in soak_clients:
            proc.join(30)
    finally:
        for proc in soak_clients:
            if proc.is_alive():
                proc.kill()
        if web is not None:
            web.stop()
        worker.stop()
    http_done = sum(r[0] for r in results)
    http_failed = sum(r[1] for r in results)
    errors = [r[2] for r in results if r[2]]
    lost = phase1.lost + soak_feed.lost
    pool_ran_out = soak_feed.next >= len(soak_feed.pool)
    lines = ["## 9 memory: the resume worker after its resumes, then a soak", "",
             f"Phase 1: the resume worker (solo pool) resumed **{len(phase1.done):,} of {resumes_wanted:,}** "
             f"runs in {phase1_seconds:.0f} s ({rate:.1f}/s; {PHASE1_IN_FLIGHT} decided approvals queued ahead "
             f"of it, nothing else served); its RSS after them: {after_phase1:.0f} MB.", "",
             f"Phase 2: {soak:g} s of mixed traffic ({SOAK_CLIENTS} keep-alive clients at up to {SOAK_RATE:g} "
             "requests/s each: agent API appends and reads, each console page (timeline, inbox, lineage) "
             f"once in 14 requests) against gunicorn ({BEST['workers']} workers, {BEST['threads']} threads) "
             f"on the {f.rows:,}-row fixture: {http_done:,} requests ({http_failed} failed); the resume worker "
             f"resumed {len(soak_feed.done):,} more runs in the mix ({SOAK_IN_FLIGHT} in flight"
             f"{'; its pool ran out' if pool_ran_out else ''}). Growth is from the end of the soak's warm-up "
             f"({warm_until - start:.0f} s) to the end of the soak; the peak is over both phases.", "",
             "| process | after phase 1 MB | after warm-up MB | end of soak MB | peak MB | growth | "
             f"under {RSS_LIMIT_MB:.0f} MB and < {GROWTH_LIMIT:.0%} |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    # Every asked resume done in phase 1, none decided and never resumed, every request answered.
    all_ok = len(phase1.done) == resumes_wanted and not lost and http_failed == 0
    out: list[Measure] = []
    for name in sorted(sampler.samples, key=lambda n: (n == "resume worker", n)):
        base, last, peak = sampler.at(name, warm_until), sampler.at(name, end), sampler.peak(name)
        growth = last / base - 1 if base else float("inf")
        ok = peak < RSS_LIMIT_MB and growth < GROWTH_LIMIT
        all_ok &= ok
        first = f"{after_phase1:.0f}" if name == "resume worker" else "-"
        lines.append(f"| {name} | {first} | {base:.0f} | {last:.0f} | {peak:.0f} | {growth:+.1%} | "
                     f"{'yes' if ok else '**no**'} |")
        out.append(Measure("9 memory soak", name, 1, 0, soak, 0.0, 0.0, peak, extra={"growth": f"{growth:+.1%}"}))
    if lost:
        lines += ["", f"Decided but not resumed within {RESUME_BOUND:g} s: runs {lost[:10]}"]
    if errors:
        lines += ["", f"First error: `{errors[0]}`"]
    out[-1].extra.update({"check": all_ok, "resumes": len(phase1.done), "resumes_s": f"{phase1_seconds:.0f}",
                          "soak_resumes": len(soak_feed.done), "requests": http_done})
    out[-1].extra["section"] = "\n".join(lines) + "\n"
    return out


SCENARIOS: dict[str, Any] = {"8": scenario_growth, "9": scenario_memory}
