/**
 * LangGraph.js on Harness Console: a checkpointer, and interrupts decided in the console's approval inbox.
 *
 *     import { HarnessSaver } from "harness-console-client/langgraph";
 *     const graph = builder.compile({ checkpointer: new HarnessSaver() }); // HARNESS_URL, HARNESS_TOKEN
 *
 * The Python client's `harness_client.langgraph.HarnessSaver`, over the same /api/v1/threads/ endpoints and
 * with the same mapping: a thread is a run of the token's project (its `ref` is the thread id, at most 64
 * characters; created on the thread's first checkpoint), each checkpoint one of the run's checkpoints
 * (namespace, id, parent, metadata), so the console shows a thread's lineage, forks and diffs. A checkpoint is
 * immutable: writing an id again with other content is a ConflictError `checkpoint_exists`.
 *
 * A channel's value is stored as JSON when it is JSON and reads back exactly the same (the console's diff shows
 * it as it is), and as the serializer's typed bytes otherwise (`{"__lg_type__": "json", "b64": "..."}`); the
 * versions are PostgresSaver's strings (`<32-digit counter>.<random>`), as the Python saver makes them, so a
 * thread's JSON state reads the same from either language (typed values only from the serializer that wrote them).
 *
 * `requestApproval` turns an `interrupt()` into an approval request the console's reviewers decide; the graph
 * resumes with `new Command({ resume: await saver.waitForDecision(id) })`.
 */

import { createHash } from "node:crypto";

import type { RunnableConfig } from "@langchain/core/runnables";
import { getConfig, interrupt } from "@langchain/langgraph";
import {
  BaseCheckpointSaver,
  WRITES_IDX_MAP,
  getCheckpointId,
} from "@langchain/langgraph-checkpoint";
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointPendingWrite,
  CheckpointTuple,
  PendingWrite,
  SerializerProtocol,
} from "@langchain/langgraph-checkpoint";

import { HarnessClient } from "./client.js";
import type { Approval, Run, Schemas, ThreadCheckpoint } from "./client.js";
import { HarnessError } from "./errors.js";

/** The key that marks a value stored as the serializer's typed bytes. */
export const TYPED = "__lg_type__";
const MAX_DEPTH = 16; // deeper JSON is stored typed: the API refuses bodies nested deeper than 32

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A string PostgreSQL's jsonb keeps as it is: no NUL, no lone surrogate. */
function jsonText(value: string): boolean {
  return !value.includes("\u0000") && !LONE_SURROGATE.test(value);
}

/** Whether `value` survives JSON (and jsonb) unchanged: the same values back. */
export function isJson(value: unknown, depth = 0): boolean {
  if (value === null || typeof value === "boolean") return true;
  if (typeof value === "string") return jsonText(value);
  if (typeof value === "number") return Number.isFinite(value) && !Object.is(value, -0); // JSON has no -0
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value) || !isJson(value[i], depth + 1)) return false; // a hole would come back null
    }
    return true;
  }
  if (isPlainObject(value)) {
    return Object.entries(value).every(([k, v]) => jsonText(k) && isJson(v, depth + 1));
  }
  return false; // undefined, bigint, a Date, a Map, a class instance (a LangChain message): the serializer's
}

/** A channel's (or a write's) value as stored: itself when it is JSON, else the serializer's typed bytes. */
export async function encodeValue(serde: SerializerProtocol, value: unknown): Promise<unknown> {
  if (isJson(value) && !(isPlainObject(value) && TYPED in value)) return value;
  const [kind, data] = await serde.dumpsTyped(value);
  return { [TYPED]: kind, b64: Buffer.from(data).toString("base64") };
}

export async function decodeValue(serde: SerializerProtocol, stored: unknown): Promise<unknown> {
  if (isPlainObject(stored) && TYPED in stored) {
    return serde.loadsTyped(String(stored[TYPED]), new Uint8Array(Buffer.from(String(stored.b64), "base64")));
  }
  return stored;
}

