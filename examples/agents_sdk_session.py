"""An OpenAI Agents SDK agent whose conversation and tool approvals live in Harness Console. Runs offline.

The model is scripted (a `Model` subclass returning canned responses): no network, no API key. Everything
else is the real SDK (`Runner.run`, sessions, a `needs_approval` function tool) and the real service.

Run it against a local server:

    bin/start                                                   # in one terminal: http://127.0.0.1:8000/
    export HARNESS_URL=http://127.0.0.1:8000
    export HARNESS_TOKEN=$(DEBUG=1 .venv/bin/python manage.py create_agent_token --project novelforge \\
                           --name agents-sdk-example | tail -1)
    .venv/bin/python examples/agents_sdk_session.py            # pip install ./client[agents] elsewhere

It clears the session (a rerun starts afresh; the removed items' seqs are never reused), holds a two-turn
conversation on `HarnessSession("agents-sdk-example")` (the one-line switch from the SDK's own
`SQLiteSession`), then asks to publish a chapter: the `publish_chapter` tool needs approval, so
the request waits in the console's inbox. Approve it at http://127.0.0.1:8000/approvals/ (log in as
`reviewer` / `reviewer-demo`, a reviewer of `novelforge`); the agent goes on, the tool runs once, and the
session's timeline at /sessions/ shows every item. `EXAMPLE_SESSION` names another session.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage, function_tool
from agents.items import TResponseOutputItem
from agents.testing import assistant_message, function_call
from harness_client.agents import HarnessApprovals, HarnessSession, run_with_approvals
from harness_client.models import Approval


class ScriptedModel(Model):
    """Answers each call with the next canned output item, as the SDK's own tests fake a model."""

    def __init__(self, *outputs: TResponseOutputItem) -> None:
        self.outputs = list(outputs)

    async def get_response(self, system_instructions: Any, input: Any, model_settings: Any, tools: Any,
                           output_schema: Any, handoffs: Any, tracing: Any, *, previous_response_id: Any,
                           conversation_id: Any, prompt: Any) -> ModelResponse:
        seen = len(input) if isinstance(input, list) else 1
        print(f"  (model called with {seen} items of history)")
        return ModelResponse(output=[self.outputs.pop(0)], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("this example does not stream")


@function_tool(needs_approval=True)
def publish_chapter(chapter: int) -> str:
    """Publish a chapter to the readers (a reviewer approves it first)."""
    print(f"  publish_chapter({chapter}) runs")
    return f"chapter {chapter} is out"


def waiting(approval: Approval) -> None:
    url = os.environ["HARNESS_URL"].rstrip("/")
    print(f"Approval {approval.id} ({approval.tool} {approval.arguments}) is waiting for a reviewer: "
          f"{url}/approvals/{approval.id}/")


async def main() -> None:
    model = ScriptedModel(
        assistant_message("Noted: chapter 3 is about the lighthouse.", item_id="msg-1"),
        assistant_message("Chapter 3 is about the lighthouse.", item_id="msg-2"),
        function_call("publish_chapter", {"chapter": 3}, call_id="call-publish-3"),
        assistant_message("Chapter 3 is published.", item_id="msg-3"),
    )
    agent = Agent(name="novel-writer", instructions="Help write and publish the novel.", model=model,
                  tools=[publish_chapter])
    config = RunConfig(tracing_disabled=True)  # offline: no trace export

    # session = SQLiteSession("agents-sdk-example")          # the SDK's own local store ...
    session = HarnessSession(os.environ.get("EXAMPLE_SESSION", "agents-sdk-example"))  # ... switched: one line
    async with session:
        await session.clear_session()  # a rerun starts afresh (an interrupted one may have left a tool call)
        print("turn 1")
        result = await Runner.run(agent, "Chapter 3 is about the lighthouse.", session=session, run_config=config)
        print(" ", result.final_output)
        print("turn 2 (the history comes back from the service)")
        result = await Runner.run(agent, "What is chapter 3 about?", session=session, run_config=config)
        print(" ", result.final_output)

        print("turn 3: a tool that needs a reviewer's approval")
        approvals = HarnessApprovals(session, on_request=waiting, poll_interval=0.2, max_poll_interval=2.0)
        result = await run_with_approvals(agent, "Publish chapter 3.", session=session, approvals=approvals,
                                          run_config=config)
        for decided in approvals.decisions:
            print(f"Approval {decided.id} {decided.status} by {decided.decided_by}: {decided.outcome_state}")
        print(" ", result.final_output)
        print(f"Session {await session.harness_id()} holds {len(await session.get_items())} items.")


if __name__ == "__main__":
    asyncio.run(main())
