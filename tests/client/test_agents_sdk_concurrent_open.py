"""Issue 30, section 6: eight Agents SDK sessions opening the same HarnessSession at once, each in a process of its
own, all succeed and refer to one harness session.

Each opener looks the ref up (none yet), then creates it with an Idempotency-Key; all but one lose the race on
the ref. Before the fix the losers got Django's HTML 500 (the unique violation aborted the key's transaction) and
seven of eight failed; now a loser gets 409 `already_exists` with the winner's id, and the adapter takes it.
"""

import json
import subprocess
import sys

import pytest

from sessions_app.models import Session, SessionItem
from tests.client.conftest import Live
from tests.subprocesses import ROOT

OPENERS = 8

# One opener: ready, wait for the word, then open the session and append one item through the SDK's protocol.
_OPENER = """
import asyncio, json, sys
from harness_client.agents import HarnessSession

async def main(url, token, ref, n):
    session = HarnessSession(ref, base_url=url, token=token)
    print("ready", flush=True)
    sys.stdin.readline()
    try:
        harness_id = await session.harness_id()
        await session.add_items([{"role": "user", "content": f"hello from opener {n}"}])
        print(json.dumps({"id": harness_id}), flush=True)
    finally:
        await session.aclose()

asyncio.run(main(*sys.argv[1:4], int(sys.argv[4])))
"""


@pytest.mark.slow
def test_eight_processes_open_the_same_session_at_once_and_all_get_the_one_session(live: Live) -> None:
    ref = "sdk-user-42"
    openers = [subprocess.Popen([sys.executable, "-c", _OPENER, live.url, live.agent_token, ref, str(n)], cwd=ROOT,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for n in range(OPENERS)]
    try:
        for opener in openers:  # every process is up, its client built, before any opens
            assert opener.stdout is not None and opener.stdout.readline().strip() == "ready"
        for opener in openers:
            assert opener.stdin is not None
            opener.stdin.write("go\n")
            opener.stdin.flush()
        outputs = [opener.communicate(timeout=120) for opener in openers]
    finally:
        for opener in openers:
            if opener.poll() is None:
                opener.kill()

    failed = [(opener.returncode, err[-2000:]) for opener, (_, err) in zip(openers, outputs, strict=True)
              if opener.returncode != 0]
    assert not failed, failed
    ids = {json.loads(out.strip().splitlines()[-1])["id"] for out, _ in outputs}
    session = Session.objects.get(project=live.project, ref=ref)
    assert ids == {session.pk}
    assert Session.objects.filter(project=live.project).count() == 1
    assert SessionItem.objects.filter(session=session).count() == OPENERS
