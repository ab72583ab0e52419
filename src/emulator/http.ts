/**
 * A tiny router on `node:http`, shared by every service of the emulator
 * (registry, proxy, cloud). Each service module exports a function returning
 * `Route[]`; the router matches them, applies CORS, the request log and the
 * fault switches in one place, and turns thrown {@link HttpError}s into
 * ErrorResponse bodies.
 *
 * @module
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { SILENT, type Log } from '../transport/log.ts';
import { redactText, redactUrl } from '../transport/redact.ts';
import { createRandom } from './seed.ts';

/** Default cap of a request body read by {@link RequestContext.readJson}: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Default bound of the request log. */
export const REQUEST_LOG_LIMIT = 1000;

const STATUS_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  402: 'payment_required',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable_entity',
  429: 'too_many_requests',
  500: 'internal_error',
  502: 'bad_gateway',
  503: 'service_unavailable',
  504: 'gateway_timeout',
};

/** The `error` code the emulator uses for a status when no more specific one applies. */
export function errorCodeFor(status: number): string {
  return STATUS_CODES[status] ?? (status >= 500 ? 'server_error' : 'error');
}

/**
 * Thrown by handlers (and the body readers) to answer with an ErrorResponse
 * `{ error, message }`. Anything else thrown becomes a 500.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Readonly<Record<string, string>>;

  /**
   * @param status HTTP status to answer with.
   * @param message The ErrorResponse `message` member.
   * @param code The ErrorResponse `error` member; defaults to a name derived from the status.
   * @param headers Extra response headers (e.g. `WWW-Authenticate`, `Allow`).
   */
  constructor(status: number, message: string, code: string = errorCodeFor(status), headers: Readonly<Record<string, string>> = {}) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

/** What a handler receives. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Upper-case method; HEAD is routed as GET and keeps `HEAD` here. */
  readonly method: string;
  /** Raw (still percent-encoded) pathname, without the query. */
  readonly path: string;
  /** Path parameters, each percent-decoded exactly once. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** The matched route. */
  readonly route: Route;
  /** `http://host:port` as the client addressed it, for absolute URLs in responses. */
  readonly origin: string;
  /**
   * Reads the body as JSON. `undefined` when the body is empty. Throws
   * {@link HttpError} 415 for a non-JSON content type, 400 for malformed
   * JSON, 413 beyond the route's `bodyLimit`.
   */
  readJson(): Promise<unknown>;
  /** Reads the raw body (multipart uploads and the like), bounded by `limit` (default: the route's `bodyLimit`). */
  readBody(limit?: number): Promise<Buffer>;
}

/** A route handler. It must answer through `ctx.res` (see {@link sendJson}) or throw. */
export type Handler = (ctx: RequestContext) => void | Promise<void>;

/** One entry of the route table. */
export interface Route {
  /** HTTP method, upper case. */
  readonly method: string;
  /** Path pattern; `:name` segments are parameters matching exactly one (encoded) segment. */
  readonly path: string;
  readonly handler: Handler;
  /** Body size cap in bytes; default {@link DEFAULT_BODY_LIMIT}. */
  readonly bodyLimit?: number;
  /** `false` exempts the route from the fault switches (e.g. a control endpoint). */
  readonly faults?: boolean;
}

/** One recorded request, as the client sent it. */
export interface RecordedRequest {
  readonly method: string;
  /** Raw pathname (percent-encoding kept). */
  readonly path: string;
  /** Raw request target, query included. */
  readonly url: string;
  /** Lower-cased header names, as Node parses them. */
  readonly headers: IncomingHttpHeaders;
  /** `Date.now()` at arrival. */
  readonly time: number;
}

/** Selects which requests a fault applies to. */
export interface FaultMatch {
  /** Only this method (case-insensitive). */
  method?: string;
  /**
   * A route pattern as registered (`'/publishers/:publisherId/nodes'`), a
   * concrete raw path (`'/nodes/search'`), or a RegExp tested against the raw path.
   */
  path?: string | RegExp;
}

