// Retries with scripted answers (no server): which failures are retried, under one Idempotency-Key, how long
// the client waits, and what it throws when it gives up. The live replay of a lost reply is in client.test.ts.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  ConflictError, HarnessClient, HarnessError, PermissionDenied, RetryPolicy, ServerError, TransportError, ValidationError,
} from "../src/index.js";

const SESSION = {
  id: 7, project: "p", ref: "", role: "writer", memory_policy: "session", context_budget_chars: 0, context_items: 0,
  status: "created", version: 1, last_seq: 0, metadata: {}, end_user: "", created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
};
const FAST = new RetryPolicy({ maxAttempts: 4, baseDelay: 0.001, maxDelay: 0.01 });

interface Seen {
  method: string;
  url: string;
  headers: Headers;
  body: string;
}

type Answer = Response | Error;

/** A fetch that answers from a script, one entry per request, and records each request. */
function scripted(...answers: Answer[]): { fetch: typeof fetch; seen: Seen[] } {
  const seen: Seen[] = [];
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    seen.push({ method: init?.method ?? "GET", url: String(input), headers: new Headers(init?.headers),
      body: String(init?.body ?? "") });
    const next = answers.shift();
    if (next === undefined) throw new Error("the script ran out of answers");
    if (next instanceof Error) throw next;
    return next;
  }) as typeof fetch;
  return { fetch: fetchImpl, seen };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });

/** What fetch throws when the connection drops after the request left (the reply lost). */
const reset = (): Error => new TypeError("fetch failed", { cause: Object.assign(new Error("other side closed"),
  { code: "UND_ERR_SOCKET" }) });
/** What fetch throws when no connection was made (the request surely never left). */
const refused = (): Error => new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED"),
  { code: "ECONNREFUSED" }) });

function client(fetchImpl: typeof fetch, retry: RetryPolicy = FAST): HarnessClient {
  return new HarnessClient({ baseUrl: "http://harness.test", token: "hc_x", fetch: fetchImpl, retry });
}

for (const [name, failure] of [
  ["a lost reply", reset], ["a refused connection", refused], ["a 503", () => json(503, { code: "unavailable", detail: "" })],
  ["a 429", () => json(429, { code: "throttled", detail: "" }, { "Retry-After": "0" })],
  ["a duplicate still in flight", () => json(409, { code: "idempotency_in_progress", detail: "" }, { "Retry-After": "0" })],
] as const) {
  test(`a POST is retried after ${name} with one Idempotency-Key until it succeeds`, async () => {
    const { fetch, seen } = scripted(failure(), failure(), json(201, SESSION));
    const session = await client(fetch).createSession({ role: "writer" });
    assert.equal(session.id, 7);
    assert.equal(seen.length, 3);
    const keys = new Set(seen.map((s) => s.headers.get("Idempotency-Key")));
    assert.equal(keys.size, 1);
    assert.match([...keys][0] ?? "", /^[0-9a-f]{32}$/);
    assert.deepEqual(new Set(seen.map((s) => s.body)).size, 1);
    assert.equal(seen[0]?.url, "http://harness.test/api/v1/sessions/");
    assert.equal(seen[0]?.headers.get("Authorization"), "Bearer hc_x");
  });
}

for (const [status, code, cls] of [
  [400, "invalid", ValidationError], [403, "forbidden", PermissionDenied], [409, "version_conflict", ConflictError],
  [422, "idempotency_key_reused", ValidationError],
] as const) {
  test(`a ${status} ${code} is never retried and throws ${cls.name}`, async () => {
    const { fetch, seen } = scripted(json(status, { code, detail: "no", current_version: 3 }));
    await assert.rejects(client(fetch).createSession(), (error: unknown) => {
      assert.ok(error instanceof cls);
      assert.equal(error.code, code);
      assert.equal(error.status, status);
      return true;
    });
    assert.equal(seen.length, 1);
  });
}

