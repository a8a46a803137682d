// HarnessSaver, the LangGraph.js checkpointer, against a live server: what it stores and reads back (JSON as
// it is, everything else as the serializer's typed bytes), writes, lists, versions, deletion; and a real
// StateGraph that stops at an interrupt, is checkpointed through the server, and is resumed by a new saver.
import assert from "node:assert/strict";
import { test } from "node:test";

import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { Annotation, Command, END, START, StateGraph, interrupt, messagesStateReducer } from "@langchain/langgraph";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import type { Checkpoint, CheckpointMetadata } from "@langchain/langgraph-checkpoint";

import { ConflictError } from "../src/index.js";
import { HarnessSaver, TYPED, isJson } from "../src/langgraph.js";
import { agent, unique } from "./live.js";

const saver = (): HarnessSaver => new HarnessSaver({ client: agent() });

function checkpointWith(values: Record<string, unknown>, saverForVersions: HarnessSaver): Checkpoint {
  const checkpoint = emptyCheckpoint();
  checkpoint.id = uuid6(-1);
  checkpoint.channel_values = values;
  for (const channel of Object.keys(values)) checkpoint.channel_versions[channel] = saverForVersions.getNextVersion(undefined);
  return checkpoint;
}

const META: CheckpointMetadata = { source: "loop", step: 0, parents: {} };

test("JSON values are stored as they are and everything else typed, and both read back the same", async () => {
  const s = saver();
  const thread = unique("values");
  const values: Record<string, unknown> = {
    text: "plain", count: 3, ratio: 0.25, flag: true, nothing: null, list: [1, "two", { three: 3 }],
    nested: { deep: { deeper: ["x"] } },
    nul: "a\u0000b", // jsonb keeps no NUL
    surrogate: "lone \ud800 half", // nor a lone surrogate
    marked: { [TYPED]: "looks typed", b64: "but is not" }, // would be mistaken for typed bytes
    message: new HumanMessage({ content: "hello", id: "m-1" }), // a class instance
    tags: new Set(["a", "b"]), index: new Map([["k", 1]]),
  };
  const checkpoint = checkpointWith(values, s);
  const next = await s.put({ configurable: { thread_id: thread, checkpoint_ns: "" } }, checkpoint, META, {});
  assert.deepEqual(next.configurable, { thread_id: thread, checkpoint_ns: "", checkpoint_id: checkpoint.id });

  const stored = await s.client.getThreadCheckpoint({ thread_id: thread });
  assert.ok(stored);
  const raw = stored.channel_values;
  for (const name of ["text", "count", "ratio", "flag", "nothing", "list", "nested"]) {
    assert.deepEqual(raw[name], values[name], name); // the console's diff shows them as they are
  }
  for (const name of ["nul", "surrogate", "marked", "message", "tags", "index"]) {
    assert.equal(typeof (raw[name] as Record<string, unknown>)[TYPED], "string", name);
  }

  const tuple = await s.getTuple({ configurable: { thread_id: thread } });
  assert.ok(tuple);
  const back = tuple.checkpoint.channel_values;
  for (const name of ["text", "count", "ratio", "flag", "nothing", "list", "nested", "nul", "surrogate", "marked"]) {
    assert.deepEqual(back[name], values[name], name);
  }
  assert.ok(back.message instanceof HumanMessage);
  assert.equal((back.message as HumanMessage).content, "hello");
  assert.deepEqual(back.tags, new Set(["a", "b"]));
  assert.deepEqual(back.index, new Map([["k", 1]]));
  assert.deepEqual(tuple.checkpoint.channel_versions, checkpoint.channel_versions);
  assert.deepEqual(tuple.metadata, META);
  assert.equal(tuple.parentConfig, undefined);
  assert.equal(isJson(-0), false);
  assert.equal(isJson([1, , 3]), false); // eslint-disable-line no-sparse-arrays
});

