/**
 * The one transport under all three clients: base URL, credentials,
 * timeouts, retries and hooks over `fetch`. Beside it, by concern: one
 * attempt (`attempt.ts`), the retry decision (`retry.ts`), what a failure
 * becomes (`to-error.ts`: never an error that carries the request's
 * headers, DESIGN §7), the URL (`url.ts`), the configuration (`config.ts`).
 *
 * It is `fetch` and a loop, not ky: ky weighed 8.7 KB min+gz of a 15 KB
 * browser budget, and built a `Request` and merged options on every call
 * (issue 9). What the SDK used of it is here: the retry policy with
 * backoff, jitter and `Retry-After`, a per-attempt timeout, and the hooks.
 *
 * @module
 */
import { type APIConnectionError, type APITimeoutError, type APIUserAbortError, MissingCredentialsError, PlatformUIError, ResponseValidationError } from '../errors.ts';
import { checkOptions } from '../args.ts';
import { article } from '../schemas/describe.ts';
import type { Rule } from '../schemas/rule.ts';
import { validateLater } from '../schemas/validate-later.ts';
import { checkTimeout, fromEnv, HOOKS, resolveRetry, type Credential, type Hooks, type RequestOptions, type ResolvedRetry } from './options.ts';
import { guardBody } from './body.ts';
import { createLog, describeError, errorDetails, nextRequestId, type Log } from './log.ts';
import type { WithResponse } from './promise.ts';
import { redactUrl, scrub } from './redact.ts';
import { mayResend } from './resend.ts';
import { sleep } from './sleep.ts';
import { describeCause, toError, type Failure, type ServiceKind } from './to-error.ts';
import { tryOnce, AttemptTimeout, HttpFailure, NetworkFailure, parseBody } from './attempt.ts';
import { retryDelay } from './retry.ts';
import { appendQuery, checkBaseUrl, type Query } from './url.ts';
import type { AuthScheme, TransportConfig } from './config.ts';

export { BEARER_SERVICE, type AuthScheme, type TransportConfig } from './config.ts';

/** A request body other than JSON. (Not `BodyInit`: that name exists only with the DOM lib.) */
export type RequestBody = FormData | Blob | ReadableStream<Uint8Array> | string;

export type { Query } from './url.ts';

/** One request, as a client method describes it. */
export interface RequestSpec {
  method: 'GET' | 'HEAD' | 'POST' | 'DELETE';
  /** Path below the base URL, already encoded (see {@link path}). */
  path: string;
  query?: Query | undefined;
  /** JSON body. */
  json?: unknown;
  /** Any other body (multipart `FormData`, a stream). */
  body?: RequestBody | undefined;
  /** Extra request headers decided by the method (e.g. a multipart content type). */
  headers?: Record<string, string> | undefined;
  /** Whether the endpoint takes the client's credential. Without it, no credential header is sent at all. */
  auth: boolean;
  /** Schema of the JSON response; when absent the body is returned unparsed-but-JSON (or undefined when empty). */
  schema?: Rule | undefined;
  /**
   * Turns the parsed body into what `schema` checks (another server's shape
   * into the spec's); may throw a {@link ResponseValidationError}.
   */
  normalize?: ((data: unknown) => unknown) | undefined;
  options?: RequestOptions | undefined;
  /** Use this fetch instead of the client's (Node uploads; see `Platform.uploadFetch`). Ignored when the caller gave the client its own `fetch`. */
  fetch?: typeof globalThis.fetch | undefined;
  /** `'manual'` returns a 3xx (or a browser's opaque redirect) instead of following it. */
  redirect?: 'manual' | undefined;
  /** The request starts paid work: never sent twice, whatever `retry.allowPost` says (see {@link mayResend}). */
  paid?: boolean | undefined;
}

const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'cookie', 'proxy-authorization'];

export { path } from './path.ts';

/** The HTTP core shared by the clients. */
export class Transport {
  readonly service: ServiceKind;
  readonly baseUrl: string;
  readonly validate: boolean;
  /** This client's log: the socket, `run()` and the downloads write to it too. */
  readonly log: Log;
  readonly #hooks: Hooks | undefined;
  readonly #retry: ResolvedRetry;
  readonly #timeout: number | false;
  readonly #headers: Record<string, string>;
  readonly #credential: Credential | undefined;
  readonly #scheme: AuthScheme;
  readonly #credentialName: string;
  readonly #credentialEnv: string | undefined;
  readonly #credentialOptional: boolean;
  readonly #credentialHint: string;
  readonly #noCredentialHint: string | undefined;
  /** The bare fetch, for requests that must carry nothing of the client (signed URLs). */
  readonly fetch: typeof globalThis.fetch;
  readonly #customFetch: boolean;
  /** The last credential value resolved: scrubbed from anything an error shows. */
  #secrets: string[] = [];

