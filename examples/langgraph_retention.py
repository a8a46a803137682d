"""A LangGraph thread's life in Harness Console: copied (a fork the lineage page shows), pruned, and given a TTL.

Offline: no model, no network but the console. A two-node StateGraph (draft -> revise) runs on a thread; then
`copy_thread` forks the thread into a new one (every checkpoint and write, the same ids), `prune(...,
"keep_latest")` keeps only the source thread's newest checkpoint, and `set_ttl` gives the copy a time to live that
the retention pass applies (`manage.py retention`, or beat's hourly job). The copy resumes from the copied state.

Run it against `bin/start`'s server (http://127.0.0.1:8000, demo project `novelforge`):

    export HARNESS_URL=http://127.0.0.1:8000
    export HARNESS_TOKEN=$(.venv/bin/python manage.py create_agent_token --project novelforge \\
                           --name langgraph-retention | tail -1)
    .venv/bin/python examples/langgraph_retention.py

It prints each step's counts and the two lineage pages (log in as `reviewer` / `reviewer-demo` to open them).
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from typing import Any, TypedDict

from harness_client.langgraph import HarnessSaver
from langgraph.graph import END, START, StateGraph


class Draft(TypedDict, total=False):
    topic: str
    text: str
    revisions: int


def draft(state: Draft) -> Draft:
    return {"text": f"A first draft about {state['topic']}.", "revisions": 0}


def revise(state: Draft) -> Draft:
    return {"text": state["text"] + " Revised.", "revisions": state.get("revisions", 0) + 1}


def build(checkpointer: Any) -> Any:
    builder = StateGraph(Draft)
    builder.add_node("draft", draft)
    builder.add_node("revise", revise)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "revise")
    builder.add_edge("revise", END)
    return builder.compile(checkpointer=checkpointer)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--thread", default=f"draft-{uuid.uuid4().hex[:8]}", help="the LangGraph thread id")
    parser.add_argument("--ttl-days", type=int, default=30, help="the copy's time to live")
    args = parser.parse_args(argv)
    url = os.environ.get("HARNESS_URL", "").rstrip("/")

    saver = HarnessSaver()  # HARNESS_URL, HARNESS_TOKEN
    graph = build(saver)
    source: Any = {"configurable": {"thread_id": args.thread}}
    graph.invoke({"topic": "the lighthouse"}, source)
    before = len(list(saver.list(source)))
    print(f"thread {args.thread}: {before} checkpoints")

    # A fork: the copy holds every checkpoint and write of the source, under the same ids.
    copy_id = f"{args.thread}-alt"
    copied = saver.client.copy_thread(args.thread, copy_id)
    print(f"copied to {copy_id}: {copied.checkpoints} checkpoints, {copied.writes} writes")

    # The copy goes on from the copied state: one more revision on the branch only.
    branch: Any = {"configurable": {"thread_id": copy_id}}
    graph.update_state(branch, {"text": graph.get_state(branch).values["text"] + " (alt)"}, as_node="draft")
    resumed = graph.invoke(None, branch)
    print(f"branch: {resumed['text']!r} after {resumed['revisions']} revision(s)")

    # Keep only the source's newest checkpoint (skipped, with a warning, while an approval needs the thread).
    pruned = saver.client.prune_threads([args.thread], strategy="keep_latest")
    after = len(list(saver.list(source)))
    print(f"pruned {args.thread}: {pruned.checkpoints} checkpoints removed, {after} left; kept: {pruned.kept}")
    print(f"source state still reads: {graph.get_state(source).values['text']!r}")

    # The copy expires by itself: the retention pass deletes it once unchanged for its TTL.
    ttl = saver.set_ttl(copy_id, args.ttl_days)
    print(f"{copy_id}: TTL {ttl.ttl_days} days, expires {ttl.expires_at:%Y-%m-%d %H:%M} UTC")
    print(f"lineage: {url}/runs/{copied.source_run}/lineage/ and {url}/runs/{copied.run}/lineage/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
