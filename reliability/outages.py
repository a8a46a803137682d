"""Outage experiments of issue 19: the database and the broker go away under load and come back.

Experiment 25: PostgreSQL crashes (`pg_ctl stop -m immediate`) and restarts while clients append session items
through gunicorn and a reviewer approves runs that a Celery worker resumes. The cluster is the experiment's own
(reliability/clusters.py), never the shared server. Counted at the clients (what was acknowledged, what status
came back when) and with SQL on the cluster afterwards (what is stored): no acknowledged write is lost or
doubled, no 5xx once the server is back, and the web and worker processes, never restarted, carry on.

Experiment 26: the broker is flushed (FLUSHALL, queued resume messages lost) and then killed and restarted empty
while a reviewer approves runs. The redis-server is the experiment's own. The recovery pass (the database is the
source of truth) must still resume every approved run, and the tool (a counting server) be called once per key.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.procs import children
from reliability.clusters import OwnPostgres, OwnRedis, own_postgres, own_redis
from reliability.core import Result, command_for, experiment
from reliability.faults import (
    ROOT,
    HttpServer,
    Processes,
    _idempotency_key,
    child_env,
    database_url,
    free_port,
    fresh_project,
    processes,
    reviewer_for,
)
from runs_app.models import ApprovalRequest, ApprovalStatus, Run, RunStatus
from tests import factories
from tests.worker.support import FakeService, Workers, demo_run, wait_for

OUTAGE_CHILD_BOOT = ("import sys, django; django.setup(); "
                     "from reliability.outages import child_main; child_main(sys.argv[1:])")
TERMINAL = (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.BLOCKED, RunStatus.CANCELLED)


def _child(command: str, args: dict, env: dict[str, str], *, timeout: float = 120) -> Any:
    """Run one short child process of this module to its end; its last stdout line, parsed."""
    done = subprocess.run([sys.executable, "-c", OUTAGE_CHILD_BOOT, command, json.dumps(args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"child {command} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


class Web(HttpServer):
    """gunicorn on loopback with the environment given (its own database), sync workers as in production."""

    def __init__(self, procs: Processes, *, env: dict[str, str], workers: int = 3) -> None:
        self.port = free_port()
        self.proc = procs.popen(
            [sys.executable, "-m", "gunicorn", "config.wsgi:application", "-b", f"127.0.0.1:{self.port}",
             "-w", str(workers), "--timeout", "120", "--log-level", "warning"],
            # The clients share one token on purpose: the per-token rate limit (issue 18) is not what is measured.
            env={**env, "ALLOWED_HOSTS": "127.0.0.1,localhost", "DEBUG": "0", "SECURE_COOKIES": "0",
                 "HARNESS_API_RATE": "1000000/min"},
            log_name="gunicorn",
        )
        wait_for(self._answers, timeout=60, interval=0.2, what="gunicorn to answer")

    def request(self, method: str, path: str, body: Any = None, headers: dict | None = None,
                timeout: float = 60) -> tuple[int, dict[str, str], Any]:
        """As HttpServer's, but a reply that is not JSON (Django's HTML page for an unhandled 500) is its text:
        an outage's replies must be counted, not kill the client that got them."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            sent = {**({"Content-Type": "application/json"} if data is not None else {}), **(headers or {})}
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            raw = response.read()
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = raw.decode(errors="replace")
            return response.status, {k.lower(): v for k, v in response.getheaders()}, parsed
        finally:
            conn.close()

    def worker_pids(self) -> list[int]:
        return sorted(children(self.proc.pid))


def counting_tool(delay: float = 0.3) -> FakeService:
    """The tool the resumed runs call: a loopback server counting every request per key (`requests`) and the
    side effects it made (`executions`: one per key, since it deduplicates by the key, as the adapter declares)."""
    fake = FakeService(dedupe=True)
    # A caller cut off mid-request leaves a broken pipe behind: expected here, not worth a traceback.
    fake.server.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
    fake.delay = delay
    return fake.start()


def _adapters(fake: FakeService) -> dict:
    """The counting tool deduplicates by Idempotency-Key (FakeService's default), and the adapter says so: a call
    that a crash cut off is re-sent under its key (requests 2) and happens once (executions 1). Undeclared, the
    run would wait blocked at unknown_effect for a person, as DESIGN.md says of a tool that may not be re-sent."""
    assert fake.dedupe, "the adapter declares a tool that honours its idempotency keys"
    return {"publish_chapter": {"kind": "http", "url": fake.url, "timeout": 10, "connect_timeout": 2,
                                "honours_idempotency_key": True}}


