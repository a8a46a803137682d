"""Scenario L: LangGraph Server beside ours, over HTTP, the same client harness on both sides (issue 35, section 1).

Ours: the headline's server (scenarios_api.SERVER: granian, 2 WSGI workers, a real agent token, an
Idempotency-Key on every POST) and, for the cycle, one solo `celery -A config worker`. Theirs: LangGraph Server
twice (bench/langgraph_server.py: `langgraph dev`'s in-memory runtime, and the PostgreSQL runtime), serving
bench/langgraph_server_graph.py (work -> interrupt() for review -> finish, with a `messages` channel). Each client
is a process on one keep-alive `http.client` connection; the three subjects of a row take turns
(`measure_turns`); ~1 KB payloads on both sides:

    L1 checkpoint write     ours POST /api/v1/checkpoints/ continuing the client's chain
                            theirs POST /threads/{id}/state with ~1 KB values
    L2 conversation append  ours POST /api/v1/sessions/{id}/items/ (one item)
                            theirs POST /threads/{id}/state adding one message
    L3 latest checkpoint    ours GET /api/v1/checkpoints/?run={id}&limit=1; theirs GET /threads/{id}/state (~1 KB)
    L3 newest 50 items      ours GET .../items/latest/?limit=50 of 1,000; theirs GET /threads/{id}/state (50 messages)
    L4 history of 1,000     ours GET /api/v1/checkpoints/{id}/lineage/; theirs POST /threads/{id}/history limit 1000
    L5 human in the loop    ours: a run, its checkpoint, the approval requested; the reviewer's decision; resumed
                            by the worker (the agent polls its run); theirs: POST /threads, runs/wait to the
                            interrupt(), runs/wait with command={"resume": ...}

Target (issue 35): ours >= 2x the in-memory server's ops/s on every row at 8 clients (4 for the cycle), and the
cycle's p50 at most half of theirs; the PostgreSQL runtime's ratios are reported beside them.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, cast

import orjson

from bench import langgraph_server, procs
from bench.core import Measure, Settings, Subject, measure_turns
from bench.scenarios_api import (
    FLOOR,
    ITEM_1K,
    STATE_1K,
    TEXT_1K,
    _analyze,
    _floor_subject,
    _Http,
    _start_floor,
    _start_server,
    append_subject,
    checkpoint_chain_subject,
    lineage_fixture,
    lineage_intact,
)
from bench.scenarios_http import agent_token
from bench.scenarios_store import _gap_free, _new_run, _new_session, _project, chain_intact
from bench.scenarios_worker import resume_check, reviewer
from runs_app.models import Checkpoint, Run
from runs_app.services import checkpoint_create
from sessions_app.models import SessionItem
from sessions_app.services import NewItem, session_items_append

OURS = "harness API"
TARGET = 2.0  # ours / the in-memory server's ops/s, at TARGET_CLIENTS
TARGET_CLIENTS = 8
CYCLE_CLIENTS = 4  # the cycle's most clients (one worker process on ours, one job slot on theirs)
CYCLE_P50_TARGET = 0.5  # ours' cycle p50 at most this share of theirs
POLL_SECONDS = 0.005  # how often our agent asks whether its run was resumed (it has no push yet: issue 35, part 3)
HISTORY = 1000  # their history's maximum limit, and our lineage's depth

MESSAGE_1K = {"role": "user", "content": TEXT_1K}  # their message: the same text as our ITEM_1K
PUBLISH = {"tool": "publish_chapter", "arguments": {"chapter": 1, "title": "The Lighthouse"}}


# --- their side -------------------------------------------------------------------------------------

def _lg_http(port: int) -> _Http:
    return _Http(port, None)  # their dev/self-hosted default: no auth


def _lg_threads(port: int, n: int, **metadata: Any) -> list[str]:
    """n threads bound to the graph (a state update needs the thread's graph_id)."""
    http = _lg_http(port)
    body = orjson.dumps({"metadata": {"graph_id": langgraph_server.GRAPH_ID, **metadata}})
    return [orjson.loads(http.post("/threads", body, expected=200))["thread_id"] for _ in range(n)]


def _lg_update(http: _Http, thread: str, values: dict[str, Any]) -> None:
    http.post(f"/threads/{thread}/state", orjson.dumps({"values": values}), expected=200)


def _lg_state(port: int, thread: str) -> dict[str, Any]:
    return orjson.loads(_lg_http(port).get(f"/threads/{thread}/state"))


def _lg_subject(label: str, port: int, threads: list[str], op: Any) -> Subject:
    """Their client i on threads[i % len(threads)]: `op(http, thread)` per operation."""
    def setup(i: int) -> dict:
        return {"http": _lg_http(port), "thread": threads[i % len(threads)]}

    return Subject(label, setup, lambda s: op(s["http"], s["thread"]))


def _steps(port: int, threads: list[str]) -> int:
    """State updates stored across `threads`: each one's newest checkpoint's step counts from 0 at the first."""
    return sum(_lg_state(port, t)["metadata"]["step"] + 1 for t in threads)


def _history_intact(answer: bytes) -> bool:
    states = orjson.loads(answer)
    return len(states) == HISTORY and all(
        a["parent_checkpoint"]["checkpoint_id"] == b["checkpoint"]["checkpoint_id"]
        for a, b in zip(states, states[1:], strict=False))


# --- the rows ---------------------------------------------------------------------------------------

class _Row:
    """What every row gets: our server and token, and their servers (label -> port) that started."""

    def __init__(self, settings: Settings, port: int, token: str, peers: dict[str, int], floor_port: int) -> None:
        self.settings, self.port, self.token, self.peers = settings, port, token, peers
        self.floor_port = floor_port  # bench/floor_app.py: what one HTTP write costs here at the least

    def turns(self, scenario: str, ours: Subject, theirs: dict[str, Subject], clients: int) -> list[Measure]:
        return measure_turns(scenario, [ours, *theirs.values()], clients=clients, settings=self.settings)


def _l1_checkpoint(row: _Row) -> list[Measure]:
    project = _project()
    body = {"completed": STATE_1K["completed"], "notes": STATE_1K["notes"]}
    out: list[Measure] = []
    for clients in row.settings.clients:
        runs = [_new_run(project) for _ in range(clients)]
        threads = {label: _lg_threads(port, clients) for label, port in row.peers.items()}
        theirs = {label: _lg_subject(label, port, threads[label], lambda h, t: _lg_update(h, t, body))
                  for label, port in row.peers.items()}
        floor_body = orjson.dumps({"run": runs[0], "parent": 1, "label": "step", "state": STATE_1K,
                                   "cursor": {"node": "draft"}})
        theirs[FLOOR] = _floor_subject(row.floor_port, floor_body)  # not theirs: the bound, taking turns with them
        measures = row.turns("L1 checkpoint write", checkpoint_chain_subject(row.port, row.token, runs), theirs,
                             clients)
        ours, *peers = (m for m in measures if m.subject != FLOOR)
        ours.extra["check"] = all(chain_intact(run) for run in runs) and \
            Checkpoint.objects.filter(run_id__in=runs).count() == ours.extra["acknowledged"]
        for m in peers:
            m.extra["check"] = _steps(row.peers[m.subject], threads[m.subject]) == m.extra["acknowledged"]
        out += measures
    return out


def _l2_append(row: _Row) -> list[Measure]:
    project = _project()
    ours_body = orjson.dumps({"items": [ITEM_1K]})
    out: list[Measure] = []
    for clients in row.settings.clients:
        sessions = [_new_session(project) for _ in range(clients)]
        threads = {label: _lg_threads(port, clients) for label, port in row.peers.items()}
        theirs = {label: _lg_subject(label, port, threads[label],
                                     lambda h, t: _lg_update(h, t, {"messages": [MESSAGE_1K]}))
                  for label, port in row.peers.items()}
        measures = row.turns("L2 conversation append", append_subject(row.port, row.token, sessions, ours_body),
                             theirs, clients)
        ours, *peers = measures
        ours.extra["check"] = SessionItem.objects.filter(session_id__in=sessions).count() == \
            ours.extra["acknowledged"] and _gap_free(sessions)
        for m in peers:
            lengths = [len(_lg_state(row.peers[m.subject], t)["values"]["messages"]) for t in threads[m.subject]]
            m.extra["check"] = sum(lengths) == m.extra["acknowledged"]
            m.extra["messages_per_thread"] = max(lengths)  # their update rewrites the whole channel: cost grows
        out += measures
    return out


def _get_subject(label: str, port: int, token: str | None, path: str) -> Subject:
    def setup(i: int) -> dict:
        return {"http": _Http(port, token)}

    def get(s: dict) -> None:
        s["http"].get(path)

    return Subject(label, setup, get)


def _l3_latest(row: _Row) -> list[Measure]:
    """The latest checkpoint (a ~1 KB state) and the newest 50 ~1 KB items, against their state read of a thread
    holding the same: ~1 KB values, and 50 messages (their read returns the whole thread, so it has only 50)."""
    project = _project()
    rid = _new_run(project)
    last: int | None = None
    for n in range(10):
        last = checkpoint_create(project=project.pk, run_id=rid, parent_id=last, state=STATE_1K, cursor={"n": n}).pk
    sid = _new_session(project)
    for _ in range(2):
        session_items_append(project=project, session_id=sid, items=cast("list[NewItem]", [ITEM_1K] * 500))
    state_threads, message_threads = {}, {}
    for label, port in row.peers.items():
        http = _lg_http(port)
        state_threads[label], message_threads[label] = _lg_threads(port, 2)
        for _ in range(10):
            _lg_update(http, state_threads[label], {"completed": STATE_1K["completed"], "notes": STATE_1K["notes"]})
        for _ in range(50):
            _lg_update(http, message_threads[label], {"messages": [MESSAGE_1K]})
    _analyze()
    checkpoint_path = f"/api/v1/checkpoints/?run={rid}&limit=1"
    items_path = f"/api/v1/sessions/{sid}/items/latest/?limit=50"
    out: list[Measure] = []
    for clients in row.settings.clients:
        measures = row.turns("L3 latest checkpoint", _get_subject(OURS, row.port, row.token, checkpoint_path), {
            label: _get_subject(label, port, None, f"/threads/{state_threads[label]}/state")
            for label, port in row.peers.items()}, clients)
        answer = orjson.loads(_Http(row.port, row.token).get(checkpoint_path))
        measures[0].extra["check"] = [c["id"] for c in answer["results"]] == [last]
        for m in measures[1:]:
            state = _lg_state(row.peers[m.subject], state_threads[m.subject])
            m.extra["check"] = state["values"].get("notes") == TEXT_1K and state["metadata"]["step"] == 9
        out += measures
        measures = row.turns("L3 newest 50 items", _get_subject(OURS, row.port, row.token, items_path), {
            label: _get_subject(label, port, None, f"/threads/{message_threads[label]}/state")
            for label, port in row.peers.items()}, clients)
        answer = orjson.loads(_Http(row.port, row.token).get(items_path))
        measures[0].extra["check"] = [item["seq"] for item in answer["items"]] == list(range(951, 1001))
        for m in measures[1:]:
            messages = _lg_state(row.peers[m.subject], message_threads[m.subject])["values"]["messages"]
            m.extra["check"] = len(messages) == 50 and all(msg["content"] == TEXT_1K for msg in messages)
        out += measures
    return out


def _l4_history(row: _Row) -> list[Measure]:
    project = _project()
    last = lineage_fixture(project, HISTORY)
    threads = {}
    for label, port in row.peers.items():
        http = _lg_http(port)
        (threads[label],) = _lg_threads(port, 1)
        for _ in range(HISTORY):
            _lg_update(http, threads[label], {"completed": STATE_1K["completed"], "notes": STATE_1K["notes"]})
    _analyze()
    path = f"/api/v1/checkpoints/{last}/lineage/"
    body = orjson.dumps({"limit": HISTORY})

    def history(http: _Http, thread: str) -> None:
        http.post(f"/threads/{thread}/history", body, expected=200)

    out: list[Measure] = []
    for clients in row.settings.clients:
        measures = row.turns("L4 history of 1,000", _get_subject(OURS, row.port, row.token, path), {
            label: _lg_subject(label, port, [threads[label]], history) for label, port in row.peers.items()},
            clients)
        measures[0].extra["check"] = lineage_intact(_Http(row.port, row.token).get(path), HISTORY)
        for m in measures[1:]:
            answer = _lg_http(row.peers[m.subject]).post(f"/threads/{threads[m.subject]}/history", body,
                                                         expected=200)
            m.extra["check"] = _history_intact(answer)
        out += measures
    return out


# --- L5: the human-in-the-loop cycle ---------------------------------------------------------------------

def _ours_cycle_subject(port: int, token: str, reviewer_token: str, sessions: list[int]) -> Subject:
    """The agent (its token) runs to the gate and asks; the reviewer (a personal token) approves; the worker
    resumes the run (publish_chapter through the demo's adapter) and the agent sees it running again."""
    def setup(i: int) -> dict:
        return {"agent": _Http(port, token), "reviewer": _Http(port, reviewer_token), "session": sessions[i]}

    def cycle(s: dict) -> None:
        agent: _Http = s["agent"]
        run = orjson.loads(agent.post("/api/v1/runs/", orjson.dumps({"session": s["session"],
                                                                     "cursor": {"node": "publish"}})))
        rid = run["id"]
        agent.post(f"/api/v1/runs/{rid}/transition/", orjson.dumps(
            {"to": "running", "expected_version": run["version"], "lease_owner": None}), expected=200)
        agent.post("/api/v1/checkpoints/", orjson.dumps({
            "run": rid, "label": "before publish", "cursor": {"node": "publish"},
            "state": {"completed_nodes": ["outline", "draft"]}, "pending_gate": PUBLISH}))
        approval = orjson.loads(agent.post(f"/api/v1/runs/{rid}/approvals/", orjson.dumps({
            **PUBLISH, "idempotency_key": f"bench:{uuid.uuid4().hex}", "risk": "high", "reason": "bench",
            "lease_owner": None})))
        s["reviewer"].post(f"/api/v1/approvals/{approval['id']}/decision/", orjson.dumps(
            {"decision": "approve", "expected_version": approval["version"]}), expected=200)
        deadline = time.monotonic() + 30
        while True:
            seen = orjson.loads(agent.get(f"/api/v1/runs/{rid}/"))
            if seen["status"] == "running" and seen.get("bound_result"):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"run {rid} was not resumed within 30 s: {seen['status']}")
            time.sleep(POLL_SECONDS)

    return Subject(OURS, setup, cycle)


