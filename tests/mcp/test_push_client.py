"""The Python client's wait_for_approval on the push (issue 35): the sync and async clients wait on the ASGI
process's long poll (its hub holds their waiter) and return the decision made in another connection; a client whose
push_url answers nothing, or whose server has no wait route (the WSGI server alone), polls instead and still
returns it."""

import socket
import threading
import time
from typing import Any

import pytest
from harness_client import ApprovalWaitTimeout, AsyncHarnessClient, HarnessClient

from tests.client.conftest import run_async
from tests.mcp.conftest import McpLive
from tests.mcp.test_push import WOKEN_WITHIN, _ask, _base, _decide, _until_watched

pytestmark = pytest.mark.django_db(transaction=True)


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def _in_thread(wait: Any) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["approval"] = wait()
        except Exception as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def test_the_sync_client_waits_on_the_push(mcp_live: McpLive) -> None:
    approval = _ask(mcp_live.project, "client-sync")
    with HarnessClient(mcp_live.console, mcp_live.agent_token, push_url=_base(mcp_live)) as hc:
        thread, out = _in_thread(lambda: hc.wait_for_approval(approval, timeout=120, poll_interval=60,
                                                              max_poll_interval=60))
        _until_watched(mcp_live, ("approval", approval))  # the client's long poll is the hub's waiter
        _decide(mcp_live.project, approval)
        thread.join(WOKEN_WITHIN)
    assert "error" not in out and out["approval"].status == "approved"


def test_the_async_client_waits_on_the_push(mcp_live: McpLive) -> None:
    approval = _ask(mcp_live.project, "client-async")

    async def wait() -> Any:
        async with AsyncHarnessClient(mcp_live.console, mcp_live.agent_token, push_url=_base(mcp_live)) as ac:
            return await ac.wait_for_approval(approval, timeout=120, poll_interval=60, max_poll_interval=60)

    thread, out = _in_thread(lambda: run_async(wait()))
    _until_watched(mcp_live, ("approval", approval))
    _decide(mcp_live.project, approval, "reject")
    thread.join(WOKEN_WITHIN)
    assert "error" not in out and out["approval"].status == "rejected"


@pytest.mark.parametrize("where", ["nothing listening", "the WSGI server's own origin"])
def test_without_a_push_the_client_polls(mcp_live: McpLive, where: str) -> None:
    approval = _ask(mcp_live.project, f"client-poll-{where}")
    push_url = _closed_port() if where == "nothing listening" else None  # None: the API's origin, no wait route
    with HarnessClient(mcp_live.console, mcp_live.agent_token, push_url=push_url) as hc:
        thread, out = _in_thread(lambda: hc.wait_for_approval(approval, timeout=120, poll_interval=0.05,
                                                              max_poll_interval=0.1))
        time.sleep(0.3)
        assert ("approval", approval) not in mcp_live.push_hub.waiters  # polling, not on the push
        _decide(mcp_live.project, approval)
        thread.join(WOKEN_WITHIN)
    assert "error" not in out and out["approval"].status == "approved"


def test_a_push_wait_still_times_out(mcp_live: McpLive) -> None:
    approval = _ask(mcp_live.project, "client-timeout")
    with HarnessClient(mcp_live.console, mcp_live.agent_token, push_url=_base(mcp_live)) as hc, \
            pytest.raises(ApprovalWaitTimeout) as timed_out:
        hc.wait_for_approval(approval, timeout=0.5)
    assert timed_out.value.approval is not None and timed_out.value.approval.status == "pending"


def test_push_off_polls(mcp_live: McpLive) -> None:
    approval = _ask(mcp_live.project, "client-off")
    _decide(mcp_live.project, approval)
    with HarnessClient(mcp_live.console, mcp_live.agent_token, push_url="") as hc:
        assert hc.push_root is None
        assert hc.wait_for_approval(approval, timeout=5).status == "approved"
