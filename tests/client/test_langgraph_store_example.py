"""examples/langgraph_store.py against a live server, as `bin/example langgraph_store` runs it: in one process its
graph writes the user's memory through a node, and another process's graph finds it; and the default run does
both in one graph."""

import json
import os
import subprocess
import sys

import pytest

from memory_app.models import MemoryRecord
from tests.client.conftest import Live
from tests.subprocesses import ROOT

pytestmark = pytest.mark.django_db(transaction=True)
EXAMPLE = ROOT / "examples" / "langgraph_store.py"


def _run(live: Live, *args: str) -> list[str]:
    env = {**os.environ, "HARNESS_URL": live.url, "HARNESS_TOKEN": live.agent_token}
    done = subprocess.run([sys.executable, str(EXAMPLE), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("found: "))
    found: list[str] = json.loads(line.removeprefix("found: "))
    return found


def test_one_process_writes_through_a_graph_node_and_another_reads_it(live: Live) -> None:
    assert _run(live, "--user", "ada", "--remember", "Likes maps drawn by hand.", "--thread", "writer-1") == []
    record = MemoryRecord.objects.get(project=live.project, scope="user", scope_key="ada")
    assert record.value == {"text": "Likes maps drawn by hand."}
    assert (record.source_graph["thread_id"], record.source_graph["node"]) == ("writer-1", "remember")
    assert _run(live, "--user", "ada", "--recall", "maps", "--thread", "reader-1") == ["Likes maps drawn by hand."]
    assert _run(live, "--user", "bob", "--recall", "maps") == []  # another user's namespace holds nothing of it


def test_the_default_run_writes_and_finds_in_one_graph(live: Live) -> None:
    assert _run(live) == ["Prefers chapters that end on a cliffhanger."]
