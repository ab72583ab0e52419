/**
 * The one place where a failed request becomes an SDK error (openai-node's
 * `APIError.generate`): an answer's status through one table to its class, no
 * answer in time to {@link APITimeoutError}, a failed connection to
 * {@link APIConnectionError}, the caller's abort to {@link APIUserAbortError}.
 * The transport's two paths (its own requests and `fetchElsewhere`) and
 * anything that stands for a server's answer (a job a local server does not
 * know) build their errors here, so the same failure reads the same wherever
 * it happened.
 *
 * @module
 */
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InsufficientCreditsError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  SubscriptionInactiveError,
} from '../errors.ts';
import { redactText, scrub } from './redact.ts';

/** Which service a status is interpreted for: the cloud gives 429 another meaning (Comfy API v2, `v2`, does not). */
export type ServiceKind = 'registry' | 'proxy' | 'cloud' | 'v2';

/** The one status → class table; any 5xx is an {@link InternalServerError}, any other status an {@link APIError}. */
const STATUS_CLASSES: Record<number, typeof APIError> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: InsufficientCreditsError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  429: RateLimitError,
};

/**
 * The {@link APIError} subclass that represents `status` on `service`.
 *
 * @example
 * ```ts
 * errorClassFor(404); // NotFoundError
 * errorClassFor(429, 'cloud'); // SubscriptionInactiveError (a rate limit elsewhere)
 * ```
 */
export function errorClassFor(status: number, service: ServiceKind = 'registry'): typeof APIError {
  if (status === 429 && service === 'cloud') return SubscriptionInactiveError;
  if (status >= 500) return InternalServerError;
  return STATUS_CLASSES[status] ?? APIError;
}


/** The request a failure is about, as errors show it. */
export interface FailedRequest {
  method: string;
  /** The request URL, secrets redacted. */
  url: string;
  service: ServiceKind;
  /** Values scrubbed from anything the error shows (the credential, a partner key sent in a body). */
  secrets?: readonly string[] | undefined;
}

/** What went wrong with one request, before it is an SDK error. */
export type Failure = FailedRequest &
  (
    | {
        /** The server answered with a status the request does not accept. */
        kind: 'status';
        status: number;
        /** The answer's body: JSON when it parsed, the text otherwise; `undefined` when empty. */
        body: unknown;
        /** The answer's headers (never the request's: they carry credentials). */
        headers?: Headers | undefined;
        /** What the client knows that the server could not say (ends the message). */
        hint?: string | undefined;
      }
    | { kind: 'timeout'; /** The timeout that ran out (ms), `false` when none was set. */ timeout: number | false }
    | { kind: 'network'; /** What fetch (or a body read) failed with: read for its text and code, never kept (it may hold the request). */ cause: unknown }
    | { kind: 'abort'; /** The caller's signal's reason. */ reason: unknown }
  );

/**
 * The SDK error for a failed request.
 *
 * @example
 * ```ts
 * toError({ kind: 'status', status: 404, body: { error: 'Job not found' }, method: 'GET', url, service: 'cloud' }); // NotFoundError
 * toError({ kind: 'network', cause: err, method: 'GET', url, service: 'registry' }); // APIConnectionError, `code` ECONNREFUSED…
 * ```
 */
export function toError(failure: Failure): APIError | APIConnectionError | APIUserAbortError {
  const { method, url, secrets = [] } = failure;
  switch (failure.kind) {
    case 'status': {
      const { status, headers, hint } = failure;
      return new (errorClassFor(status, failure.service))({ status, body: scrub(failure.body ?? '', secrets), method, url, headers, hint });
    }
    case 'timeout':
      return new APITimeoutError(method, url, failure.timeout === false ? undefined : failure.timeout);
    case 'network': {
      const cause = failure.cause;
      return new APIConnectionError(method, url, scrub(describeCause(cause), secrets), causeCode(cause), blockedPort(cause) ? { sent: 'no' } : {});
    }
    case 'abort':
      return new APIUserAbortError(undefined, { cause: failure.reason });
  }
}

/**
 * The system code of a failed request (`ECONNREFUSED`…), when it has one:
 * fetch puts it on the error's `cause`, node:http (the uploads of Node
 * streams) on the error itself.
 */
function causeCode(e: unknown): string | undefined {
  if (!(e instanceof Error)) return undefined;
  const code = (e.cause as { code?: unknown } | undefined)?.code ?? (e as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** fetch refused a port it blocks (1, 6000, …) before connecting: no code, only its inner message `bad port`. */
export const blockedPort = (e: unknown): boolean => e instanceof Error && (e.cause as Error | undefined)?.message === 'bad port';

/** A failed connection in a few words: `Connection failed (ECONNREFUSED)`, never the URL it may quote unredacted. */
export function describeCause(e: unknown): string {
  if (!(e instanceof Error)) return 'Connection failed';
  const code = causeCode(e);
  // Without a code, the reason is in undici's cause (`bad port`), not in its `fetch failed`.
  // A runtime's or a custom fetch's message may quote the URL, a signed one included.
  return `Connection failed (${code ?? redactText((blockedPort(e) ? (e.cause as Error) : e).message, 120)})`;
}