test("retries are bounded, then the last error is thrown", async () => {
  const { fetch, seen } = scripted(...Array.from({ length: 4 }, () => json(502, { code: "bad_gateway", detail: "x" })));
  await assert.rejects(client(fetch).getSession(7), (error: unknown) => error instanceof ServerError
    && error.status === 502 && error.code === "bad_gateway");
  assert.equal(seen.length, 4);

  const lost = scripted(reset(), reset(), reset(), reset());
  await assert.rejects(client(lost.fetch).createSession(), (error: unknown) => error instanceof TransportError
    && error.status === null && error.code === "transport_error" && error.cause instanceof TypeError);
  assert.equal(lost.seen.length, 4);

  const once = scripted(json(503, { code: "unavailable", detail: "" }));
  await assert.rejects(client(once.fetch, new RetryPolicy({ maxAttempts: 1 })).getSession(7), ServerError);
  assert.equal(once.seen.length, 1);
});

test("each call has its own key, and a given requestKey is sent as it is", async () => {
  const { fetch, seen } = scripted(json(201, SESSION), json(201, SESSION), json(201, SESSION));
  const hc = client(fetch);
  await hc.createSession();
  await hc.createSession();
  await hc.createSession({}, { requestKey: "my-step-7" });
  assert.notEqual(seen[0]?.headers.get("Idempotency-Key"), seen[1]?.headers.get("Idempotency-Key"));
  assert.equal(seen[2]?.headers.get("Idempotency-Key"), "my-step-7");
  // A GET carries no key: it is safe to repeat as it is.
  const get = scripted(json(200, SESSION));
  await client(get.fetch).getSession(7);
  assert.equal(get.seen[0]?.headers.get("Idempotency-Key"), null);
});

test("an error answer that is not JSON keeps its status and text", async () => {
  const { fetch } = scripted(new Response("<h1>Bad Gateway</h1>", { status: 502 }));
  await assert.rejects(client(fetch, new RetryPolicy({ maxAttempts: 1 })).getSession(7),
    (error: unknown) => error instanceof ServerError && error.code === "http_502" && error.detail.includes("Bad Gateway"));
});

test("backoff grows exponentially and stays under its cap", () => {
  const policy = new RetryPolicy({ baseDelay: 0.1, maxDelay: 1, jitter: 0 });
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => policy.backoff(n)), [0.1, 0.2, 0.4, 0.8, 1, 1]);
  const jittered = new RetryPolicy({ baseDelay: 0.1, maxDelay: 1, jitter: 0.5 });
  for (let i = 0; i < 50; i++) {
    const delay = jittered.backoff(2);
    assert.ok(delay > 0.1 - 1e-9 && delay <= 0.2, String(delay));
  }
  assert.throws(() => new RetryPolicy({ maxAttempts: 0 }), RangeError);
  assert.throws(() => new RetryPolicy({ jitter: 2 }), RangeError);
});

test("Retry-After is honoured up to the cap", () => {
  const policy = new RetryPolicy({ baseDelay: 0.001, maxDelay: 5, jitter: 0 });
  assert.equal(policy.afterResponse(1, 503, null, "30", true), 5);
  assert.equal(policy.afterResponse(1, 503, null, "2", true), 2);
  assert.equal(policy.afterResponse(1, 429, null, "0", true), 0.001);
  assert.equal(policy.afterResponse(1, 503, null, "soon", true), 0.001);
  // A duplicate in flight is retried whatever the method; other 409s, and a 5xx of what cannot replay, never.
  assert.equal(policy.afterResponse(1, 409, "idempotency_in_progress", "1", false), 1);
  assert.equal(policy.afterResponse(1, 409, "version_conflict", "1", true), null);
  assert.equal(policy.afterResponse(1, 503, null, null, false), null);
  assert.equal(policy.afterResponse(4, 503, null, null, true), null);
});

test("after no answer: retried when replayable, or when the request surely never left", () => {
  const policy = new RetryPolicy({ baseDelay: 0.001, jitter: 0 });
  assert.equal(policy.afterException(1, reset(), true), 0.001);
  assert.equal(policy.afterException(1, reset(), false), null);
  assert.equal(policy.afterException(1, refused(), false), 0.001);
  assert.equal(policy.afterException(1, new RangeError("a bug, not the network"), true), null);
  assert.equal(policy.afterException(4, reset(), true), null);
});

