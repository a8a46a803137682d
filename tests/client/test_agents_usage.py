"""HarnessUsageHooks (issue 16, section 3): a real `Runner.run` with a scripted model that meters its calls
reports each call's tokens and cost to the harness run over the live server; a report sent again is counted
once; a run pushed over its token budget stops the agent before the tool call the model asked for."""

from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import pytest
from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage, function_tool
from agents.items import TResponseOutputItem
from agents.testing import assistant_message, function_call
from harness_client import AsyncHarnessClient, HarnessClient, ModelPrice, RunStopped
from harness_client.agents import HarnessUsageHooks

from runs_app.models import Run, RunEvent
from tests.client.conftest import FAST_RETRY, AsyncRecorder, Live, posts_to, run_async

pytestmark = pytest.mark.django_db(transaction=True)

NO_TRACING = RunConfig(tracing_disabled=True)
PRICES = {"fake-4": ModelPrice(Decimal("2.50"), Decimal("10.00"))}


class MeteredModel(Model):
    """A model that answers from a script, each step an output item with the usage and response id it reports."""

    model = "fake-4"  # what an OpenAI model object calls its name: the price table's key

    def __init__(self, *steps: tuple[TResponseOutputItem, Usage, str | None]) -> None:
        self.steps = list(steps)
        self.calls = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        self.calls += 1
        output, usage, response_id = self.steps.pop(0)
        return ModelResponse(output=[output], usage=usage, response_id=response_id)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


def _usage(input_tokens: int, output_tokens: int) -> Usage:
    return Usage(requests=1, input_tokens=input_tokens, output_tokens=output_tokens,
                 total_tokens=input_tokens + output_tokens)


def _agent(model: MeteredModel, looked_up: list[str]) -> Agent[Any]:
    @function_tool
    def look_up(topic: str) -> str:
        """Look a topic up."""
        looked_up.append(topic)
        return f"{topic}: found"

    return Agent(name="researcher", instructions="Look things up.", model=model, tools=[look_up])


def _running_run(hc: HarnessClient, **budget: Any) -> int:
    session = hc.create_session(role="writer", memory_policy="session")
    run = hc.create_run(session=session.id, **budget)
    return hc.transition_run(run.id, "running", expected_version=run.version).id


def test_each_model_call_is_reported_with_its_tokens_and_priced_cost(live: Live, hc: HarnessClient) -> None:
    run_id = _running_run(hc, token_budget=10_000)
    model = MeteredModel((function_call("look_up", {"topic": "tides"}, call_id="c-1"), _usage(1000, 200), "resp-1"),
                         (assistant_message("Tides: found.", item_id="m1"), _usage(1500, 300), "resp-2"))
    looked_up: list[str] = []

    async def research() -> tuple[str, list[Any]]:
        async with AsyncHarnessClient(live.url, live.agent_token, retry=FAST_RETRY) as client:
            hooks = HarnessUsageHooks(client, run_id, prices=PRICES)
            result = await Runner.run(_agent(model, looked_up), "Tides?", hooks=hooks, run_config=NO_TRACING)
            return str(result.final_output), hooks.reports

    final, reports = run_async(research())

    assert final == "Tides: found." and looked_up == ["tides"]
    # (1000 * 2.50 + 200 * 10) / 1e6 = 0.0045; (1500 * 2.50 + 300 * 10) / 1e6 = 0.00675, rounded to 0.0068
    run = Run.objects.get(pk=run_id)
    assert (run.tokens_used, run.cost_used, run.status) == (3000, Decimal("0.0113"), "running")
    assert [r.tokens_used for r in reports] == [1200, 3000]
    events = [e.data for e in RunEvent.objects.filter(run_id=run_id, kind="usage.reported").order_by("seq")]
    assert events == [{"tokens": 1200, "cost": "0.0045", "model": "fake-4", "call_id": "resp-1"},
                      {"tokens": 1800, "cost": "0.0068", "model": "fake-4", "call_id": "resp-2"}]


def test_a_report_sent_again_is_counted_once(live: Live, hc: HarnessClient) -> None:
    run_id = _running_run(hc)
    recorder = AsyncRecorder(lose=posts_to("/usage/"))  # the first report's reply never arrives
    model = MeteredModel((assistant_message("Done.", item_id="m1"), _usage(70, 30), "resp-once"))

    async def research() -> None:
        async with AsyncHarnessClient(live.url, live.agent_token, retry=FAST_RETRY, transport=recorder) as client:
            hooks = HarnessUsageHooks(client, run_id)
            result = await Runner.run(_agent(model, []), "Anything?", hooks=hooks, run_config=NO_TRACING)
            # A process that restarts reports the same response again, with hooks of its own.
            again = HarnessUsageHooks(client, run_id)
            await again.on_llm_end(None, result.last_agent, result.raw_responses[0])  # type: ignore[arg-type]

    run_async(research())

    sent = [request for request, _ in recorder.exchanges if request.url.path.endswith("/usage/")]
    assert len(sent) == 3 and recorder.lost  # lost, retried, and sent again by the restarted process
    assert len({request.headers["Idempotency-Key"] for request in sent}) == 1
    run = Run.objects.get(pk=run_id)
    assert (run.tokens_used, run.cost_used) == (100, Decimal(0))  # no price table: the cost is 0
    assert RunEvent.objects.filter(run_id=run_id, kind="usage.reported").count() == 1


def test_a_run_pushed_over_its_token_budget_stops_before_the_tool_call(live: Live, hc: HarnessClient) -> None:
    run_id = _running_run(hc, token_budget=1000)
    model = MeteredModel((function_call("look_up", {"topic": "tides"}, call_id="c-1"), _usage(900, 200), "resp-1"),
                         (assistant_message("Tides: found.", item_id="m1"), _usage(10, 10), "resp-2"))
    looked_up: list[str] = []

    async def research() -> HarnessUsageHooks:
        async with AsyncHarnessClient(live.url, live.agent_token, retry=FAST_RETRY) as client:
            hooks = HarnessUsageHooks(client, run_id, prices=PRICES)
            with pytest.raises(RunStopped) as stopped:
                await Runner.run(_agent(model, looked_up), "Tides?", hooks=hooks, run_config=NO_TRACING)
            assert stopped.value.run.blocked_step == "budget" and stopped.value.code == "run_stopped"
            return hooks

    hooks = run_async(research())

    assert looked_up == []  # the tool the model asked for never ran
    assert model.calls == 1  # and the model was not called again
    run = Run.objects.get(pk=run_id)
    assert (run.status, run.blocked_step, run.tokens_used) == ("blocked", "budget", 1100)
    # The same hooks refuse a further model call without asking the server.
    with pytest.raises(RunStopped):
        run_async(hooks.on_llm_start(None, None, None, []))  # type: ignore[arg-type]
