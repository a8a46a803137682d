"""LangGraph Server as scenario L's peer: two runtimes, each in a virtualenv of its own under var/bench/, made on
first use with pip (outside the project's requirements: neither is a dependency of ours, and their pins clash
with ours), and started and stopped like our servers (bench/procs.py: own process group, 127.0.0.1, a free port,
the log in var/bench/).

- in-memory: `langgraph dev` as `langgraph-cli[inmem]` ships it (langgraph-api 0.16.7 on
  langgraph-runtime-inmem): one uvicorn process, the state in Python dicts, pickled to its working directory
  every 10 s (no fsync), one background job at a time (N_JOBS_PER_WORKER=1).
- PostgreSQL: `langhost serve` (the CLI that ships beside `langgraph-runtime-pg` 0.11.1.post1, which pins
  langgraph-api 0.11.1): the same langgraph-api on the open Postgres + Redis runtime, its own database (made
  afresh each run, its schema made once by the runtime's own startup code before the workers start) and a Redis
  database of its own on the bench's broker.
  Two uvicorn workers, one per core, as ours gets two web workers.

Both serve bench/langgraph_server_graph.py as the graph `review`, with no auth (their noop auth: ours checks a
token on every call).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from django.conf import settings

from bench import procs
from bench.scenarios_store import pg_url

GRAPH_FILE = Path(__file__).resolve().parent / "langgraph_server_graph.py"
GRAPH_ID = "review"
STARTED = "Application started up in"  # langgraph-api's log line once a worker's startup is done


@dataclass(frozen=True)
class Runtime:
    key: str
    label: str  # the subject's name in the tables
    requirements: tuple[str, ...]
    workers: int  # uvicorn worker processes (0: the server is one process)

    @property
    def venv(self) -> Path:
        return procs.LOG_DIR / f"langgraph-{self.key}"


INMEM = Runtime("inmem", "LangGraph Server in-memory (langgraph dev)",
                ("langgraph-cli[inmem]==0.4.40", "langgraph-api==0.16.7", "langgraph-runtime-inmem==0.36.7"), 0)
PG = Runtime("pg", "LangGraph Server PostgreSQL (langgraph-runtime-pg)",
             ("langgraph-runtime-pg==0.11.1.post1", "langhost==0.11.1.post1"), 2)
RUNTIMES = (INMEM, PG)


def ensure_venv(runtime: Runtime) -> Path:
    """The runtime's virtualenv, made (or brought to its pins) with pip when missing or changed: its bin/."""
    stamp = runtime.venv / ".bench-requirements"
    wanted = "\n".join(runtime.requirements) + "\n"
    if stamp.exists() and stamp.read_text() == wanted:
        return runtime.venv / "bin"
    procs.LOG_DIR.mkdir(parents=True, exist_ok=True)
    log = procs.LOG_DIR / f"langgraph-{runtime.key}-install.log"
    print(f"  installing {runtime.label} into {runtime.venv} (pip, once; log {log})", flush=True)
    with log.open("w") as out:
        if not (runtime.venv / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(runtime.venv)], check=True, stdout=out,
                           stderr=subprocess.STDOUT)
        done = subprocess.run([str(runtime.venv / "bin" / "pip"), "install", "--quiet", *runtime.requirements],
                              stdout=out, stderr=subprocess.STDOUT)
    if done.returncode:
        raise RuntimeError(f"pip could not install {runtime.label}:\n{log.read_text(errors='replace')[-3000:]}")
    stamp.write_text(wanted)
    return runtime.venv / "bin"


def database_uri() -> str:
    """The PostgreSQL runtime's own database, beside the bench's: <bench database>_langgraph."""
    parts = urlsplit(pg_url())
    return urlunsplit(parts._replace(path=parts.path + "_langgraph"))


def redis_uri() -> str:
    """The PostgreSQL runtime's Redis: the bench's broker server, the database after the broker's."""
    parts = urlsplit(settings.CELERY_BROKER_URL)
    db = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(db + 1) % 16}"))


