"""Fault experiments 1-8 and 15 of issue 7: the promises of DESIGN.md measured with counts.

Each experiment is `fn(quick) -> Result`: `quick=True` is the bounded CI form (inside pytest-django,
on its transactional test database), `quick=False` the issue's full counts (bin/reliability, on the
harness_reliability database). Every process an experiment starts (claimers, a paused lease holder,
crashing resumes, Celery workers, gunicorn) runs in its own process group, is stopped by that group's
id when the experiment ends, and talks to PostgreSQL, Redis and the fake tool service on loopback.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import random
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Any

import redis
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from harness.actors import Actor
from harness.canonical import canonical_json
from harness.http.errors import ConflictError
from harness.models import Project
from memory_app.models import MemoryRecord
from memory_app.services import memory_delete, memory_expire, memory_supersede, memory_write
from reliability.core import Result, command_for, experiment
from runs_app.models import ApprovalRequest, Checkpoint, Run, RunEvent, RunStatus, Task
from runs_app.resume_due import UNKNOWN_EFFECT  # where a run whose outcome nobody can prove waits for a person
from runs_app.services import (
    approval_decide,
    approval_request_create,
    checkpoint_create,
    run_claim,
    run_create,
    run_heartbeat,
    run_set_current_node,
    run_transition,
    task_create,
    task_save,
)
from sessions_app.models import Session
from tests import factories
from tests.threads import run_concurrently
from tests.worker.support import FakeService, WorkerProcess, Workers, demo_run, wait_for

ROOT = Path(__file__).resolve().parent.parent
LOG_DIR = ROOT / "test-artifacts" / "reliability"
CHILD_BOOT = ("import sys, django; django.setup(); import tests.worker.crash_app; "
              "from reliability.faults import child_main; child_main(sys.argv[1:])")


# --- processes ---------------------------------------------------------------------------------


def database_url() -> str:
    """The database this process is connected to (pytest-django's test database inside pytest)."""
    s = connection.settings_dict
    user = s.get("USER") or "postgres"
    auth = f"{user}:{s['PASSWORD']}@" if s.get("PASSWORD") else f"{user}@"
    return f"postgres://{auth}{s.get('HOST') or '127.0.0.1'}:{s.get('PORT') or 5432}/{s['NAME']}"


def child_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "config.settings",
           "PYTHONUNBUFFERED": "1", **extra}
    if "HARNESS_CRASH_AT" not in extra:
        env.pop("HARNESS_CRASH_AT", None)
    return env


