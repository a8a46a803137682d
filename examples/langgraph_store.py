"""A LangGraph graph whose nodes keep long-term memory in Harness Console through `HarnessStore`.

Run it against `bin/start`'s server (http://127.0.0.1:8000, demo project `novelforge`) from the checkout's root:

    export HARNESS_URL=http://127.0.0.1:8000
    export HARNESS_TOKEN=$(DEBUG=1 .venv/bin/python manage.py create_agent_token --project novelforge \\
                           --name store-example | tail -1)
    .venv/bin/python examples/langgraph_store.py

The graph has two nodes: `remember` puts what the user said into the user's memory namespace
(`("user", <user>, "preferences")`), `recall` searches that namespace in full text and prints what it found. Each
put goes through the project's memory write policy and records the thread and node it came from; the records
show in the console's memory page (`/memory/`). `--remember TEXT` only writes, `--recall QUERY` only reads, so
one process can write and another read (that is what tests/client/test_langgraph_store_example.py runs).
"""

import argparse
import json
import uuid
from typing import TypedDict

from harness_client.langgraph_store import HarnessStore
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore


class State(TypedDict, total=False):
    user: str
    said: str
    query: str
    found: list[str]


def remember(state: State, *, store: BaseStore) -> State:
    if state.get("said"):
        key = uuid.uuid5(uuid.NAMESPACE_URL, state["said"]).hex[:16]
        store.put(("user", state["user"], "preferences"), key, {"text": state["said"]})
    return {}


def recall(state: State, *, store: BaseStore) -> State:
    if not state.get("query"):
        return {"found": []}
    items = store.search(("user", state["user"], "preferences"), query=state["query"], limit=5)
    return {"found": [item.value["text"] for item in items]}


def build(store: BaseStore):  # type: ignore[no-untyped-def]
    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    return graph.compile(checkpointer=InMemorySaver(), store=store)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user", default="reader-7")
    parser.add_argument("--remember", default=None, help="only write this")
    parser.add_argument("--recall", default=None, help="only search for this")
    parser.add_argument("--thread", default=None)
    args = parser.parse_args()
    said, query = args.remember, args.recall
    if said is None and query is None:
        said, query = "Prefers chapters that end on a cliffhanger.", "cliffhanger"
    store = HarnessStore()  # HARNESS_URL and HARNESS_TOKEN from the environment
    graph = build(store)
    thread = args.thread or f"store-demo-{uuid.uuid4().hex[:8]}"
    state = graph.invoke({"user": args.user, "said": said or "", "query": query or ""},
                         {"configurable": {"thread_id": thread}})
    print("found:", json.dumps(state.get("found", [])))


if __name__ == "__main__":
    main()