  constructor(config: TransportConfig) {
    const o = config.options;
    checkTimeout(o.timeout);
    const baseUrl = checkBaseUrl(o.baseUrl, config.baseUrlEnv);
    this.service = config.service;
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.validate = o.validate !== false;
    this.log = createLog(o, () => this.#secrets);
    this.#retry = resolveRetry(o.retry);
    this.#timeout = o.timeout ?? 60_000;
    this.#headers = lowerKeys(o.headers);
    this.#credential = config.credential ?? (config.credentialEnv ? fromEnv(config.credentialEnv) : undefined);
    this.#scheme = config.authScheme;
    this.#credentialName = config.credentialName;
    this.#credentialEnv = config.credentialEnv;
    this.#credentialOptional = config.credentialOptional ?? false;
    this.#credentialHint = config.credentialHint ?? '';
    this.#noCredentialHint = config.noCredentialHint;
    if (typeof this.#credential === 'string') this.#secrets = [this.#credential];
    this.fetch = o.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#customFetch = o.fetch !== undefined;
    const h = o.hooks;
    checkOptions(h, HOOKS, 'hooks', 'hooks.');
    this.#hooks = h && (h.beforeRequest?.length || h.afterResponse?.length || h.beforeRetry?.length) ? h : undefined;
  }

  /** Schemas whose mismatch (with `validate: false`) was already warned about. */
  readonly #warned = new Set<Rule>();

  /** Values to scrub from anything shown to users. */
  get secrets(): readonly string[] {
    return this.#secrets;
  }

  /** Adds a value (e.g. a partner API key sent in a body) to those scrubbed from errors. */
  rememberSecret(value: string): void {
    if (!this.#secrets.includes(value)) this.#secrets = [value, ...this.#secrets].slice(0, 8);
  }

  /** Whether a credential was configured (option or environment); it is not resolved. */
  get hasCredential(): boolean {
    return this.#credential !== undefined;
  }

  /**
   * The credential to send, or `undefined` when none is configured and the
   * client may go without (a local server). Throws {@link MissingCredentialsError}
   * before any request when one is needed and missing.
   */
  async optionalCredential(): Promise<string | undefined> {
    return this.#credential === undefined && this.#credentialOptional ? undefined : this.credential();
  }

  /** Resolves the credential, or throws {@link MissingCredentialsError} before any request. */
  async credential(): Promise<string> {
    const c = this.#credential;
    const name = this.#credentialName;
    let value: unknown;
    try {
      value = typeof c === 'function' ? await c() : c;
    } catch (err) {
      if (err instanceof PlatformUIError) throw err;
      const detail = err instanceof Error ? err.message : String(err);
      throw new MissingCredentialsError(`the ${name} function failed: ${scrub(detail, this.#secrets)}`, name, undefined, { cause: err });
    }
    if (typeof value !== 'string' || value === '') {
      const where = this.#credentialEnv ? `pass it to the client or set ${this.#credentialEnv} in Node` : 'pass it to the client';
      throw new MissingCredentialsError(`this call needs ${article(name)}; ${where}${this.#credentialHint}`, name);
    }
    this.rememberSecret(value);
    // A header value with CR/LF would make fetch throw a TypeError quoting it.
    if (/[\r\n\0]/.test(value)) throw new MissingCredentialsError('contains characters not allowed in a header (CR, LF or NUL)', name);
    return value;
  }

  /** The full URL of a path, secrets redacted: what errors and logs show. */
  displayUrl(p: string, query?: Query): string {
    const u = new URL(`${this.baseUrl}/${p}`);
    if (query) appendQuery(u.searchParams, query);
    return redactUrl(u);
  }

  /** Sends a request and returns the validated JSON body together with the response. */
  async request<T>(spec: RequestSpec): Promise<WithResponse<T>> {
    const requestId = nextRequestId();
    try {
      return await this.#request<T>(spec, requestId);
    } catch (err) {
      throw this.#handedOver(requestId, spec, err);
    }
  }

  /**
   * Sends a request and returns the unread `Response` (2xx only; other
   * statuses throw): for bodies read as a stream. Its body fails with
   * {@link APITimeoutError} when a read waits `timeout` ms for bytes.
   */
  async send(spec: RequestSpec): Promise<Response> {
    const requestId = nextRequestId();
    try {
      const { response } = await this.#exchange(spec, false, requestId);
      const opts = spec.options ?? {};
      return this.#guard(response, requestId, { method: spec.method, shown: this.displayUrl(spec.path, spec.query) }, opts.timeout ?? this.#timeout, opts.signal);
    } catch (err) {
      throw this.#handedOver(requestId, spec, err);
    }
  }

  /**
   * A 2xx body with the idle timeout (see {@link guardBody}): no bytes for
   * `timeout` ms while a read waits is an {@link APITimeoutError}, a cut
   * connection an {@link APIConnectionError}, the caller's abort an
   * {@link APIUserAbortError}, whichever HTTP path carried the request.
   */
  #guard(res: Response, requestId: string, spec: { method: string; shown: string }, timeout: number | false, signal: AbortSignal | undefined): Response {
    if (!res.ok) return res;
    const { method, shown } = spec;
    const request = { method, url: shown, service: this.service, secrets: this.#secrets };
    const fail = (failure: Failure | PlatformUIError) =>
      this.#handedOver(requestId, spec, signal?.aborted ? toError({ ...request, kind: 'abort', reason: signal.reason }) : failure instanceof PlatformUIError ? failure : toError(failure));
    return guardBody(res, {
      timeout,
      idle: () => fail({ ...request, kind: 'timeout', timeout }),
      failed: (cause) => fail(cause instanceof PlatformUIError ? cause : { ...request, kind: 'network', cause }),
    });
  }

  async #request<T>(spec: RequestSpec, requestId: string): Promise<WithResponse<T>> {
    const { response, text } = await this.#exchange(spec, true, requestId);
    let data: unknown;
    if (text !== '') {
      try {
        data = JSON.parse(text);
      } catch {
        throw new ResponseValidationError(spec.method, this.displayUrl(spec.path, spec.query), [{ code: 'invalid_json', path: [], message: 'Response is not JSON' }], scrub(text.slice(0, 2000), this.#secrets));
      }
    }
    if (spec.normalize) data = spec.normalize(data);
    if (spec.schema) await this.#checkResponse(spec.schema, data, spec, requestId);
    return { data: data as T, response };
  }

  /**
   * Checks a response body against its schema: with `validate` on, a
   * mismatch throws {@link ResponseValidationError}. With it off, the body
   * passes through and the mismatch is a warning, once per schema (later
   * ones at debug: a server off the spec is so on every call): where, and
   * what was expected, never the value found, which is a piece of the body.
   */
  async #checkResponse(schema: Rule, data: unknown, spec: RequestSpec, requestId: string): Promise<void> {
    if (this.validate) {
      const result = await validateLater(schema, data);
      if (result.ok) return;
      // A message quotes the value it complains about, which may be a credential the server echoed.
      const issues = result.issues.map((i) => ({ ...i, message: scrub(i.message, this.#secrets) as string }));
      throw new ResponseValidationError(spec.method, this.displayUrl(spec.path, spec.query), issues, scrub(data, this.#secrets));
    }
    const line = this.#warned.has(schema) ? this.log.debug : this.log.warn;
    if (!line) return;
    let result: Awaited<ReturnType<typeof validateLater>>;
    try {
      result = await validateLater(schema, data);
    } catch {
      return; // validation is off: nothing about it may fail the call
    }
    if (result.ok) return;
    this.#warned.add(schema);
    const url = this.displayUrl(spec.path, spec.query);
    const issues = result.issues.slice(0, 10).map((i) => ({ path: i.path.join('.'), expected: i.message.replace(/, got [\s\S]*$/, '') }));
    line(`${spec.method} ${url}: the response does not match the schema; passed through (validate: false)`, { requestId, method: spec.method, url, issues, issueCount: result.issues.length });
  }

  /** An error on its way to the caller, logged once at debug: the caller decides whether it matters. */
  #handedOver(requestId: string, spec: RequestSpec | { method: string; shown: string }, error: unknown): unknown {
    this.log.debug?.(`${spec.method} ${'shown' in spec ? spec.shown : this.displayUrl(spec.path, spec.query)} failed: ${describeError(error)}`, { requestId, method: spec.method, ...errorDetails(error) });
    return error;
  }

  /** The request with its retries; with `read`, the body is read as text inside each attempt, under its timeout. */
  async #exchange(spec: RequestSpec, read: boolean, requestId: string): Promise<{ response: Response; text: string }> {
    const opts = spec.options ?? {};
    checkTimeout(opts.timeout);
    const retry = resolveRetry(opts.retry, this.#retry);
    const headers = { ...this.#headers, ...lowerKeys(opts.headers), ...spec.headers };
    // Unauthenticated endpoints get no credential at all, even one a caller put in default headers.
    if (!spec.auth) for (const h of CREDENTIAL_HEADERS) delete headers[h];
    // On the others the SDK's credential replaces the caller's header of that name; without one (keyless, local) the caller's own go as they are,
    // and are scrubbed like the SDK's own from anything shown (a relay that echoes its token).
    else for (const h of CREDENTIAL_HEADERS) if (headers[h]) this.rememberSecret(headers[h].replace(/^(bearer|basic|token)\s+/i, ''));
    const value = spec.auth ? await this.optionalCredential() : undefined;
    if (value !== undefined) {
      if (this.#scheme === 'bearer') headers.authorization = `Bearer ${value}`;
      else headers['x-api-key'] = value;
    }
    const signal = opts.signal;
    if (signal?.aborted) throw toError({ kind: 'abort', reason: signal.reason, method: spec.method, url: this.displayUrl(spec.path, spec.query), service: this.service });
    const timeout = opts.timeout ?? this.#timeout;
    let url = `${this.baseUrl}/${spec.path}`;
    if (spec.query) {
      const q = new URLSearchParams();
      appendQuery(q, spec.query);
      const text = q.toString();
      if (text) url += `?${text}`;
    }
    let body = spec.body;
    if (spec.json !== undefined) {
      body = JSON.stringify(spec.json);
      headers['content-type'] ??= 'application/json';
    }
    const init: RequestInit = {
      method: spec.method,
      headers,
      // fetch would carry X-API-Key (and a 307's body) to wherever a redirect points.
      ...(spec.redirect || spec.auth ? { redirect: 'manual' } : {}),
      ...(body !== undefined ? { body } : {}),
      ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
    };
    // A paid request and a stream (consumed by its first attempt) are never sent again.
    const limit = mayResend({ method: spec.method, paid: spec.paid === true, allowPost: retry.allowPost, streamBody: body instanceof ReadableStream }) ? retry.limit : 0;
    const fetchFn = spec.fetch && !this.#customFetch ? spec.fetch : this.fetch;
    // A manual redirect is an answer here (a browser's is opaque: status 0), not a failure.
    const ok = spec.redirect ? (s: number) => s === 0 || (s >= 200 && s < 400) : (s: number) => s >= 200 && s < 300;
    const log = this.log;
    for (let attempt = 0; ; attempt++) {
      let failure: unknown;
      const started = log.debug ? Date.now() : 0;
      try {
        const r = await tryOnce(url, init, fetchFn, { hooks: this.#hooks, signal, timeout, retryCount: attempt, ok, read });
        log.debug?.(...this.#attemptLine(requestId, spec.method, this.displayUrl(spec.path, spec.query), attempt, started, r.response.status));
        if (ok(r.response.status)) return r;
        failure = new HttpFailure(r.response, parseBody(r.text));
      } catch (err) {
        failure = err;
        log.debug?.(...this.#attemptLine(requestId, spec.method, this.displayUrl(spec.path, spec.query), attempt, started, err instanceof AttemptTimeout ? `timed out after ${timeout} ms` : err instanceof NetworkFailure ? describeCause(err.cause) : signal?.aborted ? 'aborted' : 'failed'));
      }
      // A caller who aborted gets no retry, and no warning of one (fetch may reject with their reason, not an AbortError).
      const wait = attempt < limit && !signal?.aborted ? retryDelay(failure, retry, attempt, this.service) : undefined;
      const error = this.#mapError(failure, spec, signal, timeout);
      if (wait === undefined) throw error;
      if (log.warn) {
        const status = failure instanceof HttpFailure ? failure.response.status : undefined;
        const reason = status === undefined ? describeCause((failure as NetworkFailure).cause) : `HTTP ${status}`;
        const after = failure instanceof HttpFailure ? failure.response.headers.get('retry-after') : null;
        const shown = this.displayUrl(spec.path, spec.query);
        log.warn(`${spec.method} ${shown}: ${reason}; retrying in ${Math.round(wait)} ms (attempt ${attempt + 2} of ${limit + 1})`, {
          requestId,
          method: spec.method,
          url: shown,
          attempt: attempt + 1,
          reason,
          ...(status !== undefined ? { status } : {}),
          ...(after !== null ? { retryAfter: after } : {}),
          delayMs: Math.round(wait),
        });
      }
      await sleep(wait, signal);
      // Errors a hook throws are the caller's own: they propagate as they are.
      const cause = error instanceof Error ? error : new Error(String(error));
      for (const hook of this.#hooks?.beforeRetry ?? []) await hook({ request: new Request(url, { method: spec.method, headers }), error: cause, retryCount: attempt + 1 });
    }
  }

  /** The debug line of one attempt: `GET https://…/api/nodes → 200 in 12 ms (req_1)`. */
  #attemptLine(requestId: string, method: string, url: string, attempt: number, started: number, outcome: number | string, note = ''): [string, Record<string, unknown>] {
    const durationMs = Date.now() - started;
    const again = attempt > 0 ? `, attempt ${attempt + 1}` : '';
    return [
      `${method} ${url} → ${outcome} in ${durationMs} ms (${requestId}${again}${note})`,
      { requestId, method, url, ...(typeof outcome === 'number' ? { status: outcome } : { error: outcome }), durationMs, attempt: attempt + 1 },
    ];
  }


  /**
   * A bare request to a URL outside the service (a signed download or
   * upload URL): a GET, or a PUT of `send.body`; no header but `send`'s, no
   * credential, no hook, no cookie, redirects followed. Never retried. The
   * timeout covers the wait for the headers, then each wait for the body's
   * next bytes (not the whole body). Errors and log lines show the URL with
   * its signature redacted.
   */
  async fetchElsewhere(target: URL, options: RequestOptions = {}, send?: { method: 'PUT'; body: Blob | ReadableStream<Uint8Array>; headers: Record<string, string> }): Promise<Response> {
    checkTimeout(options.timeout);
    const user = options.signal;
    const method = send?.method ?? 'GET';
    const spec = { method, shown: redactUrl(target) };
    const request = { method, url: spec.shown, service: this.service, secrets: this.#secrets };
    const requestId = nextRequestId();
    if (user?.aborted) throw this.#handedOver(requestId, spec, toError({ ...request, kind: 'abort', reason: user.reason }));
    const timeout = options.timeout ?? this.#timeout;
    // A timer cleared once the headers are in, so a long body is not cut off (AbortSignal.timeout would stay armed); the body has its idle timeout.
    const timer = new AbortController();
    let handle = timeout === false ? undefined : setTimeout(() => timer.abort(), timeout);
    const signal = user ? AbortSignal.any([user, timer.signal]) : timer.signal;
    const started = Date.now();
    let res: Response;
    try {
      // `credentials: 'omit'` keeps a browser's cookies home; redirects are followed with nothing added.
      const body = send ? { body: send.body, headers: send.headers, ...(send.body instanceof ReadableStream ? { duplex: 'half' } : {}) } : {};
      res = await this.fetch(target, { method, credentials: 'omit', redirect: 'follow', signal, ...body } as RequestInit);
    } catch (err) {
      clearTimeout(handle);
      const failure: Failure = user?.aborted
        ? { ...request, kind: 'abort', reason: user.reason }
        : timer.signal.aborted
          ? { ...request, kind: 'timeout', timeout }
          : { ...request, kind: 'network', cause: err };
      throw this.#handedOver(requestId, spec, toError(failure));
    }
    clearTimeout(handle);
    this.log.debug?.(...this.#attemptLine(requestId, method, spec.shown, 0, started, res.status, ', no credentials'));
    if (res.ok) return this.#guard(res, requestId, spec, timeout, user);
    // An error body is read for its message, bounded like the transport's own.
    handle = setTimeout(() => timer.abort(), 10_000);
    const body = parseBody(await res.text().catch(() => ''));
    clearTimeout(handle);
    throw this.#handedOver(requestId, spec, toError({ ...request, kind: 'status', status: res.status, body, headers: res.headers }));
  }

  /** What one attempt failed with, as the caller sees it (see {@link toError}): never the cause itself, which may hold the Request and its headers. */
  #mapError(err: unknown, spec: RequestSpec, signal: AbortSignal | undefined, timeout: number | false): unknown {
    if (err instanceof PlatformUIError) return err;
    const request = { method: spec.method, url: this.displayUrl(spec.path, spec.query), service: this.service, secrets: this.#secrets };
    if (signal?.aborted) return toError({ ...request, kind: 'abort', reason: signal.reason });
    if (err instanceof HttpFailure) {
      const status = err.response.status;
      // Without it, a 401 from a server that wants a key reads like a wrong key (issue 32).
      const hint = status === 401 && spec.auth && this.#credential === undefined ? this.#noCredentialHint : undefined;
      return toError({ ...request, kind: 'status', status, body: err.body, headers: err.response.headers, hint });
    }
    if (err instanceof AttemptTimeout) return toError({ ...request, kind: 'timeout', timeout });
    if (err instanceof NetworkFailure) return toError({ ...request, kind: 'network', cause: err.cause });
    // Anything else was thrown by the caller's own code (a hook, a custom fetch's bug): it is theirs, unchanged.
    return err;
  }
}

function lowerKeys(h: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (h) for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}


