"""The house rules that tools can check: ruff (lint, imports) and mypy with django-stubs."""

import os
import subprocess
import sys

from tests.subprocesses import ROOT

PACKAGES = ["harness", "sessions_app", "runs_app", "memory_app", "console", "demo"]


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "harness.settings", "DEBUG": "1"}
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def test_ruff_finds_nothing():
    done = _run("ruff", "check", *PACKAGES, "tests", "--output-format", "concise")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing():
    done = _run("mypy", *PACKAGES)
    assert done.returncode == 0, done.stdout + done.stderr
