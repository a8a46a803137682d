"""Scenario R: the adapters' resume, from a reviewer's decision to the agent seeing the result (issue 35, section 3).

A real stack as bin/serve runs it: the web server (2 workers), the resume worker (`celery -A config worker`, solo,
on the bench's broker) and the push (`manage.py mcp`). A reviewer (this process's own database connection, watching
for pending approvals every 2 ms) approves each approval as soon as it is asked; the latency is from that
decision's commit to the moment the agent has its result:

    R1 Agents SDK, one approval   `run_with_approvals` over `HarnessSession` + `HarnessApprovals` (a scripted fake
                                  model: one needs_approval tool call, then a final message): the approval is
                                  decided, the worker binds it, the adapter's wait returns, the SDK runs the tool
                                  and the model's last turn; the latency ends when `run_with_approvals` returns.
    R2 LangGraph, one interrupt   a HarnessSaver graph whose node calls `request_approval` (interrupt()); the
                                  latency ends when `graph.invoke(Command(resume=saver.wait_for_decision(id)))`
                                  returns the finished state.

Each with the push (the client's push_url is the mcp process) and without it (push_url="": the client's default
poll, 1 s growing by half), turn about.
"""

from __future__ import annotations

import asyncio
import logging
import operator
import threading
import time
import uuid
from array import array
from typing import Annotated, Any, TypedDict

from bench import procs
from bench.core import Measure, Settings, _percentile
from bench.scenarios_http import agent_token


class _Reviewer(threading.Thread):
    """Approves every pending approval of the project as soon as it sees it; `committed[id]` is when it committed."""

    def __init__(self, project: Any) -> None:
        super().__init__(daemon=True)
        self.project, self.stopping = project, threading.Event()
        self.committed: dict[int, float] = {}
        from bench.scenarios_push import _reviewer

        self.actor = _reviewer(project)

    def run(self) -> None:
        from django.db import close_old_connections

        from runs_app.models import ApprovalRequest
        from runs_app.services import approval_decide

        try:
            while not self.stopping.is_set():
                for approval in ApprovalRequest.objects.filter(project=self.project, status="pending") \
                        .values_list("id", flat=True):
                    approval_decide(project=self.project, approval_id=approval, actor=self.actor,
                                    decision="approve", reason="ok")
                    self.committed[approval] = time.perf_counter()
                time.sleep(0.002)
        finally:
            close_old_connections()


def _fake_model() -> Any:
    from agents import Model, ModelResponse, Usage
    from agents.testing import assistant_message, function_call

    class Scripted(Model):
        def __init__(self) -> None:
            self.steps = [function_call("publish_chapter", {"chapter": 3}, call_id=f"call-{uuid.uuid4().hex[:8]}"),
                          assistant_message("Chapter 3 is published.", item_id="m1")]

        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            return ModelResponse(output=[self.steps.pop(0)], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    return Scripted()


async def _agents_once(web: str, token: str, push_url: str) -> tuple[int, float, bool]:
    from agents import Agent, RunConfig, function_tool
    from harness_client import AsyncHarnessClient
    from harness_client.agents import HarnessApprovals, HarnessSession, run_with_approvals

    published: list[int] = []

    @function_tool(needs_approval=True)
    def publish_chapter(chapter: int) -> str:
        """Publish a chapter."""
        published.append(chapter)
        return f"chapter {chapter} is out"

    agent = Agent(name="publisher", instructions="Publish.", model=_fake_model(), tools=[publish_chapter])
    async with AsyncHarnessClient(web, token, push_url=push_url) as client:
        session = HarnessSession(f"bench-r1-{uuid.uuid4().hex[:10]}", client)
        approvals = HarnessApprovals(session, timeout=120)
        result = await run_with_approvals(agent, "Publish chapter 3.", session=session, approvals=approvals,
                                          run_config=RunConfig(tracing_disabled=True))
        seen = time.perf_counter()
        return approvals.decisions[0].id, seen, str(result.final_output) == "Chapter 3 is published." and \
            published == [3]


class _State(TypedDict):
    topic: str
    notes: Annotated[list[str], operator.add]


def _graph(saver: Any) -> Any:
    from harness_client.langgraph import request_approval
    from langgraph.graph import END, START, StateGraph

    def publish(state: _State) -> dict[str, Any]:
        decision = request_approval("publish", {"topic": state["topic"]}, reason="public")
        return {"notes": [f"publish {decision['decision']}"]}

    builder = StateGraph(_State)
    builder.add_node("draft", lambda s: {"notes": [f"draft {s['topic']}"]})
    builder.add_node("publish", publish)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "publish")
    builder.add_edge("publish", END)
    return builder.compile(checkpointer=saver)