function configurableOf(config: RunnableConfig): Record<string, unknown> {
  return (config.configurable ?? {}) as Record<string, unknown>;
}

function threadIdOf(config: RunnableConfig): string {
  const threadId = configurableOf(config).thread_id;
  if (threadId === undefined || threadId === null || threadId === "") {
    throw new TypeError('HarnessSaver needs a thread: pass { configurable: { thread_id: "..." } }.');
  }
  return String(threadId);
}

export interface HarnessSaverOptions {
  /** The client to use; default: one made from `baseUrl` and `token` (or HARNESS_URL and HARNESS_TOKEN). */
  client?: HarnessClient;
  baseUrl?: string;
  token?: string;
  /** LangGraph's serializer for the values that are not JSON (default: its JsonPlusSerializer). */
  serde?: SerializerProtocol;
  /** The end user the graph serves: every call then carries a token narrowed to that user (`client.forUser`),
   * so the saver creates its threads tagged with the user and reaches no other user's thread. */
  endUser?: string;
  /** The owner the thread's run is leased to, sent with every checkpoint and approval request (null, the
   * default: the graph holds no lease). While the run holds a lease, a write naming another owner is refused. */
  leaseOwner?: string | null;
}

/** A LangGraph.js checkpointer backed by Harness Console (see the module's comment). */
export class HarnessSaver extends BaseCheckpointSaver {
  readonly client: HarnessClient;
  readonly leaseOwner: string | null;

  constructor(options: HarnessSaverOptions = {}) {
    super(options.serde);
    const client = options.client ?? new HarnessClient({ baseUrl: options.baseUrl, token: options.token });
    this.client = options.endUser ? client.forUser(options.endUser) : client;
    this.leaseOwner = options.leaseOwner ?? null;
  }

