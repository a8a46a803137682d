"""The OpenAI Agents SDK: an `ask_human` tool that asks a person through Harness Console and gives the model the
answer.

    from harness_client.agents_questions import ask_human_tool
    agent = Agent(name="writer", tools=[ask_human_tool(client, run=run_id)])

When the model calls `ask_human(question, choices)`, the tool posts the question (to the console's inbox,
Questions; `choices` makes it a choice, none free text), waits for a reviewer's answer, and returns it to the model
as text. The question's key is the tool call's id, so a retried call finds the same question instead of asking
twice. Unanswered in `timeout` seconds, or expired or withdrawn, the model is told so (the tool's output), rather
than the run failing. Needs the `agents` extra.
"""

from __future__ import annotations

import json
from typing import Any

from agents import FunctionTool, function_tool
from agents.tool_context import ToolContext

from harness_client.client import AsyncHarnessClient
from harness_client.errors import QuestionWaitTimeout


def ask_human_tool(client: AsyncHarnessClient, *, run: int | None = None, group: int | None = None,
                   timeout: float = 600.0, poll_interval: float = 1.0) -> FunctionTool:
    """The `ask_human` function tool, asking on `run` (its events show the question), routed to `group` if given."""

    @function_tool(name_override="ask_human")
    async def ask_human(ctx: ToolContext[Any], question: str, choices: list[str] | None = None) -> str:
        """Ask a person a question and wait for the answer. Use it when only a person can say (a preference, a
        fact you cannot look up, a judgement).

        Args:
            question: The question, complete enough to be answered without the conversation.
            choices: The answers to choose from, if the person should pick one; none for a free answer.
        """
        schema: dict[str, Any] = {"type": "string", "enum": list(choices)} if choices else {"type": "string"}
        key = f"agents-question-{run or 0}-{ctx.tool_call_id}"
        try:
            settled = await client.ask(question, idempotency_key=key, answer_schema=schema, run=run, group=group,
                                       timeout=timeout, poll_interval=poll_interval)
        except QuestionWaitTimeout as exc:
            return f"No answer yet (question {exc.question.id} is still waiting for a person)."
        if settled.status != "answered":
            return f"The question was not answered: it is {settled.status}."
        return settled.answer if isinstance(settled.answer, str) else json.dumps(settled.answer)

    return ask_human
