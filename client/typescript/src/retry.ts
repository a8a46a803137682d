/**
 * When the client tries a request again, and how long it waits first: the Python client's
 * `harness_client.retry.RetryPolicy`, the same rules and defaults.
 *
 * A POST carries an Idempotency-Key made once per call and sent again on every retry, so the server applies it
 * at most once and replays its first reply (`Idempotent-Replayed: true`). GETs are safe to repeat, and so is a
 * PUT (it sends the whole new state). A PATCH has no key on the server's side: it is retried only when the
 * request surely never reached the server (its compare-and-set would turn a lost reply into a 409).
 */

/** harness/http/idempotency.py: a duplicate of a POST whose first copy the server is still working on. */
export const IN_FLIGHT_CODE = "idempotency_in_progress";

const RETRIED_STATUSES = new Set([429, 500, 502, 503, 504]);
// undici's codes for a request that surely never left: no connection was made.
const NOT_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT", "EHOSTUNREACH",
  "ENETUNREACH"]);

export interface RetryOptions {
  /** Counts the first try (1 turns retries off). Default 4. */
  maxAttempts?: number;
  /** Seconds: attempt n waits about `baseDelay * 2 ** (n - 1)`. Default 0.2. */
  baseDelay?: number;
  /** Seconds: no wait is longer, a Retry-After's included. Default 5. */
  maxDelay?: number;
  /** Up to this fraction of each delay is random, so clients that failed together spread. Default 0.25. */
  jitter?: number;
}

/** Whether `error` (what fetch threw) is a failure to get an answer, as opposed to a bug of the caller's. */
export function isTransportFailure(error: unknown): boolean {
  if (error instanceof TypeError) return true; // fetch's "fetch failed", its cause the socket's error
  return error instanceof Error && error.name === "TimeoutError"; // AbortSignal.timeout
}

function notSent(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === "string" && NOT_SENT_CODES.has(cause.code);
}

/** Bounded exponential backoff. Retried: connection errors and timeouts, 409 `idempotency_in_progress`, 429 and
 * 5xx, after the answer's Retry-After when it names a longer wait (up to `maxDelay`). Never retried: any other
 * 4xx. Delays are in seconds. */
export class RetryPolicy {
  readonly maxAttempts: number;
  readonly baseDelay: number;
  readonly maxDelay: number;
  readonly jitter: number;

  constructor(options: RetryOptions = {}) {
    const { maxAttempts = 4, baseDelay = 0.2, maxDelay = 5.0, jitter = 0.25 } = options;
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
      throw new RangeError("maxAttempts counts the first try: at least 1");
    }
    if (baseDelay < 0 || maxDelay < 0 || !(jitter >= 0 && jitter <= 1)) {
      throw new RangeError("delays are >= 0 and jitter is between 0 and 1");
    }
    this.maxAttempts = maxAttempts;
    this.baseDelay = baseDelay;
    this.maxDelay = maxDelay;
    this.jitter = jitter;
  }

  /** The wait after failed attempt number `attempt` (1-based). */
  backoff(attempt: number): number {
    const delay = Math.min(this.maxDelay, this.baseDelay * 2 ** (attempt - 1));
    return delay * (1 - this.jitter * Math.random());
  }

  /** Seconds to wait before another try after fetch threw `error`, or null to give up. */
  afterException(attempt: number, error: unknown, replayable: boolean): number | null {
    if (attempt >= this.maxAttempts || !isTransportFailure(error)) return null;
    if (!replayable && !notSent(error)) return null;
    return this.backoff(attempt);
  }

  /** Seconds to wait before another try after an error answer, or null to give up (and throw). */
  afterResponse(attempt: number, status: number, code: string | null, retryAfter: string | null,
    replayable: boolean): number | null {
    if (attempt >= this.maxAttempts) return null;
    // A duplicate whose first copy is still running is told when to come back: retried like a 429.
    const inFlight = status === 409 && code === IN_FLIGHT_CODE;
    if (!inFlight && (!RETRIED_STATUSES.has(status) || !replayable)) return null;
    let delay = this.backoff(attempt);
    if (retryAfter !== null && /^\d+$/.test(retryAfter.trim())) {
      delay = Math.max(delay, Math.min(Number(retryAfter.trim()), this.maxDelay));
    }
    return delay;
  }
}
