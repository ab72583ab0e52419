/**
 * The error hierarchy. Every error the SDK throws is a {@link PlatformUIError}.
 *
 * None of these classes holds a `Request`, a header or an unredacted URL: the
 * bearer token and the API key must never reach `message`, `stack`,
 * `JSON.stringify(err)` or `util.inspect(err)` (DESIGN §5, §7).
 *
 * @module
 */
import type { NodeErrors } from './schemas/cloud.ts';
import type { WorkflowIssue } from './workflow/validate.ts';
import type { ExceptionTypeValue } from './schemas/events.ts';
import type { NodeVersion } from './schemas/registry.ts';
import { isObject, optString } from './schemas/rule.ts';
import { clip } from './transport/redact.ts';

/** Base class of every error thrown by `@platformui/sdk`. */
export class PlatformUIError extends Error {
  override name = 'PlatformUIError';

  /** Plain-data view used by `JSON.stringify(err)`; lists only safe fields. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { name: this.name, message: this.message };
    for (const [k, v] of Object.entries(this)) if (k !== 'cause') out[k] = v;
    return out;
  }
}

/** Where an {@link APIError} came from. */
export interface APIErrorInit {
  status: number;
  /** The response body: parsed JSON when it was JSON, the raw text otherwise (`''` when empty). */
  body: unknown;
  /** HTTP method of the failed request. */
  method: string;
  /** The request URL with secrets redacted. */
  url: string;
  /** Response headers (never request headers, which carry credentials). */
  headers?: Headers | undefined;
  /** What the client knows about the failure that the server could not say (ends the message after `; `). */
  hint?: string | undefined;
}

/**
 * A non-2xx answer from a service. Subclassed per status (the table of `transport/to-error.ts`).
 *
 * @example
 * ```ts
 * try { await registry.deletePublisher('acme'); }
 * catch (err) { if (err instanceof NotFoundError) console.log(err.status, err.error, err.body); }
 * ```
 */
export class APIError extends PlatformUIError {
  override name = 'APIError';
  /** HTTP status code. */
  readonly status: number;
  /** `error` of an ErrorResponse body (a string on the registry; may be an object on the cloud). */
  readonly error: unknown;
  /** The whole response body: parsed JSON, or the raw text when it was not JSON. */
  readonly body: unknown;
  /** HTTP method. */
  readonly method: string;
  /** Request URL, secrets redacted. */
  readonly url: string;
  /** Value of the response's `Retry-After` header, when it had one. */
  readonly retryAfter: string | undefined;
  /**
   * What the client adds that the server could not say, also the message's end
   * (a 401 to a request sent without a key: how to send one). Absent otherwise.
   */
  declare readonly hint?: string;
  /**
   * The server's machine-readable reason, where its error body has one
   * (Comfy API v2's `{"error":{"code"}}`: `queue_full`, `rate_limited`,
   * `idempotency_key_reuse`, …). Absent otherwise.
   */
  declare readonly code?: string;