  // --- BaseCheckpointSaver ----------------------------------------------------------------------------

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = configurableOf(config).thread_id;
    if (threadId === undefined || threadId === null || threadId === "") return undefined; // no thread: nothing stored
    const stored = await this.client.getThreadCheckpoint({
      thread_id: threadIdOf(config), checkpoint_ns: String(configurableOf(config).checkpoint_ns ?? ""),
      checkpoint_id: getCheckpointId(config) || undefined,
    });
    return stored === null ? undefined : this.tuple(stored);
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { filter, before, limit } = options;
    const configurable = configurableOf(config);
    const query: Parameters<HarnessClient["threadCheckpoints"]>[0] = {
      filter, limit: limit === undefined ? undefined : Math.trunc(limit),
    };
    // No thread: every thread of the project; no namespace: every namespace.
    if (configurable.thread_id !== undefined && configurable.thread_id !== null) {
      query.thread_id = String(configurable.thread_id);
    }
    if (configurable.checkpoint_ns !== undefined) query.checkpoint_ns = String(configurable.checkpoint_ns);
    query.checkpoint_id = getCheckpointId(config) || undefined;
    if (before !== undefined) {
      const beforeId = getCheckpointId(before);
      if (!beforeId) return; // nothing sorts before no checkpoint (PostgresSaver compares with NULL)
      query.before = beforeId;
    }
    for (const stored of await this.client.threadCheckpoints(query)) {
      yield await this.tuple(stored);
    }
  }

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
    _newVersions: ChannelVersions): Promise<RunnableConfig> {
    const configurable = configurableOf(config);
    const threadId = threadIdOf(config);
    const ns = String(configurable.checkpoint_ns ?? "");
    const versions = checkpoint.channel_versions;
    const values: Record<string, unknown> = {};
    for (const [channel, value] of Object.entries(checkpoint.channel_values)) {
      if (value === undefined) continue;
      // As PostgresSaver: a value of a channel with no version is kept only when it is a primitive.
      if (channel in versions || value === null || ["string", "number", "boolean"].includes(typeof value)) {
        values[channel] = await encodeValue(this.serde, value);
      }
    }
    const { channel_values: _values, ...rest } = checkpoint;
    const parent = configurable.checkpoint_id;
    await this.client.putThreadCheckpoint({
      thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id,
      parent_checkpoint_id: parent ? String(parent) : null, checkpoint: JSON.parse(JSON.stringify(rest)),
      channel_values: values, metadata: JSON.parse(JSON.stringify(metadata ?? {})), lease_owner: this.leaseOwner,
    });
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    if (writes.length === 0) return;
    const configurable = configurableOf(config);
    if (!configurable.checkpoint_id) throw new TypeError("putWrites needs the checkpoint: configurable.checkpoint_id");
    const rows = await Promise.all(writes.map(async ([channel, value], idx) =>
      [WRITES_IDX_MAP[channel] ?? idx, channel, await encodeValue(this.serde, value)]));
    await this.client.putThreadWrites({
      thread_id: threadIdOf(config), checkpoint_ns: String(configurable.checkpoint_ns ?? ""),
      checkpoint_id: String(configurable.checkpoint_id), task_id: taskId, task_path: taskPath, writes: rows,
    });
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.client.deleteThread(String(threadId));
  }

  /** PostgresSaver's versions, as the Python HarnessSaver makes them: a zero-padded counter and a tie-breaker,
   * so a thread reads and continues the same from either language. LangGraph.js handles string versions (its
   * "null version" is "" for them) though `compile({ checkpointer })` types a saver's versions as numbers: the
   * string is returned as one, and an integer version (a thread begun by another saver) is continued. */
  override getNextVersion(current: number | undefined): number {
    const value: unknown = current;
    const counter = value === undefined || value === null ? 0
      : typeof value === "number" ? value : Number.parseInt(String(value).split(".")[0] ?? "0", 10);
    const version = `${String(counter + 1).padStart(32, "0")}.${String(Math.random()).padStart(16, "0")}`;
    return version as unknown as number;
  }

  private async tuple(stored: ThreadCheckpoint): Promise<CheckpointTuple> {
    const ns = stored.checkpoint_ns;
    const values: Record<string, unknown> = {};
    for (const [channel, value] of Object.entries(stored.channel_values)) {
      values[channel] = await decodeValue(this.serde, value);
    }
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(stored.pending_writes.map(
      async ([taskId, channel, value]) =>
        [String(taskId), String(channel), await decodeValue(this.serde, value)] as CheckpointPendingWrite));
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id: stored.thread_id, checkpoint_ns: ns, checkpoint_id: stored.checkpoint_id } },
      checkpoint: { ...(stored.checkpoint as Omit<Checkpoint, "channel_values">), channel_values: values },
      metadata: stored.metadata as CheckpointMetadata,
      pendingWrites,
    };
    if (stored.parent_checkpoint_id) {
      tuple.parentConfig = {
        configurable: { thread_id: stored.thread_id, checkpoint_ns: ns, checkpoint_id: stored.parent_checkpoint_id },
      };
    }
    return tuple;
  }

  // --- interrupts decided in the console -------------------------------------------------------------

  /** Wait until a reviewer has decided the approval `requestApproval` asked for and the resume worker has bound
   * the decision to the thread's run; return it, for `graph.invoke(new Command({ resume: it }), config)`:
   * `{decision: "approved", arguments, by, fingerprint, ...}` or `{decision: "rejected" | "expired", reason}`.
   * ApprovalNotResumed when the resume's re-validation blocked the run instead. */
  async waitForDecision(approvalId: number, options: { timeout?: number; pollInterval?: number;
    maxPollInterval?: number } = {}): Promise<Record<string, unknown>> {
    const approval = await this.client.waitForApproval(approvalId, { ...options, untilResumed: true });
    return boundDecision(approval, await this.client.getRun(approval.run));
  }

  /** Say what the graph did with an approved action it runs itself: `"ran"`, or `"not_run"` with the `reason`
   * (until then the console shows it "approved, waiting for the agent"). Sent as the saver's lease owner. */
  reportOutcome(approvalId: number, outcome: "ran" | "not_run", reason?: string): Promise<Approval> {
    return this.client.reportApprovalOutcome(approvalId, { outcome, reason, lease_owner: this.leaseOwner });
  }
}

