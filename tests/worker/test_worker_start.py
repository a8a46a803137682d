"""A worker whose configuration names a node handler or tool adapter that does not import refuses to
start, naming it; the production app has no fault hook."""

import json
import os
import subprocess
import sys

import pytest

from harness.ops import faults
from tests.subprocesses import ROOT

pytestmark = pytest.mark.worker


def _start_worker(**env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "solo", "--without-gossip",
         "--without-mingle", "--loglevel", "INFO"],
        cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=90,
    )


@pytest.mark.parametrize(("variable", "config", "named"), [
    ("HARNESS_NODE_HANDLERS", {"draft": "nowhere.missing_handler"}, "HARNESS_NODE_HANDLERS['draft']"),
    ("HARNESS_TOOL_ADAPTERS", {"send": {"kind": "python", "callable": "nowhere.send"}},
     "HARNESS_TOOL_ADAPTERS['send']"),
])
def test_a_worker_with_a_path_that_does_not_import_stops_at_start_naming_it(variable, config, named) -> None:  # type: ignore[no-untyped-def]
    done = _start_worker(**{variable: json.dumps(config)})
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert f"the worker cannot start: {named}" in output
    assert "nowhere" in output
    assert "ready." not in output  # it never began consuming


def test_the_production_app_installs_no_fault_hook() -> None:
    import config.celery  # noqa: F401 - what `celery -A config` imports

    assert faults._hook is None
