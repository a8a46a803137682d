"""The house rules that tools can check: ruff (lint, imports) and mypy with django-stubs."""

import os
import subprocess
import sys

import pytest

from tests.subprocesses import ROOT

# The apps, and the tools that ship beside them (the benchmarks and the reliability experiments).
PACKAGES = ["config", "harness", "sessions_app", "runs_app", "memory_app", "notify_app", "worker", "console", "demo"]
TOOLS = ["bench", "reliability"]
# The agent client, a package of its own (client/pyproject.toml): mypy --strict with that file's settings.
CLIENT = ["client/harness_client"]


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
    done = _run("mypy", "--cache-dir", ".mypy_cache/apps", *PACKAGES, *TOOLS)
    assert done.returncode == 0, done.stdout + done.stderr
    done = _run("mypy", "--config-file", "client/pyproject.toml", "--cache-dir", ".mypy_cache/client", *CLIENT)
    assert done.returncode == 0, done.stdout + done.stderr
