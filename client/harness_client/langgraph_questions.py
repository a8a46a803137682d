"""LangGraph: a node asks a person a question through Harness Console, and the graph resumes with the answer.

    from harness_client.langgraph_questions import ask_human, invoke_answering

    def pick_cover(state):
        cover = ask_human("Which cover?", {"type": "string", "enum": ["blue", "red"]})
        return {"cover": cover}

    result = invoke_answering(graph, {"topic": "..."}, config)   # waits for the answers, resumes, returns

`ask_human` posts the question (durably, under a key derived from the thread, the namespace and the question, so the
node, run again when the graph resumes, finds the same question) and calls `interrupt()` with a payload marked as a
question; the graph is resumed with `Command(resume=<the answer>)`, which `interrupt()` returns to the node.
`invoke_answering` is that loop: invoke, and while the graph stops at question interrupts, wait for their answers
(`HarnessClient.wait_for_question`) and resume with them. A question that expires or is withdrawn unanswered raises
`QuestionNotAnswered`. Needs the `langgraph` extra.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness_client.client import HarnessClient
from harness_client.errors import HarnessError
from harness_client.langgraph import HarnessSaver
from harness_client.models import Question

QUESTION_MARK = "harness_question"  # the interrupt payload's key that says "this is a question"


class QuestionNotAnswered(HarnessError):
    """The question was settled without an answer (expired or cancelled): `question` is it as it is."""

    def __init__(self, question: Question) -> None:
        super().__init__(f"Question {question.id} is {question.status}, not answered.", code="question_not_answered")
        self.question = question


def _client_of(configurable: Mapping[str, Any], client: HarnessClient | None) -> HarnessClient:
    saver = configurable.get("__pregel_checkpointer")  # langgraph._internal._constants.CONFIG_KEY_CHECKPOINTER
    found = client or (saver.client if isinstance(saver, HarnessSaver) else None)
    if found is None:
        raise ValueError("ask_human needs a graph compiled with HarnessSaver, or client=.")
    return found


def ask_human(question: str, answer_schema: Mapping[str, Any] | None = None, *,
              context: Mapping[str, Any] | None = None, group: int | None = None,
              client: HarnessClient | None = None) -> Any:
    """Inside a graph node: ask a person and interrupt the graph until the answer is given; returns the answer
    (what `Command(resume=...)` carries: `invoke_answering` resumes with the question's answer). The question is
    on the thread's run; the interrupt's value is `{"harness_question": id, "question": ..., "answer_schema": ...}`."""
    from langgraph.config import get_config
    from langgraph.types import interrupt

    configurable = get_config()["configurable"]
    hc = _client_of(configurable, client)
    thread_id = str(configurable["thread_id"])
    spec = json.dumps([thread_id, configurable.get("checkpoint_ns", ""), question, answer_schema, context],
                      sort_keys=True, default=str)
    key = "langgraph-question-" + hashlib.sha256(spec.encode()).hexdigest()[:40]
    run = hc.ensure_thread(thread_id).run
    asked = hc.ask_question(question, idempotency_key=key, answer_schema=answer_schema, context=context, run=run,
                            group=group)
    return interrupt({QUESTION_MARK: asked.id, "question": question,
                      "answer_schema": asked.answer_schema})


def question_ids(interrupts: Sequence[Any]) -> list[int]:
    """The question ids among a graph's interrupts (`result["__interrupt__"]`) that `ask_human` raised."""
    ids: list[int] = []
    for item in interrupts:
        value = getattr(item, "value", None)
        if isinstance(value, dict) and isinstance(value.get(QUESTION_MARK), int):
            ids.append(value[QUESTION_MARK])
    return ids


def answer_of(client: HarnessClient, question_id: int, *, timeout: float = 600.0, poll_interval: float = 1.0
              ) -> Any:
    """Wait for the question's answer and return it (QuestionNotAnswered if it expired or was withdrawn)."""
    settled = client.wait_for_question(question_id, timeout=timeout, poll_interval=poll_interval)
    if settled.status != "answered":
        raise QuestionNotAnswered(settled)
    return settled.answer


def invoke_answering(graph: Any, graph_input: Any, config: Mapping[str, Any], *, client: HarnessClient | None = None,
                     timeout: float = 600.0, poll_interval: float = 1.0) -> Any:
    """`graph.invoke`, resumed with the answers while it stops at `ask_human`'s questions; the final result (or
    the result at an interrupt that is not a question, for its caller to handle)."""
    from langgraph.types import Command

    saver = getattr(graph, "checkpointer", None)
    hc = client or (saver.client if isinstance(saver, HarnessSaver) else None)
    if hc is None:
        raise ValueError("invoke_answering needs a graph compiled with HarnessSaver, or client=.")
    result = graph.invoke(graph_input, config)
    while True:
        interrupts = result.get("__interrupt__", []) if isinstance(result, dict) else []
        asked = [item for item in interrupts if question_ids([item])]
        if not asked or len(asked) != len(interrupts):
            return result
        answers = {item.id: answer_of(hc, question_ids([item])[0], timeout=timeout, poll_interval=poll_interval)
                   for item in asked}
        resume: Any = next(iter(answers.values())) if len(answers) == 1 else answers
        result = graph.invoke(Command(resume=resume), config)