def _lg_cycle_subject(label: str, port: int, tag: str) -> Subject:
    """A fresh thread per cycle: run to the interrupt(), then resume it with the decision."""
    new_thread = orjson.dumps({"metadata": {"bench": tag}})
    start = orjson.dumps({"assistant_id": langgraph_server.GRAPH_ID, "input": {"completed": ["outline"]}})
    resume = orjson.dumps({"assistant_id": langgraph_server.GRAPH_ID, "command": {"resume": {"decision": "approve"}}})

    def setup(i: int) -> dict:
        return {"http": _lg_http(port)}

    def cycle(s: dict) -> None:
        http: _Http = s["http"]
        thread = orjson.loads(http.post("/threads", new_thread, expected=200))["thread_id"]
        paused = orjson.loads(http.post(f"/threads/{thread}/runs/wait", start, expected=200))
        if not paused.get("__interrupt__"):
            raise RuntimeError(f"their run did not stop at the interrupt: {paused}")
        done = orjson.loads(http.post(f"/threads/{thread}/runs/wait", resume, expected=200))
        if done.get("completed", [])[-1:] != ["publish"]:
            raise RuntimeError(f"their resumed run did not finish: {done}")

    return Subject(label, setup, cycle)


def _lg_finished(port: int, tag: str) -> int:
    """Their threads of this row that ran through: idle, with the approved step in their state."""
    http, done, offset = _lg_http(port), 0, 0
    while True:
        page = orjson.loads(http.post("/threads/search", orjson.dumps(
            {"metadata": {"bench": tag}, "limit": 500, "offset": offset}), expected=200))
        done += sum(1 for t in page if t["status"] == "idle" and (t["values"] or {}).get("completed", [])[-1:]
                    == ["publish"])
        if len(page) < 500:
            return done
        offset += 500


