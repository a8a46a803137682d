"""The house rules that tools can check: ruff (lint, imports) and mypy with django-stubs."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.subprocesses import ROOT

# The apps, and the tools that ship beside them (the benchmarks and the reliability experiments).
PACKAGES = ["config", "harness", "sessions_app", "runs_app", "memory_app", "notify_app", "bundles_app", "worker",
            "console", "demo"]
TOOLS = ["bench", "reliability"]
# The agent client, a package of its own (client/pyproject.toml): mypy --strict with that file's settings.
CLIENT = ["client/harness_client"]
# mypy's cache lives beside pip's, in the user's cache, not in the checkout: a fresh clone (CI's) then re-checks
# only what differs from the last run on this machine instead of everything from nothing (about 75 CPU-seconds:
# the apps' Django/DRF stubs and the client's openai/langchain types). Sharing it is safe: mypy trusts an entry
# only while the file's path, size and mtime match, and otherwise compares the file's hash (mypy/build.py
# validate_meta), so another checkout's or branch's entry is re-checked, never believed.
MYPY_CACHE = Path.home() / ".cache" / "harness-console" / f"mypy-py{sys.version_info[0]}{sys.version_info[1]}"


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "1"}
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def test_every_package_is_checked():
    """A new top-level package is linted and type-checked from its first commit."""
    found = {init.parent.name for init in ROOT.glob("*/__init__.py")}
    assert found == {*PACKAGES, *TOOLS, "tests"}


def test_ruff_finds_nothing():
    done = _run("ruff", "check", *PACKAGES, *TOOLS, *CLIENT, "tests", "--output-format", "concise")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_mypy_finds_nothing():
    # A cache each: the two configurations check the standard library's stubs under different options, and one
    # shared cache would make each run re-check what the other just wrote (a warm rerun: seconds, not a minute).
    done = _run("mypy", "--cache-dir", str(MYPY_CACHE / "apps"), *PACKAGES, *TOOLS)
    assert done.returncode == 0, done.stdout + done.stderr
    done = _run("mypy", "--config-file", "client/pyproject.toml", "--cache-dir", str(MYPY_CACHE / "client"), *CLIENT)
    assert done.returncode == 0, done.stdout + done.stderr
