/**
 * The TypeScript client against Harness Console: a session's items appended, and a risky step put to a reviewer.
 *
 * Offline: no model, no network but the console. It starts a session, appends the user's request and the
 * agent's reply, starts a run, and asks for an approval of `publish_chapter` (a high-risk tool call): the run
 * waits in the console's inbox until a reviewer decides. It prints the approval's page and, last, one JSON line
 * with the session, run and approval ids.
 *
 * Run it against `bin/start`'s server (http://127.0.0.1:8000, demo project `novelforge`), from the checkout's root:
 *
 *     bin/setup --typescript                  # npm ci and tsc in client/typescript (once)
 *     export HARNESS_URL=http://127.0.0.1:8000
 *     export HARNESS_TOKEN=$(DEBUG=1 .venv/bin/python manage.py create_agent_token --project novelforge \
 *                            --name ts-example | tail -1)
 *     node examples/typescript_client.mjs
 *
 * Log in as `reviewer` / `reviewer-demo` and decide it at the printed address.
 */
import { randomUUID } from "node:crypto";

import { HarnessClient } from "../client/typescript/dist/src/index.js";

const hc = new HarnessClient(); // HARNESS_URL and HARNESS_TOKEN from the environment

const session = await hc.createSession({ role: "writer", memory_policy: "session", metadata: { example: "typescript" } });
const appended = await hc.appendItems(session.id, [
  { role: "user", content: "Publish chapter 3, please." },
  { role: "assistant", content: "It is drafted; publishing needs a reviewer's approval." },
], { expected_last_seq: 0 });
console.log(`session ${session.id}: items ${appended.items.map((item) => item.seq).join(", ")}`);

let run = await hc.createRun({ session: session.id, active_agent: "ts-example" });
run = await hc.transitionRun(run.id, { to: "running", expected_version: run.version });
// The action's identity: asking again with the same key (after a crash, say) finds the same request.
const approval = await hc.requestApproval(run.id, {
  tool: "publish_chapter", arguments: { chapter: 3, title: "The Lighthouse Keeper" }, risk: "high",
  idempotency_key: `ts-example-publish-${randomUUID()}`, reason: "Publishing is public and cannot be undone.",
});
console.log(`approval ${approval.id} is ${approval.status}: decide it at ${hc.baseUrl}/approvals/${approval.id}/`);
console.log(JSON.stringify({ session: session.id, run: run.id, approval: approval.id, status: approval.status }));
