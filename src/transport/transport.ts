/**
 * The one transport under all three clients: a ky instance per client with
 * base URL, credentials, timeouts, retries and hooks, and the single place
 * where ky's errors (which print credentials, DESIGN §7) become SDK errors.
 *
 * @module
 */
import ky, { isHTTPError, isNetworkError, isTimeoutError, type Hooks as KyHooks, type KyInstance } from 'ky';
import {
  APIConnectionError,
  type APIError,
  APITimeoutError,
  APIUserAbortError,
  InvalidArgumentError,
  MissingCredentialsError,
  PlatformUIError,
  ResponseValidationError,
  errorClassFor,
  type ServiceKind,
} from '../errors.ts';
import { article } from '../schemas/explain.ts';
import type { Rule } from '../schemas/rule.ts';
import { validate } from '../schemas/validate.ts';
import { checkTimeout, fromEnv, resolveRetry, type ClientOptions, type Credential, type RequestOptions, type ResolvedRetry } from './options.ts';
import type { WithResponse } from './promise.ts';
import { redactUrl, scrub } from './redact.ts';

/** How a client authenticates when an endpoint asks for it. */
export type AuthScheme = 'bearer' | 'apiKey';

/** What one client configures once. */
export interface TransportConfig {
  service: ServiceKind;
  /** Client-wide options. */
  options: ClientOptions;
  /** Environment variable that supplies the base URL when the options do not (Node only). */
  baseUrlEnv: string;
  credential: Credential | undefined;
  /** Environment variable that supplies the credential when the options do not (Node only); none when absent. */
  credentialEnv?: string | undefined;
  authScheme: AuthScheme;
  /** Name of the credential option, for error messages (`'token'`, `'apiKey'`). */
  credentialName: string;
  /** Without a configured credential, authenticated endpoints are sent without one (a local server) instead of failing. */
  credentialOptional?: boolean;
  /** Appended to the missing-credential message (e.g. how to reach a local server instead). */
  credentialHint?: string;
}

/** Where the registry and the proxy (one service, `{base_url}`) find their URL and Bearer token. */
export const BEARER_SERVICE = {
  baseUrlEnv: 'PLATFORMUI_BASE_URL',
  credentialEnv: 'PLATFORMUI_TOKEN',
  authScheme: 'bearer',
  credentialName: 'token',
} as const;

/** A request body other than JSON. (Not `BodyInit`: that name exists only with the DOM lib.) */
export type RequestBody = FormData | Blob | ReadableStream<Uint8Array> | string;

/** Query values; `undefined` entries are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** One request, as a client method describes it. */
export interface RequestSpec {
  method: 'GET' | 'POST' | 'DELETE';
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
  options?: RequestOptions | undefined;
  /** Use this fetch instead of the client's (Node uploads; see `Platform.uploadFetch`). Ignored when the caller gave the client its own `fetch`. */
  fetch?: typeof globalThis.fetch | undefined;
  /** `'manual'` returns a 3xx (or a browser's opaque redirect) instead of following it. */
  redirect?: 'manual' | undefined;
}

// 429 means "subscription inactive" on the cloud and 402 "insufficient credits":
// waiting does not fix either, so neither is ever retried there.
const FIVE_XX = Array.from({ length: 100 }, (_, i) => 500 + i);
const retryStatuses = (service: ServiceKind) => (service === 'cloud' ? [408, ...FIVE_XX] : [408, 429, ...FIVE_XX]);

const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'cookie', 'proxy-authorization'];

/**
 * Encodes each interpolated value as one path segment, so an id containing
 * `/`, `?` or `%` can never change the path.
 *
 * @example
 * ```ts
 * path`publishers/${id}/nodes`; // id 'a/b' → 'publishers/a%2Fb/nodes'
 * ```
 */
export function path(strings: TemplateStringsArray, ...values: string[]): string {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += encodeURIComponent(values[i]!) + (strings[i + 1] ?? '');
  return out;
}

