"""The MCP server end to end: the `mcp` client library over streamable HTTP against the live server, each tool call
answered as its REST call answers (the same body, the same refusals with their status and code), writes keyed, the
token's project the limit of what a tool reaches, and no MCP message read without a live token."""

import json
import subprocess
import sys
import uuid
from typing import Any

import httpx2
import mcp_types as types
import pytest
import requests
from django.utils import timezone
from harness_client import HarnessClient
from prometheus_client import REGISTRY

from harness.mcp.tools import TOOLS, tools_of
from harness.models import ApiToken
from tests import factories
from tests.client.conftest import run_async
from tests.mcp.conftest import McpLive
from tests.subprocesses import ROOT

pytestmark = pytest.mark.django_db(transaction=True)


def _rest(live: McpLive, method: str, path: str, token: str | None = None, **kwargs: Any) -> requests.Response:
    headers = {"Authorization": f"Bearer {token or live.agent_token}", **kwargs.pop("headers", {})}
    return requests.request(method, f"{live.console}{path}", headers=headers, timeout=30, **kwargs)


def _running_run(live: McpLive, token: str | None = None) -> tuple[int, int]:
    """A session and a running run leased by `mcp-test`, made through the REST client: (session id, run id)."""
    with HarnessClient(live.console, token or live.agent_token) as hc:
        session = hc.create_session(role="writer", memory_policy="session")
        run = hc.create_run(session=session.id)
        run = hc.claim_run(run.id, owner="mcp-test", lease_seconds=300)
        run = hc.transition_run(run.id, "running", expected_version=run.version, lease_owner="mcp-test")
        return session.id, run.id


def _call(live: McpLive, name: str, arguments: dict[str, Any], token: str | None = None) -> types.CallToolResult:
    async def go() -> types.CallToolResult:
        async with live.client(token) as client:
            return await client.call_tool(name, arguments)

    return run_async(go())


