// An agent's working life through the TypeScript client against a live server (tests/client/test_typescript.py
// starts it): sessions, runs, checkpoints, approvals, questions, effects, memory; the errors' classes and codes;
// and a lost reply retried under the same Idempotency-Key, which the server replays instead of applying twice.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  ApprovalWaitTimeout, AuthenticationError, ConflictError, HarnessClient, NotFoundError, PermissionDenied,
  ValidationError,
} from "../src/index.js";
import { HarnessSaver } from "../src/langgraph.js";
import { FAST, agent, postsTo, recorder, reviewer, unique } from "./live.js";

test("sessions: created, items appended in order, the newest read back, found by ref", async () => {
  const hc = agent();
  const ref = unique("S");
  const session = await hc.createSession({ role: "writer", memory_policy: "session", metadata: { agent: "ts" }, ref });
  assert.equal(session.role, "writer");
  assert.equal(session.last_seq, 0);
  assert.deepEqual(session.metadata, { agent: "ts" });
  const appended = await hc.appendItems(session.id, [{ role: "user", content: { text: "Draft chapter 3" } },
    { role: "assistant", content: "On it." }], { expected_last_seq: 0 });
  assert.deepEqual(appended.items.map((i) => i.seq), [1, 2]);
  assert.equal(appended.last_seq, 2);
  // A stale expected_last_seq is refused with the actual last seq, nothing written.
  await assert.rejects(hc.appendItems(session.id, [{ role: "user", content: "late" }], { expected_last_seq: 1 }),
    (error: unknown) => error instanceof ConflictError && error.code === "seq_conflict"
      && (error.body as { last_seq: number }).last_seq === 2);
  const latest = await hc.latestItems(session.id, 1);
  assert.deepEqual(latest.items.map((i) => [i.seq, i.content]), [[2, "On it."]]);
  assert.equal(latest.last_seq, 2);
  const all = [];
  for await (const item of hc.listItems(session.id, { limit: 1 })) all.push(item.seq); // one item a page
  assert.deepEqual(all, [1, 2]);
  assert.equal((await hc.sessionByRef(ref))?.id, session.id);
  assert.equal(await hc.sessionByRef(unique("absent")), null);
  await assert.rejects(hc.latestItems(session.id, 501), RangeError);
});

test("runs: claimed, kept alive, moved on by compare-and-set and fenced by the lease", async () => {
  const hc = agent();
  const session = await hc.createSession();
  let run = await hc.createRun({ session: session.id, active_agent: "ts-bot" });
  assert.equal(run.status, "created");
  run = await hc.claimRun(run.id, { owner: "worker-1", lease_seconds: 60 });
  assert.equal(run.lease_owner, "worker-1");
  assert.ok(run.lease_expires_at);
  await assert.rejects(hc.claimRun(run.id, { owner: "worker-2" }),
    (error: unknown) => error instanceof ConflictError && error.code === "lease_held");
  run = await hc.heartbeatRun(run.id, { owner: "worker-1", lease_seconds: 120 });
  const stale = run.version;
  run = await hc.transitionRun(run.id, { to: "running", expected_version: run.version, lease_owner: "worker-1" });
  assert.equal(run.status, "running");
  await assert.rejects(hc.transitionRun(run.id, { to: "succeeded", expected_version: stale, lease_owner: "worker-1" }),
    (error: unknown) => error instanceof ConflictError && error.code === "version_conflict"
      && error.currentStatus === "running" && error.currentVersion === run.version);
  // Naming no owner while the lease is held is refused, nothing written.
  await assert.rejects(hc.transitionRun(run.id, { to: "succeeded", expected_version: run.version }),
    (error: unknown) => error instanceof ConflictError && error.code === "lease_lost");
  const event = await hc.appendEvent(run.id, { kind: "model.call", data: { tokens: 12 }, lease_owner: "worker-1" });
  assert.deepEqual(event.data, { tokens: 12 });
  assert.equal((await hc.getRun(run.id)).status, "running");
});

test("checkpoints: a chain with a fork, its lineage and the latest", async () => {
  const hc = agent();
  const session = await hc.createSession();
  const run = await hc.createRun({ session: session.id });
  const root = await hc.createCheckpoint({ run: run.id, label: "outline", state: { outline: ["a", "b"] } });
  const child = await hc.createCheckpoint({ run: run.id, parent: root.id, label: "draft-1", state: { draft: 1 } });
  const grandchild = await hc.createCheckpoint({ run: run.id, parent: child.id, label: "draft-2", state: { draft: 2 } });
  const fork = await hc.createCheckpoint({ run: run.id, parent: root.id, label: "draft-1b", state: { draft: "b" } });
  assert.deepEqual([root.depth, child.depth, grandchild.depth, fork.depth], [0, 1, 2, 1]);
  assert.deepEqual((await hc.checkpointLineage(grandchild.id)).map((c) => c.id), [grandchild.id, child.id, root.id]);
  assert.deepEqual((await hc.checkpointLineage(fork.id)).map((c) => c.id), [fork.id, root.id]);
  assert.equal((await hc.latestCheckpoint({ run: run.id }))?.id, fork.id);
  assert.deepEqual((await hc.getCheckpoint(child.id)).state, { draft: 1 });
});