/** Options of {@link Faults.next}. */
export interface NextFaultOptions extends FaultMatch {
  /** Sets `Retry-After` (seconds or an HTTP date). */
  retryAfter?: number | string;
  /**
   * Response body. Objects are sent as JSON; a string is sent as-is (with
   * `contentType`, default `text/plain`) to mimic off-spec gateways. Default:
   * an ErrorResponse for the status.
   */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

/** The probabilistic / counted 5xx switch. */
export interface Status5xxFault extends FaultMatch {
  /** Answer this many matching requests with the fault, then switch off. */
  count?: number;
  /** Or answer each matching request with this probability (0..1), seeded PRNG. */
  probability?: number;
  /** Status to answer with; default 503. */
  status?: number;
  /** `Retry-After` value in seconds; default 1; `null` omits the header. */
  retryAfter?: number | null;
}

/** A one-shot fault waiting in `Faults.queue` (from `next()`, `drop()`, `loseAnswer()`): the next matching request gets it. */
export interface QueuedFault extends NextFaultOptions {
  status: number;
  drop: boolean;
  /** The handler does its work; its answer is then lost (`status` 0: the connection is cut; else that status is answered instead). */
  loseAnswer?: boolean;
}

/**
 * Mutable fault switches, consulted by the router for every request except
 * CORS preflights and routes registered with `faults: false`. Order: latency,
 * then the one-shot queue, then `status5xx`.
 */
export class Faults {
  /** Delay added before every request is handled. */
  latencyMs = 0;
  /** Counted or probabilistic 5xx answers with `Retry-After`; `null` is off. */
  status5xx: Status5xxFault | null = null;
  /** Pending one-shot faults, first match wins. */
  readonly queue: QueuedFault[] = [];
  /** PRNG used for `status5xx.probability`; seeded so runs repeat. */
  random: () => number;

  constructor(init: { latencyMs?: number; status5xx?: Status5xxFault | null; seed?: number } = {}) {
    this.latencyMs = init.latencyMs ?? 0;
    this.status5xx = init.status5xx ?? null;
    this.random = createRandom(init.seed ?? 0x5eed);
  }

  /**
   * Makes the next matching request answer `status` instead of reaching its
   * handler. Calls queue up: `faults.next(503).next(503)` fails two requests.
   */
  next(status: number, options: NextFaultOptions = {}): this {
    this.queue.push({ ...options, status, drop: false });
    return this;
  }

  /** Makes the next matching request lose its connection without any response. */
  dropNext(match: FaultMatch = {}): this {
    this.queue.push({ ...match, status: 0, drop: true });
    return this;
  }

  /**
   * Lets the next matching request do its work (a submission creates its
   * job) and then loses the answer: the connection is cut before any byte of
   * it, or, with `status`, that status (a 5xx from a gateway) is answered
   * instead. What a client sees when a response is lost on the way back.
   */
  loseAnswerNext(match: FaultMatch & { status?: number } = {}): this {
    this.queue.push({ ...match, status: match.status ?? 0, drop: false, loseAnswer: true });
    return this;
  }

  /** Switches every fault off. */
  reset(): void {
    this.latencyMs = 0;
    this.status5xx = null;
    this.queue.length = 0;
  }

  /** @internal Picks the fault for one request, consuming it. */
  take(method: string, path: string, pattern: string | undefined): QueuedFault | undefined {
    const index = this.queue.findIndex((f) => faultMatches(f, method, path, pattern));
    if (index >= 0) return this.queue.splice(index, 1)[0];
    const s = this.status5xx;
    if (!s || !faultMatches(s, method, path, pattern)) return undefined;
    if (s.count !== undefined) {
      if (s.count <= 0) return undefined;
      s.count -= 1;
      if (s.count === 0) this.status5xx = null;
    } else if (s.probability === undefined || this.random() >= s.probability) {
      return undefined;
    }
    const retryAfter = s.retryAfter === undefined ? 1 : s.retryAfter;
    return { status: s.status ?? 503, drop: false, ...(retryAfter === null ? {} : { retryAfter }) };
  }
}

function faultMatches(f: FaultMatch, method: string, path: string, pattern: string | undefined): boolean {
  if (f.method && f.method.toUpperCase() !== method) return false;
  if (f.path === undefined) return true;
  if (f.path instanceof RegExp) return f.path.test(path);
  return f.path === pattern || f.path === path;
}

/** Writes a JSON response. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = Buffer.from(JSON.stringify(body), 'utf8');
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(payload.length),
  });
  res.end(payload);
}

/** Writes an ErrorResponse `{ error, message }`. */
export function sendError(
  res: ServerResponse,
  status: number,
  error: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { error, message }, headers);
}

