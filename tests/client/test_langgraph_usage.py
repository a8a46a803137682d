"""HarnessUsageCallback (issue 16, section 3): a real LangGraph graph (a model node and a tool node, checkpointed by
HarnessSaver) with fake chat models reports each model call's tokens and cost to the harness run over the live
server; a report sent again is counted once; a run pushed over its token budget stops the graph before its tool."""

import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from harness_client import HarnessClient, ModelPrice, RunStopped
from harness_client.langgraph import HarnessSaver, HarnessUsageCallback
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult, LLMResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph

from runs_app.models import Run, RunEvent
from tests.client.conftest import Live, Recorder, posts_to

pytestmark = pytest.mark.django_db(transaction=True)

PRICES = {"fake-4": ModelPrice(Decimal("2.50"), Decimal("10.00"))}


def _reply(text: str, input_tokens: int, output_tokens: int, response_id: str, **kwargs: Any) -> AIMessage:
    return AIMessage(content=text, id=response_id, response_metadata={"model_name": "fake-4"},
                     usage_metadata={"input_tokens": input_tokens, "output_tokens": output_tokens,
                                     "total_tokens": input_tokens + output_tokens}, **kwargs)


def _asks_for_tides(input_tokens: int, output_tokens: int) -> AIMessage:
    return _reply("", input_tokens, output_tokens, "resp-1",
                  tool_calls=[{"name": "look_up", "args": {"topic": "tides"}, "id": "c-1", "type": "tool_call"}])


class OpenAIShapedModel(BaseChatModel):
    """A chat model whose usage is only in `llm_output`, as older provider integrations report it."""

    replies: Iterator[str]

    @property
    def _llm_type(self) -> str:
        return "openai-shaped-fake"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=next(self.replies)))],
                          llm_output={"token_usage": {"prompt_tokens": 60, "completion_tokens": 40,
                                                      "total_tokens": 100},
                                      "model_name": "fake-4", "id": "chatcmpl-7"})


def _graph(model: BaseChatModel, looked_up: list[str], checkpointer: Any = None) -> CompiledStateGraph[Any]:
    @tool
    def look_up(topic: str) -> str:
        """Look a topic up."""
        looked_up.append(topic)
        return f"{topic}: found"

    def agent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"], config)]}

    def tools(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)  # the graph routes here only after the model asked
        return {"messages": [ToolMessage(content=look_up.invoke(call["args"], config), tool_call_id=call["id"])
                             for call in last.tool_calls]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def _running_run(hc: HarnessClient, **budget: Any) -> int:
    session = hc.create_session(role="writer", memory_policy="session")
    run = hc.create_run(session=session.id, **budget)
    return hc.transition_run(run.id, "running", expected_version=run.version).id


def test_each_model_call_of_a_thread_is_reported_to_its_run(hc: HarnessClient) -> None:
    model = GenericFakeChatModel(messages=iter([_asks_for_tides(1000, 200),
                                                _reply("Tides: found.", 1500, 300, "resp-2")]))
    looked_up: list[str] = []
    saver = HarnessSaver(client=hc)
    usage = HarnessUsageCallback.for_thread(saver, "tides-1", prices=PRICES)

    result = _graph(model, looked_up, saver).invoke(
        {"messages": [("user", "Tides?")]}, {"configurable": {"thread_id": "tides-1"}, "callbacks": [usage]})

    assert result["messages"][-1].content == "Tides: found." and looked_up == ["tides"]
    run = Run.objects.get(pk=usage.run_id)
    assert run.ref == "tides-1"  # the thread's own run, whose checkpoints the graph wrote
    # (1000 * 2.50 + 200 * 10) / 1e6 = 0.0045; (1500 * 2.50 + 300 * 10) / 1e6 = 0.00675, rounded to 0.0068
    assert (run.tokens_used, run.cost_used) == (3000, Decimal("0.0113"))
    events = [e.data for e in RunEvent.objects.filter(run=run, kind="usage.reported").order_by("seq")]
    assert events == [{"tokens": 1200, "cost": "0.0045", "model": "fake-4", "call_id": "resp-1"},
                      {"tokens": 1800, "cost": "0.0068", "model": "fake-4", "call_id": "resp-2"}]


def test_a_report_sent_again_is_counted_once(live: Live, hc: HarnessClient) -> None:
    run_id = _running_run(hc)
    recorder = Recorder(lose=posts_to("/usage/"))  # the first report's reply never arrives
    model = OpenAIShapedModel(replies=iter(["Done.", "Done."]))

    with live.client(transport=recorder) as flaky:
        usage = HarnessUsageCallback(flaky, run_id)
        _graph(model, []).invoke({"messages": [("user", "Anything?")]}, {"callbacks": [usage]})
        # A process that restarts reports the same response again, with a handler of its own.
        answer = model._generate([])
        same = LLMResult(generations=[answer.generations], llm_output=answer.llm_output)
        # Its LangChain run id is another one: the key comes from the response's id.
        HarnessUsageCallback(flaky, run_id).on_llm_end(same, run_id=uuid.uuid4())

    sent = [request for request, _ in recorder.exchanges if request.url.path.endswith("/usage/")]
    assert len(sent) == 3 and recorder.lost  # lost, retried, and sent again by the restarted process
    assert len({request.headers["Idempotency-Key"] for request in sent}) == 1
    run = Run.objects.get(pk=run_id)
    assert (run.tokens_used, run.cost_used) == (100, Decimal(0))  # llm_output's 60 + 40; no price table
    assert [e.data for e in RunEvent.objects.filter(run=run, kind="usage.reported")] == [
        {"tokens": 100, "cost": "0.0000", "model": "fake-4", "call_id": "chatcmpl-7"}]


def test_a_run_pushed_over_its_token_budget_stops_the_graph_before_its_tool(hc: HarnessClient) -> None:
    run_id = _running_run(hc, token_budget=1000)
    replies = iter([_asks_for_tides(900, 200), _reply("Tides: found.", 10, 10, "resp-2")])
    model = GenericFakeChatModel(messages=replies)
    looked_up: list[str] = []
    usage = HarnessUsageCallback(hc, run_id, prices=PRICES)

    with pytest.raises(RunStopped) as stopped:
        _graph(model, looked_up).invoke({"messages": [("user", "Tides?")]}, {"callbacks": [usage]})

    assert stopped.value.run.blocked_step == "budget"
    assert looked_up == []  # the tool the model asked for never ran
    assert next(replies).content == "Tides: found."  # and the model was not called again
    run = Run.objects.get(pk=run_id)
    assert (run.status, run.blocked_step, run.tokens_used) == ("blocked", "budget", 1100)
    with pytest.raises(RunStopped):  # the same handler refuses a further tool call without a request
        usage.on_tool_start({}, "tides")
