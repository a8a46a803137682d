"""The report's provenance sentence is computed from the entries' run records (issue 19: "nothing in it
is typed by hand"), so a report patched together from several runs, or from a changed tree, says so."""

import datetime as dt
import shutil
import subprocess
from pathlib import Path

from reliability.run import provenance, render, run_identity

ROOT = Path(__file__).resolve().parents[2]


def _entry(number: int, run: dict, *, passed: bool = True) -> dict:
    return {"number": number, "title": f"experiment {number}", "passed": passed, "figures": {"n": number},
            "notes": "", "command": f"bin/reliability --only {number}", "wall_seconds": 60.0,
            "started_at": "2026-12-01 15:00:00", **run}


def test_the_run_identity_names_the_checked_out_commit() -> None:
    run = run_identity(dt.datetime(2026, 12, 1, 15, 0, tzinfo=dt.UTC))
    git = shutil.which("git")
    assert git is not None
    head = subprocess.run([git, "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    assert run["commit"] == head
    assert run["run_id"] == f"2026-12-01T15:00:00Z@{head[:12]}"
    assert isinstance(run["tree_changed"], bool)


def test_entries_of_one_run_on_a_clean_tree_say_one_run_and_name_its_commit() -> None:
    run = {"run_id": "r1@abc", "commit": "abc123", "tree_changed": False, "run_started_at": "2026-12-01T15:00:00Z",
           "load_average_at_start": 0.5}
    sentence = provenance([_entry(1, run), _entry(2, run)])
    assert sentence.startswith("All 2 experiments come from one `bin/reliability` run")
    assert "commit abc123, the tree clean" in sentence
    assert "2.0 minutes" in sentence


def test_entries_of_two_runs_or_a_changed_tree_are_not_called_one_clean_run() -> None:
    first = {"run_id": "r1@abc", "commit": "abc", "tree_changed": False, "run_started_at": "x",
             "load_average_at_start": 0}
    second = {**first, "run_id": "r2@def", "commit": "def"}
    sentence = provenance([_entry(1, first), _entry(2, second)])
    assert sentence.startswith("NOT one run: the experiments come from 2 runs")
    assert "r1@abc: 1" in sentence and "r2@def: 2" in sentence
    changed = provenance([_entry(1, {**first, "tree_changed": True})])
    assert "with uncommitted changes" in changed


def test_an_entry_without_a_run_record_is_not_counted_as_part_of_one_run() -> None:
    legacy = {"number": 1, "title": "t", "passed": True, "figures": {}, "notes": "", "command": "c",
              "wall_seconds": 1.0, "ran_at": "2026-11-30 00:56"}
    assert provenance([legacy]).startswith("NOT one run")


def test_the_report_names_registered_experiments_without_a_result_and_any_failure() -> None:
    run = {"run_id": "r1@abc", "commit": "abc123", "tree_changed": False, "run_started_at": "x",
           "load_average_at_start": 0}
    report = render({"1": _entry(1, run), "2": _entry(2, run, passed=False)}, registered=[1, 2, 3])
    assert "All passed: NO." in report
    assert "Missing: experiments 3 are registered but have no result here." in report
    assert "| 2 | experiment 2 | FAIL | 60.0 | 2026-12-01 15:00:00 | abc123 |" in report