test("approvals: requested, refused to the agent, decided by a reviewer, and waited for", async () => {
  const hc = agent();
  const session = await hc.createSession();
  let run = await hc.createRun({ session: session.id });
  run = await hc.transitionRun(run.id, { to: "running", expected_version: run.version });
  const approval = await hc.requestApproval(run.id, { tool: "publish_chapter", arguments: { chapter: 3 },
    idempotency_key: unique("publish"), risk: "high", reason: "goes public" });
  assert.equal(approval.status, "pending");
  assert.equal((await hc.getRun(run.id)).status, "waiting_approval");
  // Still pending: the wait gives up with the last approval it saw.
  await assert.rejects(hc.waitForApproval(approval.id, { timeout: 0.05, pollInterval: 0.01, maxPollInterval: 0.02 }),
    (error: unknown) => error instanceof ApprovalWaitTimeout && (error.approval as { id: number }).id === approval.id);
  // An agent may not decide (no self-approval).
  await assert.rejects(hc.decideApproval(approval.id, { decision: "approve", expected_version: approval.version }),
    PermissionDenied);
  const person = reviewer();
  const decided = setTimeout(async () => {
    const current = await person.getApproval(approval.id);
    await person.decideApproval(approval.id, { decision: "approve", reason: "looks right", expected_version: current.version });
  }, 200);
  const seen = await hc.waitForApproval(approval.id, { timeout: 20, pollInterval: 0.05, maxPollInterval: 0.2 });
  clearTimeout(decided);
  assert.equal(seen.status, "approved");
  assert.equal(seen.decided_by, "client-reviewer");
  const listed = [];
  for await (const a of hc.listApprovals({ run: run.id })) listed.push(a.id);
  assert.deepEqual(listed, [approval.id]);
});

test("questions: asked once per key, answered by a person, waited for; a pending one withdrawn", async () => {
  const hc = agent();
  const key = unique("colour");
  const asked = await hc.askQuestion({ question: "Which cover colour?", idempotency_key: key,
    answer_schema: { type: "string", enum: ["blue", "red"] } });
  assert.equal(asked.status, "pending");
  assert.equal((await hc.askQuestion({ question: "Which cover colour?", idempotency_key: key,
    answer_schema: { type: "string", enum: ["blue", "red"] } })).id, asked.id);
  await assert.rejects(hc.answerQuestion(asked.id, { answer: "blue" }), PermissionDenied);
  await reviewer().answerQuestion(asked.id, { answer: "blue", expected_version: asked.version });
  const settled = await hc.waitForQuestion(asked.id, { timeout: 20, pollInterval: 0.05 });
  assert.equal(settled.status, "answered");
  assert.equal(settled.answer, "blue");
  const other = await hc.askQuestion({ question: "Any title?", idempotency_key: unique("title") });
  assert.equal((await hc.cancelQuestion(other.id)).status, "cancelled");
  await assert.rejects(hc.cancelQuestion(other.id),
    (error: unknown) => error instanceof ConflictError && error.code === "question_not_pending");
});

test("effects: intended, delivered once, the same result again answers the receipt, another is a hard stop", async () => {
  const hc = agent();
  const session = await hc.createSession();
  let run = await hc.createRun({ session: session.id });
  run = await hc.transitionRun(run.id, { to: "running", expected_version: run.version });
  const key = unique("fetch");
  const effect = await hc.intendEffect({ idempotency_key: key, tool: "fetch", arguments: { url: "x" }, run: run.id });
  assert.equal((await hc.intendEffect({ idempotency_key: key, tool: "fetch", arguments: { url: "x" }, run: run.id })).id,
    effect.id);
  const first = await hc.deliverEffect({ idempotency_key: key, result: { status: 200 } });
  const again = await hc.deliverEffect({ idempotency_key: key, result: { status: 200 } });
  assert.deepEqual([first.outcome, again.outcome, again.receipt], ["consumed", "already_consumed", first.receipt]);
  assert.equal((await hc.getEffect(effect.id)).status, "consumed");
  await assert.rejects(hc.deliverEffect({ idempotency_key: key, result: { status: 500 } }),
    (error: unknown) => error instanceof ConflictError && error.code === "effect_conflict");
  assert.equal((await hc.getRun(run.id)).status, "blocked");
});

test("memory: added with provenance, found by search; a write without provenance refused", async () => {
  const hc = agent();
  const session = await hc.createSession();
  const run = await hc.createRun({ session: session.id });
  const user = unique("alice");
  const write = await hc.proposeMemory({ scope: "user", scope_key: user, subject: "tea", content: "Alice likes green tea.",
    source_run_id: run.id });
  assert.equal(write.outcome, "accepted");
  assert.ok(write.record);
  const found = await hc.retrieveMemory({ scope: "user", scope_key: user, q: "tea" });
  assert.deepEqual(found.map((r) => r.id), [write.record.id]);
  assert.equal((await hc.getMemory(write.record.id)).content, "Alice likes green tea.");
  await assert.rejects(hc.proposeMemory({ scope: "user", scope_key: user, content: "No source." }),
    (error: unknown) => error instanceof ValidationError && error.status === 422 && error.code === "provenance_required");
});

