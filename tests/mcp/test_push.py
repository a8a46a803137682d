"""The push (issue 35): a wait on an approval or a run, served by the ASGI process beside /mcp (uvicorn, the
suite's PostgreSQL), woken by the NOTIFY the decision's own transaction sends.

A decision made in another connection reaches a waiter; the wait's timeout answers the unchanged state; another
project's approval is not found and its decisions never wake a waiter; a bad token is the API's 401; a bad request
is 400 `wait_invalid` naming the field; a LISTEN connection lost and reconnected loses no decision; the desk's
stream carries its user's projects' changes and only those."""

import threading
import time
from typing import Any

import httpx
import pytest
from django.db import connection
from django.test import Client

from harness.actors import Actor
from harness.models import Project
from harness.push.hub import Change, PushHub
from runs_app.models import Run, RunStatus
from runs_app.services import approval_decide, approval_request_create, run_transition
from tests import factories
from tests.client.conftest import run_async
from tests.mcp.conftest import McpLive

pytestmark = pytest.mark.django_db(transaction=True)

WOKEN_WITHIN = 20.0  # s: a wait of 60 s that answers before this was woken, not timed out


def _ask(project: Project, key: str) -> int:
    run = factories.make_run(project, active_agent="mailer")
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(project=project, run_id=run.pk, tool="mail.send", arguments={"to": key},
                                   idempotency_key=key, actor=Actor.for_agent("mailer")).pk


def _decide(project: Project, approval_id: int, decision: str = "approve") -> None:
    reviewer = factories.make_user(f"rev-{approval_id}-{decision}", role="reviewer", projects=[project])
    approval_decide(project=project, approval_id=approval_id, actor=Actor.for_user(reviewer), decision=decision,
                    reason="ok")


def _base(live: McpLive) -> str:
    return live.url.removesuffix("/mcp")


def _wait(live: McpLive, path: str, token: str | None = None, **params: Any) -> httpx.Response:
    return httpx.get(f"{_base(live)}{path}", params=params, timeout=90,
                     headers={"Authorization": f"Bearer {token or live.agent_token}"})


class Waiting(threading.Thread):
    """A wait on its own thread: `answer` once it returns."""

    def __init__(self, live: McpLive, path: str, **params: Any) -> None:
        super().__init__(daemon=True)
        self.live, self.path, self.params = live, path, params
        self.answer: httpx.Response | None = None

    def run(self) -> None:
        self.answer = _wait(self.live, self.path, **self.params)


def _hub(live: McpLive) -> PushHub:
    return live.push_hub


def _until_watched(live: McpLive, key: tuple[str, int]) -> None:
    deadline = time.monotonic() + 20
    while key not in _hub(live).waiters:
        assert time.monotonic() < deadline, f"no waiter on {key}"
        time.sleep(0.02)


def test_a_decision_in_another_connection_wakes_the_waiter(mcp_live: McpLive) -> None:
    approval = _ask(mcp_live.project, "wake")
    waiting = Waiting(mcp_live, f"/api/v1/approvals/{approval}/wait/", timeout=60)
    waiting.start()
    _until_watched(mcp_live, ("approval", approval))
    _decide(mcp_live.project, approval)
    waiting.join(WOKEN_WITHIN)
    assert not waiting.is_alive() and waiting.answer is not None
    body = waiting.answer.json()
    assert waiting.answer.status_code == 200 and body["done"] is True
    assert body["approval"]["id"] == approval and body["approval"]["status"] == "approved" and body["run"] is None


def test_the_timeout_answers_the_unchanged_state(mcp_live: McpLive) -> None:
    approval = _ask(mcp_live.project, "timeout")
    answer = _wait(mcp_live, f"/api/v1/approvals/{approval}/wait/", timeout=0.3)
    assert answer.status_code == 200
    assert answer.json()["done"] is False and answer.json()["approval"]["status"] == "pending"


def test_an_already_decided_approval_answers_at_once(mcp_live: McpLive) -> None:
    approval = _ask(mcp_live.project, "decided")
    _decide(mcp_live.project, approval, "reject")
    answer = _wait(mcp_live, f"/api/v1/approvals/{approval}/wait/", timeout=60)
    assert answer.json()["done"] is True and answer.json()["approval"]["status"] == "rejected"