class Load:
    """Client threads appending session items through the API, each with its own Idempotency-Key, retrying a key
    until it is acknowledged (the client's retry is what makes a write survive an outage). Every request is
    logged with the moment it was sent and the status it got (0: no HTTP answer)."""

    def __init__(self, web: Web, *, session: int, token: str, clients: int) -> None:
        self.web, self.path, self.clients = web, f"/api/v1/sessions/{session}/items/", clients
        self.auth = {"Authorization": f"Bearer {token}"}
        self.acked: list[tuple[int, int]] = []
        self.log: list[tuple[float, int]] = []
        self.stop = threading.Event()
        self.give_up = threading.Event()
        self._lock = threading.Lock()
        self.threads = [threading.Thread(target=self._client, args=(i,), daemon=True) for i in range(clients)]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def finish(self, *, grace: float = 60) -> None:
        """Stop taking new keys; a key in flight is retried until acknowledged or `grace` runs out."""
        self.stop.set()
        deadline = time.monotonic() + grace
        for thread in self.threads:
            thread.join(max(0.1, deadline - time.monotonic()))
        self.give_up.set()
        for thread in self.threads:
            thread.join(30)

    def _client(self, i: int) -> None:
        rng = random.Random(i)
        n = 0
        while not self.stop.is_set():
            body = {"items": [{"role": "user", "content": {"client": i, "n": n}}]}
            headers = {**self.auth, "Idempotency-Key": f"load-{i}-{n}"}
            tries = 0
            while not self.give_up.is_set():
                sent = time.monotonic()
                try:
                    status = self.web.request("POST", self.path, body, headers=headers, timeout=30)[0]
                except (OSError, http.client.HTTPException):
                    status = 0
                with self._lock:
                    self.log.append((sent, status))
                if status in (200, 201):
                    with self._lock:
                        self.acked.append((i, n))
                    break
                tries += 1
                time.sleep(rng.uniform(0, min(0.5, 0.02 * 2 ** tries)))
            n += 1
            time.sleep(rng.uniform(0, 0.02))

    def statuses(self, start: float, end: float = float("inf")) -> Counter[int]:
        return Counter(status for sent, status in self.log if start <= sent < end)


def _decide_all(web: Web, token: str, approvals: list[int], *, give_up_at: float) -> dict[int, str]:
    """A reviewer approves each through the API, retrying until it stands: 200, or 409 already_decided by this
    reviewer (an earlier try committed and its answer was lost)."""
    outcome: dict[int, str] = {}
    for approval in approvals:
        while time.monotonic() < give_up_at and approval not in outcome:
            try:
                status, _, data = web.request("POST", f"/api/v1/approvals/{approval}/decision/",
                                              # a pending approval's first version: nothing moves it before
                                              {"decision": "approve", "expected_version": 1},
                                              headers={"Authorization": f"Bearer {token}"})
            except (OSError, http.client.HTTPException):
                status, data = 0, None
            code = data.get("code") if isinstance(data, dict) else None
            if status == 200 or (status == 409 and code == "already_decided"):
                outcome[approval] = "approved" if status == 200 else "approved_earlier"
            elif status < 500 and status != 0:
                outcome[approval] = f"refused {status} {code}"  # not the outage: do not retry
            else:
                time.sleep(0.2)
    return outcome


def _sql(cluster: OwnPostgres, query: str, params: list[Any]) -> list[tuple]:
    with cluster.connect() as conn:
        return list(conn.execute(query, params).fetchall())


# --- 25. PostgreSQL restarted under load -------------------------------------------------------

TITLE_25 = "PostgreSQL crashed and restarted under load: no acknowledged write lost, no 5xx once it is back"


