/**
 * The emulator's HTTP front, shared by every service (registry, proxy, cloud,
 * v2, the result host): the {@link Router} dispatches through the services'
 * route tables (`dispatch.ts`), applies CORS, the request log and the fault
 * switches (`faults.ts`) in one place, and turns thrown {@link HttpError}s
 * into ErrorResponse bodies (`reply.ts`).
 *
 * @module
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { SILENT, type Log } from '../transport/log.ts';
import { redactText, redactUrl } from '../transport/redact.ts';
import { RouteTable, splitTarget, type RequestContext, type Route } from './dispatch.ts';
import { Faults, injectFault, loseAnswer } from './faults.ts';
import { HttpError, sendError, sendText } from './reply.ts';

// The pieces of the front, importable from here as they always were.
export { routeMatcher, routeTable, RouteTable, type Handler, type RequestContext, type Route, type RouteOptions, type RouteRow, type RowOptions, type ServiceHandler } from './dispatch.ts';
export { Faults, type FaultMatch, type NextFaultOptions, type QueuedFault, type Status5xxFault } from './faults.ts';
export { errorCodeFor, HttpError, sendEmpty, sendError, sendJson, sendText } from './reply.ts';

/** Default cap of a request body read by {@link RequestContext.readJson}: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Default bound of the request log. */
export const REQUEST_LOG_LIMIT = 1000;

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

/**
 * What a 404 for a path no route serves says instead of `No route for …`: a
 * message (in the usual ErrorResponse), a `text/plain` body as some server
 * sends it, or `undefined` for the default; `segments` are the decoded path
 * segments.
 */
export type MissingRouteHint = (method: string, path: string, segments: readonly string[]) => string | { text: string } | undefined;

/** The route table plus the cross-cutting request handling. */
export class Router {
  readonly #table = new RouteTable();
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
    this.#table.add(routes);
    return this;
  }

  /** Sets what the 404 of an unserved path says (e.g. which emulator personality serves it). */
  explainMissing(hint: MissingRouteHint): this {
    this.#hint = hint;
    return this;
  }

  /** The registered routes. */
  get routes(): Route[] {
    return this.#table.routes;
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
    const { route, params, allowed } = this.#table.match(lookup, segments);

    if (route?.faults !== false) {
      const latency = this.faults.latencyMs;
      if (latency > 0) await new Promise((r) => setTimeout(r, latency).unref());
      const fault = this.faults.take(method, path, route?.path);
      if (fault?.loseAnswer) loseAnswer(res, fault.status);
      else if (fault) {
        injectFault(req, res, fault);
        return;
      }
    }

    if (!route) {
      if (allowed.length > 0) {
        const allow = [...allowed, 'OPTIONS'].join(', ');
        throw new HttpError(405, `Method ${method} is not allowed on ${path}`, 'method_not_allowed', { Allow: allow });
      }
      const hint = this.#hint?.(lookup, path, segments);
      if (typeof hint === 'object') return sendText(res, 404, hint.text);
      throw new HttpError(404, hint ?? `No route for ${method} ${path}`);
    }

    const limit = route.bodyLimit ?? DEFAULT_BODY_LIMIT;
    const host = req.headers.host ?? `${req.socket.localAddress ?? '127.0.0.1'}:${req.socket.localPort ?? 0}`;
    const ctx: RequestContext = {
      req,
      res,
      method,
      path,
      params,
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