def test_until_resumed_waits_for_the_run_to_leave_waiting_approval(mcp_live: McpLive) -> None:
    approval = _ask(mcp_live.project, "resumed")
    _decide(mcp_live.project, approval)  # the run is still waiting_approval: no worker in this test
    pending = _wait(mcp_live, f"/api/v1/approvals/{approval}/wait/", until="resumed", timeout=0.3).json()
    assert pending["done"] is False and pending["run"]["status"] == "waiting_approval"
    waiting = Waiting(mcp_live, f"/api/v1/approvals/{approval}/wait/", until="resumed", timeout=60)
    waiting.start()
    run_id = pending["run"]["id"]
    _until_watched(mcp_live, ("run", run_id))
    # What the resume worker's bind writes (the worker is not part of this test): the run leaves waiting_approval.
    Run.objects.filter(pk=run_id).update(status=RunStatus.RUNNING, pending_approval=None)
    waiting.join(WOKEN_WITHIN)
    assert waiting.answer is not None and waiting.answer.json()["done"] is True
    assert waiting.answer.json()["run"]["status"] == "running"


def test_a_run_wait_ends_when_its_status_changes(mcp_live: McpLive) -> None:
    run = factories.make_run(mcp_live.project)
    seen = _wait(mcp_live, f"/api/v1/runs/{run.pk}/wait/", status=run.status, timeout=0.2).json()
    assert seen["done"] is False and seen["run"]["status"] == run.status
    waiting = Waiting(mcp_live, f"/api/v1/runs/{run.pk}/wait/", status=run.status, timeout=60)
    waiting.start()
    _until_watched(mcp_live, ("run", run.pk))
    run_transition(project=mcp_live.project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    waiting.join(WOKEN_WITHIN)
    assert waiting.answer is not None and waiting.answer.json() == {"done": True, "run": waiting.answer.json()["run"]}
    assert waiting.answer.json()["run"]["status"] == "running"


def test_another_projects_approval_is_not_found_and_its_decisions_never_wake(mcp_live: McpLive) -> None:
    mine = _ask(mcp_live.project, "mine")
    theirs = _ask(mcp_live.other_project, "theirs")
    refused = _wait(mcp_live, f"/api/v1/approvals/{mine}/wait/", token=mcp_live.other_token, timeout=1)
    assert refused.status_code == 404 and refused.json()["code"] == "not_found"
    assert "mail.send" not in refused.text
    # A waiter on its own approval is not woken by the other project's decision (nor by its id's NOTIFY).
    hub = _hub(mcp_live)
    with hub.watch(("approval", mine)) as waiter:
        hub.dispatch(Change("approval", mcp_live.other_project.pk, theirs, "approved"))
        assert not waiter.event.is_set()
    answer = Waiting(mcp_live, f"/api/v1/approvals/{mine}/wait/", timeout=1.5)
    answer.start()
    _until_watched(mcp_live, ("approval", mine))
    _decide(mcp_live.other_project, theirs)
    answer.join(WOKEN_WITHIN)
    assert answer.answer is not None and answer.answer.json()["done"] is False
    assert answer.answer.json()["approval"]["status"] == "pending"


def test_a_bad_token_is_refused(mcp_live: McpLive) -> None:
    approval = _ask(mcp_live.project, "badtoken")
    answer = _wait(mcp_live, f"/api/v1/approvals/{approval}/wait/", token="hc_not-a-token", timeout=1)
    assert answer.status_code == 401 and "approval" not in answer.json()
    missing = httpx.get(f"{_base(mcp_live)}/api/v1/approvals/{approval}/wait/", params={"timeout": 1})
    assert missing.status_code == 401


@pytest.mark.parametrize(("params", "field"), [
    ({"timeout": "soon"}, "timeout"), ({"timeout": "61"}, "timeout"), ({"timeout": "-1"}, "timeout"),
    ({"until": "later"}, "until"),
])
def test_a_bad_request_is_a_machine_readable_400(mcp_live: McpLive, params: dict[str, str], field: str) -> None:
    approval = _ask(mcp_live.project, f"bad-{field}-{params[field]}")
    answer = _wait(mcp_live, f"/api/v1/approvals/{approval}/wait/", **params)
    assert answer.status_code == 400
    assert answer.json()["code"] == "wait_invalid" and answer.json()["field"] == field


def test_a_run_wait_needs_the_status_seen(mcp_live: McpLive) -> None:
    run = factories.make_run(mcp_live.project)
    answer = _wait(mcp_live, f"/api/v1/runs/{run.pk}/wait/")
    assert answer.status_code == 400 and answer.json()["field"] == "status"


def _terminate_listener() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN harness_push' "
                       "AND datname = current_database()")