test("errors: each status its class, with the API's code and the fields it names", async () => {
  const hc = agent();
  await assert.rejects(hc.getRun(999_999_999), (error: unknown) => error instanceof NotFoundError && error.status === 404);
  const stranger = new HarnessClient({ baseUrl: process.env.HARNESS_URL, token: "hc_not_a_token", retry: FAST });
  await assert.rejects(stranger.getRun(1), (error: unknown) => error instanceof AuthenticationError && error.status === 401);
  // A field the operation does not take (as a server-owned one would be) is named, nothing written.
  await assert.rejects(hc.createSession({ role: "writer", status: "running" } as never),
    (error: unknown) => error instanceof ValidationError && error.code === "unknown_field"
      && error.unknownFields.includes("status"));
  await assert.rejects(hc.createSession({ role: "pilot" } as never),
    (error: unknown) => error instanceof ValidationError && "role" in error.fields);
});

test("a reply lost after the commit is retried under the same key and replayed, not applied twice", async () => {
  const { fetch, exchanges } = recorder(postsTo("/sessions/"));
  const ref = unique("only-once");
  const session = await agent({ fetch }).createSession({ role: "writer", ref });
  const [first, retry] = exchanges;
  assert.equal(exchanges.length, 2);
  assert.equal(first?.status, null); // its reply was lost
  assert.equal(retry?.status, 201);
  assert.equal(retry?.replayed, true);
  assert.equal(first?.key, retry?.key);
  assert.equal(first?.body, retry?.body);
  assert.equal((await agent().sessionByRef(ref))?.id, session.id);

  // An append with expected_last_seq: without the replay its retry would be refused (last_seq is 1 by then).
  const lossy = recorder(postsTo("/items/"));
  const appended = await agent({ fetch: lossy.fetch }).appendItems(session.id, [{ role: "user", content: "once" }],
    { expected_last_seq: 0 });
  assert.equal(appended.last_seq, 1);
  assert.equal((await agent().latestItems(session.id, 10)).items.length, 1);
  assert.deepEqual(lossy.exchanges.map((e) => [e.status, e.replayed]), [[null, false], [201, true]]);

  // A checkpoint whose reply was lost: one checkpoint, the retry answered with it.
  const run = await agent().createRun({ session: session.id });
  const lossyCheckpoint = recorder(postsTo("/checkpoints/"));
  const checkpoint = await agent({ fetch: lossyCheckpoint.fetch }).createCheckpoint({ run: run.id, label: "once" });
  assert.deepEqual((await agent().checkpointLineage(checkpoint.id)).map((c) => c.id), [checkpoint.id]);
  assert.equal((await agent().latestCheckpoint({ run: run.id }))?.id, checkpoint.id);
  assert.deepEqual(lossyCheckpoint.exchanges.map((e) => [e.status, e.replayed]), [[null, false], [201, true]]);
});

test("forUser: a client bound to one end user reaches only that user's sessions and memory, and renews its token", async () => {
  const minted = recorder();
  const hc = agent({ fetch: minted.fetch });
  const other = await hc.createSession({ end_user: unique("u-other") });
  const userId = unique("u");
  const alice = hc.forUser(userId, { expiresIn: 1 });
  const mine = await alice.createSession({ role: "writer" });
  assert.equal(mine.end_user, userId);
  const listed = [];
  for await (const session of alice.listSessions()) listed.push(session.id);
  assert.deepEqual(listed, [mine.id]);
  await assert.rejects(alice.getSession(other.id), NotFoundError);
  const wrote = await alice.proposeMemory({ scope: "user", content: "prefers short answers", source_session_id: mine.id });
  assert.equal(wrote.record?.scope_key, userId);
  await assert.rejects(alice.retrieveMemory({ scope: "user", scope_key: other.end_user }),
    (error: unknown) => error instanceof PermissionDenied && error.code === "end_user_scope");
  await assert.rejects(alice.narrowToken({ end_user: "u-3" }),
    (error: unknown) => error instanceof PermissionDenied && error.code === "narrowed_token_cannot_mint");
  assert.throws(() => alice.forUser("u-3"), /cannot make another/);
  assert.match(String(alice), new RegExp(`forUser="${userId}"`));

  const mints = () => minted.exchanges.filter((e) => new URL(e.url).pathname.endsWith("/tokens/narrow/")).length;
  const before = mints();
  await alice.getSession(mine.id); // still fresh: the same token
  assert.equal(mints(), before);
  await new Promise((resolve) => setTimeout(resolve, 900)); // past 80% of its one-second life
  await alice.getSession(mine.id);
  assert.equal(mints(), before + 1);

  // A saver for one end user makes its threads that user's.
  const saver = new HarnessSaver({ client: agent(), endUser: userId });
  const { session } = await saver.client.ensureThread({ thread_id: unique("user-thread") });
  assert.equal((await agent().getSession(session)).end_user, userId);
});
