"""The graph LangGraph Server serves in scenario L: the demo's shape, work -> review (interrupt) -> finish.

Loaded by `langgraph dev` / `langhost serve` in their own virtualenvs (bench/langgraph_server.py makes them), never
by the project: it imports only langgraph. The state has the channels the scenario's rows write: `messages` (the
conversation, appended with LangGraph's add_messages reducer, as a chat graph keeps it), `completed` and `notes`
(the ~1 KB values a checkpoint write carries), and `decision` (what the reviewer's resume brought back).
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    completed: list[str]
    notes: str
    decision: dict[str, Any]


def work(state: State) -> dict[str, Any]:
    """The agent's step before the gate (ours: the run's checkpoint before `publish`)."""
    return {"completed": [*state.get("completed", []), "draft"]}


def review(state: State) -> dict[str, Any]:
    """The gate: pauses the run until a `Command(resume=...)` brings the reviewer's decision."""
    decision = interrupt({"tool": "publish_chapter", "arguments": {"chapter": 1, "title": "The Lighthouse"}})
    return {"decision": decision}


def finish(state: State) -> dict[str, Any]:
    """The approved tool's result bound to the state (ours: the worker's resume binds it and checkpoints)."""
    approved = state.get("decision", {}).get("decision") == "approve"
    return {"completed": [*state.get("completed", []), "publish" if approved else "skipped"]}


builder = StateGraph(State)
builder.add_node("work", work)
builder.add_node("review", review)
builder.add_node("finish", finish)
builder.add_edge(START, "work")
builder.add_edge("work", "review")
builder.add_edge("review", "finish")
builder.add_edge("finish", END)
graph = builder.compile()