def _ok(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def test_the_tools_are_the_rest_operations_with_the_served_openapi_schemas(mcp_live: McpLive) -> None:
    async def go() -> types.ListToolsResult:
        async with mcp_live.client() as client:
            return await client.list_tools()

    listed = {tool.name: tool for tool in run_async(go()).tools}
    assert list(listed) == [spec.name for spec in TOOLS]
    # Built again from the schema the console serves at /api/schema/: the same arguments, the same constraints.
    served = requests.get(f"{mcp_live.console}/api/schema/?format=json", timeout=30).json()
    for name, tool in tools_of(served).items():
        assert listed[name].input_schema == tool.input_schema, name
    memory_add = listed["memory_add"].input_schema
    assert {"scope", "content", "subject", "expires_at", "idempotency_key"} <= set(memory_add["properties"])
    assert memory_add["properties"]["scope"]["enum"] and "content" in memory_add["required"]
    # The approval's own idempotency_key (the action's) keeps its name; the request's key takes the other one.
    approval = listed["request_approval"].input_schema
    assert {"run_id", "tool", "idempotency_key", "request_idempotency_key"} <= set(approval["properties"])
    assert "idempotency_key" not in listed["approval_status"].input_schema["properties"]  # a read takes no key


def test_each_tool_answers_as_its_rest_call(mcp_live: McpLive, caplog: pytest.LogCaptureFixture) -> None:
    session_id, run_id = _running_run(mcp_live)
    with HarnessClient(mcp_live.console, mcp_live.agent_token) as hc:
        root = hc.create_checkpoint(run=run_id, label="outline", state={"n": 1}, lease_owner="mcp-test")
        child = hc.create_checkpoint(run=run_id, parent=root.id, label="draft", state={"n": 2},
                                     lease_owner="mcp-test")

    unsourced = _call(mcp_live, "memory_add", {"scope": "project", "content": "No source."})  # the write policy's
    assert unsourced.is_error and unsourced.structured_content is not None
    assert (unsourced.structured_content["status"], unsourced.structured_content["code"]) == (
        422, "provenance_required")
    deletes_refused = REGISTRY.get_sample_value("harness_mcp_tool_calls_total",
                                                {"tool": "memory_delete", "status": "403"}) or 0
    added = _ok(_call(mcp_live, "memory_add", {"scope": "project", "subject": "tone", "source_run_id": run_id,
                                               "content": "The novel is told in the first person."}))
    assert added["outcome"] == "accepted" and added["record"]["content"].startswith("The novel")
    record = added["record"]
    found = _ok(_call(mcp_live, "memory_search", {"scope": "project", "q": "first person"}))
    assert [r["id"] for r in found["results"]] == [record["id"]]
    assert found["results"] == _rest(mcp_live, "GET", "/api/v1/memory/retrieve/?scope=project&q=first+person").json()

    superseded = _ok(_call(mcp_live, "memory_supersede", {
        "record_id": record["id"], "content": "The novel is told in the third person.", "source_run_id": run_id,
        "expected_version": record["version"]}))
    assert superseded["supersedes"] == [record["id"]] and superseded["status"] == "active"
    # memory_delete is the operators' (REST: 403 operator_required for an agent token), and an operator's token may.
    refused = _call(mcp_live, "memory_delete", {"record_id": superseded["id"], "expected_version": 1})
    assert refused.is_error and refused.structured_content is not None
    assert (refused.structured_content["status"], refused.structured_content["code"]) == (403, "operator_required")
    assert "403 operator_required" in refused.content[0].text  # type: ignore[union-attr]
    deleted = _ok(_call(mcp_live, "memory_delete", {"record_id": superseded["id"], "reason": "wrong narrator",
                                                    "expected_version": superseded["version"]},
                        token=mcp_live.operator_token))
    assert deleted["status"] == "deleted" and deleted["deleted_by"]

    appended = _ok(_call(mcp_live, "session_items_append", {
        "session_id": session_id, "items": [{"role": "user", "content": {"text": "Write chapter 3"}}]}))
    assert [item["seq"] for item in appended["items"]] == [1] and appended["last_seq"] == 1
    read = _ok(_call(mcp_live, "session_items_read", {"session_id": session_id}))
    assert read == _rest(mcp_live, "GET", f"/api/v1/sessions/{session_id}/items/").json()
    assert [item["content"] for item in read["results"]] == [{"text": "Write chapter 3"}]

    asked = _ok(_call(mcp_live, "request_approval", {
        "run_id": run_id, "tool": "publish_chapter", "arguments": {"chapter": 3}, "idempotency_key": "pub-3",
        "lease_owner": "mcp-test", "reason": "ready"}))
    assert asked["status"] == "pending" and asked["run"] == run_id
    assert asked["console_url"] == f"{mcp_live.console}/approvals/{asked['id']}/"
    status = _ok(_call(mcp_live, "approval_status", {"approval_id": asked["id"]}))
    rest = _rest(mcp_live, "GET", f"/api/v1/approvals/{asked['id']}/").json()
    assert status == {**rest, "console_url": asked["console_url"]}

    checkpoint = _ok(_call(mcp_live, "checkpoint", {"checkpoint_id": child.id}))
    assert checkpoint == _rest(mcp_live, "GET", f"/api/v1/checkpoints/{child.id}/").json()
    assert checkpoint["state"] == {"n": 2}
    lineage = _ok(_call(mcp_live, "lineage", {"checkpoint_id": child.id}))
    # A JSON array is not a tool result's structured content (an object): it is the result's `results`.
    assert lineage == {"results": _rest(mcp_live, "GET", f"/api/v1/checkpoints/{child.id}/lineage/").json()}
    assert [c["id"] for c in lineage["results"]] == [child.id, root.id]

    # Each call counted by tool and status (the refused delete too) beside its REST request's own series.
    assert REGISTRY.get_sample_value("harness_mcp_tool_calls_total",
                                     {"tool": "memory_delete", "status": "403"}) == deletes_refused + 1
    # Each call was a request of the API's own pipeline: its access line, under a request id of the MCP door.
    lines = [r for r in caplog.records if r.name == "harness.request" and getattr(r, "request_id", "")
             .startswith("mcp-")]
    assert any(r.getMessage() == "POST api/v1/runs/<id:pk>/approvals/ 201" for r in lines)
    assert any(r.getMessage() == "GET api/v1/memory/retrieve/ 200" for r in lines)


def test_another_projects_objects_are_refused_as_the_rest_api_refuses_them(mcp_live: McpLive) -> None:
    session_id, run_id = _running_run(mcp_live, mcp_live.other_token)
    with HarnessClient(mcp_live.console, mcp_live.other_token) as hc:
        checkpoint = hc.create_checkpoint(run=run_id, label="theirs", state={}, lease_owner="mcp-test")
        approval = hc.request_approval(run_id, tool="publish_chapter", arguments={}, idempotency_key="theirs",
                                       lease_owner="mcp-test")
    cases = [
        ("approval_status", {"approval_id": approval.id}, f"/api/v1/approvals/{approval.id}/"),
        ("checkpoint", {"checkpoint_id": checkpoint.id}, f"/api/v1/checkpoints/{checkpoint.id}/"),
        ("lineage", {"checkpoint_id": checkpoint.id}, f"/api/v1/checkpoints/{checkpoint.id}/lineage/"),
        ("session_items_read", {"session_id": session_id}, f"/api/v1/sessions/{session_id}/items/"),
    ]
    for name, arguments, path in cases:
        refused = _call(mcp_live, name, arguments)
        rest = _rest(mcp_live, "GET", path)
        assert rest.status_code == 404
        assert refused.is_error and refused.structured_content == {"status": 404, **rest.json()}, name
    appended = _call(mcp_live, "session_items_append", {"session_id": session_id,
                                                        "items": [{"role": "user", "content": "x"}]})
    assert appended.is_error and appended.structured_content is not None
    assert appended.structured_content["status"] == 404
    asked = _call(mcp_live, "request_approval", {"run_id": run_id, "tool": "t", "idempotency_key": "k"})
    assert asked.is_error and asked.structured_content is not None and asked.structured_content["status"] == 404
    # Their own token reaches them.
    assert _ok(_call(mcp_live, "approval_status", {"approval_id": approval.id}, token=mcp_live.other_token))


def test_a_reader_token_reads_through_mcp_and_may_not_write(mcp_live: McpLive) -> None:
    _, reader = factories.make_agent_token(mcp_live.project, name="mcp-reader", role="reader")
    session_id, _ = _running_run(mcp_live)
    assert _ok(_call(mcp_live, "session_items_read", {"session_id": session_id}, token=reader))["results"] == []
    for name, arguments in (("memory_add", {"scope": "project", "content": "x"}),
                            ("session_items_append", {"session_id": session_id,
                                                      "items": [{"role": "user", "content": "x"}]})):
        refused = _call(mcp_live, name, arguments, token=reader)
        rest = _rest(mcp_live, "POST", {"memory_add": "/api/v1/memory/records/",
                                        "session_items_append": f"/api/v1/sessions/{session_id}/items/"}[name],
                     token=reader, json=arguments if name == "memory_add" else {"items": arguments["items"]},
                     headers={"Idempotency-Key": str(uuid.uuid4())})
        assert rest.status_code == 403
        assert refused.is_error and refused.structured_content == {"status": 403, **rest.json()}, name


def test_no_token_or_a_dead_one_is_401_before_any_mcp_message(mcp_live: McpLive) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    for extra in ({}, {"Authorization": "Bearer hc_not-a-token"}):
        answer = httpx2.post(mcp_live.url, json=initialize, headers={**headers, **extra}, timeout=30)
        assert answer.status_code == 401 and answer.headers["www-authenticate"].startswith("Bearer ")
    answer = httpx2.post(mcp_live.url, json=initialize, timeout=30,
                         headers={**headers, "Authorization": f"Bearer {mcp_live.agent_token}"})
    assert answer.status_code == 200


def test_a_token_revoked_mid_session_is_refused_on_its_next_request(mcp_live: McpLive) -> None:
    http, _ = _raw_session(mcp_live)
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "approval_status", "arguments": {"approval_id": 1}}}
    try:
        assert http.post(mcp_live.url, json=call).status_code == 200  # a 404 tool error, inside a 200
        ApiToken.objects.filter(digest=ApiToken.hash_secret(mcp_live.agent_token)).update(revoked_at=timezone.now())
        assert http.post(mcp_live.url, json={**call, "id": 6}).status_code == 401
    finally:
        http.close()