/** Writes a text response (`text/plain` unless `contentType` says otherwise), e.g. the local server's `404: Not Found`. */
export function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}, contentType = 'text/plain; charset=utf-8'): void {
  const payload = Buffer.from(text, 'utf8');
  res.writeHead(status, { ...headers, 'Content-Type': contentType, 'Content-Length': String(payload.length) });
  res.end(payload);
}

/** Writes a bodiless response (204 and friends). */
export function sendEmpty(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, headers);
  res.end();
}

const BASE_ALLOW_HEADERS = ['Authorization', 'X-API-Key', 'Content-Type'];

function applyCors(req: IncomingMessage, res: ServerResponse): void {
  const origin = req.headers.origin;
  res.setHeader('Access-Control-Allow-Origin', origin ?? '*');
  if (origin) res.setHeader('Vary', 'Origin');
  res.setHeader('Access-Control-Expose-Headers', 'Location, Retry-After');
}

function answerPreflight(req: IncomingMessage, res: ServerResponse): void {
  // Echo what the browser asks for on top of the base list, so callers that
  // add their own headers (the SDK's `headers` option) are not blocked.
  const requested = (req.headers['access-control-request-headers'] ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  const allow = [...new Set([...BASE_ALLOW_HEADERS, ...requested])];
  res.writeHead(204, {
    'Access-Control-Allow-Methods': 'GET, POST, DELETE, PUT, OPTIONS',
    'Access-Control-Allow-Headers': allow.join(', '),
    'Access-Control-Max-Age': '600',
    'Content-Length': '0',
  });
  res.end();
}

interface CompiledRoute {
  route: Route;
  segments: Array<{ literal: string } | { param: string }>;
}

function compile(route: Route): CompiledRoute {
  const segments = route.path
    .split('/')
    .slice(1)
    .map((s): { literal: string } | { param: string } => (s.startsWith(':') ? { param: s.slice(1) } : { literal: s }));
  return { route: { ...route, method: route.method.toUpperCase() }, segments };
}

/** Splits `req.url` into raw pathname and raw query without normalising either. */
function splitTarget(target: string): { path: string; search: string } {
  let rest = target;
  // Absolute-form targets (sent through proxies) carry scheme and authority.
  if (!rest.startsWith('/')) {
    const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(rest);
    rest = m ? rest.slice(m[0].length) || '/' : '/' + rest;
  }
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const q = rest.indexOf('?');
  return q >= 0 ? { path: rest.slice(0, q), search: rest.slice(q + 1) } : { path: rest, search: '' };
}

/**
 * What a 404 for a path no route serves says instead of `No route for …`: a
 * message (in the usual ErrorResponse), a `text/plain` body as some server
 * sends it, or `undefined` for the default; `segments` are the decoded path
 * segments.
 */
export type MissingRouteHint = (method: string, path: string, segments: readonly string[]) => string | { text: string } | undefined;

/** Whether one of `routes` serves `method` on `segments` (decoded path segments); compiles once. */
export function routeMatcher(routes: readonly Route[]): (method: string, segments: readonly string[]) => boolean {
  const compiled = routes.map(compile);
  return (method, segments) => compiled.some((c) => c.route.method === method && matchSegments(c, segments) !== undefined);
}

/** The route table plus the cross-cutting request handling. */
export class Router {
  readonly #routes: CompiledRoute[] = [];
  #hint: MissingRouteHint | undefined;
  /** Bounded log of every request received (oldest first). Clear with `requests.length = 0`. */
  readonly requests: RecordedRequest[] = [];

  readonly faults: Faults;
  readonly requestLogLimit: number;
  readonly #log: Log;

  /** @param log Where each request's line goes (debug) and a handler's crash (error); nowhere by default. */
  constructor(faults: Faults, requestLogLimit: number = REQUEST_LOG_LIMIT, log: Log = SILENT) {
    this.faults = faults;
    this.requestLogLimit = requestLogLimit;
    this.#log = log;
  }

  /** Registers routes; later registrations of the same method and pattern lose to earlier ones. */
  add(routes: Iterable<Route>): this {
    for (const r of routes) this.#routes.push(compile(r));
    return this;
  }

  /** Sets what the 404 of an unserved path says (e.g. which emulator personality serves it). */
  explainMissing(hint: MissingRouteHint): this {
    this.#hint = hint;
    return this;
  }

  /** The registered routes. */
  get routes(): Route[] {
    return this.#routes.map((c) => c.route);
  }

  /** The `node:http` request listener. */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    const log = this.#log;
    if (log.debug) {
      const started = Date.now();
      res.once('close', () => {
        const target = redactTarget(req.url ?? '/');
        const method = (req.method ?? 'GET').toUpperCase();
        const status = res.headersSent ? res.statusCode : 0;
        log.debug?.(`${method} ${target} → ${status || 'no answer'} in ${Date.now() - started} ms`, { method, url: target, status, durationMs: Date.now() - started });
      });
    }
    this.#handle(req, res).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy(err instanceof Error ? err : undefined);
        return;
      }
      if (err instanceof HttpError) {
        sendError(res, err.status, err.code, err.message, { ...err.headers });
      } else {
        // An emulator bug: the client sees a 500, the operator only this line. A client that went
        // away mid-body is no bug (its request just ends), so that is debug.
        const gone = req.destroyed || res.destroyed || (err as { code?: unknown } | null)?.code === 'ECONNRESET';
        const message = redactText(err instanceof Error ? err.message : String(err));
        (gone ? this.#log.debug : this.#log.error)?.(`${(req.method ?? 'GET').toUpperCase()} ${redactTarget(req.url ?? '/')}: ${gone ? 'the client went away' : 'the handler threw'}: ${message}`, {
          method: req.method,
          url: redactTarget(req.url ?? '/'),
          error: err instanceof Error ? err.name : typeof err,
          message,
        });
        sendError(res, 500, 'internal_error', err instanceof Error ? err.message : 'Internal error');
      }
    });
  };

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const target = req.url ?? '/';
    const { path, search } = splitTarget(target);
    this.requests.push({ method, path, url: target, headers: { ...req.headers }, time: Date.now() });
    if (this.requests.length > this.requestLogLimit) this.requests.splice(0, this.requests.length - this.requestLogLimit);

    applyCors(req, res);
    if (method === 'OPTIONS') {
      answerPreflight(req, res);
      return;
    }

    const raw = path.split('/').slice(1);
    let segments: string[];
    try {
      segments = raw.map((s) => decodeURIComponent(s));
    } catch {
      throw new HttpError(400, `Malformed percent-encoding in path ${path}`);
    }

    const lookup = method === 'HEAD' ? 'GET' : method;
    let matched: { compiled: CompiledRoute; params: Record<string, string> } | undefined;
    const allowed = new Set<string>();
    for (const compiled of this.#routes) {
      const params = matchSegments(compiled, segments);
      if (!params) continue;
      if (compiled.route.method === lookup) {
        matched ??= { compiled, params };
      } else {
        allowed.add(compiled.route.method);
      }
    }

    if (matched?.compiled.route.faults !== false) {
      const latency = this.faults.latencyMs;
      if (latency > 0) await new Promise((r) => setTimeout(r, latency).unref());
      const fault = this.faults.take(method, path, matched?.compiled.route.path);
      if (fault?.loseAnswer) loseAnswer(res, fault.status);
      else if (fault) {
        injectFault(req, res, fault);
        return;
      }
    }

    if (!matched) {
      if (allowed.size > 0) {
        const allow = [...allowed, 'OPTIONS'].join(', ');
        throw new HttpError(405, `Method ${method} is not allowed on ${path}`, 'method_not_allowed', { Allow: allow });
      }
      const hint = this.#hint?.(lookup, path, segments);
      if (typeof hint === 'object') return sendText(res, 404, hint.text);
      throw new HttpError(404, hint ?? `No route for ${method} ${path}`);
    }

    const route = matched.compiled.route;
    const limit = route.bodyLimit ?? DEFAULT_BODY_LIMIT;
    const host = req.headers.host ?? `${req.socket.localAddress ?? '127.0.0.1'}:${req.socket.localPort ?? 0}`;
    const ctx: RequestContext = {
      req,
      res,
      method,
      path,
      params: matched.params,
      query: new URLSearchParams(search),
      headers: req.headers,
      route,
      origin: `http://${host}`,
      readBody: (max = limit) => readBody(req, res, max),
      readJson: () => readJson(req, res, limit),
    };
    await route.handler(ctx);
  }
}