def _fresh_database(uri: str) -> None:
    """Each run starts the PostgreSQL runtime on an empty database (it migrates it at start)."""
    name = urlsplit(uri).path.strip("/")
    with psycopg.connect(pg_url(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def _home(runtime: Runtime) -> Path:
    """The server's working directory: its langgraph.json and (the dev server) its persistence files."""
    home = procs.LOG_DIR / f"langgraph-{runtime.key}-home"
    shutil.rmtree(home, ignore_errors=True)  # nothing carried over from an earlier run
    home.mkdir(parents=True)
    config = {"dependencies": ["."], "graphs": {GRAPH_ID: f"{GRAPH_FILE}:graph"}}
    (home / "langgraph.json").write_text(json.dumps(config))
    return home


def _ok(port: int) -> bool:
    """Their health route answers 200 (the port alone opens before the app's startup finished)."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        conn.request("GET", "/ok")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        with contextlib.suppress(Exception):
            conn.close()


# Nothing leaves the machine: no version check, no tracing, no CLI analytics.
_QUIET = {"LANGGRAPH_NO_VERSION_CHECK": "1", "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false",
          "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_API_KEY": ""}


# The runtime's startup of its database (migrations, checkpointer and store tables, its Redis stream), once; the
# process then ends without its shutdown (whose stop_pool() waits on the stream's reader forever).
_PREPARE_PG = """
import asyncio, os
from langgraph_runtime_pg.database import start_pool

asyncio.run(start_pool())
os._exit(0)
"""


def start(runtime: Runtime) -> procs.Server:
    bin_dir = ensure_venv(runtime)
    home = _home(runtime)
    port = procs.free_port()
    env = dict(_QUIET)
    if runtime is INMEM:
        argv = [str(bin_dir / "langgraph"), "dev", "--host", "127.0.0.1", "--port", str(port), "--no-reload",
                "--no-browser", "--config", str(home / "langgraph.json")]
    else:
        env |= {"DATABASE_URI": database_uri(), "REDIS_URI": redis_uri()}
        _fresh_database(env["DATABASE_URI"])
        # The schema made once before the workers start, by the runtime's own startup (its migrations, then the
        # checkpointer's and the store's tables): two workers doing it at once on an empty database collide on
        # CREATE TABLE. Then the workers skip the migrations, as the runtime's docs say for a pre-deploy job.
        prepare = subprocess.run([str(bin_dir / "python"), "-c", _PREPARE_PG], cwd=home,
                                 env={**os.environ, **env, "LANGGRAPH_RUNTIME_EDITION": "pg"},
                                 capture_output=True, text=True, timeout=120)
        if prepare.returncode:
            raise RuntimeError(f"the PostgreSQL runtime's schema setup failed:\n{prepare.stdout}{prepare.stderr}")
        env["LG_RUNTIME_PG_AUTO_MIGRATE"] = "false"
        argv = [str(bin_dir / "langhost"), "serve", "--host", "127.0.0.1", "--port", str(port), "--workers",
                str(runtime.workers), "--config", str(home / "langgraph.json"), "--server-log-level", "WARNING"]
    name = f"bench-langgraph-{runtime.key}"
    proc, log_path = procs._spawn(name, argv, env, cwd=home)
    # Ready when every worker process has finished its startup (each logs it) and the health route answers.
    procs._wait(lambda: log_path.read_text(errors="replace").count(STARTED) >= max(1, runtime.workers)
                and _ok(port), proc, name, log_path, timeout=180)
    return procs.Server(name=name, proc=proc, log_path=log_path, port=port)


def tree_rss_mb(server: procs.Server) -> int:
    """A server's resident memory: its process and the worker processes it forked, in all (ours and theirs)."""
    pids = [server.proc.pid, *procs.children(server.proc.pid)]
    return round(sum(procs.rss_mb(pid) for pid in pids))
