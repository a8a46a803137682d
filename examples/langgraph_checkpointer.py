"""A LangGraph graph whose state lives in Harness Console, and whose risky step a reviewer approves.

Offline: no model, no network but the console. A three-node StateGraph (outline -> draft -> publish) with
plain Python nodes; `publish` is a high-risk tool call, so it asks for an approval and the graph stops
(`interrupt()`) until a reviewer decides in the console; then it resumes with `Command(resume=<decision>)`
and publishes with the arguments the reviewer approved (or records the rejection).

The one-line switch is the checkpointer: `builder.compile(checkpointer=HarnessSaver())` where you had
`InMemorySaver()` or `PostgresSaver(...)`. The thread is then a run in the console: `/runs/<id>/lineage/`
shows its checkpoints, `/checkpoints/diff/?a=..&b=..` what each step changed.

Run it against `bin/start`'s server (http://127.0.0.1:8000, demo project `novelforge`):

    pip install "./client[langgraph]"          # bin/start's .venv has it already
    export HARNESS_URL=http://127.0.0.1:8000
    export HARNESS_TOKEN=$(.venv/bin/python manage.py create_agent_token --project novelforge \\
                           --name langgraph-example | tail -1)
    .venv/bin/python examples/langgraph_checkpointer.py

It prints the approval's page; log in as `reviewer` / `reviewer-demo`, approve (or edit the arguments, or
reject with a reason), and the graph finishes. Run it again with the same `--thread` to see it resume
from the stored state instead of starting over.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from typing import Any, TypedDict

from harness_client.langgraph import HarnessSaver, approval_ids, request_approval
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command


class Chapter(TypedDict, total=False):
    topic: str
    outline: list[str]
    text: str
    published: dict[str, Any]


def outline(state: Chapter) -> Chapter:
    return {"outline": [f"{state['topic']}: the setup", "the turn", "the ending"]}


def draft(state: Chapter) -> Chapter:
    return {"text": " ".join(f"[{part}]" for part in state["outline"])}


def publish(state: Chapter) -> Chapter:
    # A high-risk tool call: a reviewer decides in the console before it happens.
    decision = request_approval("publish_chapter", {"chapter": 3, "title": state["topic"].title()},
                                reason="Publishing is public and cannot be undone.")
    if decision["decision"] != "approved":
        return {"published": {"status": decision["decision"], "reason": decision.get("reason", "")}}
    arguments = decision["arguments"]  # what the reviewer approved: the request's, or their edit
    # ... call your publishing API here with `arguments` (under decision["idempotency_key"]) ...
    return {"published": {"status": "published", "by": decision.get("by", ""), **arguments}}


def build(checkpointer: Any) -> Any:
    builder = StateGraph(Chapter)
    builder.add_node("outline", outline)
    builder.add_node("draft", draft)
    builder.add_node("publish", publish)
    builder.add_edge(START, "outline")
    builder.add_edge("outline", "draft")
    builder.add_edge("draft", "publish")
    builder.add_edge("publish", END)
    return builder.compile(checkpointer=checkpointer)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--thread", default=f"chapter-{uuid.uuid4().hex[:8]}", help="the LangGraph thread id")
    parser.add_argument("--topic", default="the lighthouse keeper")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds to wait for the reviewer")
    args = parser.parse_args(argv)

    saver = HarnessSaver()  # HARNESS_URL, HARNESS_TOKEN
    graph = build(saver)  # the one line: compile(checkpointer=HarnessSaver())
    config: Any = {"configurable": {"thread_id": args.thread}}
    url = os.environ.get("HARNESS_URL", "").rstrip("/")

    state = graph.get_state(config)
    if state.next:  # a thread that stopped part-way resumes from its stored checkpoint
        print(f"thread {args.thread}: resuming before {', '.join(state.next)}")
        result = graph.invoke(None, config)
    elif state.values:
        print(f"thread {args.thread}: finished already")
        result = state.values
    else:
        print(f"thread {args.thread}: starting")
        result = graph.invoke({"topic": args.topic}, config)

    while result.get("__interrupt__"):
        (approval_id,) = approval_ids(result["__interrupt__"])
        print(f"waiting for a reviewer: {url}/approvals/{approval_id}/", flush=True)
        decision = saver.wait_for_decision(approval_id, timeout=args.timeout)
        print(f"decided: {decision['decision']}")
        result = graph.invoke(Command(resume=decision), config)
        if decision["decision"] == "approved":  # the graph ran the tool itself: say so, or it shows as waiting
            ran = result["published"].get("status") == "published"
            reported = saver.report_outcome(approval_id, "ran" if ran else "not_run",
                                            reason=None if ran else str(result["published"]))
            print(f"reported: {reported.outcome_state}")

    newest = saver.client.get_thread_checkpoint(thread_id=args.thread)
    print(f"published: {result['published']}")
    if newest is not None:
        print(f"lineage: {url}/runs/{newest.run}/lineage/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
