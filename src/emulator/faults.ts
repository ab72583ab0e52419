/**
 * The emulator's fault switches (latency, one-shot answers, dropped
 * connections, lost answers, counted or probabilistic 5xx), consulted by the
 * `Router` for every request, and what a fault does to the answer.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorCodeFor, sendEmpty, sendJson, sendText } from './reply.ts';
import { createRandom } from './random.ts';

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

/** The handler's answer never arrives: the connection is cut when it starts, or `status` goes out instead. */
export function loseAnswer(res: ServerResponse, status: number): void {
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

/** Answers `fault` instead of the handler: its status and body, or a cut connection. */
export function injectFault(req: IncomingMessage, res: ServerResponse, fault: QueuedFault): void {
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