@experiment(25, TITLE_25)
def postgres_restart(quick: bool) -> Result:
    """1. Its own cluster, migrated; a setup child makes a project, a session, tokens and demo runs in it.
    2. gunicorn (3 sync workers) and a Celery worker with the recovery pass, on that cluster; a counting tool.
    3. Clients append items; half the runs are approved a moment before the crash (their resumes in flight).
    4. `pg_ctl stop -m immediate` (a crash: the restart replays the WAL), `outage` seconds down, start.
    5. The other half approved once it is back; the clients carry on, then finish their keys in flight.
    6. SQL on the cluster: every acknowledged item stored once; every run succeeded, its tool called once;
       the same gunicorn workers and Celery worker throughout."""
    clients, before, after, outage, runs = (4, 5, 8, 2, 4) if quick else (8, 30, 60, 5, 20)
    started = time.monotonic()
    fake = counting_tool()
    try:
        # Its own broker too: run ids of its own cluster must never reach another database's workers.
        with own_postgres("pgrestart") as cluster, own_redis("pgrestart") as broker, processes("pgrestart") as procs, \
                tempfile.TemporaryDirectory(prefix="reliability-pgrestart-") as tmp:
            env = child_env(DATABASE_URL=cluster.url(), CELERY_BROKER_URL=broker.url())
            made = _child("setup", {"runs": runs}, env)
            pool = Workers(database_url=cluster.url(), tmp_path=Path(tmp), adapters=_adapters(fake))
            try:
                worker = pool.start("pgrestart", lease_seconds=3, wait=False,
                                    extra_env={"CELERY_BROKER_URL": broker.url()})
                web = Web(procs, env=env)
                worker.wait_ready(timeout=90)
                web_pids = web.worker_pids()
                load = Load(web, session=made["session"], token=made["agent_token"], clients=clients)
                load.start()
                time.sleep(before)
                first, second = made["approvals"][: runs // 2], made["approvals"][runs // 2:]
                decided = _decide_all(web, made["reviewer_token"], first, give_up_at=time.monotonic() + 60)
                down = time.monotonic()
                cluster.stop("immediate")
                time.sleep(outage)
                back = cluster.start()
                decided.update(_decide_all(web, made["reviewer_token"], second, give_up_at=time.monotonic() + 60))
                time.sleep(after)
                load.finish()
                ended = time.monotonic()
                run_ids = made["runs"]

                def all_done() -> bool:
                    return len(_sql(cluster, "SELECT 1 FROM runs_app_run WHERE id = ANY(%s) AND status = ANY(%s)",
                                    [run_ids, list(TERMINAL)])) == len(run_ids)

                with contextlib.suppress(AssertionError):
                    wait_for(all_done, timeout=60 if quick else 180, interval=0.5, what="every run to finish")
                worker_alive = worker.proc.poll() is None
                web_pids_after = web.worker_pids()
                stored = Counter((int(c), int(n)) for c, n in _sql(
                    cluster, "SELECT content->>'client', content->>'n' FROM sessions_app_sessionitem "
                             "WHERE session_id = %s", [made["session"]]))
                run_rows = dict(_sql(cluster, "SELECT id, status FROM runs_app_run WHERE id = ANY(%s)", [run_ids]))
                keys = [k for (k,) in _sql(cluster, "SELECT idempotency_key FROM runs_app_approvalrequest "
                                                    "WHERE run_id = ANY(%s)", [run_ids])]
                server_log = cluster.server_log()
            finally:
                pool.stop_all()
    finally:
        fake.stop()
    acked = Counter(load.acked)
    after_back = load.statuses(back, ended)
    during = load.statuses(down, back)
    first_ok = min((sent for sent, status in load.log if sent >= back and status in (200, 201)), default=None)
    figures: dict[str, Any] = {
        "clients": clients, "outage_seconds": outage, "runs": runs,
        "acknowledged": len(acked), "stored": sum(stored.values()),
        "acknowledged_lost": sum(1 for key in acked if stored[key] == 0),
        "stored_twice": sum(1 for count in stored.values() if count > 1),
        "acknowledged_twice_by_the_client": sum(1 for count in acked.values() if count > 1),
        "statuses_before": dict(load.statuses(0, down)),
        "statuses_during_outage": dict(during),
        "statuses_after_back": dict(after_back),
        "5xx_after_back": sum(count for status, count in after_back.items() if status >= 500),
        "no_answer_after_back": after_back[0],
        "seconds_to_first_ack_after_back": round(first_ok - back, 2) if first_ok is not None else None,
        "crash_recovery_in_server_log": "database system was interrupted" in server_log
                                        or "automatic recovery in progress" in server_log,
        "decisions": dict(Counter(decided.values())), "decisions_wanted": runs,
        "runs_by_status": dict(Counter(run_rows.values())),
        "max_tool_requests_per_key": max((fake.requests[k] for k in keys), default=0),
        "max_executions_per_key": max((fake.executions[k] for k in keys), default=0),
        "celery_worker_alive_throughout": worker_alive,
        "gunicorn_workers_replaced": len(set(web_pids) - set(web_pids_after)),
        "seconds": round(time.monotonic() - started, 2),
    }
    passed = (figures["acknowledged"] > 0 and figures["acknowledged_lost"] == 0 and figures["stored_twice"] == 0
              and sum(during.values()) > sum(during[s] for s in (200, 201))  # the outage did refuse writes
              # and refused them as a database out of reach (503 with its code), never as a failure of ours (500)
              and not any(500 <= s < 600 and s != 503 for s in during)
              and figures["5xx_after_back"] == 0 and figures["no_answer_after_back"] == 0
              and set(decided.values()) <= {"approved", "approved_earlier"} and len(decided) == runs
              and figures["runs_by_status"] == {RunStatus.SUCCEEDED.value: runs}
              and figures["max_executions_per_key"] == 1 and worker_alive
              and figures["gunicorn_workers_replaced"] == 0)
    return Result(number=25, title=TITLE_25, passed=passed, figures=figures, command=command_for(25, quick),
                  notes="Statuses are counted at the clients by the moment each request was sent: before the crash, "
                        "while the server was down or recovering, and after `pg_ctl start` returned (it waits until "
                        "the server accepts connections). Status 0 is no HTTP answer at all. The tool is a counting "
                        "server that deduplicates by Idempotency-Key, as the adapter declares: a resume whose call the "
                        "crash cut off calls again under the same key (requests 2), the effect happens once "
                        "(executions 1).")


def _child_setup(args: dict) -> None:
    """In the experiment's own cluster: a project, its session, an agent token, a reviewer's personal token, and
    demo runs waiting for approval."""
    project = fresh_project("outage")
    session = factories.make_session(project)
    _, agent_token = factories.make_agent_token(project, name="outage-agent")
    demo = [demo_run(fresh_project("outage-demo")) for _ in range(args["runs"])]  # the demo is one run a project
    reviewer = reviewer_for(*[run.project for run in demo])
    _, reviewer_token = factories.make_personal_token(reviewer)
    print(json.dumps({"project": project.pk, "session": session.pk, "agent_token": agent_token,
                      "reviewer_token": reviewer_token, "runs": [run.pk for run in demo],
                      "approvals": [run.pending_approval_id for run in demo]}), flush=True)


# --- 26. Redis flushed and restarted under load ------------------------------------------------

TITLE_26 = "Redis flushed, then killed and restarted empty, while runs are approved: every approved run resumes"


@experiment(26, TITLE_26)
def redis_flush_restart(quick: bool) -> Result:
    """1. Its own redis-server; two Celery workers (recovery pass every second) on it; a slow counting tool, so
       resume messages queue up behind the running ones.
    2. A reviewer process approves runs one by one (each decision queues its resume on commit).
    3. A third of the way: FLUSHALL (the queued messages, counted just before, are gone). Two thirds of the way:
       the server is killed and started again, empty, `outage` seconds later; decisions made meanwhile commit
       but their messages cannot be sent.
    4. Every approved run must end succeeded (the recovery pass finds what the broker lost), its tool called
       once per key; the workers are never restarted."""
    runs, outage = (9, 2) if quick else (60, 5)
    started = time.monotonic()
    fake = counting_tool(delay=0.5)
    demo = [demo_run(fresh_project("redis-outage")) for _ in range(runs)]
    run_ids = [run.pk for run in demo]
    user = reviewer_for(*[run.project for run in demo])
    flushed_messages, restarted_after, workers_alive = -1, -1.0, False
    approvals: list[dict] = []
    try:
        with own_redis("redis-outage") as broker, processes("redis-outage") as procs, \
                tempfile.TemporaryDirectory(prefix="reliability-redis-outage-") as tmp:
            pool = Workers(database_url=database_url(), tmp_path=Path(tmp), adapters=_adapters(fake))
            try:
                for name in ("ra", "rb"):
                    pool.start(name, lease_seconds=3, wait=False, extra_env={"CELERY_BROKER_URL": broker.url()})
                for worker in pool.started:
                    worker.wait_ready(timeout=90)
                approver = subprocess.Popen(
                    [sys.executable, "-c", OUTAGE_CHILD_BOOT, "approve",
                     json.dumps({"runs": run_ids, "user": user.pk, "gap": 0.15})],
                    cwd=ROOT, env=child_env(CELERY_BROKER_URL=broker.url()), stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL, text=True, start_new_session=True)
                procs.started.append(approver)  # killed by its group with the rest, however this ends
                decided = Run.objects.filter(pk__in=run_ids).exclude(status=RunStatus.WAITING_APPROVAL)
                wait_for(lambda: decided.count() >= runs // 3 or approver.poll() is not None, timeout=120)
                flushed_messages = _queued_messages(broker)
                broker.client().flushall()
                wait_for(lambda: decided.count() >= 2 * runs // 3 or approver.poll() is not None, timeout=120)
                broker.stop()
                down = time.monotonic()
                time.sleep(outage)
                broker.start()
                restarted_after = round(time.monotonic() - down, 2)
                wait_for(lambda: approver.poll() is not None, timeout=180, what="the approver to finish")
                assert approver.stdout is not None
                approvals = [json.loads(line) for line in approver.stdout.read().splitlines() if line.startswith("{")]
                finished = Run.objects.filter(pk__in=run_ids, status__in=TERMINAL)
                with contextlib.suppress(AssertionError):
                    wait_for(lambda: finished.count() == runs, timeout=180, interval=0.5)
                workers_alive = all(worker.proc.poll() is None for worker in pool.started)
            finally:
                pool.stop_all()
    finally:
        fake.stop()
    statuses = Counter(Run.objects.filter(pk__in=run_ids).values_list("status", flat=True))
    keys = [_idempotency_key(run_id) for run_id in run_ids]
    approved = ApprovalRequest.objects.filter(run_id__in=run_ids, status=ApprovalStatus.APPROVED).count()
    figures = {
        "runs": runs, "outage_seconds": outage,
        "approved": approved, "approver_replies": len(approvals),
        "approvals_whose_message_could_not_be_sent": sum(1 for a in approvals if a["error"]),
        "messages_flushed": flushed_messages, "redis_restarted_after_s": restarted_after,
        "runs_by_status": dict(statuses),
        "max_tool_requests_per_key": max((fake.requests[k] for k in keys), default=0),
        "keys_executed_once": sum(1 for k in keys if fake.executions[k] == 1),
        "workers_alive_throughout": workers_alive,
        "seconds": round(time.monotonic() - started, 2),
    }
    passed = (approved == runs and statuses == Counter({RunStatus.SUCCEEDED.value: runs})
              and figures["keys_executed_once"] == runs and workers_alive and flushed_messages > 0)
    return Result(number=26, title=TITLE_26, passed=passed, figures=figures, command=command_for(26, quick),
                  notes="`messages_flushed` is the length of the broker's queues just before FLUSHALL (what the "
                        "flush destroyed); an approval whose message could not be sent committed all the same "
                        "(the decision is the database's), and the recovery pass resumed its run.")


def _queued_messages(broker: OwnRedis) -> int:
    client = broker.client()
    return sum(int(client.llen(key)) for key in client.scan_iter("*") if client.type(key) == b"list")


def _child_approve(args: dict) -> None:
    """Approve each run in turn; a decision whose resume message could not be sent (the broker is down) has
    committed all the same: say so and carry on."""
    from django.contrib.auth.models import User

    from harness.actors import Actor
    from runs_app.services import approval_decide

    user = User.objects.get(pk=args["user"])
    for run in Run.objects.filter(pk__in=args["runs"]).order_by("pk"):
        error = ""
        try:
            approval_decide(project=run.project_id, approval_id=run.pending_approval_id or 0,
                            actor=Actor.for_user(user),
                            decision="approve")
        except Exception as exc:  # noqa: BLE001 - the send after commit failed: reported, the decision stands
            error = f"{type(exc).__name__}: {exc}"[:200]
        print(json.dumps({"run": run.pk, "error": error}), flush=True)
        time.sleep(args["gap"])


def _child_soak_setup(args: dict) -> None:
    """Experiment 27's fixtures in its own cluster: sessions and runs to write to, a task to save, tokens, and
    demo runs waiting for the reviewers."""
    from runs_app.services import task_create

    project = fresh_project("soak")
    _, agent_token = factories.make_agent_token(project, name="soak-agent")
    task = task_create(project=project, objective="soak", artifact_refs={"soak": {}})
    demo = [demo_run(fresh_project("soak-demo")) for _ in range(args["runs"])]  # the demo is one run a project
    reviewer = reviewer_for(*[run.project for run in demo])
    _, reviewer_token = factories.make_personal_token(reviewer)
    print(json.dumps({
        "project": project.pk, "agent_token": agent_token, "reviewer_token": reviewer_token, "task": task.pk,
        "sessions": [factories.make_session(project).pk for _ in range(args["sessions"])],
        "event_runs": [factories.make_run(project).pk for _ in range(args["event_runs"])],
        "runs": [run.pk for run in demo], "approvals": [run.pending_approval_id for run in demo],
    }), flush=True)


CHILDREN = {"setup": _child_setup, "approve": _child_approve, "soak_setup": _child_soak_setup}


def child_main(argv: list[str]) -> None:
    """Entry point of this module's child processes (OUTAGE_CHILD_BOOT)."""
    CHILDREN[argv[0]](json.loads(argv[1]))

