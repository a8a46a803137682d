"""Runs the registered reliability experiments and writes reliability/REPORT.md.

    bin/reliability              every experiment at the issue's full counts (REPORT.md is rewritten
                                 from this run alone)
    bin/reliability --quick      the CI counts (printed only; the report keeps full-count figures)
    bin/reliability --only 3,5   some experiments; their entries in the report are replaced

Results are kept in reliability/results.json (one entry per experiment), from which REPORT.md is
rendered. Each entry records the run it came from (an id, the commit checked out, whether the tree had
changes, the run's start), the experiment's own start and its wall time, so the report can say, from the
data and not from a hand-typed sentence, whether it is one run on one commit or a patchwork of several.
Exits non-zero if any experiment that ran failed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import fcntl
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import traceback
from dataclasses import asdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.json"
REPORT = HERE / "REPORT.md"

# What the experiments found, and how each was fixed (kept here because a fixed finding no longer
# shows in the figures). Each entry names the regression test that keeps it fixed.
FINDINGS: list[str] = [
    "Experiment 6 (a poison run that kills its worker before the claim, in the load): `metrics.attempts` "
    "moves only after the claim, so such a run was never counted; Celery's redelivery (acks_late + "
    "reject_on_worker_lost) and the recovery pass (a decided approval with a free lease) restarted it "
    "forever. Fixed in the resume pipeline (now worker/): `_count_start` counts every start (not a duplicate "
    "while another worker's lease is live) in `metrics.starts`, and once HARNESS_RESUME_MAX_ATTEMPTS starts "
    "died unclaimed the run is blocked at step `load`, visible in the console. Regression: tests/reliability/"
    "test_faults_quick.py::test_a_run_whose_every_start_dies_before_the_claim_is_blocked_not_restarted_forever; "
    "measured by experiment 6's `poison_before_claim` figures (HARNESS_CRASH_AT=load, a new crash hook).",
    "Experiment 6 (review of the attempt limit): a duplicate resume message that arrived while the run's last "
    "allowed attempt was running under another worker's live lease blocked that run mid-attempt (the limit was "
    "checked before the claim). Fixed in the resume pipeline (now worker/): it stops instead and leaves the "
    "attempt alone. Regression: tests/reliability/test_faults_quick.py::"
    "test_a_duplicate_resume_at_the_attempt_limit_leaves_the_last_live_attempt_alone.",
    "Experiment 21 (issue 19, defect 4: lease times were each process's clock): the claim, the heartbeat and the "
    "guards compared `lease_expires_at` with Python's `timezone.now()`, so a worker whose clock ran 30 s fast took "
    "every live lease it tried and one 30 s slow wrote leases already over by everyone else's clock (in one quick "
    "run before the fix, 17 pairs of a claim and another owner's live lease it landed in). Fixed in "
    "runs_app/services/runs.py, "
    "worker/lease.py and worker/recovery.py: every lease decision compares and sets against PostgreSQL's "
    "statement_timestamp(). Regression: tests/api/test_lease_clock.py, tests/worker/test_pipeline_steps.py::"
    "test_a_recovery_pass_on_a_fast_clock_does_not_take_a_live_lease_for_expired, and experiment 21's quick form "
    "(tests/reliability/test_leases_quick.py).",
    "Issue 19, defect 5 (no heartbeat during a long tool call): a call longer than the lease let a second worker's "
    "recovery pass take the run mid-call, mark the effect unknown and call the tool again (2 requests for one "
    "key). Fixed in worker/keepalive.py: the lease is renewed every third of it while a tool call or a node "
    "handler runs. Regression: tests/worker/test_worker_processes.py::"
    "test_a_tool_call_longer_than_the_lease_keeps_its_lease_and_no_second_worker_takes_the_run.",
    "Experiment 8 (a documented behaviour, changed by issue 19): a duplicate that arrives while the first "
    "request with its Idempotency-Key is still in progress waits on the first one's uncommitted key and then "
    "replays its reply (it was answered 409 idempotency_in_progress before: the reservation committed alone); "
    "the effect happens once.",
    "Issue 19, defect 6 (experiment 19 measures the fix): the key was reserved in a transaction of its own and "
    "settled after the view, so a web process killed in between left it answering 409 until the prune freed it "
    "(10 minutes), and the retry then ran the operation again. The reservation, the work and the stored reply "
    "are now one transaction (harness/http/idempotency.py); final 4xx replies are stored too. Regressions: "
    "tests/api/test_idempotency_transaction.py, tests/reliability/test_faults_quick.py::test_19_*.",
    "Experiment 22 (an approval's expiry racing its decision): a reviewer whose decision lost to the recovery "
    "pass's expiry was told 409 illegal_transition (expired -> approved), the same reviewer deciding a moment later "
    "approval_expired. Fixed in runs_app/services/approvals.py (`_refusal`): both are approval_expired. Regression: "
    "tests/runs_app/test_effects_and_approvals.py::test_a_decision_that_lands_after_the_expiry_pass_is_told_it_expired.",
    "Experiment 25 (PostgreSQL restarted under load): while the server was down or recovering every API call got "
    "Django's HTML 500 page (the token lookup's connection refused), which a client cannot tell from a bug. Fixed in "
    "harness/http/errors.py: a lost or refused connection (SQLSTATE class 08, 57P01-57P03, or none) is 503 "
    "database_unavailable with Retry-After: 1 in the {code, detail} shape; a statement's own error stays a 500. "
    "Regression: tests/harness/test_database_unavailable.py; experiment 25's statuses_during_outage.",
    "Experiment 24 (supersede racing supersede): the losers were told 409 illegal_transition (superseded -> "
    "superseded), as if they had asked for an illegal move. Fixed in memory_app/services.py (`_supersede_row`): "
    "409 already_superseded. Regression: tests/memory_app/test_supersede_and_races.py::"
    "test_concurrent_supersedes_of_one_record_let_exactly_one_win.",
    "Experiments 5 and 6 (issue 19): the tool no longer deduplicates by key, so `max_calls_per_key` counts every "
    "call that acted (the deduplicating fake had hidden a second call: `max_requests_per_key: 2`); with the "
    "adapter declared as not honouring keys, no key was called twice, and a run whose call's outcome a crash left "
    "unproven waits blocked at `unknown_effect` for a person (the `blocked_at_unknown_effect` figures of 5 and 6).",
    "Experiment 6, poison phases (found with the non-deduplicating tool's run): `starts_after_blocked` was 1: "
    "with BLOCKED among the statuses a resume start counts (so that a run blocked at `unknown_effect` resumes "
    "once a person decides), a message redelivered after the block counted a start on a poison run. Fixed in "
    "worker/steps/load.py (a blocked run counts a start only when blocked at `unknown_effect`); experiment 6's "
    "`starts_after_blocked` figures measure it.",
]


def _load_modules() -> list[str]:
    """Import both experiment modules; a module not written yet is reported, not fatal."""
    import reliability.faults
    import reliability.leases  # registers the lease experiments (issue 19)
    import reliability.outages  # registers the outage experiments (issue 19)
    import reliability.races  # registers the race experiments (issue 19)
    import reliability.soak  # registers the soak (issue 19)

    missing = []
    try:
        import reliability.security  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name != "reliability.security":
            raise
        missing.append("reliability.security")
    return missing


def _figures_text(figures: dict) -> list[str]:
    lines = []
    for key, value in figures.items():
        shown = json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)
        lines.append(f"- `{key}`: {shown}")
    return lines


def provenance(ordered: list[dict]) -> str:
    """The sentence that says where the figures come from, computed from the entries' run records."""
    minutes = round(sum(float(e.get("wall_seconds") or 0) for e in ordered) / 60, 1)
    runs: dict[str, list[int]] = {}
    for e in ordered:
        runs.setdefault(e.get("run_id") or f"an unrecorded run ({e.get('ran_at', '?')})", []).append(e["number"])
    if len(runs) == 1 and ordered and ordered[0].get("run_id"):
        e = ordered[0]
        tree = " with uncommitted changes" if e.get("tree_changed") else ", the tree clean"
        return (f"All {len(ordered)} experiments come from one `bin/reliability` run, started {e['run_started_at']} "
                f"on commit {e['commit']}{tree} (load average {e.get('load_average_at_start')} at its start, "
                f"{os.cpu_count()} CPUs); their times add up to {minutes} minutes.")
    parts = "; ".join(f"{run_id}: {', '.join(map(str, numbers))}" for run_id, numbers in runs.items())
    return (f"NOT one run: the experiments come from {len(runs)} runs ({parts}); their times add up to "
            f"{minutes} minutes.")