test("configuration from options or the environment, and ids checked before any request", async () => {
  const { fetch, seen } = scripted(json(200, SESSION), json(200, SESSION));
  process.env.HARNESS_URL = "http://harness.test:8000/";
  process.env.HARNESS_TOKEN = "hc_from_env";
  try {
    await new HarnessClient({ fetch }).getSession(7);
    await new HarnessClient({ fetch, baseUrl: "https://h.example/api/v1", token: "hc_arg" }).getSession(7);
  } finally {
    delete process.env.HARNESS_URL;
    delete process.env.HARNESS_TOKEN;
  }
  assert.equal(seen[0]?.url, "http://harness.test:8000/api/v1/sessions/7/");
  assert.equal(seen[0]?.headers.get("Authorization"), "Bearer hc_from_env");
  assert.equal(seen[1]?.url, "https://h.example/api/v1/sessions/7/");
  assert.equal(seen[1]?.headers.get("Authorization"), "Bearer hc_arg");
  assert.throws(() => new HarnessClient({ baseUrl: "http://h" }), /HARNESS_TOKEN/);
  assert.throws(() => new HarnessClient({ token: "t" }), /HARNESS_URL/);
  assert.doesNotMatch(String(new HarnessClient({ baseUrl: "http://h", token: "hc_secret" })), /hc_secret/);
  await assert.rejects(new HarnessClient({ baseUrl: "http://h", token: "t" }).getSession(-1), /positive integer/);
});

// --- the push (issue 35): waitForApproval long-polls it, and polls when the server has none ---------------------

const PENDING = { id: 5, status: "pending", run: 1, tool: "t", version: 1 };
const APPROVED = { ...PENDING, status: "approved", version: 2 };

test("waitForApproval long-polls the push and returns the decision it answers", async () => {
  const { fetch, seen } = scripted(json(200, PENDING), json(200, { done: false, approval: PENDING, run: null }),
    json(200, { done: true, approval: APPROVED, run: null }));
  const hc = new HarnessClient({ baseUrl: "http://harness.test", token: "hc_x", fetch, retry: FAST,
    pushUrl: "http://push.test:8001" });
  const approval = await hc.waitForApproval(5, { timeout: 30 });
  assert.equal(approval.status, "approved");
  assert.deepEqual(seen.map((s) => s.url), ["http://harness.test/api/v1/approvals/5/",
    "http://push.test:8001/api/v1/approvals/5/wait/?until=decided&timeout=25.000",
    "http://push.test:8001/api/v1/approvals/5/wait/?until=decided&timeout=25.000"]);
  assert.equal(seen[1]!.headers.get("authorization"), "Bearer hc_x");
});

test("a server without the wait route (404) or a push that does not answer makes waitForApproval poll", async () => {
  for (const noPush of [() => json(404, { code: "not_found", detail: "" }), refused]) {
    const { fetch, seen } = scripted(json(200, PENDING), noPush(), json(200, APPROVED));
    const hc = new HarnessClient({ baseUrl: "http://harness.test", token: "hc_x", fetch, retry: FAST });
    const approval = await hc.waitForApproval(5, { timeout: 30, pollInterval: 0.01, maxPollInterval: 0.02 });
    assert.equal(approval.status, "approved");
    assert.deepEqual(seen.map((s) => s.url.split("?")[0]), ["http://harness.test/api/v1/approvals/5/",
      "http://harness.test/api/v1/approvals/5/wait/", "http://harness.test/api/v1/approvals/5/"]);
  }
});

test("a bad wait request is not mistaken for a server without the push", async () => {
  const { fetch } = scripted(json(200, PENDING), json(400, { code: "wait_invalid", field: "timeout", detail: "" }));
  const hc = new HarnessClient({ baseUrl: "http://harness.test", token: "hc_x", fetch, retry: FAST });
  await assert.rejects(hc.waitForApproval(5, { timeout: 30 }), (error: HarnessError) => error.code === "wait_invalid");
});

test("pushUrl \"\" turns the push off", async () => {
  const { fetch, seen } = scripted(json(200, PENDING), json(200, APPROVED));
  const hc = new HarnessClient({ baseUrl: "http://harness.test", token: "hc_x", fetch, retry: FAST, pushUrl: "" });
  assert.equal(hc.pushRoot, null);
  assert.equal((await hc.waitForApproval(5, { timeout: 30, pollInterval: 0.01 })).status, "approved");
  assert.equal(seen.length, 2);
});