def _l5_cycle(row: _Row) -> list[Measure]:
    project = _project()
    reviewer_token = _personal_token(reviewer(project).get_username())
    worker = procs.start_celery_worker(name="bench-worker-l5")
    out: list[Measure] = []
    try:
        for clients in sorted({min(c, CYCLE_CLIENTS) for c in row.settings.clients}):
            sessions = [_new_session(project) for _ in range(clients)]
            tags = {label: f"bench-l5-{uuid.uuid4().hex[:8]}" for label in row.peers}
            theirs = {label: _lg_cycle_subject(label, port, tags[label]) for label, port in row.peers.items()}
            measures = row.turns("L5 human in the loop", _ours_cycle_subject(row.port, row.token, reviewer_token,
                                                                             sessions), theirs, clients)
            ours, *peers = measures
            runs = list(Run.objects.filter(session_id__in=sessions).values_list("pk", flat=True))
            ours.extra["check"] = len(runs) == ours.extra["acknowledged"] and all(resume_check(r) for r in runs)
            ours.extra["worker_rss_mb"] = round(procs.rss_mb(worker.proc.pid))
            for m in peers:
                m.extra["check"] = _lg_finished(row.peers[m.subject], tags[m.subject]) == m.extra["acknowledged"]
            out += measures
    finally:
        worker.stop()
    return out


