"""Past one machine: two "machines" (two bin/serve sets: web + worker + beat, and web + worker) against one
PostgreSQL through PgBouncer in transaction mode, with a streaming replica (pg_basebackup) for the console's
heavy pages. The test starts its own primary, replica and PgBouncer on loopback (tests/ops/cluster.py).

What it shows: agents' writes spread over both machines stay consistent (one session, gap-free seqs); a decision
made on one machine is resumed by a worker of either, once; the console's heavy page reads the replica (with the
replica's replay paused, the page does not see a new item that the API, on the primary, does) while the decision
and the resume, which depend on what they read, never touch it.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests import template_db
from tests.ops import cluster
from tests.subprocesses import ROOT
from tests.worker.support import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.slow]

SETUP = """
import json, django
django.setup()
from demo.scenario import demo_scenario_create
from harness.models import ApiToken, Project
from tests import factories
project = factories.make_project("novelforge")
run = demo_scenario_create(project=project)
reviewer = factories.make_user("rita", role="reviewer", projects=[project], password="rita-topology-pw")
_, personal = factories.make_personal_token(reviewer)
_, agent = factories.make_agent_token(project, name="topology-agent")
print(json.dumps({"run": run.pk, "approval": run.pending_approval_id, "personal": personal, "agent": agent}))
"""


@pytest.fixture
def topology(broker, django_db_setup) -> Iterator[dict]:  # type: ignore[no-untyped-def]
    root = cluster.workspace()
    started: list = []
    try:
        primary = cluster.primary(root)
        started.append(primary)
        env = {**os.environ, "DATABASE_URL": primary.url(), "PYTHONUNBUFFERED": "1"}
        # The suite's migrated template, copied in: migrating from nothing again would be ~30 s of the test's
        # time for nothing it checks (bin/serve's own `migrate` below still runs, and finds nothing to do).
        template_db.copy_template_into(primary.url())
        done = subprocess.run([sys.executable, "-c", SETUP], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        world = json.loads(done.stdout.strip().splitlines()[-1])
        replica = cluster.replica_of(primary, root)
        started.append(replica)
        bouncer = cluster.pgbouncer(primary, root)
        started.append(bouncer)
        yield {"root": root, "primary": primary, "replica": replica, "bouncer": bouncer, **world}
    finally:
        for thing in reversed(started):
            thing.stop()
        shutil.rmtree(root, ignore_errors=True)


def _serve(name: str, root: Path, port: int, env: dict[str, str]) -> tuple[subprocess.Popen, Path]:
    log_path = root / f"{name}.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen([str(ROOT / "bin" / "serve")], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, env={**env, "BIND": f"127.0.0.1:{port}",
                                                             "HARNESS_VAR_DIR": str(root / f"var-{name}")})
    return proc, log_path


def test_two_machines_through_pgbouncer_with_a_replica_for_the_consoles_heavy_pages(
        topology: dict, fake_service) -> None:  # type: ignore[no-untyped-def]
    root, primary, replica = topology["root"], topology["primary"], topology["replica"]
    env = {
        **os.environ, "DATABASE_URL": topology["bouncer"].url(), "DATABASE_PREPARED_STATEMENTS": "0",
        "DATABASE_REPLICA_URL": replica.url(), "SECRET_KEY": "topology-" + "x9Yq2" * 12, "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1", "SECURE_COOKIES": "0", "WEB_WORKERS": "2", "WORKER_CONCURRENCY": "2",
        "HARNESS_WORKER_HEARTBEAT_SECONDS": "1", "HARNESS_RECOVERY_INTERVAL_SECONDS": "1", "PYTHONUNBUFFERED": "1",
        "HARNESS_TOOL_ADAPTERS": json.dumps({"publish_chapter": {"kind": "http", "url": fake_service.url,
                                                                 "timeout": 10, "connect_timeout": 2}}),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    ports = {"a": cluster.free_port(), "b": cluster.free_port()}
    machines = {
        "a": _serve("a", root, ports["a"], {**env, "HARNESS_ROLES": "web,worker,beat"}),
        "b": _serve("b", root, ports["b"], {**env, "HARNESS_ROLES": "web,worker", "HARNESS_MIGRATE": "0"}),
    }
    clients = {name: httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) for name, port in ports.items()}
    agent = {"Authorization": f"Bearer {topology['agent']}"}
    try:
        def ready(name: str) -> bool:
            proc, log_path = machines[name]
            assert proc.poll() is None, log_path.read_text()[-4000:]
            try:
                return clients[name].get("/readyz").status_code == 200
            except httpx.TransportError:
                return False

        for name in machines:
            wait_for(lambda name=name: ready(name), timeout=90, what=f"machine {name} ready")

        # Agents' writes, alternating machines, into one session: one gap-free sequence.
        session = clients["a"].post("/api/v1/sessions/", headers={**agent, "Idempotency-Key": uuid.uuid4().hex},
                                    json={"role": "writer", "memory_policy": "session"}).json()
        for i in range(12):
            machine = clients["ab"[i % 2]]
            appended = machine.post(f"/api/v1/sessions/{session['id']}/items/",
                                    headers={**agent, "Idempotency-Key": f"item-{i}"},
                                    json={"items": [{"role": "user", "content": {"text": f"line {i}"}}]})
            assert appended.status_code == 201, appended.text
        seqs = [item["seq"] for item in clients["b"].get(f"/api/v1/sessions/{session['id']}/items/",
                                                        headers=agent).json()["results"]]
        assert seqs == list(range(1, 13))

        # The replica stops replaying; the primary goes on.
        cluster.caught_up(primary, replica)
        replica.query("SELECT pg_wal_replay_pause()", dbname="postgres")
        marker = f"marker-{uuid.uuid4().hex}"
        assert clients["b"].post(f"/api/v1/sessions/{session['id']}/items/",
                                 headers={**agent, "Idempotency-Key": marker},
                                 json={"items": [{"role": "user", "content": {"text": marker}}]}).status_code == 201
        assert marker in clients["a"].get(f"/api/v1/sessions/{session['id']}/items/", headers=agent).text

        # A decision on machine b, resumed by a worker of either machine, while the replica is behind.
        reviewer = {"Authorization": f"Bearer {topology['personal']}"}
        read = clients["b"].get(f"/api/v1/approvals/{topology['approval']}/", headers=reviewer)
        assert read.status_code == 200, read.text
        decided = clients["b"].post(f"/api/v1/approvals/{topology['approval']}/decision/", headers=reviewer,
                                    json={"decision": "approve", "expected_version": read.json()["version"]})
        assert decided.status_code == 200, decided.text
        run_path = f"/api/v1/runs/{topology['run']}/"
        wait_for(lambda: clients["a"].get(run_path, headers=agent).json()["status"] == "succeeded", timeout=60,
                 what="the run resumed to succeeded")
        assert sum(fake_service.executions.values()) == 1

        # The console's timeline (a replica page) does not see the marker yet; once replay resumes, it does.
        console = clients["a"]
        login = console.get("/login/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text)
        assert csrf is not None
        assert console.post("/login/", data={"username": "rita", "password": "rita-topology-pw",
                                             "csrfmiddlewaretoken": csrf.group(1)}).status_code == 302
        timeline = console.get(f"/sessions/{session['id']}/")
        assert timeline.status_code == 200 and "line 11" in timeline.text and marker not in timeline.text
        replica.query("SELECT pg_wal_replay_resume()", dbname="postgres")
        cluster.caught_up(primary, replica)
        assert marker in console.get(f"/sessions/{session['id']}/").text
    finally:
        for client in clients.values():
            client.close()
        for proc, _ in machines.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for name, (proc, log_path) in machines.items():
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                raise AssertionError(f"machine {name} did not stop:\n{log_path.read_text()[-3000:]}") from None
