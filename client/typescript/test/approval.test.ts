// A LangGraph.js graph whose risky step a reviewer approves in the console: requestApproval interrupts it, a
// reviewer approves with edited arguments, the resume worker (a real Celery worker, started by
// tests/client/test_typescript.py) binds the decision to the thread's run, and the graph resumes with it.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Annotation, Command, END, START, StateGraph } from "@langchain/langgraph";

import { HarnessSaver, approvalIds, requestApproval } from "../src/langgraph.js";
import { agent, reviewer } from "./live.js";

const Chapter = Annotation.Root({
  topic: Annotation<string>,
  published: Annotation<Record<string, unknown>>,
});

function chapterGraph(saver: HarnessSaver) {
  return new StateGraph(Chapter)
    .addNode("publish", async (state) => {
      const decision = await requestApproval("publish_chapter", { chapter: 3, title: state.topic },
        { reason: "Publishing is public and cannot be undone." });
      if (decision.decision !== "approved") return { published: { status: decision.decision } };
      return { published: { status: "published", ...(decision.arguments as Record<string, unknown>) } };
    })
    .addEdge(START, "publish").addEdge("publish", END)
    .compile({ checkpointer: saver });
}

test("an approval asked from a node, decided by a reviewer, bound by the worker, resumes the graph", async () => {
  const saver = new HarnessSaver({ client: agent() });
  const graph = chapterGraph(saver);
  const config = { configurable: { thread_id: "ts-approval" } };
  const stopped = await graph.invoke({ topic: "The Lighthouse Keeper" }, config);
  const ids = approvalIds((stopped as { __interrupt__?: unknown[] }).__interrupt__);
  assert.equal(ids.length, 1);
  const [approvalId] = ids as [number];

  const person = reviewer();
  const asked = await person.getApproval(approvalId);
  assert.deepEqual([asked.tool, asked.arguments, asked.executor, asked.status],
    ["publish_chapter", { chapter: 3, title: "The Lighthouse Keeper" }, "agent", "pending"]);
  await person.decideApproval(approvalId, { decision: "approve", reason: "with a shorter title",
    edited_arguments: { chapter: 3, title: "Keeper" }, expected_version: asked.version });

  const decision = await saver.waitForDecision(approvalId, { timeout: 60, pollInterval: 0.1, maxPollInterval: 0.5 });
  assert.equal(decision.decision, "approved");
  assert.deepEqual(decision.arguments, { chapter: 3, title: "Keeper" });
  const finished = await graph.invoke(new Command({ resume: decision }), config);
  assert.deepEqual(finished.published, { status: "published", chapter: 3, title: "Keeper" });
  const reported = await saver.reportOutcome(approvalId, "ran");
  assert.equal(reported.outcome, "ran");

  // The node ran again on resume and found the same request: one approval for the thread's run.
  const { run } = await saver.client.ensureThread({ thread_id: "ts-approval" });
  const all = [];
  for await (const approval of saver.client.listApprovals({ run })) all.push(approval.id);
  assert.deepEqual(all, [approvalId]);
});