def _personal_token(username: str) -> str:
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("create_personal_token", username, name=f"bench-{uuid.uuid4().hex[:6]}", stdout=out,
                 stderr=io.StringIO())
    return out.getvalue().strip().splitlines()[-1]


# --- the scenario -----------------------------------------------------------------------------------------

def scenario_langgraph_server(settings: Settings) -> list[Measure]:
    token = agent_token(_project().slug)
    started: dict[str, procs.Server] = {}
    blocked: dict[str, str] = {}
    for runtime in langgraph_server.RUNTIMES:
        try:
            started[runtime.label] = langgraph_server.start(runtime)
        except RuntimeError as exc:  # reported in the section, the other runtime still measured
            blocked[runtime.label] = str(exc)[-1500:]
    if langgraph_server.INMEM.label not in started:
        raise RuntimeError(f"the in-memory LangGraph Server did not start: {blocked}")
    server, floor = _start_server(), _start_floor()
    row = _Row(settings, server.port, token, {label: s.port for label, s in started.items()}, floor.port)
    out: list[Measure] = []
    try:
        for part in (_l1_checkpoint, _l2_append, _l3_latest, _l4_history, _l5_cycle):
            measures = part(row)
            rss = {label: langgraph_server.tree_rss_mb(s)
                   for label, s in {OURS: server, FLOOR: floor, **started}.items()}
            for m in measures:
                m.extra["server_rss_mb"] = rss[m.subject]
            out += measures
    finally:
        server.stop()
        floor.stop()
        for s in started.values():
            s.stop()
    section = _section(out, blocked)
    print(section, flush=True)
    out[-1].extra["section"] = section
    return out


