// What the live tests share: the server and tokens tests/client/test_typescript.py passes in the environment
// (a live server of the suite's, an agent token of a fresh project, a reviewer's personal token in it).
import { randomUUID } from "node:crypto";

import { HarnessClient, RetryPolicy } from "../src/index.js";

export const FAST = new RetryPolicy({ maxAttempts: 4, baseDelay: 0.01, maxDelay: 0.05 });

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: tests/client/test_typescript.py runs these tests against a live server`);
  return value;
}

export function agent(options: { fetch?: typeof fetch } = {}): HarnessClient {
  return new HarnessClient({ baseUrl: required("HARNESS_URL"), token: required("HARNESS_TOKEN"), retry: FAST, ...options });
}

export function reviewer(): HarnessClient {
  return new HarnessClient({ baseUrl: required("HARNESS_URL"), token: required("HARNESS_REVIEWER_TOKEN"), retry: FAST });
}

export const unique = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

export interface Exchange {
  method: string;
  url: string;
  key: string | null;
  body: string;
  status: number | null; // null: its reply was lost
  replayed: boolean;
}

/** A fetch that forwards to the real one and records every exchange; `lose(request)` loses the reply of the
 * first request it matches *after* the server answered it (committed), as a dropped connection would. */
export function recorder(lose?: (method: string, url: string) => boolean): { fetch: typeof fetch; exchanges: Exchange[] } {
  const exchanges: Exchange[] = [];
  let lost = false;
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const method = init?.method ?? "GET";
    const url = String(input);
    const key = new Headers(init?.headers).get("Idempotency-Key");
    const response = await fetch(input, init);
    const text = await response.text();
    if (lose && !lost && lose(method, url)) {
      lost = true;
      exchanges.push({ method, url, key, body: String(init?.body ?? ""), status: null, replayed: false });
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) });
    }
    exchanges.push({ method, url, key, body: String(init?.body ?? ""), status: response.status,
      replayed: response.headers.get("Idempotent-Replayed") === "true" });
    return new Response(text, { status: response.status, headers: response.headers });
  }) as typeof fetch;
  return { fetch: fetchImpl, exchanges };
}

export const postsTo = (end: string) => (method: string, url: string): boolean =>
  method === "POST" && new URL(url).pathname.endsWith(end);