def test_a_decision_made_while_the_listen_connection_is_down_is_not_lost(mcp_live: McpLive) -> None:
    approval = _ask(mcp_live.project, "lost")
    hub = _hub(mcp_live)
    waiting = Waiting(mcp_live, f"/api/v1/approvals/{approval}/wait/", timeout=60)
    waiting.start()
    _until_watched(mcp_live, ("approval", approval))
    connects = hub.connects
    _terminate_listener()
    _decide(mcp_live.project, approval)  # while nobody LISTENs, or just after: its NOTIFY may be gone
    waiting.join(WOKEN_WITHIN)
    assert waiting.answer is not None and waiting.answer.json()["done"] is True
    deadline = time.monotonic() + 20
    while hub.connects == connects:
        assert time.monotonic() < deadline, "the hub did not reconnect"
        time.sleep(0.05)
    # Listening again: the next decision wakes its waiter as before.
    second = _ask(mcp_live.project, "after-reconnect")
    again = Waiting(mcp_live, f"/api/v1/approvals/{second}/wait/", timeout=60)
    again.start()
    _until_watched(mcp_live, ("approval", second))
    _decide(mcp_live.project, second, "reject")
    again.join(WOKEN_WITHIN)
    assert again.answer is not None and again.answer.json()["approval"]["status"] == "rejected"


def _stream_events(live: McpLive, cookie: str, origin: str, until: int, received: list[str], opened: threading.Event
                   ) -> None:
    headers = {"Cookie": f"sessionid={cookie}", "Origin": origin}
    with httpx.stream("GET", f"{_base(live)}/push/v1/desk/", headers=headers, timeout=30) as answer:
        received.append(answer.headers.get("access-control-allow-origin", ""))
        for line in answer.iter_lines():
            if line.startswith("event: ready"):
                opened.set()
            if line.startswith("data: ") and '"kind"' in line:
                received.append(line)
                if f'"id": {until},' in line:
                    return


def test_the_desk_stream_carries_its_users_projects_changes_only(mcp_live: McpLive) -> None:
    reviewer = factories.make_user("desk-reviewer", role="reviewer", projects=[mcp_live.project])
    browser = Client()
    browser.force_login(reviewer)
    cookie = browser.cookies["sessionid"].value
    received: list[str] = []
    opened = threading.Event()
    mine = _ask(mcp_live.project, "desk-mine")
    theirs = _ask(mcp_live.other_project, "desk-theirs")
    listener = threading.Thread(target=_stream_events, args=(mcp_live, cookie, mcp_live.console, mine, received,
                                                             opened), daemon=True)
    listener.start()
    assert opened.wait(20)
    _decide(mcp_live.other_project, theirs)
    _decide(mcp_live.project, mine)
    listener.join(WOKEN_WITHIN)
    assert received[0] == mcp_live.console  # the console's origin may read it with its cookie
    assert [line for line in received[1:] if f'"id": {mine},' in line]
    assert not [line for line in received[1:] if f'"id": {theirs},' in line]


def test_the_desk_stream_needs_a_session(mcp_live: McpLive) -> None:
    answer = httpx.get(f"{_base(mcp_live)}/push/v1/desk/", headers={"Cookie": "sessionid=nope",
                                                                   "Origin": "http://elsewhere.example"})
    assert answer.status_code == 401 and answer.json()["code"] == "not_authenticated"
    assert "access-control-allow-origin" not in answer.headers


def test_the_hub_wakes_only_the_rows_named() -> None:
    async def check() -> tuple[bool, bool]:
        hub = PushHub()
        with hub.watch(("approval", 1)) as one, hub.watch(("run", 1)) as run:
            hub.dispatch(Change("approval", 7, 1, "approved"))
            return one.event.is_set(), run.event.is_set()

    assert run_async(check()) == (True, False)
    assert Change.parse("approval 3 17 approved") == Change("approval", 3, 17, "approved")
    assert Change.parse("approval x 17 approved") is None
