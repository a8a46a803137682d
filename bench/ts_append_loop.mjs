// One client process of bench scenario E5 (bench/scenarios_ecosystem.py): the TypeScript client's appendItems of one
// ~1 KB item to one session, in a loop, as bench/core.py's Python clients run theirs: wait for the common start
// time (the barrier), warm up, then record each call's latency for a fixed time. Prints one JSON line:
// {"ops", "acknowledged", "latencies_ms", "rss_mb"}. HARNESS_URL and HARNESS_TOKEN name the server and token.
//
//     node bench/ts_append_loop.mjs --session 12 --seconds 4 --warmup 2 [--start-at <unix seconds>]
import { HarnessClient } from "../client/typescript/dist/src/index.js";

function arg(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) {
    if (fallback === undefined) throw new Error(`--${name} is required`);
    return fallback;
  }
  return Number(process.argv[at + 1]);
}

const sessionId = arg("session");
const seconds = arg("seconds");
const warmup = arg("warmup", 0);
const startAt = arg("start-at", 0);
const text = "The keeper climbs the stair at dusk; the lamp is cold and the storm is late. ".repeat(13).slice(0, 1000);
const item = { role: "user", content: { text } };
const client = new HarnessClient(); // HARNESS_URL, HARNESS_TOKEN

const wait = startAt * 1000 - Date.now();
if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));

let acknowledged = 0;
const warmEnd = performance.now() + warmup * 1000;
while (performance.now() < warmEnd) {
  await client.appendItems(sessionId, [item]);
  acknowledged += 1;
}
const latencies = [];
const end = performance.now() + seconds * 1000;
for (;;) {
  const t0 = performance.now();
  if (t0 >= end) break;
  await client.appendItems(sessionId, [item]);
  latencies.push(performance.now() - t0);
  acknowledged += 1;
}
const rssMb = process.resourceUsage().maxRSS / 1024;
process.stdout.write(JSON.stringify({ ops: latencies.length, acknowledged, latencies_ms: latencies, rss_mb: rssMb }) + "\n");
