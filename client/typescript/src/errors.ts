/**
 * The API's `{"code", "detail", ...}` error shape as error classes, mapped by status as the Python client's
 * `harness_client.errors` maps it:
 *
 *   401 AuthenticationError   403 PermissionDenied   404 NotFoundError
 *   409 ConflictError (currentStatus, currentVersion, existingId)
 *   400, 422 ValidationError (fields, unknownFields; 422: a policy refusal or a reused key)
 *   5xx ServerError (after the client's retries)   anything else HarnessError
 *
 * No answer at all (connection refused, reply lost, timeout) after the retries is a TransportError.
 */

export interface ErrorOptions {
  status?: number | null;
  code?: string;
  body?: unknown;
  method?: string;
  url?: string;
  cause?: unknown;
}

function field(body: unknown, name: string): unknown {
  return body !== null && typeof body === "object" && !Array.isArray(body)
    ? (body as Record<string, unknown>)[name] : undefined;
}

/** An error from the Harness Console API (or from reaching it): `status` is null when no answer came back,
 * `code` the API's stable machine-readable code, `detail` its text, `body` the whole decoded error body. */
export class HarnessError extends Error {
  override name = "HarnessError";
  readonly detail: string;
  readonly status: number | null;
  readonly code: string;
  readonly body: unknown;
  readonly method: string;
  readonly url: string;

  constructor(detail: string, options: ErrorOptions = {}) {
    const { status = null, code = "error", body = null, method = "", url = "" } = options;
    const where = method ? ` (${method} ${url})` : "";
    super(`${status !== null ? `${status} ` : ""}${code}: ${detail}${where}`,
      options.cause !== undefined ? { cause: options.cause } : undefined);
    this.detail = detail;
    this.status = status;
    this.code = code;
    this.body = body;
    this.method = method;
    this.url = url;
  }
}

/** 401: no token, or a token that is unknown or revoked. */
export class AuthenticationError extends HarnessError {
  override name = "AuthenticationError";
}

/** 403: the token's role may not do this (a reader token writing, an agent deciding an approval). */
export class PermissionDenied extends HarnessError {
  override name = "PermissionDenied";
}

/** 404: absent, or not in the token's project. */
export class NotFoundError extends HarnessError {
  override name = "NotFoundError";
}

/** 400 (invalid input; `fields` names each bad field; `unknown_field`: `unknownFields`) or 422 (a memory write
 * the policy rejected, or an Idempotency-Key reused with a different request). */
export class ValidationError extends HarnessError {
  override name = "ValidationError";

  get fields(): Record<string, unknown> {
    const fields = field(this.body, "fields");
    return fields !== null && typeof fields === "object" && !Array.isArray(fields)
      ? { ...(fields as Record<string, unknown>) } : {};
  }

  /** With code `unknown_field`: the path of each field the body named that the operation does not take. */
  get unknownFields(): string[] {
    const named = field(this.body, "unknown_fields");
    return Array.isArray(named) ? named.map(String) : [];
  }
}

/** 409: an illegal transition, a stale `expected_version`, a lost lease, a taken reference. `currentStatus` and
 * `currentVersion` say where the record is now (null when the conflict is not about a versioned record). */
export class ConflictError extends HarnessError {
  override name = "ConflictError";

  get currentStatus(): string | null {
    const value = field(this.body, "current_status");
    return typeof value === "string" ? value : null;
  }

  get currentVersion(): number | null {
    const value = field(this.body, "current_version");
    return Number.isInteger(value) ? (value as number) : null;
  }

  /** With code `already_exists` (a session, task or run `ref` the project has already): the holder's id. */
  get existingId(): number | null {
    const value = this.code === "already_exists" ? field(this.body, "id") : undefined;
    return Number.isInteger(value) ? (value as number) : null;
  }
}

/** 5xx, still failing after the client's retries. */
export class ServerError extends HarnessError {
  override name = "ServerError";
}

/** No HTTP answer (connection refused or reset, reply lost, timeout), still after the retries; the fetch error
 * is the `cause`. A POST may or may not have been applied: retrying it with the same `requestKey` is safe. */
export class TransportError extends HarnessError {
  override name = "TransportError";
}

/** The client has no push (`pushUrl: ""`), or it did not answer: `waitForApproval` polls instead. */
export class PushUnavailable extends HarnessError {
  override name = "PushUnavailable";
}

/** `waitForApproval` ran out of time with the approval still pending; `approval` is the last one seen. */
export class ApprovalWaitTimeout extends HarnessError {
  override name = "ApprovalWaitTimeout";
  readonly approval: unknown;

  constructor(detail: string, approval: unknown) {
    super(detail, { code: "wait_timeout" });
    this.approval = approval;
  }
}

/** `waitForQuestion` ran out of time with the question still pending; `question` is the last one seen. */
export class QuestionWaitTimeout extends HarnessError {
  override name = "QuestionWaitTimeout";
  readonly question: unknown;

  constructor(detail: string, question: unknown) {
    super(detail, { code: "wait_timeout" });
    this.question = question;
  }
}

/** The error for an HTTP error answer: `body` is the decoded JSON (or null), `text` the raw body. */
export function errorFromResponse(status: number, body: unknown, text = "", where: { method?: string; url?: string } = {}
): HarnessError {
  let code: string;
  let detail: string;
  const given = field(body, "code");
  if (typeof given === "string") {
    code = given;
    detail = String(field(body, "detail") ?? "");
  } else {
    code = `http_${status}`;
    detail = text.trim().slice(0, 500) || `HTTP ${status}`;
  }
  const options = { status, code, body, method: where.method ?? "", url: where.url ?? "" };
  if (status === 401) return new AuthenticationError(detail, options);
  if (status === 403) return new PermissionDenied(detail, options);
  if (status === 404) return new NotFoundError(detail, options);
  if (status === 409) return new ConflictError(detail, options);
  if (status === 400 || status === 422) return new ValidationError(detail, options);
  if (status >= 500) return new ServerError(detail, options);
  return new HarnessError(detail, options);
}