def render(entries: dict[str, dict], registered: list[int] | None = None) -> str:
    """`registered`: every experiment the code has; one it has that the entries lack is named as missing."""
    ordered = sorted(entries.values(), key=lambda e: e["number"])
    missing = sorted(set(registered or []) - {e["number"] for e in ordered})
    out = [
        "# Reliability report: fault-injection and security experiments (issue 7)",
        "",
        "Generated by `bin/reliability` (reliability/run.py) from reliability/results.json. Each experiment",
        "below was run at the issue's full counts against a fresh PostgreSQL database (harness_reliability)",
        "and Redis db 5 on loopback; the command under each reproduces it. `bin/reliability --quick` runs",
        "the CI counts; the pytest forms are tests/reliability/.",
        "",
        "| # | Experiment | Result | Seconds | Started (UTC) | Commit |",
        "|---|---|---|---|---|---|",
    ]
    for e in ordered:
        commit = (e.get("commit") or "unknown")[:12] + ("+changes" if e.get("tree_changed") else "")
        out.append(f"| {e['number']} | {e['title']} | {'PASS' if e['passed'] else 'FAIL'} | "
                   f"{e.get('wall_seconds', '')} | {e.get('started_at') or e.get('ran_at', '')} | {commit} |")
    out += ["", f"All passed: {'yes' if all(e['passed'] for e in ordered) else 'NO'}. {provenance(ordered)}", ""]
    if missing:
        out += [f"Missing: experiments {', '.join(map(str, missing))} are registered but have no result here.", ""]
    for e in ordered:
        out += [f"## {e['number']}. {e['title']}", "",
                f"**{'PASS' if e['passed'] else 'FAIL'}** — reproduce with `{e['command']}`", "", "Figures:", ""]
        out += _figures_text(e["figures"])
        if e.get("notes"):
            out += ["", f"Notes: {e['notes']}"]
        out.append("")
    if FINDINGS:
        out += ["## Findings and fixes", ""] + [f"- {finding}" for finding in FINDINGS] + [""]
    out += [f"Machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.platform()}.", ""]
    return "\n".join(out)