def _langgraph_once(web: str, token: str, push_url: str) -> tuple[int, float, bool]:
    from harness_client import HarnessClient
    from harness_client.langgraph import HarnessSaver, approval_ids
    from langgraph.types import Command

    with HarnessClient(web, token, push_url=push_url) as hc:
        saver = HarnessSaver(client=hc)
        graph = _graph(saver)
        config = {"configurable": {"thread_id": f"bench-r2-{uuid.uuid4().hex[:10]}"}}
        interrupted = graph.invoke({"topic": "tea", "notes": []}, config)
        (approval,) = approval_ids(interrupted["__interrupt__"])
        result = graph.invoke(Command(resume=saver.wait_for_decision(approval, timeout=120)), config)
        seen = time.perf_counter()
        return approval, seen, result["notes"][-1] == "publish approved"


def scenario_adapter_resume(settings: Settings) -> list[Measure]:
    from harness.models import Project

    logging.getLogger("httpx").setLevel(logging.WARNING)
    per_subject = 6 if settings.duration <= 2 else 20
    project = Project.objects.get_or_create(slug="bench-resume-adapters", defaults={"name": "R"})[0]
    token = agent_token(project.slug)
    web = procs.start_gunicorn(workers=2, name="bench-r-web")
    worker = procs.start_celery_worker(name="bench-r-worker")
    push = procs.start_mcp(name="bench-r-push")
    reviewer = _Reviewer(project)
    reviewer.start()
    web_url, push_url = f"http://127.0.0.1:{web.port}", f"http://127.0.0.1:{push.port}"
    flows = {"R1 Agents SDK run, one approval: decision -> result":
             lambda p: asyncio.run(_agents_once(web_url, token, p)),
             "R2 LangGraph graph, one interrupt: decision -> result": lambda p: _langgraph_once(web_url, token, p)}
    subjects = {"push (long poll)": push_url, "polling (client default 1 s)": ""}
    results: list[Measure] = []
    lines = ["## R: the adapters' resume, decision -> the agent has its result", "",
             "| flow | subject | runs | p50 ms | p90 ms | max ms |", "| --- | --- | ---: | ---: | ---: | ---: |"]
    try:
        for flow, once in flows.items():
            once(push_url)  # warm: the first graph / agent run, the worker's first resume
            latencies: dict[str, list[float]] = {s: [] for s in subjects}
            ok: dict[str, bool] = dict.fromkeys(subjects, True)
            t0 = time.perf_counter()
            for _ in range(per_subject):
                for subject, url in subjects.items():  # turn about
                    approval, seen, correct = once(url)
                    latencies[subject].append((seen - reviewer.committed[approval]) * 1000)
                    ok[subject] = ok[subject] and correct
            seconds = time.perf_counter() - t0
            for subject in subjects:
                values = array("d", sorted(latencies[subject]))
                results.append(Measure(scenario=flow, subject=subject, clients=1, ops=len(values),
                                       seconds=seconds / 2, p50_ms=_percentile(values, 0.5),
                                       p99_ms=_percentile(values, 0.99), peak_rss_mb=0.0,
                                       extra={"check": ok[subject]}))
                lines.append(f"| {flow} | {subject} | {len(values)} | {_percentile(values, 0.5):.1f} | "
                             f"{_percentile(values, 0.9):.1f} | {values[-1]:.1f} |")
    finally:
        reviewer.stopping.set()
        reviewer.join(5)
        for server in (push, worker, web):
            server.stop()
    results[-1].extra["section"] = "\n".join([*lines, ""])
    return results


SCENARIOS: dict[str, Any] = {"R": scenario_adapter_resume}