def _section(measures: list[Measure], blocked: dict[str, str]) -> str:
    inmem, pg = langgraph_server.INMEM.label, langgraph_server.PG.label
    by_key = {(m.scenario, m.subject, m.clients): m for m in measures}
    rows = sorted({(m.scenario, m.clients) for m in measures}, key=lambda r: (r[0], r[1]))
    lines = [
        "## L: LangGraph Server beside ours, over HTTP (ops/s; ratio = ours / theirs)", "",
        f"| row | clients | ours | in-memory | ours / in-memory | PostgreSQL | ours / PostgreSQL | target "
        f"(>= {TARGET:g}x in-memory) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for scenario, clients in rows:
        ours, a, b = (by_key.get((scenario, s, clients)) for s in (OURS, inmem, pg))
        if ours is None or a is None:
            continue
        at = CYCLE_CLIENTS if scenario.startswith("L5") else TARGET_CLIENTS
        ratio_a = ours.ops_per_s / a.ops_per_s if a.ops_per_s else float("inf")
        ratio_b = f"{ours.ops_per_s / b.ops_per_s:.2f}x" if b and b.ops_per_s else "—"
        verdict = ("met" if ratio_a >= TARGET else "**not met**") if clients == at else "(reported)"
        lines.append(f"| {scenario} | {clients} | {ours.ops_per_s:,.1f} | {a.ops_per_s:,.1f} | {ratio_a:.2f}x | "
                     f"{f'{b.ops_per_s:,.1f}' if b else '—'} | {ratio_b} | {verdict} |")
    for clients in sorted({c for scenario, c in rows if scenario.startswith("L1")}):
        bound, a = by_key.get(("L1 checkpoint write", FLOOR, clients)), by_key.get(("L1 checkpoint write", inmem,
                                                                                    clients))
        if bound and a and a.ops_per_s:
            lines.append(f"\nL1's bound at {clients} client{'s' if clients > 1 else ''}: the {FLOOR} took "
                         f"{bound.ops_per_s:,.1f} writes/s, {bound.ops_per_s / a.ops_per_s:.2f}x the in-memory "
                         f"server's (a target of {TARGET:g}x is out of reach of any fsynced write per request "
                         "when this is below it).")
    lines += ["", f"The cycle's p50 (target: ours at most {CYCLE_P50_TARGET:g}x the in-memory server's):", "",
              "| clients | ours p50 ms | in-memory p50 ms | ours / in-memory | PostgreSQL p50 ms | ours / PostgreSQL "
              "| target |", "| ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for scenario, clients in rows:
        if not scenario.startswith("L5"):
            continue
        ours, a, b = (by_key.get((scenario, s, clients)) for s in (OURS, inmem, pg))
        if ours is None or a is None:
            continue
        share = ours.p50_ms / a.p50_ms
        lines.append(f"| {clients} | {ours.p50_ms:.1f} | {a.p50_ms:.1f} | {share:.2f}x | "
                     f"{f'{b.p50_ms:.1f}' if b else '—'} | {f'{ours.p50_ms / b.p50_ms:.2f}x' if b else '—'} | "
                     f"{'met' if share <= CYCLE_P50_TARGET else '**not met**'} |")
    for label, why in blocked.items():
        lines += ["", f"**{label}: blocked**, it did not start:", "", "```", why, "```"]
    return "\n".join(lines) + "\n"


SCENARIOS: dict[str, Any] = {"L": scenario_langgraph_server}