/** The HTTP core shared by the clients. */
export class Transport {
  readonly service: ServiceKind;
  readonly baseUrl: string;
  readonly validate: boolean;
  readonly #ky: KyInstance;
  readonly #retry: ResolvedRetry;
  readonly #retryStatuses: number[];
  readonly #timeout: number | false;
  readonly #headers: Record<string, string>;
  readonly #credential: Credential | undefined;
  readonly #scheme: AuthScheme;
  readonly #credentialName: string;
  readonly #credentialEnv: string | undefined;
  readonly #credentialOptional: boolean;
  readonly #credentialHint: string;
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
    this.#retry = resolveRetry(o.retry);
    this.#retryStatuses = retryStatuses(config.service);
    this.#timeout = o.timeout ?? 60_000;
    this.#headers = lowerKeys(o.headers);
    this.#credential = config.credential ?? (config.credentialEnv ? fromEnv(config.credentialEnv) : undefined);
    this.#scheme = config.authScheme;
    this.#credentialName = config.credentialName;
    this.#credentialEnv = config.credentialEnv;
    this.#credentialOptional = config.credentialOptional ?? false;
    this.#credentialHint = config.credentialHint ?? '';
    if (typeof this.#credential === 'string') this.#secrets = [this.#credential];
    this.fetch = o.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#customFetch = o.fetch !== undefined;
    this.#ky = ky.create({
      prefix: this.baseUrl,
      ...(o.fetch ? { fetch: o.fetch } : {}),
      // Our hook types are a structural subset of ky's.
      ...(o.hooks ? { hooks: o.hooks as KyHooks } : {}),
    });
  }

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
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return redactUrl(u);
  }

  /** Sends a request and returns the validated JSON body together with the response. */
  async request<T>(spec: RequestSpec): Promise<WithResponse<T>> {
    const response = await this.send(spec);
    const timeout = spec.options?.timeout ?? this.#timeout;
    let text: string;
    try {
      text = await readText(response, timeout);
    } catch (err) {
      throw this.#mapError(err, spec, spec.options?.signal, timeout);
    }
    let data: unknown;
    if (text !== '') {
      try {
        data = JSON.parse(text);
      } catch {
        throw new ResponseValidationError(spec.method, this.displayUrl(spec.path, spec.query), [{ code: 'invalid_json', path: [], message: 'Response is not JSON' }], scrub(text.slice(0, 2000), this.#secrets));
      }
    }
    if (spec.schema && this.validate) {
      const result = validate(spec.schema, data);
      if (!result.ok) throw new ResponseValidationError(spec.method, this.displayUrl(spec.path, spec.query), result.issues, scrub(data, this.#secrets));
    }
    return { data: data as T, response };
  }

  /** Sends a request and returns the unread `Response` (2xx only; other statuses throw). */
  async send(spec: RequestSpec): Promise<Response> {
    const opts = spec.options ?? {};
    checkTimeout(opts.timeout);
    const retry = resolveRetry(opts.retry, this.#retry);
    const headers = { ...this.#headers, ...lowerKeys(opts.headers), ...spec.headers };
    // Unauthenticated endpoints get no credential at all, even one a caller put in default headers.
    for (const h of CREDENTIAL_HEADERS) if (!spec.auth || h === 'authorization' || h === 'x-api-key') delete headers[h];
    const value = spec.auth ? await this.optionalCredential() : undefined;
    if (value !== undefined) {
      if (this.#scheme === 'bearer') headers.authorization = `Bearer ${value}`;
      else headers['x-api-key'] = value;
    }
    if (opts.signal?.aborted) throw new APIUserAbortError(undefined, { cause: opts.signal.reason });
    const timeout = opts.timeout ?? this.#timeout;
    const statuses = this.#retryStatuses;
    const idempotent = spec.method !== 'POST' || retry.allowPost;
    try {
      return await this.#ky(spec.path, {
        method: spec.method,
        headers,
        ...(spec.query ? { searchParams: definedOnly(spec.query) } : {}),
        ...(spec.json !== undefined ? { json: spec.json } : {}),
        ...(spec.body !== undefined ? { body: spec.body } : {}),
        timeout,
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(spec.fetch && !this.#customFetch ? { fetch: spec.fetch } : {}),
        ...(spec.redirect
          ? { redirect: spec.redirect, throwHttpErrors: (s: number) => s !== 0 && (s < 200 || s >= 400) }
          : // fetch would carry X-API-Key (and a 307's body) to wherever a redirect points.
            spec.auth
            ? { redirect: 'manual' as const }
            : {}),
        retry: {
          limit: idempotent ? retry.limit : 0,
          methods: idempotent ? [spec.method.toLowerCase()] : [],
          statusCodes: statuses,
          afterStatusCodes: statuses,
          maxRetryAfter: retry.maxRetryAfter,
          backoffLimit: retry.backoffLimit,
          delay: (attempt) => 500 * 2 ** (attempt - 1),
          jitter: true,
        },
      });
    } catch (err) {
      throw this.#mapError(err, spec, opts.signal, timeout);
    }
  }

  /**
   * The {@link APIError} for a non-2xx response read outside ky (a signed
   * download URL): body parsed as JSON when it is JSON, secrets scrubbed.
   */
  async errorFromResponse(res: Response, method: string, url: string): Promise<APIError> {
    const text = await res.text().catch(() => '');
    let body: unknown = text;
    try {
      if (text) body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    const Cls = errorClassFor(res.status, this.service);
    return new Cls({ status: res.status, body: scrub(body, this.#secrets), method, url, headers: res.headers });
  }

  #mapError(err: unknown, spec: RequestSpec, signal: AbortSignal | undefined, timeout: number | false): PlatformUIError {
    const url = this.displayUrl(spec.path, spec.query);
    if (err instanceof PlatformUIError) return err;
    if (signal?.aborted) return new APIUserAbortError(undefined, { cause: signal.reason });
    if (isHTTPError(err)) {
      const Cls = errorClassFor(err.response.status, this.service);
      return new Cls({ status: err.response.status, body: scrub(err.data ?? '', this.#secrets), method: spec.method, url, headers: err.response.headers });
    }
    if (isTimeoutError(err) || err instanceof BodyTimeout) return new APITimeoutError(spec.method, url, timeout === false ? undefined : timeout);
    // Only the innermost cause's text is kept: ky's error holds the Request and its headers.
    const inner = isNetworkError(err) ? err.cause : err;
    const detail = inner instanceof Error ? describeCause(inner) : 'Connection failed';
    return new APIConnectionError(spec.method, url, scrub(detail, this.#secrets));
  }
}

/**
 * The base URL from the options or the environment: absolute http(s), and
 * without user name or password (fetch refuses such URLs, and they would show
 * in messages). The message never quotes a URL that carries userinfo.
 */
function checkBaseUrl(option: string | undefined, env: string): string {
  const value = option ?? fromEnv(env);
  const source = option === undefined && value !== undefined ? ` (from ${env})` : '';
  if (typeof value !== 'string' || value === '') {
    throw new InvalidArgumentError(`is required: pass it to the client or set ${env} in Node, got ${value === '' ? 'an empty string' : 'nothing'}`, 'baseUrl');
  }
  const parsed = URL.canParse(value) ? new URL(value) : undefined;
  // Checked on the text too, before anything quotes it: `user:pw@host` parses as scheme `user:`.
  const authority = value.replace(/^[a-z][a-z\d+.-]*:\/\//i, '').split(/[/?#]/)[0] ?? '';
  if (authority.includes('@') || (parsed && (parsed.username || parsed.password))) {
    throw new InvalidArgumentError(
      `must not contain a user name or password${source} (fetch cannot send them in a URL): pass the credential as an option or a header instead`,
      'baseUrl',
    );
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    // A malformed URL with an `@` may hold a password anywhere: neither echo it nor suggest a fix that would.
    if (value.includes('@')) throw new InvalidArgumentError(`must be an absolute http(s) URL${source} (the value is not shown: it contains "@")`, 'baseUrl');
    const fixed = !value.includes('://') && URL.canParse(`http://${value}`) ? new URL(`http://${value}`) : undefined;
    const hint = fixed?.hostname ? ` (did you mean ${JSON.stringify(redactUrl(fixed).replace(/\/$/, ''))}?)` : '';
    const shown = parsed ? redactUrl(parsed) : fixed ? redactUrl(fixed).slice('http://'.length).replace(/\/$/, '') : value;
    throw new InvalidArgumentError(`must be an absolute http(s) URL${source}, got ${JSON.stringify(shown.length > 60 ? `${shown.slice(0, 59)}…` : shown)}${hint}`, 'baseUrl');
  }
  return value;
}

function describeCause(e: Error): string {
  const cause = e.cause as { code?: unknown; message?: unknown } | undefined;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  return code ? `Connection failed (${code})` : `Connection failed (${e.message})`;
}

function lowerKeys(h: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (h) for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}

function definedOnly(q: Query): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(q)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * The body as text, under the same per-attempt timeout: ky's timeout covers
 * only the wait for the headers, and a server that stalls mid-body would
 * otherwise hang the call.
 */
async function readText(response: Response, timeout: number | false): Promise<string> {
  if (timeout === false) return response.text();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void response.body?.cancel().catch(() => undefined);
      reject(new BodyTimeout());
    }, timeout);
  });
  try {
    return await Promise.race([response.text(), stalled]);
  } finally {
    clearTimeout(timer);
  }
}

class BodyTimeout extends Error {}