  constructor(init: APIErrorInit) {
    const body = init.body;
    const obj = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : undefined;
    const error = obj?.error;
    const detail =
      typeof obj?.message === 'string'
        ? obj.message
        : error !== null && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string'
          ? (error as { message: string }).message
          : typeof body === 'string' && body
            ? body.slice(0, 200)
            : '';
    const code = typeof error === 'string' ? `${error}: ` : '';
    super(`${init.status} ${init.method} ${init.url}${detail || code ? ` — ${code}${detail}` : ''}${init.hint ? `; ${init.hint}` : ''}`);
    this.status = init.status;
    this.error = error;
    this.body = body;
    this.method = init.method;
    this.url = init.url;
    this.retryAfter = init.headers?.get('retry-after') ?? undefined;
    // Set only when there is one: an error's fields (and toJSON) stay as they were otherwise.
    if (init.hint) (this as { hint?: string }).hint = init.hint;
    const reason = error !== null && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
    if (typeof reason === 'string') (this as { code?: string }).code = reason;
  }
}

/** 400: invalid request (bad input, bad workflow, missing fields). */
export class BadRequestError extends APIError { override name = 'BadRequestError'; }
/** 401: invalid or missing credentials. */
export class AuthenticationError extends APIError { override name = 'AuthenticationError'; }
/** 402 (cloud): insufficient credits. Never retried. */
export class InsufficientCreditsError extends APIError { override name = 'InsufficientCreditsError'; }
/** 403: the credentials may not act on this resource. */
export class PermissionDeniedError extends APIError { override name = 'PermissionDeniedError'; }
/** 404: not found. */
export class NotFoundError extends APIError { override name = 'NotFoundError'; }
/** 409: conflict, e.g. a node id that already exists. */
export class ConflictError extends APIError { override name = 'ConflictError'; }
/** 429 (registry and proxy): too many requests. Retried for safe methods, honouring `Retry-After`. */
export class RateLimitError extends APIError { override name = 'RateLimitError'; }
/** 429 (cloud): the subscription is inactive. Never retried. */
export class SubscriptionInactiveError extends APIError { override name = 'SubscriptionInactiveError'; }
/** 5xx: the service failed. */
export class InternalServerError extends APIError { override name = 'InternalServerError'; }

/**
 * Connection failures that prove the request never reached the server: refused,
 * no such host, no route. A timeout or a reset may come after the server took
 * the request; browsers give no code at all.
 */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

/** What an {@link APIConnectionError} knows besides the request. */
export interface ConnectionErrorInit {
  /** The job the request was about (a submission's chosen id). */
  promptId?: string | undefined;
  /** Overrides what the code says about whether the request reached the server. */
  sent?: 'no' | 'maybe' | undefined;
  /** The failure this one stands for (an answer lost after sending, the original connection error). */
  cause?: unknown;
}

/**
 * No answer: DNS failure, refused or reset connection, a proxy that hung up,
 * a timeout. `sent` says whether the server may have received the request:
 * `'no'` only when the failure proves it never left (refused, DNS, no route),
 * else `'maybe'`. A submission's error names its job (`promptId`) either way,
 * so a job whose answer was lost can still be followed or stopped.
 *
 * @example
 * ```ts
 * try { await cloud.submit(workflow); }
 * catch (err) {
 *   if (err instanceof APIConnectionError && err.sent === 'maybe') console.log(`job ${err.promptId} may exist: follow or stop it by id`);
 * }
 * ```
 */
export class APIConnectionError extends PlatformUIError {
  // A bundler renames a class that names itself in its body (`_APIConnectionError`): this keeps `APIConnectionError.name`.
  static override readonly name: string = 'APIConnectionError';
  override name = 'APIConnectionError';
  /** HTTP method. */
  readonly method: string;
  /** Request URL, secrets redacted. */
  readonly url: string;
  /** The system's code for the failure, when the runtime gave one (`ECONNREFUSED`, `ENOTFOUND`, `ECONNRESET`…; none in browsers). */
  readonly code: string | undefined;
  /** `'no'`: the request provably never reached the server; `'maybe'`: it may have (and a POST may have done its work). */
  readonly sent: 'no' | 'maybe';
  /** The job this request was about, when it was a submission: its id was chosen before sending. */
  readonly promptId: string | undefined;
  /** What failed, without the request (the message's first part). */
  readonly #detail: string;
  constructor(method: string, url: string, message = 'Connection failed', code?: string, init: ConnectionErrorInit = {}) {
    const sent = init.sent ?? (NEVER_SENT.has(code ?? '') ? 'no' : 'maybe');
    super(`${message}: ${method} ${url}${init.promptId ? ` (job ${init.promptId} ${sent === 'no' ? 'was not sent' : 'may exist'})` : ''}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.method = method;
    this.url = url;
    this.code = code;
    this.sent = sent;
    this.promptId = init.promptId;
    this.#detail = message;
  }

  /** The same failure, naming the job the request was about (a submission's chosen id). */
  aboutJob(promptId: string | undefined, sent: 'no' | 'maybe' = this.sent): APIConnectionError {
    // The original failure is the cause: a wrapper of an answer (a 5xx after sending) passes its own on.
    return new APIConnectionError(this.method, this.url, this.#detail, this.code, { promptId, sent, cause: this.cause ?? this });
  }
}

/** A request exceeded its timeout. The server may have received it (`sent` is `'maybe'`). */
export class APITimeoutError extends APIConnectionError {
  // A bundler renames a class that names itself in its body (`_APITimeoutError`): this keeps `APITimeoutError.name`.
  static override readonly name: string = 'APITimeoutError';
  override name = 'APITimeoutError';
  /** The timeout that ran out, in ms, when known. */
  readonly timeout: number | undefined;
  constructor(method: string, url: string, ms?: number, init: ConnectionErrorInit = {}) {
    super(method, url, ms === undefined ? 'Timed out' : `Timed out after ${ms} ms`, undefined, { ...init, sent: 'maybe' });
    this.timeout = ms;
  }

  /** The same timeout, naming the job the request was about: still an `APITimeoutError`, with its `timeout`. */
  override aboutJob(promptId: string | undefined): APIConnectionError {
    return new APITimeoutError(this.method, this.url, this.timeout, { promptId, cause: this.cause ?? this });
  }
}

/**
 * A job followed by `run()` sent nothing (no event, no status change) for
 * `timeout` ms. The job may still be running: this is not a failed request,
 * so it is no {@link APIConnectionError} (a retry-on-connection-error wrapper
 * must not start a second paid job). Since 0.2 it is a {@link PlatformUIError}
 * only; `run()` stops the job (unless `stopOnAbort: false`).
 *
 * @example
 * ```ts
 * try { await cloud.run(workflow, { timeout: 120_000 }); }
 * catch (err) { if (err instanceof JobTimeoutError) console.log(err.promptId, err.timeout); }
 * // JobTimeoutError: Job 1f0c… sent nothing for 120000 ms
 * ```
 */
export class JobTimeoutError extends PlatformUIError {
  override name = 'JobTimeoutError';
  /** The job that went silent. */
  readonly promptId: string;
  /** The silence deadline that ran out, in ms. */
  readonly timeout: number;
  constructor(promptId: string, ms: number) {
    super(`Job ${promptId} sent nothing for ${ms} ms`);
    this.promptId = promptId;
    this.timeout = ms;
  }
}

/**
 * The WebSocket's server refused the connection for good: it closed with a
 * code that says the credential or the request was refused (1008, or a
 * 4xxx code of the server's). The socket stops reconnecting; runs in flight
 * go on by polling (and fail there if the key is refused).
 *
 * @example
 * ```ts
 * cloud.connect().on('close', ({ error }) => { if (error instanceof SocketRefusedError) console.log(error.code, error.reason); });
 * ```
 */
export class SocketRefusedError extends PlatformUIError {
  override name = 'SocketRefusedError';
  /** The close code the server sent. */
  readonly code: number;
  /** The close reason, cut short and redacted. */
  readonly reason: string;
  constructor(code: number, reason: string) {
    super(`The server refused the WebSocket (close code ${code}${reason ? `: ${reason}` : ''}); not reconnecting`);
    this.code = code;
    this.reason = reason;
  }
}

/**
 * The server that accepted a job stopped answering, or answers but no longer
 * knows the job (it restarted: neither its queue nor its history has it).
 * What became of the job is unknown, so nothing re-sends it on its own: it
 * may cost money or have side effects. `promptId` and `server` say which job
 * and where; follow it again later with `cloud.follow(promptId)` if the
 * server comes back, or submit it anew.
 *
 * @example
 * ```ts
 * try {
 *   await cloud.run(workflow);
 * } catch (err) {
 *   if (err instanceof ServerLostError) console.log(err.reason, err.promptId, err.server);
 *   // ServerLostError: Lost job 1f0c… on http://127.0.0.1:8188: no answer for 30 s
 * }
 * ```
 */
export class ServerLostError extends PlatformUIError {
  override name = 'ServerLostError';
  /** The job the server had accepted. */
  readonly promptId: string;
  /** The server's base URL (credentials redacted). */
  readonly server: string;
  /** `unreachable`: no answer for the set time; `forgotten`: it answers, but the job is unknown to it. */
  readonly reason: 'unreachable' | 'forgotten';
  /** How long the server had given no answer (ms); 0 when it forgot the job. */
  readonly silentMs: number;
  constructor(promptId: string, server: string, reason: 'unreachable' | 'forgotten', silentMs: number, options?: { cause?: unknown }) {
    super(`Lost job ${promptId} on ${server}: ${reason === 'unreachable' ? `no answer for ${Math.round(silentMs / 1000)} s` : 'the server no longer knows the job (it restarted?)'}`, options);
    this.promptId = promptId;
    this.server = server;
    this.reason = reason;
    this.silentMs = silentMs;
  }
}

/**
 * A `CloudPool` job that no server can take: every server lacks a class or a
 * model the workflow uses (checked before any upload or submission), or the
 * servers that could run it have not answered for the pool's
 * `serverLostAfter`. `reasons` says why, per server id.
 *
 * @example
 * ```ts
 * // PlacementError: No server can run this workflow: gpu-a: #4 TiledKSampler: this server has no node class "TiledKSampler" …; gpu-b: down (connect ECONNREFUSED)
 * for (const [server, why] of Object.entries(err.reasons)) console.log(server, why.join('; '));
 * ```
 */
export class PlacementError extends PlatformUIError {
  override name = 'PlacementError';
  /** Why each server cannot take the job, by server id. */
  readonly reasons: Readonly<Record<string, readonly string[]>>;
  constructor(reasons: Record<string, readonly string[]>, why = 'No server can run this workflow') {
    const shown = Object.entries(reasons).map(([id, r]) => `${id}: ${r.slice(0, 2).join('; ')}${r.length > 2 ? ` (+${r.length - 2} more)` : ''}`);
    super(`${why}${shown.length ? `: ${shown.join('; ')}` : ' (the pool has no servers)'}`);
    this.reasons = reasons;
  }
}

/**
 * `CloudPool.close()` ended this run: it was waiting in the pool's queue, or
 * the pool stopped following it (its job was cancelled on the server only
 * with `close({ cancel: true })`). `promptId` is set when the job existed.
 */
export class PoolClosedError extends PlatformUIError {
  override name = 'PoolClosedError';
  readonly promptId: string | undefined;
  constructor(promptId?: string, cancelled = false) {
    super(promptId ? `The pool closed; job ${promptId} ${cancelled ? 'was cancelled' : 'is no longer followed (it keeps running)'}` : 'The pool closed before this job was placed');
    this.promptId = promptId;
  }
}

/**
 * The caller's `AbortSignal` fired. `cause` is the signal's `reason` (an
 * `AbortError` `DOMException` unless the caller gave one). An aborted `run()`
 * rejects with it once its job is seen stopped; when the stop could not be
 * confirmed, `mayStillRun` is true and `stopError` says why.
 *
 * @example
 * ```ts
 * try { await cloud.run(workflow, { signal }); }
 * catch (err) { if (err instanceof APIUserAbortError && err.mayStillRun) console.log(`job ${err.promptId} may still run`, err.stopError); }
 * ```
 */
export class APIUserAbortError extends PlatformUIError {
  override name = 'APIUserAbortError';
  /** The job an aborted submission or run was about: its request may have been sent, so the job may exist. */
  readonly promptId: string | undefined;
  /** True when this abort tried to stop its job and could not see it stopped: the job may still run (and cost). */
  readonly mayStillRun: boolean;
  /** Why the stop was not confirmed (a {@link JobNotStoppedError}, or the error of a request of the stop); set with `mayStillRun`. */
  readonly stopError: unknown;
  constructor(message = 'Request was aborted', options?: { cause?: unknown; promptId?: string; stopError?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.promptId = options?.promptId;
    this.mayStillRun = options?.stopError !== undefined;
    this.stopError = options?.stopError;
  }
}

/**
 * `stopJob()` asked a local server without the atomic cancel to stop a job
 * (queue delete, then an interrupt while it runs) and did not see it stopped
 * within `confirmWithin` ms: the job may still run. `phase` is what the
 * server last showed (`pending` or `running`), `undefined` when no look was
 * answered in time.
 *
 * @example
 * ```ts
 * try { await local.stopJob(id, { confirmWithin: 5000 }); }
 * catch (err) { if (err instanceof JobNotStoppedError) console.log(`job ${err.promptId} still ${err.phase}`); }
 * ```
 */
export class JobNotStoppedError extends PlatformUIError {
  override name = 'JobNotStoppedError';
  readonly promptId: string;
  readonly phase: 'pending' | 'running' | undefined;
  readonly confirmWithin: number;
  constructor(promptId: string, phase: 'pending' | 'running' | undefined, confirmWithin: number, options?: { cause?: unknown }) {
    super(`Job ${promptId} ${phase ? `still ${phase}` : 'in a state not known'} ${confirmWithin} ms after it was asked to stop; it may still run`, options);
    this.promptId = promptId;
    this.phase = phase;
    this.confirmWithin = confirmWithin;
  }
}

/**
 * An argument was rejected before any request was sent.
 *
 * @example
 * ```ts
 * try { await proxy.enhanceSkinCreative({ image, sharpen: 120 }); }
 * catch (err) { if (err instanceof InvalidArgumentError) console.log(err.field); } // 'sharpen'
 * ```
 */
export class InvalidArgumentError extends PlatformUIError {
  override name = 'InvalidArgumentError';
  /** Dotted path of the offending field (`'sharpen'`, `'advanced_settings.engine'`), when one field is at fault. */
  readonly field: string | undefined;
  /** Validation issues, when a schema produced them. */
  readonly issues: readonly SchemaIssue[] | undefined;
  constructor(message: string, field?: string, issues?: readonly SchemaIssue[], options?: { cause?: unknown }) {
    super(field ? `${field}: ${message}` : message, options);
    this.field = field;
    this.issues = issues;
  }
}

/** A method needs a credential (token or API key) and none is configured. Thrown before any request. */
export class MissingCredentialsError extends InvalidArgumentError {
  override name = 'MissingCredentialsError';
}

/**
 * One validation problem, in zod's issue shape: `code` (`invalid_type`,
 * `too_small`, `invalid_value`, `unrecognized_keys`, …), the `path` to the
 * value, and a one-line `message` saying what was given and what is allowed
 * (`must be an integer of at least 1, got -1`). Issues may carry more members
 * (`expected`, `minimum`, `values`, `keys`), much as zod names them.
 */
export interface SchemaIssue {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * The server answered 2xx with data of the wrong type (a string where a number
 * belongs). Unknown fields and unknown enum values never cause this.
 */
export class ResponseValidationError extends PlatformUIError {
  override name = 'ResponseValidationError';
  /** Every problem found, each with its `path` and a one-line `message` (zod's issue shape). */
  readonly issues: readonly SchemaIssue[];
  /** The raw, unvalidated body. */
  readonly body: unknown;
  /** HTTP method. */
  readonly method: string;
  /** Request URL, secrets redacted. */
  readonly url: string;
  constructor(method: string, url: string, issues: readonly SchemaIssue[], body: unknown) {
    const first = issues[0];
    const where = first ? ` at ${first.path.map(String).join('.') || '(root)'}: ${first.message}` : '';
    super(`Off-spec response from ${method} ${url}${where}${issues.length > 1 ? ` (+${issues.length - 1} more)` : ''}`);
    this.issues = issues;
    this.body = body;
    this.method = method;
    this.url = url;
  }
}

/**
 * A workflow has errors that the server's `object_info` reveals, found
 * before anything was sent (`submit(workflow, { validate: true })`, `run`
 * likewise). `issues` holds every one, warnings included; the message names
 * the first errors:
 * `workflow: 2 errors: #3 KSampler: sampler_name: must be one of "euler", …, got "eulr" (did you mean "euler"?); #9 SaveImage: filename_prefix: is required (a string)`.
 */
export class WorkflowValidationError extends InvalidArgumentError {
  override name = 'WorkflowValidationError';
  /** Every issue found: errors and warnings, each naming its node and input. */
  override readonly issues: readonly WorkflowIssue[];
  constructor(issues: readonly WorkflowIssue[]) {
    const errors = issues.filter((i) => i.severity === 'error');
    const shown = errors.slice(0, 3).map((i) => i.message);
    const more = errors.length > shown.length ? `; … (+${errors.length - shown.length} more: see err.issues)` : '';
    super(`${errors.length} error${errors.length === 1 ? '' : 's'}: ${shown.join('; ')}${more}`, 'workflow', issues);
    this.issues = issues;
  }
}

/**
 * `POST /api/prompt` answered with an `error` (whatever the HTTP status). The
 * message names the first few nodes at fault and why:
 * `Submission rejected (400): Prompt outputs failed validation — SaveImage #2: filename_prefix: Required input is missing`.
 */
export class SubmissionError extends PlatformUIError {
  override name = 'SubmissionError';
  /** The `error` member as the server sent it (wire names: `{ type, message, details, extra_info }` on a local server). */
  readonly error: unknown;
  /**
   * `node_errors` as the server sent it (wire names), when it is of the known
   * shape: node id → `{ errors: [{ type, message, details, extra_info }], dependent_outputs, class_type }`.
   * Anything else stays in {@link body}.
   */
  readonly nodeErrors: NodeErrors | undefined;
  /** The whole response body (wire names). */
  readonly body: unknown;
  /** HTTP status of the response. */
  readonly status: number;
  /** The id the submission was sent with (a rejected workflow created no job by it); on Comfy API v2, its Idempotency-Key. */
  readonly promptId: string | undefined;
  /** Comfy API v2's reason (`invalid_workflow`, `workflow_format_ui`, `missing_asset`, `deployment_stopped`, …). Absent elsewhere. */
  declare readonly code?: string;
  constructor(status: number, body: Record<string, unknown>, promptId?: string, code?: string) {
    const e = body.error;
    const text =
      typeof e === 'string' ? e : e && typeof e === 'object' ? describeWireError(e as Record<string, unknown>) ?? JSON.stringify(e) : JSON.stringify(e);
    const nodes = describeNodeErrors(body.node_errors);
    super(`Submission rejected (${status}): ${text}${nodes ? ` — ${nodes}` : ''}`);
    this.error = e;
    // Typed only when it is of the known shape: a malformed body must not make a typed lie.
    this.nodeErrors = isNodeErrors(body.node_errors) ? body.node_errors : undefined;
    this.body = body;
    this.status = status;
    this.promptId = promptId;
    if (code !== undefined) (this as { code?: string }).code = code;
  }
}

/**
 * The shape `NodeErrors` promises, checked by hand: this module is in every
 * bundle, and importing the cloud schemas here would put them in a registry-only one.
 */
function isNodeErrors(v: unknown): v is NodeErrors {
  return (
    isObject(v) &&
    Object.values(v).every(
      (node) =>
        isObject(node) &&
        Array.isArray(node.errors) &&
        node.errors.every((e) => isObject(e) && typeof e.type === 'string' && typeof e.message === 'string' && optString(e.details) && (e.extra_info === undefined || isObject(e.extra_info))) &&
        optString(node.class_type) &&
        (node.dependent_outputs === undefined || (Array.isArray(node.dependent_outputs) && node.dependent_outputs.every((o) => typeof o === 'string')))
    )
  );
}

const SUBMISSION_NODES_SHOWN = 3;
const SUBMISSION_ERRORS_PER_NODE = 2;
const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** `{ type, message, details }` → `message (details)`; details that only repeat are left out. */
function describeWireError(e: Record<string, unknown>): string | undefined {
  const message = str(e.message) ?? str(e.type);
  if (!message) return undefined;
  const details = str(e.details);
  return clip(details && details !== message ? `${message} (${details})` : message, 240);
}

/** One `node_errors[id].errors[i]`: `input: message (details)`. */
function describeNodeErrorItem(item: unknown): string | undefined {
  if (!item || typeof item !== 'object') return undefined;
  const it = item as Record<string, unknown>;
  const extra = it.extra_info && typeof it.extra_info === 'object' ? (it.extra_info as Record<string, unknown>) : {};
  const input = str(extra.input_name);
  const message = str(it.message) ?? str(it.type);
  let details = str(it.details);
  if (details && input && details.startsWith(`${input} - `)) details = details.slice(input.length + 3);
  if (details === input || details === message) details = undefined;
  const text = [message, details && `(${details})`].filter(Boolean).join(' ');
  if (!text) return undefined;
  return clip(input ? `${input}: ${text}` : text, 160);
}

/** `SaveImage #2: filename_prefix: Required input is missing; …; and N more nodes` (bounded). */
function describeNodeErrors(nodeErrors: unknown): string | undefined {
  if (!nodeErrors || typeof nodeErrors !== 'object' || Array.isArray(nodeErrors)) return undefined;
  const ids = Object.keys(nodeErrors).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  if (ids.length === 0) return undefined;
  const parts = ids.slice(0, SUBMISSION_NODES_SHOWN).map((id) => {
    const entry = (nodeErrors as Record<string, unknown>)[id];
    const node = entry && typeof entry === 'object' ? (entry as Record<string, unknown>) : {};
    const label = `${str(node.class_type) ?? 'node'} #${id}`;
    const items = (Array.isArray(node.errors) ? node.errors : []).map(describeNodeErrorItem).filter((x): x is string => x !== undefined);
    if (items.length === 0) return label;
    const extra = items.length - SUBMISSION_ERRORS_PER_NODE;
    return `${label}: ${items.slice(0, SUBMISSION_ERRORS_PER_NODE).join(', ')}${extra > 0 ? ` (+${extra} more)` : ''}`;
  });
  const rest = ids.length - SUBMISSION_NODES_SHOWN;
  if (rest > 0) parts.push(`and ${rest} more node${rest === 1 ? '' : 's'}`);
  return parts.join('; ');
}

/** The six `exception_type` values of the spec (`EXCEPTION_TYPES`); others are kept as strings. */
export type ExceptionType = ExceptionTypeValue;

/**
 * A job ended with `execution_error` (or status `failed`). The error's own
 * members are camelCase; `data` is the wire payload, unchanged (snake_case).
 *
 * @example
 * ```ts
 * catch (err) { if (err instanceof ExecutionError) console.log(err.nodeType, err.exceptionType, err.exceptionMessage, err.data); }
 * ```
 */
export class ExecutionError extends PlatformUIError {
  override name = 'ExecutionError';
  /** The job that failed (`data.prompt_id`). */
  readonly promptId: string;
  /** `data.exception_type`: one of six known values, or another string, when the server said. */
  readonly exceptionType: ExceptionType | undefined;
  /** `data.exception_message`: the server's human-readable message. */
  readonly exceptionMessage: string | undefined;
  /** `data.traceback`: the server's traceback (a list of lines, or a string). */
  readonly traceback: unknown;
  /** `data.node_id`: the node that failed, when the server said. */
  readonly nodeId: string | undefined;
  /** `data.node_type`: the class of the node that failed, when the server said. */
  readonly nodeType: string | undefined;
  /** The whole `execution_error` payload as the server sent it (wire names), when there was one. */
  readonly data: unknown;
  constructor(promptId: string, data?: Record<string, unknown>) {
    const type = str(data?.exception_type);
    const msg = typeof data?.exception_message === 'string' ? data.exception_message : undefined;
    const nodeId = str(data?.node_id);
    const nodeType = str(data?.node_type);
    const where = nodeId !== undefined ? ` in ${nodeType ?? 'node'} #${nodeId}` : '';
    super(`Job ${promptId} failed${where}${type ? `: ${type}` : ''}${msg?.trim() ? `: ${clip(msg.trim(), 500)}` : ''}`);
    this.promptId = promptId;
    this.exceptionType = type;
    this.exceptionMessage = msg;
    this.traceback = data?.traceback;
    this.nodeId = nodeId;
    this.nodeType = nodeType;
    this.data = data;
  }
}

/** A job was cancelled (`execution_interrupted` or status `cancelled`). */
export class JobCancelledError extends PlatformUIError {
  override name = 'JobCancelledError';
  /** The job that was cancelled. */
  readonly promptId: string;
  /** The `execution_interrupted` payload as the server sent it (wire names), when there was one. */
  readonly data: unknown;
  constructor(promptId: string, data?: Record<string, unknown>) {
    super(`Job ${promptId} was cancelled`);
    this.promptId = promptId;
    this.data = data;
  }
}

/**
 * A Comfy API v2 job ended `expired`: the server no longer has it (its
 * retention passed, it was dequeued, or the server behind a proxy restarted).
 * Read twice before it is believed (a proxy can report a job that just
 * finished as `expired` for one poll). Final, like a failure.
 *
 * @example
 * ```ts
 * catch (err) { if (err instanceof JobExpiredError) console.log(`job ${err.promptId} is gone from the server`); }
 * ```
 */
export class JobExpiredError extends PlatformUIError {
  override name = 'JobExpiredError';
  /** The job (its v2 id). */
  readonly promptId: string;
  constructor(promptId: string) {
    super(`Job ${promptId} expired: the server no longer has it (retention passed, dequeued, or the server behind the proxy restarted)`);
    this.promptId = promptId;
  }
}

/**
 * A Comfy API v2 submission whose `Idempotency-Key` the server has seen
 * already (`422 idempotency_key_reuse`): a job exists under this key (an
 * earlier send whose answer was lost, or another process with the same
 * key), and the server let the SDK find neither it nor its id (no job list,
 * no labels). Nothing was sent twice. Find the job in the server's console,
 * or submit under a new key.
 *
 * @example
 * ```ts
 * catch (err) { if (err instanceof JobExistsError) console.log(`a job exists under key ${err.idempotencyKey}`); }
 * ```
 */
export class JobExistsError extends PlatformUIError {
  override name = 'JobExistsError';
  /** The `Idempotency-Key` the job was submitted under (the run's `promptId` option, or the one the SDK chose). */
  readonly idempotencyKey: string;
  constructor(idempotencyKey: string, why: string) {
    super(`A job exists under Idempotency-Key ${idempotencyKey} (this server answered idempotency_key_reuse), but its id could not be found: ${why}. It was not submitted again`);
    this.idempotencyKey = idempotencyKey;
  }
}

/**
 * A method this kind of server has no equivalent for (Comfy API v2 has no
 * queue listing, no account-wide interrupt, no `object_info`, no history),
 * thrown before any request. The message says what to use instead.
 *
 * @example
 * ```ts
 * try { await v2.getQueue(); } catch (err) { if (err instanceof UnsupportedError) console.log(err.server, err.instead); }
 * ```
 */
export class UnsupportedError extends InvalidArgumentError {
  override name = 'UnsupportedError';
  /** The kind of server (`'v2'`). */
  readonly server: string;
  /** The method that was called. */
  readonly method: string;
  /** What to use instead. */
  readonly instead: string;
  constructor(server: string, method: string, instead: string) {
    super(`${method} has no equivalent on a ${server === 'v2' ? 'Comfy API v2' : server} server: ${instead}`);
    this.server = server;
    this.method = method;
    this.instead = instead;
  }
}

/** A binary WebSocket frame could not be decoded; `field` names what was wrong. */
export class FrameDecodeError extends PlatformUIError {
  override name = 'FrameDecodeError';
  /** The field whose length or value was wrong (`'event_type'`, `'metadata_len'`, `'node_id_len'`, …). */
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
  }
}

/**
 * `download()` could not reach the file without risking the API key: the
 * `/api/view` redirect had no `location`, pointed to a plain-http origin other
 * than loopback, or was opaque (browsers hide manual redirects).
 */
export class DownloadError extends PlatformUIError {
  override name = 'DownloadError';
  /** What went wrong: `'missing_location'`, `'insecure_location'`, `'opaque_redirect'`, `'unexpected_status'`. */
  readonly reason: 'missing_location' | 'insecure_location' | 'opaque_redirect' | 'unexpected_status';
  constructor(reason: DownloadError['reason'], message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * A proxy task followed by `waitForTask()` (or a `…AndWait()` call) ended
 * `FAILED`. `task` is the record the proxy answered, unknown fields kept.
 *
 * @example
 * ```ts
 * try { await proxy.waitForTask('image-relight', id); }
 * catch (err) { if (err instanceof TaskFailedError) console.log(err.taskId, err.task.status); }
 * // TaskFailedError: Task 3f1c… (image-relight) ended FAILED
 * ```
 */
export class TaskFailedError extends PlatformUIError {
  override name = 'TaskFailedError';
  /** The task's id. */
  readonly taskId: string;
  /** The operation it was read under (`'image-relight'`, `'skin-enhancer'`, …). */
  readonly operation: string;
  /** The task record as the proxy answered it. */
  readonly task: { task_id: string; status: string; generated?: string[] };
  constructor(operation: string, task: { task_id: string; status: string; generated?: string[] }) {
    super(`Task ${task.task_id} (${operation}) ended ${task.status}`);
    this.taskId = task.task_id;
    this.operation = operation;
    this.task = task;
  }
}

/**
 * `waitForTask()` reached its `timeout` (a deadline for the whole wait, not
 * for one request) before the task ended. The task itself keeps running on
 * the proxy: wait again with the same id to pick it up. Not about one HTTP
 * request, and no {@link APIConnectionError} (since 0.2): the task is still running.
 *
 * @example
 * ```ts
 * try { await proxy.waitForTask('image-relight', id, { timeout: 60_000 }); }
 * catch (err) { if (err instanceof TaskTimeoutError) console.log(err.taskId, err.task?.status); }
 * // TaskTimeoutError: Task 3f1c… (image-relight) did not finish within 60000 ms (last status IN_PROGRESS); it may still be running
 * ```
 */
export class TaskTimeoutError extends PlatformUIError {
  override name = 'TaskTimeoutError';
  /** The task's id. */
  readonly taskId: string;
  /** The operation it was read under. */
  readonly operation: string;
  /** The deadline that ran out, in ms. */
  readonly timeout: number;
  /** The last record read before the deadline, if any was. */
  readonly task: { task_id: string; status: string; generated?: string[] } | undefined;
  constructor(operation: string, taskId: string, ms: number, task?: { task_id: string; status: string; generated?: string[] }) {
    super(`Task ${taskId} (${operation}) did not finish within ${ms} ms (${task ? `last status ${task.status}` : 'no status read yet'}); it may still be running`);
    this.taskId = taskId;
    this.operation = operation;
    this.timeout = ms;
    this.task = task;
  }
}

/**
 * The proxy knows no task with this id under any operation asked
 * (`confirmNotification()`): the notification was forged, replayed from
 * another account, or is for an operation the SDK did not try.
 *
 * @example
 * ```ts
 * try { await proxy.confirmNotification(body); }
 * catch (err) { if (err instanceof TaskNotFoundError) res.writeHead(403).end(); }
 * ```
 */
export class TaskNotFoundError extends PlatformUIError {
  override name = 'TaskNotFoundError';
  /** The id the notification named. */
  readonly taskId: string;
  /** The operations it was looked up under, in order. */
  readonly operations: readonly string[];
  constructor(taskId: string, operations: readonly string[], options?: { cause?: unknown }) {
    super(`No task ${taskId} under ${operations.join(', ')}: notification not confirmed`, options);
    this.taskId = taskId;
    this.operations = operations;
  }
}

/**
 * The version was created but its archive did not reach the signed URL.
 * Posting again would be refused as a duplicate: retry the upload alone with
 * `registry.uploadNodeVersionArchive(err.signedUrl, archive)`.
 * (`signedUrl` is not enumerable, so logging the error does not show it.)
 */
export class NodeVersionUploadError extends PlatformUIError {
  override name = 'NodeVersionUploadError';
  /** The version the registry created. */
  readonly nodeVersion: NodeVersion;
  declare readonly signedUrl: string;
  constructor(nodeVersion: NodeVersion, signedUrl: string, cause: unknown) {
    super(
      `Version ${nodeVersion.version ?? '?'} was created, but uploading its archive failed (${cause instanceof Error ? cause.message : String(cause)}); retry the upload alone with registry.uploadNodeVersionArchive(err.signedUrl, archive): publishing again would be refused as a duplicate`,
      { cause },
    );
    this.nodeVersion = nodeVersion;
    Object.defineProperty(this, 'signedUrl', { value: signedUrl, enumerable: false });
  }
}
