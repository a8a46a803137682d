"""Run the benchmarks and write bench/RESULTS.md.

    bin/bench                      # every scenario, 12 s each after a 2 s warm-up, 1 and 8 clients
    bin/bench --quick              # 2 s each: a smoke run of the machinery
    bin/bench --only 1,3           # some scenarios
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from bench.core import Measure, Settings  # noqa: E402

# (scenario, ours, peer, at least this ratio of ours to the peer's ops/s[, only at this many clients])
TARGETS: list[tuple[Any, ...]] = [
    # Issue 35: over HTTP, black-box, against this host's floors (bench/floor_app.py on the same server) at 8 clients.
    ("H1 append one item", "harness API", "HTTP floor: bare WSGI app, one INSERT (no Django)", 0.5, 8),
    ("H3 checkpoint write", "harness API", "HTTP floor: bare WSGI app, one INSERT (no Django)", 0.4, 8),
    ("H2 newest 50 of 10,000 items", "harness API", "HTTP read floor: bare WSGI app, one SELECT of 50 (no Django)",
     0.5, 8),
    # The references kept (issues 14 and 35): over HTTP vs the peers in-process, at 1 and 8 clients.
    ("H1 append one item", "harness API", "Agents SDK SQLAlchemySession.add_items", 1.5),
    ("H2 newest 50 of 10,000 items", "harness API", "Agents SDK get_items(limit=50)", 1.0),
    ("H3 checkpoint write", "harness API", "LangGraph PostgresSaver.put", 0.5, 8),
    # Bounds, not rivals: the same targets for what no HTTP service (the floor) or no server (the client's own
    # share) can beat. A bound below its target means the target cannot be met on this machine.
    ("H1 append one item", "HTTP floor: bare WSGI app, one INSERT (no Django)",
     "Agents SDK SQLAlchemySession.add_items", 1.5, 8),
    ("H3 checkpoint write", "HTTP floor: bare WSGI app, one INSERT (no Django)", "LangGraph PostgresSaver.put", 0.5, 8),
    ("H4 lineage of 1,000", "harness API", "LangGraph PostgresSaver.list (jit=off)", 2.0),
    ("H4 lineage of 1,000", "harness API", "LangGraph PostgresSaver.list (stock)", 2.0),
    # The adapters (issue 15): HarnessSaver through the client and the API vs PostgresSaver in-process.
    ("A1 put (a chain)", "HarnessSaver.put (HTTP)", "LangGraph PostgresSaver.put", 0.5, 8),
    ("A3 list of 1,000", "HarnessSaver.list (HTTP)", "LangGraph PostgresSaver.list (jit=off)", 2.0),
    ("A3 list of 1,000", "HarnessSaver.list (HTTP)", "LangGraph PostgresSaver.list (stock)", 2.0),
    ("A3 list of 1,000", "bound: HarnessSaver.list's client share only (decode + tuples)",
     "LangGraph PostgresSaver.list (jit=off)", 2.0),
    ("A4 add_items (one item)", "HarnessSession.add_items (HTTP)", "Agents SDK SQLAlchemySession.add_items", 1.0, 8),
    # In process (the service functions, no HTTP).
    ("1 append item", "harness service", "Agents SDK SQLAlchemySession.add_items", 4.0),
    ("1 append item", "harness service", "raw psycopg INSERT (autocommit)", 0.7),
    ("2 read last 50 of 10k", "harness selector", "Agents SDK get_items(limit=50)", 2.0),
    ("3 checkpoint write", "harness checkpoint_create", "LangGraph PostgresSaver.put", 1.0),
    ("3 checkpoint read latest", "harness latest checkpoint", "LangGraph PostgresSaver.get_tuple", 1.0),
    ("4 read 1,000-deep lineage", "harness lineage (recursive CTE)", "LangGraph PostgresSaver.list", 20.0),
    ("4 read 1,000-deep lineage", "harness lineage (recursive CTE)", "LangGraph PostgresSaver.list (jit=off)", 2.0),
    ("5 append item over HTTP", "harness API (gunicorn)", "Agents SDK SQLAlchemySession.add_items", 1.0),
    ("6 claim run", "harness run_claim", "raw conditional UPDATE", 0.5),
    # The ecosystem adapters (issue 34): an agent step through each costs at most 1.5x the same operation through
    # the Python client (ratio of ops/s >= 1 / 1.5).
    ("E1 store put (one ~1 KB value)", "HarnessStore.put", "HarnessClient.store_put", 1 / 1.5),
    ("E2 store search (query + filter, 10 of 3,000)", "HarnessStore.search", "HarnessClient.store_search", 1 / 1.5),
    ("E3 append one item (~1 KB)", "MCP tool session_items_append", "HarnessClient.append_items", 1 / 1.5),
    ("E4 memory search (k 10 of 3,000)", "MCP tool memory_search", "HarnessClient.retrieve_memory", 1 / 1.5),
    ("E5 append one item (~1 KB)", "TypeScript client appendItems (node)", "HarnessClient.append_items", 1 / 1.5),
    # LangGraph Server beside ours over HTTP (issue 35): ours >= 2x its in-memory runtime at 8 clients; the cycle
    # (4 clients) and the PostgreSQL runtime's ratios are in scenario L's own section.
    *[(row, "harness API", "LangGraph Server in-memory (langgraph dev)", 2.0, 8)
      for row in ("L1 checkpoint write", "L2 conversation append", "L3 latest checkpoint", "L3 newest 50 items",
                  "L4 history of 1,000")],
]


def _scenarios() -> dict:
    from bench import scenarios_store

    found = dict(scenarios_store.SCENARIOS)
    for name in ("scenarios_api", "scenarios_adapters", "scenarios_http", "scenarios_worker", "scenarios_growth",
                 "scenarios_ecosystem", "scenarios_scale", "scenarios_push", "scenarios_adapter_resume",
                 "scenarios_langgraph_server"):
        try:
            module = __import__(f"bench.{name}", fromlist=["SCENARIOS"])
        except ImportError:
            continue
        found.update(module.SCENARIOS)
    return found


def _versions() -> str:
    names = ["Django", "psycopg", "djangorestframework", "celery", "langgraph-checkpoint-postgres", "openai-agents",
             "SQLAlchemy", "asyncpg", "gunicorn"]
    parts = []
    for name in names:
        with contextlib.suppress(metadata.PackageNotFoundError):
            parts.append(f"{name} {metadata.version(name)}")
    # psql from PATH, as bin/bench uses it to create the database; only the version string is read.
    pg = subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-tAc", "show server_version", "postgres"],  # noqa: S607
                        capture_output=True, text=True).stdout.strip()
    return f"Python {platform.python_version()}, PostgreSQL {pg}, " + ", ".join(parts)


def _commit() -> str:
    """The commit the run measured, and whether the tree had changes on top of it."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)  # noqa: S607
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,  # noqa: S607
                           capture_output=True, text=True).stdout.strip()
    return head.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