class Processes:
    """Every child of one experiment; `close()` SIGKILLs each one's process group (never by name)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.started: list[subprocess.Popen] = []
        LOG_DIR.mkdir(parents=True, exist_ok=True)

    def spawn(self, command: str, args: dict, *, env: dict[str, str] | None = None) -> subprocess.Popen:
        log = (LOG_DIR / f"{self.label}-{os.getpid()}-{len(self.started)}-{command}.log").open("w")
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD_BOOT, command, json.dumps(args)], cwd=ROOT, env=env or child_env(),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True,
        )
        log.close()
        self.started.append(proc)
        return proc

    def popen(self, argv: list[str], *, env: dict[str, str], log_name: str) -> subprocess.Popen:
        log = (LOG_DIR / f"{self.label}-{os.getpid()}-{log_name}.log").open("w")
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        log.close()
        self.started.append(proc)
        return proc

    def close(self) -> None:
        for proc in self.started:
            try:
                os.killpg(proc.pid, signal.SIGCONT)  # a paused group would never die of SIGTERM
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            with suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            for stream in (proc.stdin, proc.stdout):
                if stream:
                    stream.close()


@contextmanager
def processes(label: str) -> Iterator[Processes]:
    procs = Processes(label)
    try:
        yield procs
    finally:
        procs.close()


def send(proc: subprocess.Popen, message: Any) -> None:
    assert proc.stdin is not None
    proc.stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
    proc.stdin.flush()


def read_line(proc: subprocess.Popen, *, timeout: float) -> str:
    """One line of a child's stdout, or an AssertionError at the deadline (never blocks unbounded)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        raise AssertionError(f"child {proc.pid} said nothing for {timeout}s")
    line = proc.stdout.readline()
    if not line:
        raise AssertionError(f"child {proc.pid} exited ({proc.poll()}) before answering")
    return line.strip()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    """gunicorn serving the real WSGI app on loopback, against this process's database (`app` may name the
    same app with a fault hook; `preload` forks each worker from an imported app, so a killed one is back
    in a moment)."""

    def __init__(self, procs: Processes, *, workers: int = 3, app: str = "config.wsgi:application",
                 preload: bool = False, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        environ = child_env(ALLOWED_HOSTS="127.0.0.1,localhost", DEBUG="0", SECURE_COOKIES="0", **(env or {}))
        self.proc = procs.popen(
            [sys.executable, "-m", "gunicorn", app, "-b", f"127.0.0.1:{self.port}",
             "-w", str(workers), "--timeout", "120", "--log-level", "warning", *(["--preload"] if preload else [])],
            env=environ, log_name="gunicorn",
        )
        wait_for(self._answers, timeout=60, interval=0.2, what="gunicorn to answer")

    def _answers(self) -> bool:
        assert self.proc.poll() is None, "gunicorn exited"
        try:
            return self.request("GET", "/api/v1/runs/")[0] in (401, 403)
        except OSError:
            return False

    def request(self, method: str, path: str, body: Any = None, headers: dict | None = None,
                timeout: float = 60) -> tuple[int, dict[str, str], Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            sent = {**({"Content-Type": "application/json"} if data is not None else {}), **(headers or {})}
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            raw = response.read()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(raw) if raw else None
        finally:
            conn.close()


def fresh_project(prefix: str) -> Project:
    return factories.make_project(f"{prefix}-{uuid.uuid4().hex[:10]}")


def broker_client() -> redis.Redis:
    url = settings.CELERY_BROKER_URL
    if not url.startswith("redis://"):
        raise RuntimeError("These experiments need the Redis broker: set CELERY_BROKER_URL=redis://...")
    return redis.Redis.from_url(url)


def queued_resumes(client: redis.Redis) -> list[int]:
    """Run ids of every `worker.resume_run` message waiting in the broker's queues."""
    ids: list[int] = []
    for key in client.scan_iter("celery*"):
        if client.type(key) != b"list":
            continue
        for raw in client.lrange(key, 0, -1):
            message = json.loads(raw)
            if message.get("headers", {}).get("task") != "worker.resume_run":
                continue
            body = message["body"]
            if message.get("properties", {}).get("body_encoding") == "base64":
                body = base64.b64decode(body)
            ids.append(int(json.loads(body)[0][0]))
    return ids


def reviewer_for(*projects: Project, role: str = "reviewer") -> Any:
    return factories.make_user(f"{role}-{uuid.uuid4().hex[:10]}", role=role, projects=list(projects))


def approve(run: Run, user: Any) -> None:
    assert run.pending_approval_id is not None
    approval_decide(project=run.project_id, approval_id=run.pending_approval_id, actor=Actor.for_user(user),
                    decision="approve")


def _seconds(started: float) -> float:
    return round(time.monotonic() - started, 2)


def _result(number: int, title: str, quick: bool, passed: bool, figures: dict, notes: str = "") -> Result:
    return Result(number=number, title=title, passed=passed, figures=figures, command=command_for(number, quick),
                  notes=notes)


# --- 1. claim race -----------------------------------------------------------------------------

TITLE_1 = "Claim race: worker processes race to claim every run"


@experiment(1, TITLE_1)
def claim_race(quick: bool) -> Result:
    """Every claimer process tries every run once, in its own random order, all released together."""
    claimers, runs = (4, 100) if quick else (8, 1000)
    started = time.monotonic()
    project = fresh_project("claim")
    session = factories.make_session(project)
    run_ids = [run_create(project=project, session_id=session.pk).pk for _ in range(runs)]
    with processes("claim") as procs:
        children = [procs.spawn("claim", {"project": project.pk, "runs": run_ids, "owner": f"worker:claimer-{i}",
                                          "seed": i}) for i in range(claimers)]
        for child in children:
            assert read_line(child, timeout=90) == "ready"
        for child in children:
            send(child, "go")
        answers = [json.loads(read_line(child, timeout=180)) for child in children]
    winners = Counter(run_id for answer in answers for run_id in answer["claimed"])
    owners = dict(Run.objects.filter(pk__in=run_ids).values_list("pk", "lease_owner"))
    owner_of = {run_id: answer["owner"] for answer in answers for run_id in answer["claimed"]}
    figures = {
        "claimers": claimers, "runs": runs,
        "claims": sum(winners.values()),
        "double_claims": sum(1 for count in winners.values() if count > 1),
        "left": sum(1 for owner in owners.values() if not owner),
        "refused": sum(answer["refused"] for answer in answers),
        "owner_mismatches": sum(1 for run_id, owner in owners.items() if owner_of.get(run_id) != owner),
        "errors": sum(len(answer["errors"]) for answer in answers),
        "seconds": _seconds(started),
    }
    passed = (figures["claims"] == runs and figures["double_claims"] == 0 and figures["left"] == 0
              and figures["owner_mismatches"] == 0 and figures["errors"] == 0
              and figures["refused"] == runs * (claimers - 1))
    return _result(1, TITLE_1, quick, passed, figures)


def _child_claim(args: dict) -> None:
    ids = list(args["runs"])
    random.Random(args["seed"]).shuffle(ids)
    print("ready", flush=True)
    sys.stdin.readline()
    claimed, refused, errors = [], 0, []
    for run_id in ids:
        try:
            run_claim(project=args["project"], run_id=run_id, owner=args["owner"], lease_seconds=600)
            claimed.append(run_id)
        except ConflictError as exc:
            if exc.code == "lease_held":
                refused += 1
            else:
                errors.append(exc.code)
    print(json.dumps({"owner": args["owner"], "claimed": claimed, "refused": refused, "errors": errors}), flush=True)


# --- 2. version CAS ----------------------------------------------------------------------------

TITLE_2 = "Version CAS: concurrent writers with one expected version"


@experiment(2, TITLE_2)
def version_cas(quick: bool) -> Result:
    """Writers released together at one barrier, each on its own connection: a task save and a run transition."""
    writers = 10 if quick else 50
    started = time.monotonic()
    project = fresh_project("cas")
    task = task_create(project=project, objective="contended")
    run = factories.make_run(project)
    figures: dict[str, Any] = {"writers": writers}
    passed = True
    for name, current, write in (
        ("task_save", task.version,
         lambda i: task_save(project=project.pk, task_id=task.pk, expected_version=task.version,
                             objective=f"writer {i}")),
        ("run_transition", run.version,
         lambda i: run_transition(project=project.pk, run_id=run.pk, to=RunStatus.RUNNING,
                                  expected_version=run.version)),
    ):
        outcomes = run_concurrently(writers, write, timeout=60)
        wins = [o for o in outcomes if isinstance(o, (Task, Run))]
        conflicts = [o for o in outcomes if isinstance(o, ConflictError)
                     and o.code in ("version_conflict", "illegal_transition")]
        model = Task if name == "task_save" else Run
        final = model.objects.get(pk=task.pk if name == "task_save" else run.pk)
        figures[name] = {"successes": len(wins), "conflicts": len(conflicts),
                         "other": writers - len(wins) - len(conflicts),
                         "version_before": current, "version_after": final.version}
        passed &= len(wins) == 1 and len(conflicts) == writers - 1 and final.version == current + 1
        if isinstance(final, Task) and wins:
            passed &= final.objective == getattr(wins[0], "objective", None)
    figures["successes"] = figures["task_save"]["successes"] + figures["run_transition"]["successes"]
    figures["conflicts"] = figures["task_save"]["conflicts"] + figures["run_transition"]["conflicts"]
    figures["seconds"] = _seconds(started)
    return _result(2, TITLE_2, quick, passed, figures)


# --- 3. lost-update soak -----------------------------------------------------------------------

TITLE_3 = "Lost-update soak: clients x retried increments through the HTTP API"


@experiment(3, TITLE_3)
def lost_update_soak(quick: bool) -> Result:
    """Each client reads the task, PATCHes count+1 with expected_version, and on 409 re-reads and retries."""
    clients, increments = (4, 50) if quick else (20, 500)
    return _soak(clients, increments, budget=120 if quick else 1200, quick=quick)


def _soak(clients: int, increments: int, *, budget: float, quick: bool) -> Result:
    started = time.monotonic()
    project = fresh_project("soak")
    _, secret = factories.make_agent_token(project, name="soak-agent")
    task = task_create(project=project, objective="count", artifact_refs={"soak": {"count": 0}})
    auth = {"Authorization": f"Bearer {secret}"}
    path = f"/api/v1/tasks/{task.pk}/"
    stats: list[dict] = [{} for _ in range(clients)]
    with processes("soak") as procs:
        server = HttpServer(procs, workers=3)

        def client(i: int) -> None:
            rng = random.Random(i)
            done = conflicts = requests = streak = 0
            unexpected: list[int] = []
            state = server.request("GET", path, headers=auth)[2]
            while done < increments and time.monotonic() - started < budget:
                count = state["artifact_refs"]["soak"]["count"]
                code, _, body = server.request("PATCH", path, {"expected_version": state["version"],
                                                               "artifact_refs": {"soak": {"count": count + 1}}},
                                               headers=auth)
                requests += 1
                if code == 200:
                    done, streak, state = done + 1, 0, body
                    continue
                if code != 409:
                    unexpected.append(code)
                conflicts, streak = conflicts + 1, streak + 1
                # Jittered backoff keeps 20 clients on one row from retrying in lockstep.
                time.sleep(rng.uniform(0, 0.03 * 2 ** min(streak, 5)))
                state = server.request("GET", path, headers=auth)[2]
                requests += 1
            stats[i] = {"done": done, "conflicts": conflicts, "requests": requests, "unexpected": unexpected}

        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(budget + 60)
    final = Task.objects.get(pk=task.pk)
    expected = clients * increments
    figures = {
        "clients": clients, "increments_each": increments, "expected": expected,
        "acknowledged": sum(s.get("done", 0) for s in stats),
        "final_count": final.artifact_refs["soak"]["count"],
        "version_delta": final.version - task.version,
        "conflicts_409": sum(s.get("conflicts", 0) for s in stats),
        "requests": sum(s.get("requests", 0) for s in stats),
        "unexpected_statuses": sorted({c for s in stats for c in s.get("unexpected", [])}),
        "seconds": _seconds(started),
    }
    passed = (figures["final_count"] == expected == figures["acknowledged"] == figures["version_delta"]
              and not figures["unexpected_statuses"])
    return _result(3, TITLE_3, quick, passed, figures)


# --- 4. stale-lease fencing --------------------------------------------------------------------

TITLE_4 = "Stale-lease fencing: a worker paused (SIGSTOP) past its lease writes after B took over"


@experiment(4, TITLE_4)
def stale_lease_fencing(quick: bool) -> Result:
    """Worker A (a real process) claims a batch of runs for one second, is SIGSTOPped, B takes each run
    over and checkpoints, then A is SIGCONTed and tries every lease-fenced write it had planned."""
    trials, batch, lease = (5, 5, 1) if quick else (50, 10, 1)
    started = time.monotonic()
    project = fresh_project("fence")
    session = factories.make_session(project)
    runs: list[int] = []
    for _ in range(trials):
        run = run_create(project=project, session_id=session.pk)
        run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
        checkpoint_create(project=project, run_id=run.pk, label="start")
        runs.append(run.pk)
    refused: Counter = Counter()
    accepted: list[str] = []
    b_commits = 0
    with processes("fence") as procs:
        a = procs.spawn("fence", {"project": project.pk, "owner": f"worker:A-{uuid.uuid4().hex[:8]}"})
        assert read_line(a, timeout=90) == "ready"
        for first in range(0, trials, batch):
            ids = runs[first:first + batch]
            send(a, {"op": "claim", "runs": ids, "lease": lease})
            seen = json.loads(read_line(a, timeout=60))
            os.kill(a.pid, signal.SIGSTOP)
            expiry = max(e for e in Run.objects.filter(pk__in=ids).values_list("lease_expires_at", flat=True) if e)
            time.sleep(max(0.0, (expiry - timezone.now()).total_seconds()) + 0.05)
            for run_id in ids:
                owner_b = f"worker:B-{run_id}"
                run_claim(project=project.pk, run_id=run_id, owner=owner_b, lease_seconds=300)
                checkpoint_create(project=project.pk, run_id=run_id, parent_id=seen[str(run_id)], label="B",
                                  lease_owner=owner_b)
                b_commits += 1
            os.kill(a.pid, signal.SIGCONT)
            send(a, {"op": "write"})
            for run_id, writes in json.loads(read_line(a, timeout=60)).items():
                for write, outcome in writes.items():
                    if outcome.startswith("refused:"):
                        refused[write] += 1
                    else:
                        accepted.append(f"{run_id}:{write}")
            for run_id in ids:
                run_transition(project=project.pk, run_id=run_id, to=RunStatus.SUCCEEDED, expected_version=None,
                               lease_owner=f"worker:B-{run_id}", actor=Actor.for_worker(f"worker:B-{run_id}"))
    parents = Counter(Checkpoint.objects.filter(run_id__in=runs).exclude(parent=None).values_list("parent_id",
                                                                                                  flat=True))
    b_heads = Run.objects.filter(pk__in=runs, status=RunStatus.SUCCEEDED, last_checkpoint__label="B").count()
    trials_all_refused = trials - len({entry.split(":")[0] for entry in accepted})
    figures = {
        "trials": trials, "lease_seconds": lease, "b_commits": b_commits,
        "trials_all_a_writes_refused": trials_all_refused,
        "a_writes_refused": dict(refused), "a_writes_accepted": len(accepted),
        "forks": sum(1 for count in parents.values() if count > 1),
        "runs_finished_by_b_on_b_checkpoint": b_heads,
        "seconds": _seconds(started),
    }
    passed = (trials_all_refused == trials and not accepted and figures["forks"] == 0 and b_heads == trials
              and sum(refused.values()) == trials * 4)
    return _result(4, TITLE_4, quick, passed, figures)


def _child_fence(args: dict) -> None:
    project, owner = args["project"], args["owner"]
    print("ready", flush=True)
    seen: dict[int, int | None] = {}
    for line in sys.stdin:
        command = json.loads(line)
        if command["op"] == "claim":
            seen = {}
            for run_id in command["runs"]:
                run = run_claim(project=project, run_id=run_id, owner=owner, lease_seconds=command["lease"])
                seen[run_id] = run.last_checkpoint_id
            print(json.dumps(seen), flush=True)
            continue
        outcomes = {run_id: _stale_writes(project, run_id, parent, owner) for run_id, parent in seen.items()}
        print(json.dumps(outcomes), flush=True)


def _stale_writes(project: int, run_id: int, parent: int | None, owner: str) -> dict[str, str]:
    """Every write a lease holder makes, attempted by one whose lease is gone: each must be refused."""
    writes: dict[str, Callable[[], Any]] = {
        "checkpoint": lambda: checkpoint_create(project=project, run_id=run_id, parent_id=parent,
                                               label="A (stale)", lease_owner=owner),
        "transition": lambda: run_transition(project=project, run_id=run_id, to=RunStatus.SUCCEEDED,
                                             expected_version=None, lease_owner=owner, actor=Actor.for_worker(owner)),
        "heartbeat": lambda: run_heartbeat(project=project, run_id=run_id, owner=owner, lease_seconds=60),
        "current_node": lambda: run_set_current_node(project=project, run_id=run_id, owner=owner, node="stale"),
    }
    outcomes = {}
    for name, write in writes.items():
        try:
            write()
            outcomes[name] = "accepted"
        except ConflictError as exc:
            outcomes[name] = f"refused:{exc.code}"
    return outcomes


# --- 5. kill -9 around side effects ------------------------------------------------------------

TITLE_5 = "kill -9 at random points of a resume, around the external call"
CRASH_POINTS = ("before_call", "after_call", "after_deliver", "after_commit", "node:summarize", "random_time")


def _adapter_config(fake: FakeService) -> dict[str, Any]:
    # Declared as the tool behaves: a service that ignores the key is not one to re-send to after a crash.
    return {"kind": "http", "url": fake.url, "timeout": 10, "connect_timeout": 2,
            "honours_idempotency_key": fake.dedupe}


@contextmanager
def _worker_pool(label: str, fake: FakeService) -> Iterator[Workers]:
    adapters = {"publish_chapter": _adapter_config(fake)}
    with tempfile.TemporaryDirectory(prefix=f"reliability-{label}-") as tmp:
        pool = Workers(database_url=database_url(), tmp_path=Path(tmp), adapters=adapters)
        try:
            yield pool
        finally:
            pool.stop_all()


def _fake_service() -> FakeService:
    """A tool that does NOT deduplicate by key: every call is a side effect, so a second call after a crash
    shows in `requests` (a deduplicating one would hide it: it answered the retry without acting)."""
    fake = FakeService(dedupe=False)
    # A caller killed mid-request leaves a broken pipe behind: expected here, not worth a traceback.
    fake.server.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
    fake.delay = 0.3
    return fake.start()


def _adapters_env(fake: FakeService) -> str:
    return json.dumps({"publish_chapter": _adapter_config(fake)})




def _calls(fake: FakeService, keys: list[str]) -> dict[str, Any]:
    """Raw calls that reached the tool, per idempotency key (the tool ignores keys: each one acted)."""
    calls = [fake.requests[key] for key in keys]
    return {"max_calls_per_key": max(calls, default=0), "calls_per_key": dict(sorted(Counter(calls).items())),
            "keys_called_twice_or_more": sum(1 for count in calls if count > 1)}


def _idempotency_key(run_id: int) -> str:
    return ApprovalRequest.objects.filter(run_id=run_id).values_list("idempotency_key", flat=True).get()


@experiment(5, TITLE_5)
def kill_around_side_effects(quick: bool) -> Result:
    """A real resume process is killed with SIGKILL at a random point (a crash hook or a random moment);
    two Celery workers with the recovery pass finish the run.

    1. The crasher claims the run, the reviewer approves (the workers' message finds the lease held),
       then the crasher resumes with HARNESS_CRASH_AT set, or is killed after a random delay.
    2. After its death: how long until another worker claims the run, measured past the dead lease's
       expiry (the run may stay orphaned at most one more lease: twice its lease in all).
    3. In the end: every run succeeded and the fake service executed each idempotency key once.
    """
    kills_wanted, lease = (3, 4) if quick else (50, 4)
    batch = 3
    budget = 150 if quick else 600
    started = time.monotonic()
    rng = random.Random(5)
    client = broker_client()
    client.flushdb()
    fake = _fake_service()
    kills: Counter = Counter()
    waits_past_lease: list[float] = []
    run_ids: list[int] = []
    not_recovered: list[int] = []
    try:
        with _worker_pool("kill9", fake) as pool, processes("kill9") as procs:
            for name in ("r1", "r2"):
                pool.start(name, lease_seconds=lease, wait=False)
            for worker in pool.started:
                worker.wait_ready(timeout=90)
            while sum(kills.values()) < kills_wanted and time.monotonic() - started < budget:
                trials = []
                for _ in range(batch):
                    run = demo_run(fresh_project("kill9"))
                    point = rng.choice(CRASH_POINTS)
                    owner = f"worker:crasher-{uuid.uuid4().hex[:8]}:0:x"
                    env = child_env(HARNESS_TOOL_ADAPTERS=_adapters_env(fake),
                                    **({} if point == "random_time" else {"HARNESS_CRASH_AT": point}))
                    child = procs.spawn("resume", {"run": run.pk, "owner": owner, "lease": lease}, env=env)
                    trials.append((run, point, owner, child))
                user = reviewer_for(*[t[0].project for t in trials])
                for run, _point, _owner, child in trials:
                    assert read_line(child, timeout=90) == "ready"
                    approve(run, user)
                    send(child, "go")
                deaths: dict[int, float] = {}
                kill_at = {t[0].pk: time.monotonic() + rng.uniform(0.05, 0.8) for t in trials if t[1] == "random_time"}
                deadline = time.monotonic() + 60
                while len(deaths) < len(trials) and time.monotonic() < deadline:
                    for run, point, owner, child in trials:
                        if run.pk in deaths:
                            continue
                        if point == "random_time" and child.poll() is None and time.monotonic() >= kill_at[run.pk]:
                            os.kill(child.pid, signal.SIGKILL)
                        if child.poll() is not None:
                            lease_row = Run.objects.filter(pk=run.pk, lease_owner=owner).values_list(
                                "lease_expires_at", flat=True).first()
                            deaths[run.pk] = lease_row.timestamp() if lease_row else 0.0
                            if child.returncode == -signal.SIGKILL:
                                kills[point] += 1
                    time.sleep(0.02)
                for run, _point, owner, _child in trials:
                    run_ids.append(run.pk)
                    ended = Run.objects.filter(pk=run.pk, status__in=(RunStatus.SUCCEEDED, RunStatus.FAILED,
                                                                        RunStatus.BLOCKED))
                    try:
                        finished = wait_for(ended.first, timeout=90)
                    except AssertionError:
                        not_recovered.append(run.pk)
                        continue
                    assert finished is not None
                    # The dead lease's expiry was read the moment the crasher was seen dead (heartbeats
                    # move it); the next claim by anyone else must come within one more lease.
                    expired_at = deaths.get(finished.pk, 0.0)
                    taken = RunEvent.objects.filter(run_id=run.pk, kind="resume.authority_lease",
                                                    data__ok=True).exclude(data__owner=owner).order_by("seq").first()
                    if expired_at and taken:
                        waits_past_lease.append(round(taken.created_at.timestamp() - expired_at, 2))
    finally:
        fake.stop()
        client.flushdb()
    runs = Run.objects.filter(pk__in=run_ids)
    keys = {run_id: _idempotency_key(run_id) for run_id in run_ids}
    succeeded = list(runs.filter(status=RunStatus.SUCCEEDED).values_list("pk", flat=True))
    waiting = runs.filter(status=RunStatus.BLOCKED, blocked_step=UNKNOWN_EFFECT).count()
    figures: dict[str, Any] = {
        "kills": sum(kills.values()), "kills_by_point": dict(kills), "runs": len(run_ids), "lease_seconds": lease,
        "succeeded": len(succeeded),
        "blocked_at_unknown_effect": waiting,
        "left_unfinished": len(not_recovered) + runs.exclude(status=RunStatus.SUCCEEDED).count() - waiting,
        **_calls(fake, list(keys.values())),
        "succeeded_called_once": sum(1 for run_id in succeeded if fake.requests[keys[run_id]] == 1),
        "max_seconds_orphaned_past_lease": max(waits_past_lease, default=0.0),
        "seconds": _seconds(started),
    }
    passed = (figures["kills"] >= kills_wanted and figures["succeeded"] + waiting == len(run_ids)
              and figures["max_calls_per_key"] <= 1 and figures["succeeded_called_once"] == len(succeeded)
              and figures["max_seconds_orphaned_past_lease"] <= lease)
    return _result(5, TITLE_5, quick, passed, figures, notes=(
        "The tool ignores idempotency keys, so every call it receives acts: `max_calls_per_key` counts raw calls. "
        "A run whose call's outcome a crash left unproven is not re-sent (the adapter does not honour keys): it "
        "waits `blocked` at `unknown_effect` for a person. Orphan time is measured from the dead worker's lease "
        "expiry to the next claim; the bound is one more lease (twice the lease in all)."))


def _child_resume(args: dict) -> None:
    from worker.pipeline import resume_run_by_id

    run = Run.objects.get(pk=args["run"])
    run_claim(project=run.project_id, run_id=run.pk, owner=args["owner"], lease_seconds=args["lease"])
    print("ready", flush=True)
    sys.stdin.readline()
    outcome = resume_run_by_id(run.pk, owner=args["owner"], lease_seconds=args["lease"])
    print(json.dumps({"outcome": outcome}), flush=True)


# --- 6. Celery worker loss ---------------------------------------------------------------------

TITLE_6 = "Celery worker loss: the prefork child killed mid-task; a poison task ends visibly"


def _start_prefork(pool: Workers, name: str, *, lease: int, extra_env: dict | None = None,
                   wait: bool = True) -> WorkerProcess:
    """A `celery worker --beat --pool prefork -c 1`: the main process replaces a killed child."""
    env = {
        **child_env(**(extra_env or {})),
        "HARNESS_TOOL_ADAPTERS": json.dumps(pool.adapters),
        "HARNESS_WORKER_LEASE_SECONDS": str(lease),
        "HARNESS_RECOVERY_INTERVAL_SECONDS": "1",
        "CELERY_VISIBILITY_TIMEOUT": "10",
    }
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    index = len(pool.started)
    log_path = LOG_DIR / f"{os.getpid()}-{index}-{name}.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "tests.worker.crash_app", "worker", "--beat", "--pool", "prefork",
         "--concurrency", "1", "-n", f"{name}-{index}@%h", "--without-gossip", "--without-mingle",
         "--loglevel", "INFO", "--schedule", str(pool.tmp_path / f"beat-{index}")],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    worker = WorkerProcess(name=name, proc=proc, log_path=log_path, _log=log)
    pool.started.append(worker)
    if wait:
        worker.wait_ready(timeout=90)
    return worker


def _parent_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _is_gone(pid: int, parent: int) -> bool:
    return _parent_of(pid) != parent


def _live_holder(run_ids: list[int], main_pid: int) -> tuple[int, int] | None:
    """(run id, pid) of a pool child of `main_pid` holding a live lease on one of the runs right now."""
    held = Run.objects.filter(pk__in=run_ids, lease_owner__startswith="worker:", lease_expires_at__gt=timezone.now(),
                              status__in=(RunStatus.RUNNING, RunStatus.WAITING_APPROVAL))
    for run_id, owner in held.values_list("pk", "lease_owner"):
        try:
            pid = int(owner.split(":")[-2])
        except (IndexError, ValueError):
            continue
        if _parent_of(pid) == main_pid:
            return run_id, pid
    return None


@experiment(6, TITLE_6)
def worker_loss(quick: bool) -> Result:
    """Two phases, each with its own prefork worker (one child, embedded beat running the recovery pass).

    1. Loss: runs are approved one after another; whenever the child holds a run's lease, it is
       SIGKILLed after a random delay. Every run must still succeed, each tool call executed once.
    2. Poison: a worker whose every attempt dies (HARNESS_CRASH_AT=node:summarize) with
       HARNESS_RESUME_MAX_ATTEMPTS=3: the run ends `blocked` naming the attempts, and stays there.
    3. Poison before the claim (HARNESS_CRASH_AT=load): blocked once that many starts died unclaimed.
    """
    kills_wanted, lease, max_attempts = (4, 3, 2) if quick else (100, 3, 3)
    budget = 150 if quick else 600
    started = time.monotonic()
    rng = random.Random(6)
    client = broker_client()
    client.flushdb()
    fake = _fake_service()
    figures: dict[str, Any] = {}
    try:
        with _worker_pool("loss", fake) as pool:
            # A few spare runs: a run is killed at most once, and some finish before a kill lands.
            runs = [demo_run(fresh_project("loss")) for _ in range(kills_wanted + kills_wanted // 5 + 2)]
            run_ids = [run.pk for run in runs]
            user = reviewer_for(*[run.project for run in runs])
            main = _start_prefork(pool, "loss", lease=lease)
            kills, approved, killed_runs = 0, 0, Counter[int]()
            while kills < kills_wanted and time.monotonic() - started < budget:
                holder = _live_holder(run_ids, main.proc.pid)
                if holder is None:
                    if approved < len(runs):
                        approve(runs[approved], user)
                        approved += 1
                    try:
                        wait_for(lambda: _live_holder(run_ids, main.proc.pid), timeout=30, interval=0.02,
                                 what="the child to take a lease")
                    except AssertionError:
                        break
                    continue
                if killed_runs[holder[0]]:
                    # Killed once already: let its recovery finish, so attempts stay far below the limit.
                    time.sleep(0.05)
                    continue
                time.sleep(rng.uniform(0, 0.4))
                if _live_holder(run_ids, main.proc.pid) != holder:
                    continue
                os.kill(holder[1], signal.SIGKILL)
                kills += 1
                killed_runs[holder[0]] += 1
                wait_for(partial(_is_gone, holder[1], main.proc.pid), timeout=10, interval=0.02)
            while approved < len(runs):
                approve(runs[approved], user)
                approved += 1
            done = (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.BLOCKED, RunStatus.CANCELLED)
            with suppress(AssertionError):
                wait_for(lambda: Run.objects.filter(pk__in=run_ids, status__in=done).count() == len(run_ids),
                         timeout=120, interval=0.5)
            finished = Run.objects.filter(pk__in=run_ids)
            keys = [_idempotency_key(run_id) for run_id in run_ids]
            attempts = [int((m or {}).get("attempts") or 0) for m in finished.values_list("metrics", flat=True)]
            waiting = finished.filter(status=RunStatus.BLOCKED, blocked_step=UNKNOWN_EFFECT).count()
            succeeded_keys = [_idempotency_key(pk) for pk in finished.filter(status=RunStatus.SUCCEEDED)
                              .values_list("pk", flat=True)]
            figures["loss"] = {
                "kills_mid_task": kills, "runs": len(run_ids), "runs_killed": len(killed_runs),
                "succeeded": len(succeeded_keys),
                "blocked_at_unknown_effect": waiting,
                "not_succeeded": finished.exclude(status=RunStatus.SUCCEEDED).count() - waiting,
                "max_resume_attempts": max(attempts, default=0),
                **_calls(fake, keys),
                "succeeded_called_once": sum(1 for k in succeeded_keys if fake.requests[k] == 1),
            }
            main.stop()
        # Poison after the claim (every attempt dies mid-plan) and before it (every start dies in the load).
        client.flushdb()
        figures.update(_poison(fake, {"poison": "node:summarize", "poison_before_claim": "load"},
                               max_attempts=max_attempts))
    finally:
        fake.stop()
        client.flushdb()
    loss, poison, early = figures["loss"], figures["poison"], figures["poison_before_claim"]
    figures["kills"] = loss["kills_mid_task"]
    figures["seconds"] = _seconds(started)
    passed = (loss["kills_mid_task"] == kills_wanted and loss["not_succeeded"] == 0
              and loss["max_calls_per_key"] <= 1 and loss["succeeded_called_once"] == loss["succeeded"]
              and poison["status"] == RunStatus.BLOCKED and poison["attempts"] == max_attempts
              and poison["claims"] == max_attempts and poison["starts_after_blocked"] == 0
              and poison["executions"] == 1
              and early["status"] == RunStatus.BLOCKED and early["blocked_step"] == "load"
              and early["claims"] == 0 and early["starts"] == max_attempts + 1
              and early["starts_after_blocked"] == 0 and early["executions"] == 0)
    return _result(6, TITLE_6, quick, passed, figures, notes=(
        "A start that dies before the claim is counted by `metrics.starts` (worker/steps/load.py count_start): "
        "without it such a run was redelivered (reject_on_worker_lost) and re-enqueued by the recovery pass forever."))


def _poison(fake: FakeService, crash_points: dict[str, str], *, max_attempts: int) -> dict:
    """One run per crash point, each resumed by its own prefork worker (one at a time: they share the
    queue) whose every try dies there, until the run is blocked; then nothing may start it again."""
    lease = 2
    figures = {}
    for name, crash_at in crash_points.items():
        with _worker_pool("poison", fake) as pool:
            run = demo_run(fresh_project("poison"))
            _start_prefork(pool, name, lease=lease, extra_env={
                "HARNESS_CRASH_AT": crash_at, "HARNESS_RESUME_MAX_ATTEMPTS": str(max_attempts)})
            approve(run, reviewer_for(run.project))
            blocked = Run.objects.filter(pk=run.pk, status=RunStatus.BLOCKED)
            with suppress(AssertionError):
                wait_for(blocked.exists, timeout=60, interval=0.2)
            starts_then = int((Run.objects.get(pk=run.pk).metrics or {}).get("starts") or 0)
            time.sleep(lease + 2)  # past the dead lease and two recovery passes
            run.refresh_from_db()
            starts = int((run.metrics or {}).get("starts") or 0)
            figures[name] = {
                "crash_at": crash_at, "status": run.status, "blocked_step": run.blocked_step,
                "reason": (run.error or {}).get("reason", ""), "max_attempts": max_attempts,
                "attempts": int((run.metrics or {}).get("attempts") or 0), "starts": starts,
                "claims": RunEvent.objects.filter(run_id=run.pk, kind="resume.authority_lease",
                                                  data__ok=True).count(),
                "starts_after_blocked": starts - starts_then,
                "executions": fake.executions[_idempotency_key(run.pk)],
            }
        client = broker_client()
        client.flushdb()
    return figures


# --- 7. transactional enqueue ------------------------------------------------------------------

TITLE_7 = "Transactional enqueue: run creations with approvals decided, 10% rolled back"


class _RolledBack(Exception):
    pass


@experiment(7, TITLE_7)
def transactional_enqueue(quick: bool) -> Result:
    """Each creation, in one transaction: a run, running, an approval request, its approval (which
    queues the resume on commit). One in ten transactions is rolled back at the end; no worker runs,
    so every resume message sent is still in the broker to be counted."""
    creations = 100 if quick else 1000
    started = time.monotonic()
    client = broker_client()
    client.flushdb()
    project = fresh_project("enqueue")
    session = factories.make_session(project)
    user = reviewer_for(project)
    rolled = set(random.Random(7).sample(range(creations), creations // 10))
    committed_ids, rolled_ids = [], []
    try:
        for i in range(creations):
            created: list[int] = []
            try:
                with transaction.atomic():
                    run = run_create(project=project, session_id=session.pk)
                    created.append(run.pk)
                    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
                    approval = approval_request_create(project=project, run_id=run.pk, tool="publish_chapter",
                                                       arguments={"n": i}, idempotency_key=f"enqueue-{i}",
                                                       actor=Actor.for_agent("enqueue"))
                    approval_decide(project=project.pk, approval_id=approval.pk, actor=Actor.for_user(user),
                                    decision="approve")
                    if i in rolled:
                        raise _RolledBack
            except _RolledBack:
                rolled_ids.extend(created)
            else:
                committed_ids.extend(created)
        messages = queued_resumes(client)
    finally:
        client.flushdb()
    sent = Counter(messages)
    figures = {
        "creations": creations, "committed": len(committed_ids), "rolled_back": len(rolled_ids),
        "messages": len(messages),
        "messages_for_rolled_back": sum(sent[run_id] for run_id in rolled_ids),
        "committed_without_message": sum(1 for run_id in committed_ids if not sent[run_id]),
        "duplicate_messages": sum(count - 1 for count in sent.values() if count > 1),
        "rolled_back_rows_present": Run.objects.filter(pk__in=rolled_ids).count(),
        "seconds": _seconds(started),
    }
    passed = (figures["rolled_back"] == creations // 10 and figures["messages_for_rolled_back"] == 0
              and figures["committed_without_message"] == 0 and figures["duplicate_messages"] == 0
              and figures["messages"] == figures["committed"] and figures["rolled_back_rows_present"] == 0)
    return _result(7, TITLE_7, quick, passed, figures)


# --- 8. idempotent replay ----------------------------------------------------------------------

TITLE_8 = "Idempotent replay: one key and body sent many times, part of them at once"


@experiment(8, TITLE_8)
def idempotent_replay(quick: bool) -> Result:
    """The concurrent burst goes first (all before any reply exists); a sender told 409
    idempotency_in_progress retries, as the reply says to. Then the rest are sent one by one."""
    total, concurrent = (20, 10) if quick else (100, 20)
    started = time.monotonic()
    project = fresh_project("replay")
    _, secret = factories.make_agent_token(project, name="replay-agent")
    run = factories.make_run(project)
    key = f"replay-{uuid.uuid4().hex}"
    path = f"/api/v1/runs/{run.pk}/events/"
    body = {"kind": "replay.probe", "data": {"chapter": 3, "note": "sent once, delivered many times"}}
    headers = {"Authorization": f"Bearer {secret}", "Idempotency-Key": key}
    in_progress = Counter[int]()
    replies: list[tuple[int, str, str]] = []
    lock = threading.Lock()
    with processes("replay") as procs:
        server = HttpServer(procs, workers=3)

        def send_once(i: int) -> None:
            for _ in range(200):
                status, got, data = server.request("POST", path, body, headers=headers)
                if status == 409 and (data or {}).get("code") == "idempotency_in_progress":
                    in_progress[i] += 1
                    time.sleep(0.02)
                    continue
                with lock:
                    replies.append((status, canonical_json(data), got.get("idempotent-replayed", "")))
                return

        barrier = threading.Barrier(concurrent, timeout=60)

        def burst(i: int) -> None:
            barrier.wait()
            send_once(i)

        threads = [threading.Thread(target=burst, args=(i,), daemon=True) for i in range(concurrent)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        for i in range(concurrent, total):
            send_once(i)
    effects = RunEvent.objects.filter(run_id=run.pk, kind="replay.probe").count()
    figures = {
        "sends": total, "concurrent": concurrent, "replies": len(replies),
        "effects": effects,
        "distinct_replies": len({(status, text) for status, text, _ in replies}),
        "statuses": sorted({status for status, _, _ in replies}),
        "replayed": sum(1 for *_, replayed in replies if replayed == "true"),
        "in_progress_409_then_retried": sum(in_progress.values()),
        "seconds": _seconds(started),
    }
    passed = (effects == 1 and len(replies) == total and figures["distinct_replies"] == 1
              and figures["statuses"] == [201] and figures["replayed"] == total - 1)
    return _result(8, TITLE_8, quick, passed, figures,
                   notes="A duplicate that arrives while the first is still in progress waits on the first "
                         "one's uncommitted key, then replays its reply (the event claims its key in its own "
                         "statement); a 409 idempotency_in_progress is retried, as the client does.")


# --- 19. gunicorn kill -9 mid-request ----------------------------------------------------------

TITLE_19 = "gunicorn kill -9 mid-request: POSTs retried with and without an Idempotency-Key"
# Where a request dies (tests/reliability/crash_wsgi.py): the first three are the keyed reservation's
# (harness.http.idempotency); `response.before_send` is after everything committed, before a byte is sent.
WEB_CRASH_POINTS = ("idempotency.after_reserve", "idempotency.after_view", "idempotency.before_commit",
                    "response.before_send")
_LOST = (OSError, http.client.HTTPException)  # a killed worker's connection: reset, closed, no status line


@experiment(19, TITLE_19)
def web_kill_mid_request(quick: bool) -> Result:
    """One gunicorn sync worker (preloaded, so the master replaces a killed one at once) serves session
    creations (a view with its own transaction, through the middleware's reservation), each carrying its
    operation's id; the client retries each operation until it is answered, under the same Idempotency-Key
    when it has one, as harness_client does.

    1. Named points: the first attempt asks the worker to SIGKILL itself at one point of the request
       (the old crash window is `idempotency.after_view`: the work committed, the key not settled).
    2. Random moments: the first attempt pauses 0.4 s at a random point and the worker is killed from
       outside after a random delay (before, during or after the request).
    3. Counted per operation: sessions written with its id, the replies, and 409s met on retry. With a key
       every operation must be written once and every answer carry that one session; without one, a kill
       after the commit makes the retry write again (reported: it is why the key exists).
    """
    per_point, random_kills = (1, 3) if quick else (15, 40)
    started = time.monotonic()
    rng = random.Random(19)
    project = fresh_project("webkill")
    _, secret = factories.make_agent_token(project, name="webkill-agent")
    path = "/api/v1/sessions/"
    plan: list[tuple[str, bool, str]] = []  # (operation id, keyed, how its first attempt dies)
    for keyed in (True, False):
        label = "keyed" if keyed else "unkeyed"
        # An unkeyed request has no reservation: only the point after the commit applies to it.
        points = WEB_CRASH_POINTS if keyed else WEB_CRASH_POINTS[-1:]
        plan += [(f"{label}-{point}-{i}", keyed, point) for point in points for i in range(per_point)]
        plan += [(f"{label}-random-{i}", keyed, "random") for i in range(random_kills)]
    outcomes: dict[str, dict[str, Any]] = {}
    kills = Counter[str]()
    with processes("webkill") as procs:
        server = HttpServer(procs, workers=1, app="tests.reliability.crash_wsgi:application", preload=True)
        for op, keyed, how in plan:
            headers = {"Authorization": f"Bearer {secret}",
                       **({"Idempotency-Key": f"webkill-{op}"} if keyed else {})}
            body = {"role": "writer", "metadata": {"webkill": op}}
            first = dict(headers)
            killer: threading.Timer | None = None
            if how == "random":
                first.update({"X-Harness-Pause-At": rng.choice(WEB_CRASH_POINTS if keyed else WEB_CRASH_POINTS[-1:]),
                              "X-Harness-Pause-Seconds": "0.4"})
                killer = threading.Timer(rng.uniform(0.0, 0.8), _kill_workers_of, args=(server.proc.pid,))
                killer.start()
            else:
                first["X-Harness-Crash-At"] = how
            outcomes[op] = _until_answered(server, path, body, first, headers)
            if killer is not None:
                killer.join()
            kills[how] += int(outcomes[op]["lost"] > 0)
            wait_for(lambda: _workers_of(server.proc.pid), timeout=60, interval=0.05, what="gunicorn's worker")
    sessions = Session.objects.filter(project=project, metadata__has_key="webkill")
    written = Counter(sessions.values_list("metadata__webkill", flat=True))
    ids = dict(sessions.values_list("metadata__webkill", "id"))

    def tally(keyed: bool) -> dict[str, Any]:
        mine = {op: o for op, o in outcomes.items() if o["keyed"] == keyed}
        return {
            "operations": len(mine),
            "first_attempts_killed": sum(1 for o in mine.values() if o["lost"]),
            "answered_201": sum(1 for o in mine.values() if o["status"] == 201),
            "written_once": sum(1 for op in mine if written[op] == 1),
            "written_twice_or_more": sum(1 for op in mine if written[op] > 1),
            "not_written": sum(1 for op in mine if written[op] == 0),
            "max_writes_per_operation": max((written[op] for op in mine), default=0),
            "answers_naming_another_write": sum(1 for op, o in mine.items()
                                                if o["status"] == 201 and o["written_id"] != ids.get(op)),
            "retries_met_409_in_progress": sum(o["in_progress"] for o in mine.values()),
            "replayed": sum(1 for o in mine.values() if o["replayed"]),
        }

    with_key, unkeyed = tally(True), tally(False)
    figures = {"keyed": with_key, "unkeyed": unkeyed, "kills_by_point": dict(kills),
               "kills": sum(kills.values()), "seconds": _seconds(started)}
    named_kills = sum(count for how, count in kills.items() if how != "random")
    passed = (with_key["written_once"] == with_key["operations"] == with_key["answered_201"]
              and with_key["answers_naming_another_write"] == 0 and with_key["retries_met_409_in_progress"] == 0
              and named_kills == len(WEB_CRASH_POINTS) * per_point + per_point
              and unkeyed["answered_201"] == unkeyed["operations"])
    return _result(19, TITLE_19, quick, passed, figures, notes=(
        "With a key the reservation, the work and the stored reply are one transaction (harness/http/idempotency.py): "
        "a kill anywhere rolls all three back or none, so the retry writes once or replays. Without a key a kill "
        "after the commit (response.before_send, or a random one that lands there) loses only the reply, and "
        "the retry writes a second session: `unkeyed.written_twice_or_more`."))


def _workers_of(master: int) -> list[int]:
    """The pids of gunicorn's workers (the master's children)."""
    return [int(entry.name) for entry in Path("/proc").iterdir()
            if entry.name.isdigit() and _parent_of(int(entry.name)) == master]


def _kill_workers_of(master: int) -> None:
    for pid in _workers_of(master):
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _until_answered(server: HttpServer, path: str, body: dict, first: dict[str, str],
                    retry: dict[str, str]) -> dict[str, Any]:
    """Send until a reply comes back: the first attempt with its fault headers, retries without them.
    A lost connection, a 5xx or a 409 idempotency_in_progress is retried (the client's policy)."""
    outcome: dict[str, Any] = {"keyed": "Idempotency-Key" in retry, "lost": 0, "in_progress": 0, "status": None,
                               "written_id": None, "replayed": False}
    headers = first
    for _ in range(400):
        try:
            status, got, data = server.request("POST", path, body, headers=headers, timeout=30)
        except _LOST:
            outcome["lost"] += 1
            headers = retry
            time.sleep(0.05)
            continue
        headers = retry
        if status >= 500 or (status == 409 and (data or {}).get("code") == "idempotency_in_progress"):
            outcome["in_progress"] += int(status == 409)
            time.sleep(0.05)
            continue
        outcome.update(status=status, written_id=(data or {}).get("id"),
                       replayed=got.get("idempotent-replayed") == "true")
        return outcome
    return outcome


# --- 15. memory --------------------------------------------------------------------------------

TITLE_15 = "Memory: concurrent identical writes, and scoped retrievals that leak nothing"
WORDS = ("lighthouse", "storm", "keeper", "harbor", "lamp", "tide")


@experiment(15, TITLE_15)
def memory_races_and_scopes(quick: bool) -> Result:
    """1. Rounds of 20 identical writes released together (each on its own connection): one record.
    2. Two projects with the same user/agent keys, live and hidden (deleted, expired, superseded)
       records in every scope; retrievals through the HTTP API by each project's agent token, for
       random scopes, keys (their own and the other project's) and words: every record returned must
       be one of the asker's live records of exactly that scope and key.
    """
    rounds, retrievals = (2, 100) if quick else (5, 1000)
    writers = 20
    started = time.monotonic()
    rng = random.Random(15)
    a, b, races = fresh_project("mem-a"), fresh_project("mem-b"), fresh_project("mem-race")
    operator = Actor.for_user(reviewer_for(a, b, role="operator"))
    agent = Actor.for_agent("memory-agent")
    run_of = {p.pk: factories.make_run(p) for p in (a, b, races)}
    merged_rounds, records_per_round, write_errors = 0, [], 0
    for round_no in range(rounds):
        content = f"The build of round {round_no} uses Python 3.{round_no + 10}."

        def write(i: int, content: str = content) -> Any:
            return memory_write(project=races.pk, actor=agent, scope="project", content=content,
                                source_run_id=run_of[races.pk].pk)

        outcomes = run_concurrently(writers, write, timeout=60)
        write_errors += sum(1 for o in outcomes if isinstance(o, Exception))
        count = MemoryRecord.objects.filter(project=races, content=content).count()
        records_per_round.append(count)
        merged_rounds += int(Counter(getattr(o, "outcome", "error") for o in outcomes) == Counter(
            {"accepted": 1, "merged": writers - 1}))
    sessions = {p.pk: [factories.make_session(p).pk for _ in range(2)] for p in (a, b)}
    # An agent token's agent scope is its own identity (its name here, "memory-reader"): the other agent's key is
    # refused 403 agent_scope_not_yours, which leaks nothing either.
    keys = {"project": [""], "user": ["u1", "u2"], "agent": ["memory-reader", "a2"]}
    live: dict[tuple[int, str, str], set[int]] = {}
    hidden = 0
    for project in (a, b):
        scoped = {**keys, "session": [str(s) for s in sessions[project.pk]]}
        for scope, scope_keys in scoped.items():
            for scope_key in scope_keys:
                ids = live.setdefault((project.pk, scope, scope_key), set())
                made = []
                for i in range(5):
                    text = f"{WORDS[i % len(WORDS)]} {WORDS[(i + 2) % len(WORDS)]} fact {i} of {scope} {scope_key}"
                    written = memory_write(project=project.pk, actor=agent, scope=scope, scope_key=scope_key,
                                           content=text, source_run_id=run_of[project.pk].pk).record
                    assert written is not None
                    made.append(written.pk)
                memory_delete(project=project.pk, actor=operator, record_id=made[0], reason="experiment")
                memory_expire(project=project.pk, actor=operator, record_id=made[1])
                replacement = memory_supersede(project=project.pk, actor=operator, record_id=made[2],
                                               content=f"{WORDS[2]} {WORDS[4]} corrected fact of {scope} {scope_key}",
                                               reason="experiment")
                ids.update({made[3], made[4], replacement.pk})
                hidden += 3
    tokens = {p.pk: factories.make_agent_token(p, name="memory-reader")[1] for p in (a, b)}
    slug = {a.pk: a.slug, b.pk: b.slug}
    leaks, incomplete, nonempty, cross_refused, cross_tries, errors = 0, 0, 0, 0, 0, []
    foreign_agent_tries, foreign_agent_refused = 0, 0
    with processes("memory") as procs:
        server = HttpServer(procs, workers=3)
        for _ in range(retrievals):
            asker = rng.choice((a.pk, b.pk))
            other = b.pk if asker == a.pk else a.pk
            scope = rng.choice(("project", "user", "agent", "session"))
            owner = asker if rng.random() < 0.7 else other
            scope_key = rng.choice({**keys, "session": [str(s) for s in sessions[owner]]}[scope])
            query = rng.choice(("",) + WORDS)
            params = f"scope={scope}&scope_key={scope_key}&q={query}&k=50"
            auth = {"Authorization": f"Bearer {tokens[asker]}"}
            if rng.random() < 0.1:
                # Besides the scoped retrieval: the same one naming the other project must be 404.
                status, _, _ = server.request("GET", f"/api/v1/memory/retrieve/?{params}&project={slug[other]}",
                                              headers=auth)
                cross_tries += 1
                cross_refused += int(status == 404)
            status, _, data = server.request("GET", f"/api/v1/memory/retrieve/?{params}", headers=auth)
            if scope == "agent" and scope_key != "memory-reader":
                foreign_agent_tries += 1
                code = data.get("code") if isinstance(data, dict) else None
                foreign_agent_refused += int(status == 403 and code == "agent_scope_not_yours")
                continue
            if status != 200:
                errors.append(status)
                continue
            allowed = live.get((asker, scope, scope_key), set())
            returned = {record["id"] for record in data}
            leaks += len(returned - allowed) + sum(
                1 for record in data if (record["scope"], record["scope_key"]) != (scope, scope_key))
            nonempty += int(bool(returned))
            if not query and returned != allowed:
                incomplete += 1
    figures = {
        "concurrent_writers": writers, "rounds": rounds, "records_per_round": records_per_round,
        "rounds_one_accepted_rest_merged": merged_rounds, "write_errors": write_errors,
        "retrievals": retrievals, "leaks": leaks, "nonempty_answers": nonempty,
        "hidden_records_planted": hidden, "incomplete_answers": incomplete,
        "cross_project_tries": cross_tries, "cross_project_404": cross_refused,
        "foreign_agent_scope_tries": foreign_agent_tries, "foreign_agent_scope_403": foreign_agent_refused,
        "unexpected_statuses": sorted(set(errors)),
        "seconds": _seconds(started),
    }
    passed = (all(count == 1 for count in records_per_round) and merged_rounds == rounds and write_errors == 0
              and leaks == 0 and incomplete == 0 and nonempty > 0 and cross_refused == cross_tries
              and foreign_agent_refused == foreign_agent_tries and not errors)
    return _result(15, TITLE_15, quick, passed, figures)


# --- child processes ---------------------------------------------------------------------------

CHILDREN: dict[str, Callable[[dict], None]] = {
    "claim": _child_claim,
    "fence": _child_fence,
    "resume": _child_resume,
}


def child_main(argv: list[str]) -> None:
    """Entry point of the processes the experiments start (see CHILD_BOOT)."""
    command, args = argv[0], json.loads(argv[1])
    CHILDREN[command](args)
