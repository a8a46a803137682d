"""The adapters name their runs and end them (issue 32: runs were left `running` after the examples' scripts
ended, with no agent name): a LangGraph invocation through `invoke_and_finish`, an Agents SDK `Runner.run`
through `run_with_approvals`; succeeded when they end, failed with the error when they raise."""

from typing import Any, TypedDict

import pytest
from agents import Agent, ModelResponse
from agents.testing import assistant_message
from harness_client import HarnessClient
from harness_client.agents import HarnessApprovals, HarnessSession, run_with_approvals
from harness_client.langgraph import HarnessSaver, invoke_and_finish
from langgraph.graph import END, START, StateGraph

from runs_app.models import Run
from tests.client.conftest import Live, run_async
from tests.client.test_agents_runner import NO_TRACING, FakeModel


class State(TypedDict):
    done: list[str]


def _graph(saver: HarnessSaver, *, fail: bool) -> Any:
    def write(state: State) -> dict[str, Any]:
        if fail:
            raise RuntimeError("the printer is on fire")
        return {"done": [*state["done"], "write"]}

    builder = StateGraph(State)
    builder.add_node("write", write)
    builder.add_edge(START, "write")
    builder.add_edge("write", END)
    return builder.compile(checkpointer=saver, name="chapter-writer")


@pytest.mark.django_db(transaction=True)
def test_a_graph_invocation_names_its_run_and_ends_it(hc: HarnessClient) -> None:
    saver = HarnessSaver(client=hc)
    result = invoke_and_finish(_graph(saver, fail=False), {"done": []},
                               {"configurable": {"thread_id": "lg-ends-ok"}}, client=saver, durability="sync")
    assert result == {"done": ["write"]}
    run = Run.objects.get(ref="lg-ends-ok")
    assert (run.status, run.active_agent) == ("succeeded", "chapter-writer")

    with pytest.raises(RuntimeError, match="on fire"):
        invoke_and_finish(_graph(saver, fail=True), {"done": []}, {"configurable": {"thread_id": "lg-ends-raise"}},
                          client=saver, durability="sync")
    run = Run.objects.get(ref="lg-ends-raise")
    assert (run.status, run.active_agent) == ("failed", "chapter-writer")
    assert run.error["type"] == "RuntimeError" and "on fire" in run.error["message"]


class BrokenModel(FakeModel):
    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise ConnectionError("the model is down")


@pytest.mark.django_db(transaction=True)
def test_runner_run_names_its_run_and_ends_it(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_URL", live.url)
    monkeypatch.setenv("HARNESS_TOKEN", live.agent_token)

    async def go(session_id: str, agent: Agent[Any]) -> int:
        async with HarnessSession(session_id) as session:
            approvals = HarnessApprovals(session, poll_interval=0.05, timeout=5)
            try:
                await run_with_approvals(agent, "Hello.", session=session, approvals=approvals,
                                         run_config=NO_TRACING)
            finally:
                run_id = await approvals.run_id()
            return run_id

    greeter = Agent(name="greeter", instructions="Be brief.", model=FakeModel(assistant_message("Hi.", item_id="m1")))
    run = Run.objects.get(pk=run_async(go("ends-ok", greeter)))
    assert (run.status, run.active_agent) == ("succeeded", "greeter")

    broken = Agent(name="broken-greeter", instructions="Be brief.", model=BrokenModel())
    with pytest.raises(ConnectionError):
        run_async(go("ends-raise", broken))
    run = Run.objects.exclude(active_agent="greeter").get(project=live.project)
    assert (run.status, run.active_agent) == ("failed", "broken-greeter")
    assert run.error["type"] == "ConnectionError" and "the model is down" in run.error["message"]
