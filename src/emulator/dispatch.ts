/**
 * The emulator's route tables and the one dispatcher every service shares
 * (registry, proxy, cloud, v2, the result host). A service writes its routes
 * as rows `['METHOD /pattern', namedHandler, options?]` ({@link routeTable});
 * the {@link RouteTable} says which handler a request reaches, or why none
 * does (404, or 405 with the methods the path has). The cross-cutting request
 * handling around it (CORS, the request log, faults, error bodies) is the
 * `Router`'s, in `http.ts`.
 *
 * @module
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

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
   * `HttpError` 415 for a non-JSON content type, 400 for malformed
   * JSON, 413 beyond the route's `bodyLimit`.
   */
  readJson(): Promise<unknown>;
  /** Reads the raw body (multipart uploads and the like), bounded by `limit` (default: the route's `bodyLimit`). */
  readBody(limit?: number): Promise<Buffer>;
}

/** A route handler. It must answer through `ctx.res` (see `sendJson`) or throw. */
export type Handler = (ctx: RequestContext) => void | Promise<void>;

/** What a route may say besides its method, pattern and handler. */
export interface RouteOptions {
  /** Body size cap in bytes; default `DEFAULT_BODY_LIMIT` (1 MiB). */
  readonly bodyLimit?: number;
  /** `false` exempts the route from the fault switches (e.g. a control endpoint). */
  readonly faults?: boolean;
}

/** One entry of the route table. */
export interface Route extends RouteOptions {
  /** HTTP method, upper case. */
  readonly method: string;
  /** Path pattern; `:name` segments are parameters matching exactly one (encoded) segment. */
  readonly path: string;
  readonly handler: Handler;
  /** The name of the handler the row named (`getQueue`), for logs and tests. */
  readonly name?: string;
}

/** A handler of a service: its state, then the request. Named, so that the table reads as a list of what each route does. */
export type ServiceHandler<S> = (state: S, ctx: RequestContext) => void | Promise<void>;

/** Options of a row: a route's, plus `when`, which leaves the row out of the table for a state that does not serve it. */
export interface RowOptions<S> extends RouteOptions {
  /** Read once, when the table is built (e.g. from the personality): the row exists only where this is true. */
  readonly when?: (state: S) => boolean;
}

/** One row of a service's table: `'METHOD /pattern'`, the named handler, options. */
export type RouteRow<S> = readonly [spec: string, handler: ServiceHandler<S>, options?: RowOptions<S>];

/**
 * The routes of `rows` bound to `state`, in row order (which decides between
 * two rows of one method and pattern: the first wins, and the order of a
 * 405's `Allow`). `wrap` wraps every handler (e.g. v2's error envelope).
 *
 * @example
 * ```ts
 * const routes = routeTable(state, [['GET /api/queue', getQueue], ['POST /api/prompt', postPrompt, { bodyLimit: 16 * MiB }]]);
 * ```
 */
export function routeTable<S>(state: S, rows: readonly RouteRow<S>[], wrap: (handler: Handler) => Handler = (h) => h): Route[] {
  const out: Route[] = [];
  for (const [spec, handler, options = {}] of rows) {
    const { when, ...route } = options;
    if (when && !when(state)) continue;
    const space = spec.indexOf(' ');
    out.push({ ...route, method: spec.slice(0, space), path: spec.slice(space + 1), name: handler.name, handler: wrap((ctx) => handler(state, ctx)) });
  }
  return out;
}

type Segment = { literal: string } | { param: string };

interface CompiledRoute {
  route: Route;
  segments: Segment[];
}

function compile(route: Route): CompiledRoute {
  const segments = route.path
    .split('/')
    .slice(1)
    .map((s): Segment => (s.startsWith(':') ? { param: s.slice(1) } : { literal: s }));
  return { route: { ...route, method: route.method.toUpperCase() }, segments };
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

/**
 * Where a request goes: a route and its parameters, or none; `allowed` lists
 * the methods other routes serve on that path (in table order), which make a
 * request no route serves a 405 rather than a 404.
 */
export interface Dispatch {
  readonly route: Route | undefined;
  readonly params: Record<string, string>;
  readonly allowed: readonly string[];
}

/** Compiled routes, matched against a method and decoded path segments. */
export class RouteTable {
  readonly #routes: CompiledRoute[] = [];

  constructor(routes: Iterable<Route> = []) {
    this.add(routes);
  }

  /** Appends routes: an earlier one of the same method and pattern wins. */
  add(routes: Iterable<Route>): this {
    for (const r of routes) this.#routes.push(compile(r));
    return this;
  }

  /** The routes, in table order. */
  get routes(): Route[] {
    return this.#routes.map((c) => c.route);
  }

  /** The route serving `method` (upper case; HEAD is looked up as GET by the caller) on `segments` (decoded). */
  match(method: string, segments: readonly string[]): Dispatch {
    let matched: { route: Route; params: Record<string, string> } | undefined;
    const allowed = new Set<string>();
    for (const compiled of this.#routes) {
      const params = matchSegments(compiled, segments);
      if (!params) continue;
      if (compiled.route.method === method) matched ??= { route: compiled.route, params };
      else allowed.add(compiled.route.method);
    }
    return { route: matched?.route, params: matched?.params ?? {}, allowed: [...allowed] };
  }

  /** Whether a route serves `method` on `segments`. */
  serves(method: string, segments: readonly string[]): boolean {
    return this.#routes.some((c) => c.route.method === method && matchSegments(c, segments) !== undefined);
  }
}

/** Whether one of `routes` serves `method` on `segments` (decoded path segments); compiles once. */
export function routeMatcher(routes: readonly Route[]): (method: string, segments: readonly string[]) => boolean {
  const table = new RouteTable(routes);
  return (method, segments) => table.serves(method, segments);
}

/** Splits `req.url` into raw pathname and raw query without normalising either. */
export function splitTarget(target: string): { path: string; search: string } {
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