test("writes, parents, lists by thread, namespace, filter, before and limit; immutable ids; deletion", async () => {
  const s = saver();
  const thread = unique("chain");
  const first = checkpointWith({ step: 1 }, s);
  const c1 = await s.put({ configurable: { thread_id: thread } }, first, { ...META, step: 1 }, {});
  const second = checkpointWith({ step: 2 }, s);
  const c2 = await s.put(c1, second, { ...META, step: 2, source: "update" }, {});
  await s.putWrites(c2, [["step", 3], ["later", undefined]], "task-b", "~b");
  await s.putWrites(c2, [["__error__", { message: "boom" }]], "task-a", "~a");
  await s.put({ configurable: { thread_id: thread, checkpoint_ns: "child:1" } }, checkpointWith({ inner: true }, s),
    META, {});

  const newest = await s.getTuple({ configurable: { thread_id: thread } });
  assert.equal(newest?.checkpoint.id, second.id);
  assert.deepEqual(newest?.parentConfig?.configurable, { thread_id: thread, checkpoint_ns: "", checkpoint_id: first.id });
  // In LangGraph's order (task_path, task_id, idx); the special channel at its negative index, undefined typed.
  assert.deepEqual(newest?.pendingWrites, [["task-a", "__error__", { message: "boom" }], ["task-b", "step", 3],
    ["task-b", "later", undefined]]);
  const byId = await s.getTuple({ configurable: { thread_id: thread, checkpoint_id: first.id } });
  assert.deepEqual(byId?.checkpoint.channel_values, { step: 1 });

  const ids = async (config: Parameters<HarnessSaver["list"]>[0], options?: Parameters<HarnessSaver["list"]>[1]) => {
    const out = [];
    for await (const t of s.list(config, options)) out.push(t.checkpoint.id);
    return out;
  };
  assert.deepEqual(await ids({ configurable: { thread_id: thread, checkpoint_ns: "" } }), [second.id, first.id]);
  assert.equal((await ids({ configurable: { thread_id: thread } })).length, 3); // every namespace
  assert.deepEqual(await ids({ configurable: { thread_id: thread, checkpoint_ns: "" } }, { filter: { source: "update" } }),
    [second.id]);
  assert.deepEqual(await ids({ configurable: { thread_id: thread, checkpoint_ns: "" } }, { before: c2 }), [first.id]);
  assert.deepEqual(await ids({ configurable: { thread_id: thread, checkpoint_ns: "" } }, { limit: 1 }), [second.id]);
  assert.deepEqual(await ids({ configurable: { thread_id: thread } }, { before: { configurable: {} } }), []);

  // A checkpoint is immutable: the same id again with other content is refused.
  await assert.rejects(s.put(c1, { ...second, channel_values: { step: 99 } }, META, {}),
    (error: unknown) => error instanceof ConflictError && error.code === "checkpoint_exists");

  await s.deleteThread(thread);
  assert.equal(await s.getTuple({ configurable: { thread_id: thread } }), undefined);
});

test("versions are PostgresSaver's strings, increasing, and continue an integer version", () => {
  const s = saver();
  const v1 = s.getNextVersion(undefined);
  const v2 = s.getNextVersion(v1);
  assert.equal(typeof v1, "string");
  assert.match(String(v1), /^0{31}1\.\d/);
  assert.ok(String(v2) > String(v1) && String(v2).startsWith("0".repeat(31) + "2."));
  assert.ok(String(s.getNextVersion(7)).startsWith("0".repeat(31) + "8."));
});

const Chapter = Annotation.Root({
  messages: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }),
  topic: Annotation<string>,
  outline: Annotation<string[]>,
  published: Annotation<Record<string, unknown>>,
});

function chapterGraph(checkpointer: HarnessSaver) {
  return new StateGraph(Chapter)
    .addNode("plan", (state) => ({ outline: [`${state.topic}: the setup`, "the turn", "the ending"],
      messages: [new AIMessage({ content: "outlined", id: "ai-1" })] }))
    .addNode("publish", (state) => {
      const answer = interrupt({ question: `Publish "${state.topic}"?` });
      return { published: { answer, parts: state.outline.length } };
    })
    .addEdge(START, "plan").addEdge("plan", "publish").addEdge("publish", END)
    .compile({ checkpointer });
}

test("a graph stops at its interrupt, its state is in the server, and a new saver resumes it", async () => {
  const config = { configurable: { thread_id: "ts-interrupted" } };
  const stopped = await chapterGraph(saver()).invoke(
    { topic: "The Lighthouse", messages: [new HumanMessage({ content: "write it", id: "h-1" })] }, config);
  const interrupts = (stopped as { __interrupt__?: { value: unknown }[] }).__interrupt__ ?? [];
  assert.deepEqual(interrupts.map((i) => i.value), [{ question: 'Publish "The Lighthouse"?' }]);

  // Another process's saver: everything it knows comes from the server.
  const again = saver();
  const graph = chapterGraph(again);
  const state = await graph.getState(config);
  assert.deepEqual(state.next, ["publish"]);
  assert.deepEqual(state.values.outline, ["The Lighthouse: the setup", "the turn", "the ending"]);
  assert.ok(state.values.messages[0] instanceof HumanMessage);
  assert.ok(state.values.messages[1] instanceof AIMessage);

  const finished = await graph.invoke(new Command({ resume: "yes" }), config);
  assert.deepEqual(finished.published, { answer: "yes", parts: 3 });
  assert.deepEqual((await graph.getState(config)).next, []);

  // The thread's history is the run's checkpoint lineage in the console, newest first.
  const history = [];
  for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot.config.configurable?.checkpoint_id);
  const newest = await again.client.getThreadCheckpoint({ thread_id: "ts-interrupted" });
  assert.ok(newest);
  const lineage = await again.client.checkpointLineage(newest.id);
  assert.equal(lineage.length, history.length);
  assert.ok(history.length >= 4);
  assert.equal(newest.run, (await again.client.ensureThread({ thread_id: "ts-interrupted" })).run);
});
