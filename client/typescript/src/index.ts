/**
 * harness-console-client: the Harness Console agent API for TypeScript (Node 20+), typed from the server's
 * OpenAPI schema. `new HarnessClient()` reads HARNESS_URL and HARNESS_TOKEN. The LangGraph.js checkpointer is
 * `harness-console-client/langgraph` (./langgraph.ts).
 */
export * from "./client.js";
export * from "./errors.js";
export { IN_FLIGHT_CODE, RetryPolicy } from "./retry.js";
export type { RetryOptions } from "./retry.js";
export type { components, operations, paths } from "./schema.js";
