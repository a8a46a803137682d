"""An agent process for tests/client/test_langgraph_crash.py: a four-node graph on HarnessSaver
(HARNESS_URL, HARNESS_TOKEN). Each node appends its name to LOG when it runs; `draft` blocks forever when
BLOCK_IN_DRAFT is set (the test kills the process there). `python -m tests.client.langgraph_agent THREAD`."""

import os
import sys
import time
from pathlib import Path
from typing import Any, TypedDict

from harness_client.langgraph import HarnessSaver
from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    done: list[str]


def _node(name: str) -> Any:
    def run(state: State) -> dict[str, Any]:
        with Path(os.environ["LOG"]).open("a") as log:
            log.write(f"{name}\n")
        if name == "draft" and os.environ.get("BLOCK_IN_DRAFT"):
            time.sleep(3600)
        return {"done": [*state["done"], name]}

    return run


def main(thread_id: str) -> None:
    builder = StateGraph(State)
    names = ["outline", "research", "draft", "publish"]
    for name in names:
        builder.add_node(name, _node(name))
    for a, b in zip([START, *names], [*names, END], strict=True):
        builder.add_edge(a, b)
    graph = builder.compile(checkpointer=HarnessSaver())
    config: Any = {"configurable": {"thread_id": thread_id}}
    # A new thread starts from its input; a thread with a checkpoint resumes from it (input None).
    start = None if graph.get_state(config).next else {"done": []}
    result = graph.invoke(start, config, durability="sync")
    print(",".join(result["done"]))


if __name__ == "__main__":
    main(sys.argv[1])
