/**
 * Options shared by the three clients and by every method, normalized once
 * per client.
 *
 * @module
 */
import { checkOptions, type OptionKeys } from '../args.ts';
import { describeValue } from '../schemas/describe.ts';
import { InvalidArgumentError } from '../errors.ts';
import type { LogOptions } from './log.ts';

/**
 * Hooks run around every attempt of every request (retries included), in
 * array order. Without hooks no `Request` object is built at all.
 *
 * @example
 * ```ts
 * const registry = new RegistryClient({
 *   hooks: {
 *     beforeRequest: [({ request }) => console.log(request.method, request.url)],
 *     afterResponse: [({ response, retryCount }) => console.log(response.status, retryCount)],
 *   },
 * });
 * ```
 */
export interface Hooks {
  /** Before the request is sent: return a `Request` to replace it, or a `Response` to answer it without the network. */
  beforeRequest?: Array<(state: { request: Request; retryCount: number }) => Request | Response | void | Promise<Request | Response | void>>;
  /** After each response (retries included): return a `Response` to replace it. The hook gets a clone; read its body before the hook returns (or begin to), else it is discarded. */
  afterResponse?: Array<(state: { request: Request; response: Response; retryCount: number }) => Response | void | Promise<Response | void>>;
  /** Before a retry, with the error that caused it. */
  beforeRetry?: Array<(state: { request: Request; error: Error; retryCount: number }) => void | Promise<void>>;
}

/** A credential: a string, or a function called before each request that needs it (sync or async). */
export type Credential = string | (() => string | Promise<string>);

/** How failed requests are repeated. */
export interface RetryOptions {
  /** Attempts after the first. Default 2. */
  limit?: number;
  /** Upper bound of one backoff delay, ms. Default 8000. */
  backoffLimit?: number;
  /** Upper bound of a server's `Retry-After`, ms; a longer one is capped to it. Default 60000. */
  maxRetryAfter?: number;
  /**
   * Also repeat requests that may have started paid work (job submissions,
   * proxy tasks). Off by default: a repeated POST can run and bill a job twice.
   */
  allowPost?: boolean;
}

/** Options accepted by every client constructor. */
export interface ClientOptions extends LogOptions {
  /** Service base URL. In Node, falls back to an environment variable named by each client. */
  baseUrl?: string;
  /** A `fetch` to use instead of the global one (tests, proxies, instrumentation). */
  fetch?: typeof globalThis.fetch;
  /**
   * Per-attempt timeout in ms, or `false` for none. Default 60000. A body
   * read as a stream (a download) is bounded per wait instead: no bytes for
   * this long fails the read with `APITimeoutError`.
   */
  timeout?: number | false;
  /** Retry policy, a retry limit, or `false` to never retry. */
  retry?: RetryOptions | number | false;
  /**
   * Headers added to every request. The client's own credential header
   * (`Authorization` or `X-API-Key`) replaces one of the same name when the
   * client sends a credential; without one (a keyless client behind its
   * relay, a local server) yours go as they are. Endpoints that take no
   * credential get none of `Authorization`, `X-API-Key`, `Cookie`,
   * `Proxy-Authorization`.
   */
  headers?: Record<string, string>;
  /** Hooks run on every request of this client. */
  hooks?: Hooks;
  /** Check responses against the schemas at runtime. Default `true`. */
  validate?: boolean;
}

/** Options accepted by every method as its last argument. */
export interface RequestOptions {
  /** Aborts the request (and, for `run()`, cancels the job). */
  signal?: AbortSignal;
  /** Per-attempt timeout in ms for this call (for a streamed body, the longest wait for its next bytes), or `false` for none. */
  timeout?: number | false;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
  /** Retry policy for this call; overrides the client's. */
  retry?: RetryOptions | number | false;
}

/** The keys of {@link ClientOptions}, for {@link checkOptions}. */
export const CLIENT_OPTIONS = { baseUrl: 1, fetch: 1, timeout: 1, retry: 1, headers: 1, hooks: 1, validate: 1, logLevel: 1, logger: 1 } as const satisfies OptionKeys<ClientOptions>;
/** The keys of {@link RequestOptions}. */
export const REQUEST_OPTIONS = { signal: 1, timeout: 1, headers: 1, retry: 1 } as const satisfies OptionKeys<RequestOptions>;
const RETRY_OPTIONS = { limit: 1, backoffLimit: 1, maxRetryAfter: 1, allowPost: 1 } as const satisfies OptionKeys<RetryOptions>;
/** The keys of {@link Hooks}. */
export const HOOKS = { beforeRequest: 1, afterResponse: 1, beforeRetry: 1 } as const satisfies OptionKeys<Hooks>;

/**
 * Refuses an unknown key of a method's {@link RequestOptions} (`tiemout`), naming the closest,
 * before any request: the check of every method that takes only these.
 *
 * @param where The method, for the message (`getJob()`).
 */
export function checkRequestOptions(options: unknown, where: string): void {
  checkOptions(options, REQUEST_OPTIONS, where);
}

/** The {@link RequestOptions} of a wider options object, without its other keys (for a method called on its behalf). */
export function requestOptionsOf(o: RequestOptions): RequestOptions {
  const { signal, timeout, headers, retry } = o;
  return { ...(signal ? { signal } : {}), ...(timeout !== undefined ? { timeout } : {}), ...(headers ? { headers } : {}), ...(retry !== undefined ? { retry } : {}) };
}

/** Normalized retry policy. */
export interface ResolvedRetry {
  limit: number;
  backoffLimit: number;
  maxRetryAfter: number;
  allowPost: boolean;
}

const RETRY_DEFAULTS: ResolvedRetry = { limit: 2, backoffLimit: 8000, maxRetryAfter: 60_000, allowPost: false };

/** Folds a retry option (number, object, `false`) over the defaults (or over a client's policy). */
export function resolveRetry(option: RetryOptions | number | false | undefined, base = RETRY_DEFAULTS): ResolvedRetry {
  if (option === undefined) return base;
  if (option === false) return { ...base, limit: 0 };
  const o = typeof option === 'number' ? { limit: option } : option;
  checkOptions(o, RETRY_OPTIONS, 'retry', 'retry.');
  if (o.limit !== undefined && !(Number.isInteger(o.limit) && o.limit >= 0)) {
    throw new InvalidArgumentError(`must be a non-negative integer, got ${describeValue(o.limit)}`, 'retry.limit');
  }
  return { ...base, ...Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) };
}

/** Rejects a timeout that is not a positive finite number (or `false`). */
export function checkTimeout(timeout: number | false | undefined, field = 'timeout'): void {
  if (timeout === false) return;
  checkInterval(timeout, field, ' or false');
}

/** Rejects an interval that is not a positive finite number of milliseconds (`false` is not one). */
export function checkInterval(ms: unknown, field: string, orElse = ''): void {
  if (ms === undefined) return;
  if (!(typeof ms === 'number' && Number.isFinite(ms) && ms > 0 && ms <= 2_147_483_647)) {
    throw new InvalidArgumentError(`must be a positive number of milliseconds (at most 2147483647)${orElse}, got ${describeValue(ms)}`, field);
  }
}

/**
 * Reads an environment variable in Node only: a browser bundle must never
 * pick up configuration from a `process` shim (DESIGN §3).
 */
export function fromEnv(name: string): string | undefined {
  const proc = (globalThis as { process?: { versions?: { node?: string }; env?: Record<string, string | undefined> } }).process;
  if (!proc?.versions?.node || 'document' in globalThis) return undefined;
  return proc.env?.[name] || undefined;
}
