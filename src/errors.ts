/**
 * The error hierarchy. Every error the SDK throws is a {@link PlatformUIError}.
 *
 * None of these classes holds a `Request`, a header or an unredacted URL: the
 * bearer token and the API key must never reach `message`, `stack`,
 * `JSON.stringify(err)` or `util.inspect(err)` (DESIGN §5, §7).
 *
 * @module
 */
import type { ExceptionTypeValue } from './schemas/events.ts';

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
}

/**
 * A non-2xx answer from a service. Subclassed per status (see {@link errorClassFor}).
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
    super(`${init.status} ${init.method} ${init.url}${detail || code ? ` — ${code}${detail}` : ''}`);
    this.status = init.status;
    this.error = error;
    this.body = body;
    this.method = init.method;
    this.url = init.url;
    this.retryAfter = init.headers?.get('retry-after') ?? undefined;
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

/** Which service a status is interpreted for: the cloud gives 429 another meaning. */
export type ServiceKind = 'registry' | 'proxy' | 'cloud';

/** The one status → class table. */
const STATUS_CLASSES: Record<number, typeof APIError> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: InsufficientCreditsError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  429: RateLimitError,
};

/** The {@link APIError} subclass that represents `status` on `service`. */
export function errorClassFor(status: number, service: ServiceKind = 'registry'): typeof APIError {
  if (status === 429 && service === 'cloud') return SubscriptionInactiveError;
  if (status >= 500) return InternalServerError;
  return STATUS_CLASSES[status] ?? APIError;
}

/** No answer: DNS failure, refused or reset connection, a proxy that hung up. */
export class APIConnectionError extends PlatformUIError {
  override name = 'APIConnectionError';
  /** HTTP method. */
  readonly method: string;
  /** Request URL, secrets redacted. */
  readonly url: string;
  constructor(method: string, url: string, message = 'Connection failed') {
    super(`${message}: ${method} ${url}`);
    this.method = method;
    this.url = url;
  }
}

/** The request (or a job, for `run()`) exceeded its timeout. */
export class APITimeoutError extends APIConnectionError {
  override name = 'APITimeoutError';
  constructor(method: string, url: string, ms?: number) {
    super(method, url, ms === undefined ? 'Timed out' : `Timed out after ${ms} ms`);
  }
}

/** The caller's `AbortSignal` fired. */
export class APIUserAbortError extends PlatformUIError {
  override name = 'APIUserAbortError';
  constructor(message = 'Request was aborted') {
    super(message);
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
  constructor(message: string, field?: string, issues?: readonly SchemaIssue[]) {
    super(field ? `${field}: ${message}` : message);
    this.field = field;
    this.issues = issues;
  }
}

/** A method needs a credential (token or API key) and none is configured. Thrown before any request. */
export class MissingCredentialsError extends InvalidArgumentError {
  override name = 'MissingCredentialsError';
}

/** A schema issue, as zod reports it (only the fields the SDK relies on). */
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
  /** The zod issues. */
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

/** `POST /api/prompt` answered with an `error` (whatever the HTTP status). */
export class SubmissionError extends PlatformUIError {
  override name = 'SubmissionError';
  /** The `error` member as the server sent it (its shape is not specified). */
  readonly error: unknown;
  /** `node_errors`, when the server sent them. */
  readonly nodeErrors: unknown;
  /** The whole response body. */
  readonly body: unknown;
  /** HTTP status of the response. */
  readonly status: number;
  constructor(status: number, body: Record<string, unknown>) {
    const e = body.error;
    const text =
      typeof e === 'string' ? e : e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string'
        ? (e as { message: string }).message
        : JSON.stringify(e);
    super(`Submission rejected (${status}): ${text}`);
    this.error = e;
    this.nodeErrors = body.node_errors;
    this.body = body;
    this.status = status;
  }
}

/** The six `exception_type` values of the spec (`EXCEPTION_TYPES`); others are kept as strings. */
export type ExceptionType = ExceptionTypeValue;

/** A job ended with `execution_error` (or status `failed`). */
export class ExecutionError extends PlatformUIError {
  override name = 'ExecutionError';
  /** The job that failed. */
  readonly prompt_id: string;
  /** The spec's `exception_type` (one of six known values, or another string), when the server said. */
  readonly exception_type: ExceptionType | undefined;
  /** The server's human-readable message. */
  readonly exception_message: string | undefined;
  /** The server's traceback (a list of lines, or a string). */
  readonly traceback: unknown;
  /** Id of the node that failed, when the server said. */
  readonly node_id: string | undefined;
  /** The whole `execution_error` payload, when there was one. */
  readonly data: unknown;
  constructor(promptId: string, data?: Record<string, unknown>) {
    const type = typeof data?.exception_type === 'string' ? data.exception_type : undefined;
    const msg = typeof data?.exception_message === 'string' ? data.exception_message : undefined;
    super(`Job ${promptId} failed${type ? `: ${type}` : ''}${msg ? `: ${msg}` : ''}`);
    this.prompt_id = promptId;
    this.exception_type = type;
    this.exception_message = msg;
    this.traceback = data?.traceback;
    this.node_id = typeof data?.node_id === 'string' ? data.node_id : undefined;
    this.data = data;
  }
}

/** A job was cancelled (`execution_interrupted` or status `cancelled`). */
export class JobCancelledError extends PlatformUIError {
  override name = 'JobCancelledError';
  /** The job that was cancelled. */
  readonly prompt_id: string;
  constructor(promptId: string) {
    super(`Job ${promptId} was cancelled`);
    this.prompt_id = promptId;
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
