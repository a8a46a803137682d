"""kill -9 of an agent process mid-graph: a new process resumes the thread from its stored checkpoint and
finishes, and no completed node runs again."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness_client import HarnessClient

from tests.client.conftest import Live
from tests.subprocesses import ROOT

pytestmark = pytest.mark.django_db(transaction=True)


def _agent(live: Live, log: Path, *, block: bool) -> subprocess.Popen[str]:
    env = {**os.environ, "HARNESS_URL": live.url, "HARNESS_TOKEN": live.agent_token, "LOG": str(log)}
    env.pop("BLOCK_IN_DRAFT", None)
    if block:
        env["BLOCK_IN_DRAFT"] = "1"
    return subprocess.Popen([sys.executable, "-m", "tests.client.langgraph_agent", "crash-thread"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_killed_agent_resumes_from_the_stored_checkpoint(live: Live, hc: HarnessClient, tmp_path: Path) -> None:
    log = tmp_path / "nodes.log"
    first = _agent(live, log, block=True)
    try:
        deadline = time.monotonic() + 60
        while "draft" not in (log.read_text() if log.exists() else ""):
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the agent never reached draft"
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == -signal.SIGKILL
    # What the server holds: the checkpoint after `research`, its next node `draft`.
    newest = hc.get_thread_checkpoint(thread_id="crash-thread")
    assert newest is not None and newest.channel_values["done"] == ["outline", "research"]

    second = _agent(live, log, block=False)
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    assert out.strip() == "outline,research,draft,publish"
    # Only the node that was interrupted by the kill ran twice.
    assert log.read_text().split() == ["outline", "research", "draft", "draft", "publish"]
