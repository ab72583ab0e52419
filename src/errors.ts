/**
 * The shared error hierarchy. Every error the SDK throws is a {@link PlatformUIError}.
 *
 * None of these classes holds a `Request`, a header or an unredacted URL: the
 * bearer token and the API key must never reach `message`, `stack`,
 * `JSON.stringify(err)` or `util.inspect(err)` (DESIGN §5, §7).
 *
 * Here: the base, the answers by status, no answer, the caller's abort,
 * arguments refused before sending, off-spec answers. Errors of one feature
 * live with it (`cloud/job-errors.ts`, `cloud/submission-errors.ts`,
 * `cloud/pool/errors.ts`, `proxy/errors.ts`, `registry/errors.ts`,
 * `workflow/errors.ts`); the root entry exports them all. A failed request
 * becomes one of these in one place: `transport/to-error.ts`.
 *
 * @module
 */
/**
 * Base class of every error thrown by `@platformui/sdk`.
 *
 * Each class names itself (`static name`), which a minifier leaves alone: an error's `name` is its class's, and
 * `instanceof` holds for an error made by another copy of these classes: in a browser app, a file of this package
 * loaded on first use (following a job, Comfy API v2, …) is self-contained, so its errors are made by its own copy.
 *
 * @example
 * ```ts
 * try { await cloud.run(workflow); }
 * catch (err) { if (err instanceof PlatformUIError) console.log(err.name, err.message); }
 * ```
 */
export class PlatformUIError extends Error {
  static override name = 'PlatformUIError';

  override name = this.constructor.name;

  /**
   * `value instanceof C`, by the names of the classes `value` was made from: `C`'s among them, up to `PlatformUIError`.
   * An error made by another copy of these classes counts as one made by this copy (an `Error`, not any object: a
   * parsed `{ "constructor": … }` does not pass).
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    let named = false;
    let c: { name?: unknown } | null = value instanceof Error ? value.constructor : null;
    for (; c; c = Object.getPrototypeOf(c)) {
      named ||= c.name === this.name;
      if (c.name === 'PlatformUIError') return named;
    }
    return false;
  }

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
  static override name = 'APIError';
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
export class BadRequestError extends APIError { static override name = 'BadRequestError'; }
/** 401: invalid or missing credentials. */
export class AuthenticationError extends APIError { static override name = 'AuthenticationError'; }
/** 402 (cloud): insufficient credits. Never retried. */
export class InsufficientCreditsError extends APIError { static override name = 'InsufficientCreditsError'; }
/** 403: the credentials may not act on this resource. */
export class PermissionDeniedError extends APIError { static override name = 'PermissionDeniedError'; }
/** 404: not found. */
export class NotFoundError extends APIError { static override name = 'NotFoundError'; }
/** 409: conflict, e.g. a node id that already exists. */
export class ConflictError extends APIError { static override name = 'ConflictError'; }
/** 429 (registry and proxy): too many requests. Retried for safe methods, honouring `Retry-After`. */
export class RateLimitError extends APIError { static override name = 'RateLimitError'; }
/** 429 (cloud): the subscription is inactive. Never retried. */
export class SubscriptionInactiveError extends APIError { static override name = 'SubscriptionInactiveError'; }
/** 5xx: the service failed. */
export class InternalServerError extends APIError { static override name = 'InternalServerError'; }

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
  static override name = 'APIConnectionError';
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
  static override name = 'APITimeoutError';
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
  static override name = 'SocketRefusedError';
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
  static override name = 'APIUserAbortError';
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
  static override name = 'JobNotStoppedError';
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
  static override name = 'InvalidArgumentError';
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
  static override name = 'MissingCredentialsError';
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
  static override name = 'ResponseValidationError';
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
  static override name = 'UnsupportedError';
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
  static override name = 'FrameDecodeError';
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
  static override name = 'DownloadError';
  /** What went wrong: `'missing_location'`, `'insecure_location'`, `'opaque_redirect'`, `'unexpected_status'`. */
  readonly reason: 'missing_location' | 'insecure_location' | 'opaque_redirect' | 'unexpected_status';
  constructor(reason: DownloadError['reason'], message: string) {
    super(message);
    this.reason = reason;
  }
}
