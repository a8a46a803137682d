"""CPU per agent request in the Django process, for the four hottest calls (issue 14).

    DATABASE_URL=... SECRET_KEY=x DEBUG=0 HARNESS_DEMO=1 ALLOWED_HOSTS=127.0.0.1 \
      .venv/bin/python bench/cpu_per_request.py [--requests 2000] [--only append,latest,checkpoint]
      [--chains] [--profile N [--profile-out FILE] [--profile-dump DIR]]

The requests are scenario H's (bench/scenarios_api.py), built as WSGI environs with a real agent token:
    append      POST /api/v1/sessions/{id}/items/           one ~1 KB item, a fresh Idempotency-Key   (H1)
    latest      GET  /api/v1/sessions/{id}/items/latest/?limit=50 of a 10,000-item session            (H2)
    checkpoint  POST /api/v1/checkpoints/                   a chain: each one the last one's child, ~1 KB
                                                            state, a fresh Idempotency-Key            (H3)
    lineage     GET  /api/v1/checkpoints/{id}/lineage/      of a 1,000-deep chain of ~1 KB states     (H4)
Each is handed to `config.wsgi.application(environ, start_response)` as a WSGI server hands it (the request
built, the request_started/finished signals, the handler's choice of chain, the body's bytes joined), in this one
process: no HTTP server, no client. Prints the CPU time (process time: the database's own work is not in it, the
client side of psycopg is) per request. The scenarios take turns, in rounds, so a busy machine slows each alike.

--chains  also the append through each middleware chain alone (settings.MIDDLEWARE and API_MIDDLEWARE), taking
          turns: what the API's shorter chain saves.
--parts   also where each call's CPU goes, each part timed in place (below, `PLACES`): the WSGI layer, the
          middleware, the token and throttle, the body's parse, the view, serialization, the statements.
--profile N  after the measurement, N more requests of each scenario under cProfile with a CPU timer
          (`cProfile.Profile(time.process_time)`), the top functions by own and by cumulative CPU time printed
          (to FILE with --profile-out, else stdout).

Each call's CPU budget (issue 35) is printed beside it, met or not: append and checkpoint write <= 0.8 ms, a latest
read <= 0.5 ms.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# --tree DIR: measure another worktree's code (a "before") with this script's measurements, parts included.
if "--tree" in sys.argv:
    ROOT = Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Plain-HTTP requests, as on loopback: with DEBUG off the settings would otherwise redirect them to https.
os.environ.setdefault("SECURE_COOKIES", "0")
# A rate no run reaches: the throttle counts (its cost is measured) but never refuses.
os.environ.setdefault("HARNESS_API_RATE", "100000000/min")

import django  # noqa: E402

django.setup()

from django.core.handlers.wsgi import WSGIHandler, WSGIRequest  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import close_old_connections  # noqa: E402

from config.wsgi import application  # noqa: E402
from harness.models import Project  # noqa: E402
from runs_app.models import Checkpoint, Run  # noqa: E402
from runs_app.services import checkpoint_create, run_create  # noqa: E402
from sessions_app.models import Session, SessionItem  # noqa: E402
from sessions_app.services import NewItem, session_create, session_items_append  # noqa: E402

# Scenario H's payloads (bench/scenarios_api.py: ITEM_1K, STATE_1K), spelled out so this script imports no bench
# module that needs the peers' packages.
TEXT_1K = ("The keeper climbs the stair at dusk; the lamp is cold and the storm is late. " * 13)[:1000]
APPEND_BODY = json.dumps({"items": [{"role": "user", "content": {"text": TEXT_1K}}]}).encode()
STATE_1K = {"completed": ["outline", "draft"], "notes": TEXT_1K}
READ_REF = "cpu-per-request-10k"
# Issue 35's CPU budget per call in the web process, ms.
BUDGET_MS = {"append": 0.8, "checkpoint": 0.8, "latest": 0.5}
LINEAGE_REF = "cpu-per-request-lineage-1000"


def _environ(method: str, path: str, token: str, body: bytes = b"", query: str = "") -> dict[str, Any]:
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query, "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": "127.0.0.1",
        "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr,
        "HTTP_AUTHORIZATION": f"Bearer {token}",
    }
    if method == "POST":
        environ.update({"CONTENT_LENGTH": str(len(body)), "CONTENT_TYPE": "application/json",
                        "HTTP_IDEMPOTENCY_KEY": uuid.uuid4().hex})
    return environ


class Scenario:
    """Builds one request's environ; `check` reads its answer (a chain's next parent, say)."""

    def __init__(self, name: str, status: int, build: Callable[[], dict[str, Any]],
                 check: Callable[[bytes], None] = lambda body: None, app: Any = None) -> None:
        self.name, self.status, self.build, self.check = name, status, build, check
        self.app = app  # None: the project's WSGI application; else another one (a floor's)


def _floor_app() -> Any:
    """bench/floor_app.py (scenario H's floors) on this process's database, its read table filled: what the bare
    WSGI app spends per request, beside which the budgets are set (run with `--only floor-write,floor-read`)."""
    os.environ.setdefault("BENCH_FLOOR_DATABASE_URL", os.environ["DATABASE_URL"])
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this script's bench/, whichever --tree
    from bench import floor_app

    floor_app.read_fixture(os.environ["BENCH_FLOOR_DATABASE_URL"], json.dumps({"text": TEXT_1K}))
    return floor_app.application


def _latest_fixture(project: Project) -> int:
    """A 10,000-item session (made once in this database, reused by later runs)."""
    session = Session.objects.filter(project=project, ref=READ_REF).first()
    if session is None or SessionItem.objects.filter(session=session).count() != 10_000:
        if session is not None:
            Session.objects.filter(pk=session.pk).update(ref=f"{READ_REF}-stale-{uuid.uuid4().hex[:6]}")
        session = session_create(project=project, role="manager", memory_policy="bounded", ref=READ_REF)
        item: NewItem = {"role": "user", "content": {"text": TEXT_1K}, "run_id": None}
        for _ in range(20):
            session_items_append(project=project, session_id=session.pk, items=[item] * 500)
    return session.pk


def _lineage_fixture(project: Project) -> int:
    """The newest checkpoint of a 1,000-deep chain of ~1 KB states (H4's shape; made once, reused)."""
    run = Run.objects.filter(project=project, ref=LINEAGE_REF).first()
    if run is not None:
        newest = Checkpoint.objects.filter(run=run).order_by("-id").values_list("id", "depth").first()
        if newest is not None and newest[1] == 999:
            return newest[0]
        Run.objects.filter(pk=run.pk).update(ref=f"{LINEAGE_REF}-stale-{uuid.uuid4().hex[:6]}")
    session = session_create(project=project, role="manager", memory_policy="bounded").pk
    run_id = run_create(project=project, session_id=session, ref=LINEAGE_REF).pk
    last = None
    for n in range(1000):
        last = checkpoint_create(project=project, run_id=run_id, parent_id=last, state=STATE_1K, cursor={"n": n}).pk
    assert last is not None
    return last


def scenarios(project: Project, token: str) -> dict[str, Scenario]:
    writer = session_create(project=project, role="writer", memory_policy="session").pk
    append_path = f"/api/v1/sessions/{writer}/items/"
    latest_path = f"/api/v1/sessions/{_latest_fixture(project)}/items/latest/"
    run = run_create(project=project,
                     session_id=session_create(project=project, role="manager", memory_policy="bounded").pk).pk
    lineage = _lineage_fixture(project)
    chain: dict[str, int | None] = {"last": Checkpoint.objects.filter(run_id=run).order_by("-id")
                                    .values_list("id", flat=True).first()}

    def checkpoint() -> dict[str, Any]:
        body = json.dumps({"run": run, "parent": chain["last"], "label": "step", "state": STATE_1K,
                           "cursor": {"node": "draft"}}).encode()
        return _environ("POST", "/api/v1/checkpoints/", token, body)

    def next_parent(body: bytes) -> None:
        chain["last"] = json.loads(body)["id"]

    return {
        "append": Scenario("append (H1)", 201, lambda: _environ("POST", append_path, token, APPEND_BODY)),
        "latest": Scenario("latest 50 of 10,000 (H2)", 200,
                           lambda: _environ("GET", latest_path, token, query="limit=50")),
        "checkpoint": Scenario("checkpoint write (H3)", 201, checkpoint, next_parent),
        "lineage": Scenario("lineage of 1,000 (H4)", 200,
                            lambda: _environ("GET", f"/api/v1/checkpoints/{lineage}/lineage/", token)),
        # The floors, as scenario H serves them (the same headers; the write floor stores H1's body).
        "floor-write": Scenario("floor: one INSERT", 201, lambda: _environ("POST", "/", token, APPEND_BODY),
                                app="floor"),
        "floor-read": Scenario("floor: one SELECT of 50", 200, lambda: _environ("GET", "/latest", token),
                               app="floor"),
    }


def serve_wsgi(environ: dict[str, Any], app: Any = None) -> tuple[int, bytes]:
    """What a WSGI server does with one request: call the application, join the body, close the iterable."""
    status: list[str] = []

    def start_response(line: str, headers: Any, exc_info: Any = None) -> Callable[[bytes], object]:
        status.append(line)
        return lambda data: None

    result = (app or application)(environ, start_response)
    try:
        body = b"".join(result)
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    return int(status[0].split(" ", 1)[0]), body


def _run(scenario: Scenario, count: int) -> float:
    """CPU seconds for `count` requests of a scenario (environs built before the clock starts, except the
    checkpoint chain's, which needs each answer: its body is a few µs of json.dumps)."""
    environs = [scenario.build() for _ in range(count)] if scenario.name != "checkpoint write (H3)" else None
    if scenario.app == "floor":
        scenario.app = _floor_app()
    start = time.process_time()
    for i in range(count):
        status, body = serve_wsgi(environs[i] if environs is not None else scenario.build(), scenario.app)
        if status != scenario.status:
            sys.exit(f"{scenario.name}: {status} {body[:300]!r}")
        scenario.check(body)
    return time.process_time() - start


def _chains(path: str, token: str, requests: int) -> None:
    """The append through each middleware chain alone (no WSGI layer): what the API chain saves."""
    chains = {"full chain (settings.MIDDLEWARE)": lambda r: WSGIHandler.get_response(application, r),
              "API chain (settings.API_MIDDLEWARE)": application.api_chain.get_response}
    cpu = dict.fromkeys(chains, 0.0)
    for serve in chains.values():  # warm both
        for _ in range(50):
            serve(WSGIRequest(_environ("POST", path, token, APPEND_BODY)))
    rounds = 10
    for _ in range(rounds):
        for name, serve in chains.items():
            requests_ = [WSGIRequest(_environ("POST", path, token, APPEND_BODY)) for _ in range(requests // rounds)]
            start = time.process_time()
            for request in requests_:
                response = serve(request)
                if response.status_code != 201:
                    sys.exit(f"{name}: {response.status_code} {response.getvalue()[:200]!r}")
            cpu[name] += time.process_time() - start
    for name, seconds in cpu.items():
        print(f"{name:40s} {1000 * seconds / requests:.3f} ms of CPU per keyed append (the chain alone)")


# The parts of a request, each a function whose cumulative CPU time is the part's (they may nest: the token's
# statement is inside the authentication, every statement inside "statements"; where several functions of the
# file have the name, the outermost's, the largest, is taken: URLResolver.resolve holds URLPattern.resolve).
# cProfile's own cost per call inflates Python-heavy parts against C ones, so the shares are a map of where to
# look, not a measurement of it.
PARTS = [
    ("the whole WSGI call", "django/core/handlers/wsgi.py", "__call__"),
    ("middleware and handler (all below)", "harness/ops/observe.py", "__call__"),
    ("DRF's dispatch (all below)", "rest_framework/views.py", "dispatch"),
    ("  authentication (token statement included)", "harness/http/auth.py", "authenticate"),
    ("  content negotiation", "rest_framework/views.py", "perform_content_negotiation"),
    ("  throttle", "rest_framework/views.py", "check_throttles"),
    ("  permissions", "rest_framework/views.py", "check_permissions"),
    ("  body parse (request.data)", "rest_framework/request.py", "_load_data_and_files"),
    ("  rendering (response)", "rest_framework/response.py", "rendered_content"),
    ("statements: Django cursor + psycopg (all)", "django/db/backends/utils.py", "execute"),
    ("URL resolve (every resolve of the request)", "django/urls/resolvers.py", "resolve"),
    ("request signals (started/finished)", "django/dispatch/dispatcher.py", "send"),
    ("access line (logging)", "logging/__init__.py", "info"),
    ("request metrics", "harness/ops/metrics.py", "observe_request"),
    ("body limits: JSON depth", "harness/http/middleware.py", "json_depth"),
    ("Idempotency-Key: fingerprint", "harness/http/idempotency.py", "request_fingerprint"),
]


def print_parts(stats: pstats.Stats, report: Any) -> None:
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]  # pstats' own table
    total = sum(row[3] for (path, _, name), row in raw.items() if path.endswith("cpu_per_request.py")
                and name == "serve_wsgi")
    print(f"{'part':46s} {'CPU s':>7s} {'share':>6s}", file=report)
    for label, path_end, function in PARTS:
        seconds = max((row[3] for (path, _, name), row in raw.items() if path.endswith(path_end) and name == function),
                      default=0.0)
        print(f"{label:46s} {seconds:7.3f} {100 * seconds / total if total else 0:5.1f}%", file=report)


def _package(filename: str) -> str:
    """The package a profiled function's own CPU is charged to: site-packages' top-level name, the project's app,
    or the standard library's module."""
    if "site-packages/" in filename:
        return filename.split("site-packages/", 1)[1].split("/", 1)[0]
    path = Path(filename)
    if ROOT in path.parents:
        return str(path.relative_to(ROOT).parts[0])
    if filename.startswith("<") or filename == "~":
        return "builtins"
    return "stdlib:" + path.stem


def print_by_package(stats: pstats.Stats, report: Any) -> None:
    """Each package's own CPU (tottime, so nothing is counted twice), largest first."""
    own: dict[str, float] = {}
    total = 0.0
    for (filename, _, _), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        own[_package(filename)] = own.get(_package(filename), 0.0) + tottime
        total += tottime
    print(f"{'package (own CPU, nothing counted twice)':48s} {'CPU s':>6s}  share", file=report)
    for name, seconds in sorted(own.items(), key=lambda kv: -kv[1])[:20]:
        print(f"{name:48s} {seconds:6.3f} {100 * seconds / total:5.1f}%", file=report)


# --- where a call's CPU goes, each part timed in place (--parts) ------------------------------------------------
# Each place is wrapped so that its own CPU time (process time, exclusive: a place's time stops while a place
# inside it runs) is added to its part; what no place inside claims stays with the nearest one around it. So the
# parts add up to the whole call, and none is counted twice. The wrappers' own clock reads (two per place a
# request passes, ~0.5 µs each) land in the parts too: the total with --parts is a little above the one without.
# (cProfile's shares, --profile, are inflated for Python-heavy parts against C ones; these are not.)
PLACES: list[tuple[str, str, str]] = [
    # (part, module, attribute: "function" or "Class.method")
    ("WSGI layer: request, signals, response, close", __name__, "serve_wsgi"),  # this module, as it runs
    ("middleware + Django's handler", "harness.http.handlers", "HarnessWSGIHandler.get_response"),
    ("  of which the access line", "harness.ops.logs", "info_line"),
    ("  of which request metrics", "harness.ops.observe", "observe_request"),
    ("  of which the Idempotency-Key's fingerprint", "harness.http.idempotency", "request_fingerprint"),
    ("the view: validation, the service's Python", "sessions_app.api", "plain_write"),
    ("the view: validation, the service's Python", "sessions_app.api", "plain_read"),
    ("the view: validation, the service's Python", "runs_app.api.checkpoints", "plain_write"),
    ("the view: validation, the service's Python", "runs_app.api.checkpoints", "plain_read"),
    ("token auth, tenancy, throttle (plain_caller)", "harness.http.plain", "plain_caller"),
    ("body parse (plain_body)", "harness.http.plain", "plain_body"),
    ("serialization (the reply's dict, JSON)", "harness.http.plain", "_render"),
    ("serialization (the reply's dict, JSON)", "sessions_app.api", "item_out"),
    ("serialization (the reply's dict, JSON)", "runs_app.api.checkpoints", "checkpoint_out"),
    ("database round trips (Django cursor + psycopg)", "django.db.backends.utils", "CursorWrapper.execute"),
    ("database round trips (Django cursor + psycopg)", "psycopg", "Cursor.fetchone"),
    ("database round trips (Django cursor + psycopg)", "psycopg", "Cursor.fetchall"),
    ("database round trips (Django cursor + psycopg)", "harness.db", "prepared_cursor"),
    ("database round trips (Django cursor + psycopg)", "harness.db", "_json_text_cursor"),
    ("database round trips (Django cursor + psycopg)", "psycopg", "Connection.execute"),  # the floors' statement
]
_spent: dict[str, int] = {}
_stack: list[list[Any]] = []  # [part, started (ns)] of the places the request is in, innermost last


def _timed(part: str, function: Callable[..., Any]) -> Callable[..., Any]:
    clock = time.process_time_ns

    def timed(*args: Any, **kwargs: Any) -> Any:
        now = clock()
        if _stack:
            outer = _stack[-1]
            _spent[outer[0]] = _spent.get(outer[0], 0) + now - outer[1]
        _stack.append([part, now])
        try:
            return function(*args, **kwargs)
        finally:
            now = clock()
            _spent[part] = _spent.get(part, 0) + now - _stack.pop()[1]
            if _stack:
                _stack[-1][1] = now

    return timed


def place_timers() -> None:
    import importlib

    for part, module_name, attribute in PLACES:
        module = importlib.import_module(module_name)
        owner: Any = module
        name = attribute
        if "." in attribute:
            class_name, name = attribute.split(".")
            owner = getattr(module, class_name)
        if hasattr(owner, name):  # an older tree (--tree) may lack a place
            setattr(owner, name, _timed(part, getattr(owner, name)))


def print_parts_in_place(chosen: dict[str, Scenario], requests: int) -> None:
    """Each call's parts, its requests run after the timers are placed (taking turns, as the measurement)."""
    place_timers()  # _run looks serve_wsgi up in this module's globals: the timed one from now on
    rounds = 5
    by_call: dict[str, dict[str, int]] = {name: {} for name in chosen}
    for _ in range(rounds):
        for name, scenario in chosen.items():
            _spent.clear()
            _run(scenario, requests // rounds)
            for part, ns in _spent.items():
                by_call[name][part] = by_call[name].get(part, 0) + ns
    labels = list(dict.fromkeys(part for part, _, _ in PLACES))
    print(f"\n{'µs of CPU per request, by part (exclusive)':50s}" + "".join(f"{n:>12s}" for n in chosen))
    for label in labels:
        print(f"{label:50s}" + "".join(f"{by_call[n].get(label, 0) / 1000 / requests:12.1f}" for n in chosen))
    print(f"{'all parts (the whole call)':50s}" + "".join(
        f"{sum(by_call[n].values()) / 1000 / requests:12.1f}" for n in chosen))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000, help="per scenario")
    parser.add_argument("--only", default="append,latest,checkpoint,lineage")
    parser.add_argument("--chains", action="store_true")
    parser.add_argument("--parts", action="store_true")
    parser.add_argument("--tree", default="", help="the worktree whose code is measured (default: this one's)")
    parser.add_argument("--profile", type=int, default=0)
    parser.add_argument("--profile-out", default="")
    parser.add_argument("--profile-dump", default="", help="also save each scenario's raw stats as DIR/<name>.prof")
    args = parser.parse_args()
    project = Project.objects.get_or_create(slug="bench-cpu", defaults={"name": "Bench CPU"})[0]
    out = io.StringIO()
    call_command("create_agent_token", project=project.slug, name=f"cpu-{uuid.uuid4().hex[:6]}", stdout=out,
                 stderr=io.StringIO())
    token = out.getvalue().strip().splitlines()[-1]
    every = scenarios(project, token)
    chosen = {name: every[name] for name in args.only.split(",")}
    close_old_connections()
    for scenario in chosen.values():  # warm each
        _run(scenario, 50)
    rounds = 10
    cpu = dict.fromkeys(chosen, 0.0)
    for _ in range(rounds):
        for name, scenario in chosen.items():
            cpu[name] += _run(scenario, args.requests // rounds)
    for name, seconds in cpu.items():
        ms = 1000 * seconds / args.requests
        budget = BUDGET_MS.get(name)
        verdict = "" if budget is None else f"   budget <= {budget} ms: {'met' if ms <= budget else 'not met'}"
        print(f"{chosen[name].name:28s} {ms:.3f} ms of CPU per request{verdict}")
    if args.chains:
        _chains(every["append"].build()["PATH_INFO"], token, args.requests)
    if args.parts:
        print_parts_in_place(chosen, args.requests)
    if args.profile:
        report = open(args.profile_out, "w") if args.profile_out else sys.stdout  # noqa: SIM115
        for scenario in chosen.values():
            profiler = cProfile.Profile(time.process_time)
            profiler.enable()
            _run(scenario, args.profile)
            profiler.disable()
            print(f"\n===== {scenario.name}: {args.profile} requests, cProfile by CPU =====", file=report)
            if args.profile_dump:
                profiler.dump_stats(Path(args.profile_dump) / f"{scenario.name.split()[0]}.prof")
            stats = pstats.Stats(profiler, stream=report)
            print_parts(stats, report)
            print_by_package(stats, report)
            for key in ("tottime", "cumulative"):
                stats.sort_stats(key).print_stats(45)
        if report is not sys.stdout:
            report.close()


if __name__ == "__main__":
    main()
