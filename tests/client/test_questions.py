"""Questions to people through the client and both adapters, against a live server (issue 33, part 4): an agent
asks, a reviewer answers through the API (the console's door is tests/browser/test_questions.py), the agent reads
the answer; a second answer is refused 409 already_answered. A LangGraph node's `ask_human` interrupt resumes with
the answer; the Agents SDK's `ask_human` tool gives the model the answer."""

import operator
import threading
import time
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import pytest
from agents import Agent, Runner
from agents.testing import assistant_message, function_call
from harness_client import AsyncHarnessClient, ConflictError, HarnessClient, PermissionDenied, QuestionWaitTimeout
from harness_client.agents_questions import ask_human_tool
from harness_client.langgraph import HarnessSaver
from harness_client.langgraph_questions import ask_human, invoke_answering, question_ids
from langgraph.graph import END, START, StateGraph

from runs_app.models import HumanQuestion, RunEvent
from tests.client.conftest import FAST_RETRY, Live, run_async
from tests.client.test_agents_runner import NO_TRACING, FakeModel

pytestmark = pytest.mark.django_db(transaction=True)


class Answerer:
    """A reviewer in another thread who answers, through the API, every pending question it is given an answer
    for (by the question's text), as a person at the console would."""

    def __init__(self, live: Live, answers: dict[str, Any]) -> None:
        self.client = live.client(live.reviewer_token)
        self.answers = answers
        self.answered: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for question in self.client.list_questions(status="pending"):
                if question.question in self.answers and question.id not in self.answered:
                    self.client.answer_question(question.id, self.answers[question.question],
                                                expected_version=question.version)
                    self.answered.append(question.id)
            time.sleep(0.1)

    def __enter__(self) -> "Answerer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self.client.close()


def test_the_agent_asks_a_reviewer_answers_and_the_agent_reads_it(live: Live, hc: HarnessClient) -> None:
    run = hc.create_run(session=hc.create_session(role="writer").id)
    asked = hc.ask_question("Which cover?", idempotency_key="cover-1", run=run.id,
                            answer_schema={"type": "string", "enum": ["blue", "red"]}, context={"book": 3})
    assert (asked.status, asked.answer, asked.run) == ("pending", None, run.id)
    with pytest.raises(QuestionWaitTimeout):
        hc.wait_for_question(asked.id, timeout=0.2, poll_interval=0.05, max_poll_interval=0.05)
    with pytest.raises(PermissionDenied) as agent:
        hc.answer_question(asked.id, "blue")
    assert agent.value.code == "agent_cannot_decide"

    with live.client(live.reviewer_token) as person:
        answered = person.answer_question(asked.id, "blue", expected_version=asked.version)
        assert (answered.status, answered.answered_by) == ("answered", "client-reviewer")
        with pytest.raises(ConflictError) as twice:
            person.answer_question(asked.id, "red")
        assert (twice.value.code, twice.value.status) == ("already_answered", 409)

    read = hc.wait_for_question(asked.id, timeout=5)
    assert (read.status, read.answer, read.answer_fingerprint) == ("answered", "blue", asked.fingerprint)
    assert hc.ask("Which cover?", idempotency_key="cover-1", run=run.id,
                  answer_schema={"type": "string", "enum": ["blue", "red"]}, context={"book": 3}).answer == "blue"
    assert list(RunEvent.objects.filter(run_id=run.id, kind__startswith="question.")
                .values_list("kind", flat=True)) == ["question.asked", "question.answered"]


class CoverState(TypedDict):
    topic: str
    notes: Annotated[list[str], operator.add]


def _cover_graph(saver: HarnessSaver) -> Any:
    """draft -> pick (asks a person which cover) -> END."""
    def pick(state: CoverState) -> dict[str, Any]:
        cover = ask_human("Which cover for the book?", {"type": "string", "enum": ["blue", "red"]},
                          context={"topic": state["topic"]})
        return {"notes": [f"cover {cover}"]}

    builder = StateGraph(CoverState)
    builder.add_node("draft", lambda s: {"notes": [f"draft {s['topic']}"]})
    builder.add_node("pick", pick)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "pick")
    builder.add_edge("pick", END)
    return builder.compile(checkpointer=saver)


@pytest.fixture
def saver(live: Live) -> Iterator[HarnessSaver]:
    with live.client() as client:
        yield HarnessSaver(client)


def test_a_langgraph_question_interrupt_resumes_with_the_answer(live: Live, saver: HarnessSaver) -> None:
    graph = _cover_graph(saver)
    config = {"configurable": {"thread_id": "covers-1"}}
    stopped = graph.invoke({"topic": "lighthouse", "notes": []}, config)
    [question_id] = question_ids(stopped["__interrupt__"])
    question = HumanQuestion.objects.get(pk=question_id)
    assert (question.status, question.context) == ("pending", {"topic": "lighthouse"})
    assert question.run.ref == "covers-1"

    with Answerer(live, {"Which cover for the book?": "red"}) as answerer:
        result = invoke_answering(graph, None, config, poll_interval=0.1)

    assert result["notes"] == ["draft lighthouse", "cover red"]
    assert answerer.answered == [question_id]
    assert HumanQuestion.objects.filter(run__ref="covers-1").count() == 1  # asked once, across the resume


def test_the_agents_sdk_ask_human_tool_gives_the_model_the_answer(live: Live) -> None:
    model = FakeModel(function_call("ask_human", {"question": "Which cover?", "choices": ["blue", "red"]},
                                    call_id="call-ask-1"),
                      assistant_message("Blue it is.", item_id="m1"))

    async def scenario() -> Any:
        async with AsyncHarnessClient(live.url, live.agent_token, retry=FAST_RETRY) as client:
            run = await client.create_run(session=(await client.create_session(role="writer")).id)
            agent = Agent(name="designer", model=model, tools=[ask_human_tool(client, run=run.id, poll_interval=0.1)])
            return await Runner.run(agent, "Design the cover.", run_config=NO_TRACING)

    with Answerer(live, {"Which cover?": "blue"}):
        result = run_async(scenario())

    assert result.final_output == "Blue it is."
    tool_output = [item for item in model.inputs[1] if isinstance(item, dict)
                   and item.get("type") == "function_call_output"]
    assert tool_output and tool_output[0]["output"] == "blue"
    question = HumanQuestion.objects.get()
    assert (question.idempotency_key, question.answer_schema["enum"]) == (
        f"agents-question-{question.run_id}-call-ask-1", ["blue", "red"])