def test_arguments_the_tool_does_not_take_are_refused_like_unknown_fields(mcp_live: McpLive) -> None:
    refused = _call(mcp_live, "approval_status", {"approval_id": 1, "colour": "red"})
    assert refused.is_error and refused.structured_content is not None
    assert (refused.structured_content["status"], refused.structured_content["code"]) == (400, "unknown_field")
    refused = _call(mcp_live, "checkpoint", {"checkpoint_id": "1/../../memory/records"})
    assert refused.is_error and refused.structured_content is not None
    assert refused.structured_content["code"] == "invalid"
    # A body field the serializer does not declare: the REST call's own 400.
    session_id, _ = _running_run(mcp_live)
    refused = _call(mcp_live, "session_items_append", {"session_id": session_id, "colour": "red",
                                                       "items": [{"role": "user", "content": "x"}]})
    assert refused.is_error and refused.structured_content is not None
    assert (refused.structured_content["status"], refused.structured_content["code"]) == (400, "unknown_field")


def _raw_session(live: McpLive) -> tuple[httpx2.Client, str]:
    """A session of the protocol by hand, to send the same JSON-RPC request id twice (the client library never
    does, except on a retry after a lost reply)."""
    http = httpx2.Client(timeout=30, headers={"Authorization": f"Bearer {live.agent_token}",
                                              "Accept": "application/json, text/event-stream"})
    answer = http.post(live.url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    session = answer.headers["mcp-session-id"]
    http.headers.update({"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"})
    http.post(live.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return http, session


def _rpc_result(answer: httpx2.Response) -> dict[str, Any]:
    """The tool call's structured result, from a JSON answer or the SSE stream's data lines."""
    text = answer.text
    payload = text if text.lstrip().startswith("{") else next(
        line.removeprefix("data:").strip() for line in text.splitlines()
        if line.startswith("data:") and '"result"' in line)
    result: dict[str, Any] = json.loads(payload)["result"]["structuredContent"]
    return result


def test_a_write_is_keyed_by_its_mcp_request_or_by_the_key_it_gives(mcp_live: McpLive) -> None:
    session_id, _ = _running_run(mcp_live)
    http, _ = _raw_session(mcp_live)

    def append(request_id: int, **extra: Any) -> dict[str, Any]:
        arguments = {"session_id": session_id, "items": [{"role": "user", "content": "hello"}], **extra}
        return _rpc_result(http.post(mcp_live.url, json={"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                                                          "params": {"name": "session_items_append",
                                                                     "arguments": arguments}}))

    try:
        first = append(7)
        assert append(7) == first  # the same MCP request again (a retry): replayed, nothing appended twice
        assert append(8)["last_seq"] == first["last_seq"] + 1  # another request: a new append
        key = str(uuid.uuid4())
        keyed = append(9, idempotency_key=key)
        assert append(10, idempotency_key=key) == keyed  # the client's own key replays across requests
    finally:
        http.close()
    # What the key scopes is the REST API's: the token; the session's items are the ones appended, once each.
    items = _rest(mcp_live, "GET", f"/api/v1/sessions/{session_id}/items/").json()["results"]
    assert [item["seq"] for item in items] == [1, 2, 3]


def test_the_example_lists_searches_and_requests_an_approval(mcp_live: McpLive) -> None:
    _, run_id = _running_run(mcp_live)
    written = _rest(mcp_live, "POST", "/api/v1/memory/records/", json={
        "scope": "project", "content": "The lighthouse keeper is called Tomas.", "source_run_id": run_id})
    assert written.status_code == 201, written.text
    env = {"PATH": "/usr/bin:/bin", "HARNESS_URL": mcp_live.console, "HARNESS_MCP_URL": mcp_live.url,
           "HARNESS_TOKEN": mcp_live.agent_token}
    done = subprocess.run([sys.executable, "examples/mcp_client.py"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tools: memory_search, memory_add" in done.stdout
    assert f"memory_search: 1 record(s)\n  #{written.json()['record']['id']} The lighthouse keeper" in done.stdout
    line = next(line for line in done.stdout.splitlines() if line.startswith("approval "))
    approval_id = int(line.split()[1])
    assert line == f"approval {approval_id} is pending: decide it at {mcp_live.console}/approvals/{approval_id}/"
    assert _rest(mcp_live, "GET", f"/api/v1/approvals/{approval_id}/").json()["tool"] == "publish_chapter"