/** The handler's answer never arrives: the connection is cut when it starts, or `status` goes out instead. */
function loseAnswer(res: ServerResponse, status: number): void {
  const own = Object.getPrototypeOf(res) as ServerResponse;
  let done = false;
  const instead = () => {
    if (!done) {
      done = true;
      if (status === 0) res.socket?.destroy();
      else {
        const body = JSON.stringify({ error: 'bad_gateway', message: 'The upstream answer was lost' });
        own.writeHead.call(res, status, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) });
        (own.end as (chunk: string) => ServerResponse).call(res, body);
      }
    }
    return res;
  };
  res.writeHead = res.write = res.end = instead as never;
}

function matchSegments(compiled: CompiledRoute, segments: readonly string[]): Record<string, string> | undefined {
  if (compiled.segments.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const want = compiled.segments[i];
    const got = segments[i];
    if (want === undefined || got === undefined) return undefined;
    if ('param' in want) {
      if (got === '') return undefined;
      params[want.param] = got;
    } else if (want.literal !== got) {
      return undefined;
    }
  }
  return params;
}

function injectFault(req: IncomingMessage, res: ServerResponse, fault: QueuedFault): void {
  if (fault.drop) {
    req.socket.destroy();
    return;
  }
  const headers: Record<string, string> = { ...fault.headers };
  if (fault.retryAfter !== undefined) headers['Retry-After'] = String(fault.retryAfter);
  if (typeof fault.body === 'string') {
    sendText(res, fault.status, fault.body, headers, fault.contentType);
  } else if (fault.status === 204 || fault.status === 304) {
    sendEmpty(res, fault.status, headers);
  } else {
    const body = fault.body ?? { error: errorCodeFor(fault.status), message: `Injected fault: ${fault.status}` };
    sendJson(res, fault.status, body, headers);
  }
}