/** The approval was decided, but the resume's re-validation left the thread's run blocked (`run`). */
export class ApprovalNotResumed extends HarnessError {
  override name = "ApprovalNotResumed";
  readonly run: Run;

  constructor(detail: string, run: Run) {
    super(detail, { code: "approval_not_resumed", body: { run: run.id, status: run.status, blocked_step: run.blocked_step } });
    this.run = run;
  }
}

function boundDecision(approval: Approval, run: Run): Record<string, unknown> {
  const bound = run.bound_result;
  if (run.status !== "running" || !isPlainObject(bound) || bound.approval !== approval.id) {
    const blocked = run.blocked_step ? ` (blocked at ${run.blocked_step})` : "";
    throw new ApprovalNotResumed(
      `Approval ${approval.id} is ${approval.status} but run ${run.id} is ${run.status}${blocked}.`, run);
  }
  return { ...bound };
}

/** JSON with sorted keys: the same action always hashes to the same key. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isPlainObject(value)) {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export interface RequestApprovalOptions {
  reason?: string;
  risk?: Schemas["RiskEnum"];
  /** The client to ask with; default: the graph's HarnessSaver's. */
  client?: HarnessClient;
}

/**
 * Inside a graph node: ask the console's reviewers to approve `tool(arguments)` and interrupt the graph until they
 * have decided. Returns what the graph is resumed with (`new Command({ resume: ... })`), normally the decision
 * `HarnessSaver.waitForDecision` returns.
 *
 * The request (`executor: "agent"`: the graph runs the tool itself once approved) is posted on the thread's run
 * under a key derived from the thread, its namespace and the action, so the node, run again when the graph
 * resumes, finds the same request instead of asking twice. The interrupt's value carries `approval_id`, `tool`,
 * `arguments` and `reason` (`approvalIds(result.__interrupt__)` reads the ids).
 */
export async function requestApproval(tool: string, args: Record<string, unknown>,
  options: RequestApprovalOptions = {}): Promise<Record<string, unknown>> {
  const configurable = (getConfig().configurable ?? {}) as Record<string, unknown>;
  const saver = configurable.__pregel_checkpointer; // @langchain/langgraph's CONFIG_KEY_CHECKPOINTER
  const hc = options.client ?? (saver instanceof HarnessSaver ? saver.client : undefined);
  if (hc === undefined) throw new TypeError("requestApproval needs a graph compiled with HarnessSaver, or client.");
  const threadId = String(configurable.thread_id);
  const action = canonical([threadId, configurable.checkpoint_ns ?? "", tool, args]);
  const key = "langgraph-" + createHash("sha256").update(action).digest("hex").slice(0, 48);
  const { run } = await hc.ensureThread({ thread_id: threadId }); // its checkpoints may still be on their way
  let asked: Approval | undefined;
  for await (const approval of hc.listApprovals({ run })) {
    if (approval.idempotency_key === key) {
      asked = approval;
      break;
    }
  }
  if (asked === undefined) {
    asked = await hc.requestApproval(run, {
      tool, arguments: args, idempotency_key: key, risk: options.risk ?? "high", reason: options.reason || undefined,
      executor: "agent", lease_owner: saver instanceof HarnessSaver ? saver.leaseOwner : null,
    }, { requestKey: key });
  }
  return interrupt({ approval_id: asked.id, tool, arguments: args, reason: options.reason ?? "" });
}

/** The approval ids in a graph's interrupts (`result.__interrupt__`) that `requestApproval` raised. */
export function approvalIds(interrupts: readonly unknown[] | undefined): number[] {
  const ids: number[] = [];
  for (const item of interrupts ?? []) {
    const value = (item as { value?: unknown } | null)?.value;
    if (isPlainObject(value) && Number.isInteger(value.approval_id)) ids.push(value.approval_id as number);
  }
  return ids;
}