def _machine() -> str:
    cpu = "unknown cpu"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB, {platform.platform()}"


def _table(results: list[Measure]) -> list[str]:
    lines = ["| scenario | subject | clients | ops/s | p50 ms | p99 ms | peak RSS MB | check |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for m in results:
        check = m.extra.get("check")
        check_text = "" if check is None else ("ok" if check else "**FAILED**")
        info = {k: v for k, v in m.extra.items() if k not in ("check", "acknowledged", "section", "targets_met")}
        if info:
            check_text += " " + ", ".join(f"{k}={v}" for k, v in info.items())
        lines.append(f"| {m.scenario} | {m.subject} | {m.clients} | {m.ops_per_s:,.0f} | {m.p50_ms:.2f} | "
                     f"{m.p99_ms:.2f} | {m.peak_rss_mb:.0f} | {check_text.strip()} |")
    return lines


def _render(results: list[Measure], settings: Settings, args: argparse.Namespace) -> str:
    lines = [
        "# Benchmark results",
        "",
        f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- commit: {_commit()}",
        f"- machine: {_machine()}",
        f"- versions: {_versions()}",
        f"- each measurement: {settings.duration:g} s after a {settings.warmup:g} s warm-up; "
        f"clients are processes; command: `{' '.join(['bin/bench', *sys.argv[1:]])}`",
        "",
    ]
    http = [m for m in results if m.scenario.startswith(("H", "A", "E", "L"))]
    scaled = [m for m in results if m.scenario.startswith("S")]
    in_process = [m for m in results if not m.scenario.startswith(("H", "A", "E", "L", "S"))]
    for title, part in (("## Over HTTP: what agents call (black-box, Idempotency-Key on every POST, ~1 KB payloads)",
                         http), ("## Scaled out: two web and two worker processes on one database", scaled),
                        ("## In process and the rest", in_process)):
        if part:
            lines += [title, "", *_table(part), ""]
    lines += ["", "## Targets (ratio of ops/s in the same run)", "",
              "| scenario | ours vs peer | clients | ratio | target | met |",
              "| --- | --- | ---: | ---: | ---: | --- |"]
    by_key = {(m.scenario, m.subject, m.clients): m for m in results}
    for scenario, ours, peer, target, *only in TARGETS:
        for clients in settings.clients:
            if only and clients != only[0]:
                continue
            a, b = by_key.get((scenario, ours, clients)), by_key.get((scenario, peer, clients))
            if not a or not b or not b.ops_per_s:
                continue
            ratio = a.ops_per_s / b.ops_per_s
            lines.append(f"| {scenario} | {ours} / {peer} | {clients} | {ratio:.2f}x | {target:.3g}x | "
                         f"{'yes' if ratio >= target else '**no**'} |")
    extra_sections: list[str] = [m.extra["section"] for m in results if m.extra.get("section")]
    lines += ["", *extra_sections]
    return "\n".join(lines) + "\n"


def _vacuum() -> None:
    """Clean the dead rows earlier scenarios (and earlier runs) left, ours and the peers' alike.

    Autovacuum does this on a stock PostgreSQL; this machine's runs with `autovacuum = off`, so
    update-heavy tables (runs, sessions) otherwise carry every dead version from run to run.
    """
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="2 s per measurement, 0.5 s warm-up")
    parser.add_argument("--only", default="", help="comma-separated scenario numbers")
    parser.add_argument("--soak", type=float, default=None,
                        help="scenario 9's soak in seconds (default 600, 30 with --quick)")
    parser.add_argument("--resumes", type=int, default=None,
                        help="scenario 9: runs resumed back to back before the soak (default 10000, 300 with --quick)")
    parser.add_argument("--growth-size", type=int, default=None,
                        help="scenario 8: the large fixture's size, e.g. 10000000 (default 100000; "
                             "bench.scenarios_growth.Shape says what a size holds)")
    parser.add_argument("--growth-reads-only", action="store_true",
                        help="scenario 8 without its retention rows (they build and consume ~1.2M rows a turn)")
    parser.add_argument("--output", default=str(ROOT / "bench" / "RESULTS.md"))
    args = parser.parse_args()
    settings = Settings(duration=2.0, warmup=0.5, soak_seconds=30.0, resumes=300) if args.quick else Settings()
    if args.soak is not None:
        settings.soak_seconds = args.soak
    if args.resumes is not None:
        settings.resumes = max(1, args.resumes)
    if args.growth_size is not None:
        settings.growth_size = args.growth_size
    settings.growth_retention = not args.growth_reads_only
    call_command("migrate", verbosity=0)
    scenarios = _scenarios()
    chosen = [s.strip() for s in args.only.split(",") if s.strip()] or sorted(scenarios)
    results: list[Measure] = []
    for key in chosen:
        print(f"scenario {key} ...", flush=True)
        _vacuum()
        for m in scenarios[key](settings):
            print(f"  {m.subject:45s} c={m.clients} {m.ops_per_s:10,.0f} ops/s p50 {m.p50_ms:.2f} ms "
                  f"p99 {m.p99_ms:.2f} ms rss {m.peak_rss_mb:.0f} MB {m.extra.get('check', '')}", flush=True)
            results.append(m)
    Path(args.output).write_text(_render(results, settings, args))
    print(f"wrote {args.output}")
    if any(m.extra.get("check") is False for m in results):
        sys.exit("a scenario's own check failed")


if __name__ == "__main__":
    main()