async function readBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  const tooLarge = () => {
    // The rest of the body stays unread, so this connection cannot be reused.
    res.setHeader('Connection', 'close');
    return new HttpError(413, `Request body exceeds ${limit} bytes`);
  };
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function readJson(req: IncomingMessage, res: ServerResponse, limit: number): Promise<unknown> {
  const body = await readBody(req, res, limit);
  if (body.length === 0) return undefined;
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(type)) {
    throw new HttpError(415, `Expected Content-Type application/json, got ${type || 'none'}`);
  }
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, 'Request body is not valid JSON', 'invalid_json');
  }
}

/** A boolean query parameter: absent or empty is false, `true`/`false` as written, anything else a 400. */
export function booleanParam(query: URLSearchParams, name: string): boolean {
  const raw = query.get(name);
  if (raw === null || raw === '') return false;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new HttpError(400, `${name}: must be true or false, got ${JSON.stringify(raw)}`);
}

/** A request target (`/path?query`) with secret query values redacted, for log lines. */
export function redactTarget(target: string): string {
  const shown = URL.canParse(target, 'http://emulator') ? redactUrl(new URL(target, 'http://emulator')) : '[unparsable target]';
  return shown.startsWith('http://emulator') ? shown.slice('http://emulator'.length) : shown;
}