# The report's own output: a run rewrites them as it goes, so they do not make the tree "changed".
_OUTPUTS = ("reliability/REPORT.md", "reliability/results.json")


def _git(*args: str) -> str:
    git = shutil.which("git")
    if git is None:
        return ""
    try:
        return subprocess.run([git, *args], cwd=HERE.parent, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def run_identity(now: dt.datetime | None = None) -> dict[str, Any]:
    """Who this run is: its start, the commit checked out, and whether the tree differed from it."""
    started = (now or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    commit = _git("rev-parse", "HEAD") or "unknown"
    changed = [line[3:] for line in _git("status", "--porcelain", "--untracked-files=no").splitlines()
               if line[3:] not in _OUTPUTS]
    return {"run_id": f"{started}@{commit[:12]}", "commit": commit, "tree_changed": bool(changed),
            "run_started_at": started, "load_average_at_start": round(os.getloadavg()[0], 2)}


def _record(results: list[tuple[Any, float, str]], run: dict[str, Any], *, fresh: bool = False) -> None:
    """Merge these results into results.json and re-render REPORT.md, under a lock: the fault and
    security halves may finish at the same moment. `fresh` drops every earlier entry (a full run's first
    result), so a full run's report holds that run and nothing older."""
    lock_path = HERE.parent / "var" / "reliability-results.lock"  # var/ is not versioned
    lock_path.parent.mkdir(exist_ok=True)
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        entries = json.loads(RESULTS.read_text()) if RESULTS.exists() and not fresh else {}
        for result, wall, started_at in results:
            entries[str(result.number)] = {**asdict(result), "wall_seconds": wall, "started_at": started_at, **run}
        RESULTS.write_text(json.dumps(entries, indent=2, sort_keys=True, default=str) + "\n")
        from reliability.core import REGISTRY

        REPORT.write_text(render(entries, sorted(REGISTRY)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the bounded CI counts (the report is not written)")
    parser.add_argument("--only", default="", help="comma-separated experiment numbers, e.g. 3,5")
    args = parser.parse_args(argv)

    import django

    django.setup()
    from django.db import connections

    from reliability.core import REGISTRY, Result, command_for

    missing = _load_modules()
    for name in missing:
        print(f"warning: {name} is not there yet; its experiments are not run", file=sys.stderr)
    wanted = sorted(REGISTRY)
    if args.only:
        numbers = {int(part) for part in args.only.split(",") if part.strip()}
        unknown = numbers - set(REGISTRY)
        if unknown:
            parser.error(f"no experiment numbered {sorted(unknown)}; known: {sorted(REGISTRY)}")
        wanted = sorted(numbers)

    results: list[tuple[Result, float, str]] = []
    run = run_identity()
    fresh = not args.only  # a full run's report is that run alone
    for number in wanted:
        entry = REGISTRY[number]
        print(f"== {number}. {entry.title} ({'quick' if args.quick else 'full'})", flush=True)
        started_at = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
        started = time.monotonic()
        try:
            result = entry(args.quick)
        except Exception:  # noqa: BLE001 - a crashed experiment is a failed one, reported with its trace
            result = Result(number=number, title=entry.title, passed=False, figures={},
                            command=command_for(number, args.quick),
                            notes="The experiment raised:\n" + traceback.format_exc()[-3000:])
        finally:
            connections.close_all()
        wall = round(time.monotonic() - started, 1)
        results.append((result, wall, started_at))
        if not args.quick:
            # each as it finishes: an interrupted run keeps what it measured (and the report says it is partial)
            _record([(result, wall, started_at)], run, fresh=fresh)
            fresh = False
        print(f"   {'PASS' if result.passed else 'FAIL'} in {wall}s: {json.dumps(result.figures, sort_keys=True)}",
              flush=True)
        if result.notes and not result.passed:
            print(f"   notes: {result.notes}", flush=True)

    if not args.quick:
        print(f"wrote {REPORT.relative_to(HERE.parent)}")
    failed = [result.number for result, _, _ in results if not result.passed]
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed" + (f": {failed}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
