/**
 * `CloudSocket`: one reconnecting WebSocket per client. It turns text frames
 * into typed messages and binary frames into typed preview events, routes
 * both by `prompt_id` in O(1), and holds events of jobs nobody has claimed yet
 * (a job's first events can beat its submit response).
 *
 * @module
 */
import { APIUserAbortError, PlatformUIError } from '../errors.ts';
import { platform } from '../platform/node.ts';
import type { WebSocketConstructor } from '../platform/types.ts';
import { describeError, errorDetails, SILENT, type Log } from '../transport/log.ts';
import { redactText, redactUrl } from '../transport/redact.ts';
import { decodeFrame, type PreviewFrame } from './frames.ts';
import { parseMessage, promptIdOf, type CloudMessage } from './messages.ts';

/** A decoded binary frame, as delivered by the socket. */
export interface BinaryEvent {
  type: 'binary';
  frame: PreviewFrame;
  /** The job the frame belongs to: from type-4 metadata, else the job that last reported progress. */
  promptId: string | undefined;
}

/** Everything a job subscriber can receive. */
export type SocketEvent = CloudMessage | BinaryEvent;

/** Lifecycle and data events of {@link CloudSocket}, by name. */
export interface CloudSocketEvents {
  /** Every JSON message (known, unknown or malformed). */
  message: CloudMessage;
  /** Every binary frame. */
  binary: BinaryEvent;
  /** The socket opened (first time and after every reconnect). */
  open: { reconnect: boolean };
  /** The socket dropped and will try again after `delay` ms. */
  reconnecting: { attempt: number; delay: number; code: number | undefined };
  /** The socket is back after a drop. Jobs reconcile by polling now. */
  reconnected: { attempt: number };
  /** The socket closed for good (`close()` was called). */
  close: { code: number | undefined; reason: string | undefined };
  /** A failure that did not stop the socket (a handler threw, a frame did not decode, a connect attempt failed). */
  error: { error: unknown };
}

/** Options of {@link CloudSocket}. */
export interface CloudSocketOptions {
  /** A WebSocket implementation. Defaults to the runtime's global one, else `ws` in Node. */
  WebSocket?: WebSocketConstructor;
  /** Reconnect backoff: base and cap in ms, attempts before giving up (`Infinity` by default). */
  reconnect?: { baseDelay?: number; maxDelay?: number; maxAttempts?: number };
  /** With jobs being followed, a socket silent this long (ms) is presumed dead and reopened. Default 30000. */
  idleTimeout?: number;
  /** How long (ms) events of unclaimed jobs are held for a later subscriber. Default 30000. */
  holdFor?: number;
  /** Client id sent as `clientId`; generated once per socket and kept across reconnects. */
  clientId?: string;
  /** Feature flags announced as the first message. */
  featureFlags?: Record<string, unknown>;
}

/** Internal: what the client hands the socket. */
export interface SocketTarget {
  baseUrl: string;
  /** The `token` query value; `undefined` connects without one (a local server). */
  credential(): Promise<string | undefined>;
  /** Whether a token will be sent (so `url` shows it redacted). */
  hasCredential: boolean;
  /** The client's log; none by default. */
  log?: Log;
}

/** A listener of one event type. */
type Handler<T> = (event: T) => void;
/** Everything `on()` accepts: a lifecycle or data event name, or a message type. */
type Named = keyof CloudSocketEvents | CloudMessage['type'];
/** The payload `on(K)` delivers. */
type EventOf<K> = K extends keyof CloudSocketEvents ? CloudSocketEvents[K] : Extract<CloudMessage, { type: K }>;

const HOLD_MAX_JOBS = 256;
const HOLD_MAX_EVENTS = 2000;

/**
 * A reconnecting WebSocket to `/ws`.
 *
 * @example
 * ```ts
 * const socket = cloud.connect();
 * const off = socket.on('progress', (m) => console.log(m.data.value, '/', m.data.max));
 * for await (const ev of socket.events({ promptId })) console.log(ev.type);
 * off(); socket.close();
 * ```
 */
export class CloudSocket {
  /** The `clientId` of this socket, stable across reconnects. */
  readonly clientId: string;
  #target: SocketTarget;
  #opts: Required<Pick<CloudSocketOptions, 'idleTimeout' | 'holdFor'>> & CloudSocketOptions;
  #ws: WebSocket | undefined;
  #state: 'connecting' | 'open' | 'reconnecting' | 'closed' = 'connecting';
  #attempt = 0;
  #everOpened = false;
  #timers = new Set<ReturnType<typeof setTimeout>>();
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #lastMessageAt = 0;
  #listeners = new Map<string, Set<Handler<never>>>();
  #jobs = new Map<string, Set<Handler<SocketEvent>>>();
  #held = new Map<string, { until: number; events: SocketEvent[]; lost: boolean }>();
  #lastPromptId: string | undefined;
  #displayUrl: string;
  #log: Log;
  /** Message types already warned about as malformed or off-schema (`'malformed'` for text that is not a message). */
  #warnedTypes = new Set<string>();
  /** Whether the current run of failed connection attempts was already warned about. */
  #connectWarned = false;

  constructor(target: SocketTarget, options: CloudSocketOptions = {}) {
    this.#target = target;
    this.#opts = { idleTimeout: 30_000, holdFor: 30_000, ...options };
    this.clientId = options.clientId ?? randomId();
    this.#displayUrl = redactUrl(this.#url(target.hasCredential ? '[REDACTED]' : undefined));
    this.#log = target.log ?? SILENT;
    void this.#connect();
  }

  /** The socket URL with the token redacted. */
  get url(): string {
    return this.#displayUrl;
  }

  /** `connecting`, `open`, `reconnecting` or `closed`. */
  get state(): 'connecting' | 'open' | 'reconnecting' | 'closed' {
    return this.#state;
  }

  /** Resolves once the socket is open; rejects if the signal aborts or the socket is closed first. */
  ready(signal?: AbortSignal): Promise<void> {
    if (this.#state === 'open') return Promise.resolve();
    if (this.#state === 'closed') return Promise.reject(new PlatformUIError('Socket is closed'));
    if (signal?.aborted) return Promise.reject(new APIUserAbortError(undefined, { cause: signal.reason }));
    return new Promise((resolve, reject) => {
      const done = (err?: Error) => {
        offOpen();
        offClose();
        signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve();
      };
      const onAbort = () => done(new APIUserAbortError(undefined, { cause: signal?.reason }));
      const offOpen = this.on('open', () => done());
      const offClose = this.on('close', () => done(new PlatformUIError('Socket is closed')));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Listens to a message type (`'progress'`, `'executed'`, …), `'message'`,
   * `'binary'`, or a lifecycle event. Returns the function that unsubscribes.
   */
  on<K extends Named>(type: K, handler: Handler<EventOf<K>>): () => void {
    let set = this.#listeners.get(type);
    if (!set) this.#listeners.set(type, (set = new Set()));
    set.add(handler as Handler<never>);
    return () => {
      set.delete(handler as Handler<never>);
      if (set.size === 0) this.#listeners.delete(type);
    };
  }

  /** Resolves with the next event of that type. */
  once<K extends Named>(type: K, signal?: AbortSignal): Promise<EventOf<K>> {
    if (signal?.aborted) return Promise.reject(new APIUserAbortError(undefined, { cause: signal.reason }));
    return new Promise((resolve, reject) => {
      const off = this.on(type, (e) => {
        off();
        signal?.removeEventListener('abort', onAbort);
        resolve(e);
      });
      const onAbort = () => (off(), reject(new APIUserAbortError(undefined, { cause: signal?.reason })));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Events as an async iterator: every message and frame, or only those of
   * one job. The buffer is bounded (`bufferSize`, default 1024); when a slow
   * consumer lets it fill, the oldest events are dropped.
   */
  events(options: { promptId?: string; bufferSize?: number; signal?: AbortSignal } = {}): AsyncIterableIterator<SocketEvent> {
    const max = options.bufferSize ?? 1024;
    const queue: SocketEvent[] = [];
    const waiters: Array<() => void> = [];
    const signal = options.signal;
    let done = this.#state === 'closed' || signal?.aborted === true;
    const wake = () => {
      for (const w of waiters.splice(0)) w();
    };
    const push = (e: SocketEvent) => {
      if (queue.length >= max) queue.shift();
      queue.push(e);
      wake();
    };
    const offs: Array<() => void> = [];
    const finish = () => {
      done = true;
      for (const off of offs.splice(0)) off();
      signal?.removeEventListener('abort', finish);
      wake();
    };
    if (!done) {
      if (options.promptId) offs.push(this.subscribe(options.promptId, push));
      else offs.push(this.on('message', push), this.on('binary', push));
      offs.push(this.on('close', finish));
      signal?.addEventListener('abort', finish, { once: true });
    }
    const it: AsyncIterableIterator<SocketEvent> = {
      next: async () => {
        while (queue.length === 0 && !done) await new Promise<void>((r) => waiters.push(r));
        const value = queue.shift();
        return value ? { value, done: false } : { value: undefined, done: true };
      },
      return: async () => {
        queue.length = 0; // the consumer left: nothing more is delivered
        finish();
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]: () => it,
    };
    return it;
  }

  /**
   * Routes every event of one job to `handler`, starting with the events
   * that arrived before anyone asked for them. The hold is bounded: when
   * some of those were dropped, `options.onLost` is called before the replay.
   * Returns the unsubscribe function.
   */
  subscribe(promptId: string, handler: Handler<SocketEvent>, options: { onLost?: () => void } = {}): () => void {
    let set = this.#jobs.get(promptId);
    if (!set) this.#jobs.set(promptId, (set = new Set()));
    set.add(handler);
    const held = this.#held.get(promptId);
    if (held) {
      this.#held.delete(promptId);
      // The hold is bounded: a subscriber must know when it does not get every event.
      if (held.lost) options.onLost?.();
      for (const e of held.events) this.#safely(handler, e);
    }
    this.#armIdle();
    return () => {
      set.delete(handler);
      if (set.size === 0) this.#jobs.delete(promptId);
      this.#armIdle();
    };
  }

  /** Closes the socket for good: clears every timer and listener. */
  close(reason = 'closed by client'): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    clearTimeout(this.#idleTimer);
    const ws = this.#ws;
    this.#ws = undefined;
    if (ws) {
      detach(ws);
      try {
        ws.close(1000);
      } catch {
        // already closing
      }
    }
    this.#log.debug?.(`socket closed: ${reason}`, { code: 1000, reason });
    this.#emit('close', { code: 1000, reason });
    this.#listeners.clear();
    this.#jobs.clear();
    this.#held.clear();
  }

  /** Number of listeners and job subscriptions held (for leak checks). */
  get listenerCount(): number {
    let n = this.#jobs.size;
    for (const s of this.#listeners.values()) n += s.size;
    return n;
  }

  #url(token: string | undefined): string {
    const u = new URL('ws', `${this.#target.baseUrl.replace(/\/+$/, '')}/`);
    u.protocol = u.protocol === 'http:' ? 'ws:' : 'wss:';
    u.searchParams.set('clientId', this.clientId);
    if (token !== undefined) u.searchParams.set('token', token);
    return u.toString();
  }

  async #connect(): Promise<void> {
    let ws: WebSocket;
    this.#log.debug?.(`socket connecting to ${this.#displayUrl}${this.#attempt ? ` (attempt ${this.#attempt + 1})` : ''}`, { url: this.#displayUrl, attempt: this.#attempt + 1 });
    try {
      const [Ctor, token] = await Promise.all([this.#opts.WebSocket ?? platform.webSocket(), this.#target.credential()]);
      if (this.#state === 'closed') return;
      ws = new Ctor(this.#url(token));
    } catch (error) {
      const safe = toSafeError(error);
      this.#couldNotConnect(safe.message);
      this.#emit('error', { error: safe });
      this.#scheduleReconnect(undefined);
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.#ws = ws;
    ws.onopen = () => {
      const reconnect = this.#everOpened;
      const attempt = this.#attempt;
      this.#everOpened = true;
      this.#attempt = 0;
      this.#connectWarned = false;
      this.#state = 'open';
      this.#lastMessageAt = Date.now();
      ws.send(JSON.stringify({ type: 'feature_flags', data: this.#opts.featureFlags ?? { supports_preview_metadata: true } }));
      this.#armIdle();
      this.#log.debug?.(`socket open${reconnect ? ' again' : ''}: ${this.#displayUrl}`, { url: this.#displayUrl, reconnect, clientId: this.clientId });
      this.#emit('open', { reconnect });
      if (reconnect) this.#emit('reconnected', { attempt });
    };
    ws.onmessage = (ev: MessageEvent) => {
      this.#lastMessageAt = Date.now();
      this.#receive(ev.data);
    };
    ws.onerror = () => {
      // Node's global WebSocket fires only `error` (no `close`, readyState stuck at
      // CONNECTING) when the upgrade is refused, so an error before open ends the attempt.
      // Nothing of the event is kept: it may quote the URL, token included.
      if (ws.readyState !== 1 /* OPEN */) {
        this.#couldNotConnect(undefined);
        this.#drop(ws, 1006);
      }
    };
    ws.onclose = (ev: CloseEvent) => {
      this.#couldNotConnect(ev.code);
      // The reason is the server's text: cut short, URLs and tokens in it redacted.
      this.#log.debug?.(`socket closed: code ${ev.code}${ev.reason ? ` (${redactText(ev.reason, 100)})` : ''}`, { code: ev.code, reason: redactText(ev.reason ?? '', 100) });
      this.#ended(ws, ev.code);
    };
  }

  /**
   * A connection attempt failed before opening. The first of a run of them is
   * a warning (jobs are followed by polling meanwhile); the rest are debug, in
   * the reconnect lines.
   */
  #couldNotConnect(why: number | string | undefined): void {
    if (this.#state === 'open' || this.#connectWarned) return;
    this.#connectWarned = true;
    const reason = typeof why === 'number' ? `closed with code ${why}` : (why ?? 'the connection or the upgrade failed');
    this.#log.warn?.(`socket could not connect to ${this.#displayUrl}: ${reason}; retrying, and run() polls job status meanwhile`, { url: this.#displayUrl, reason });
  }

  /** This connection is over (whichever event said so first): reconnect unless closed. */
  #ended(ws: WebSocket, code: number | undefined): void {
    detach(ws);
    if (this.#ws === ws) this.#ws = undefined;
    if (this.#state !== 'closed') this.#scheduleReconnect(code);
  }

  /** Gives up on a connection without waiting for a close handshake a dead link never completes. */
  #drop(ws: WebSocket, code: number): void {
    this.#ended(ws, code); // detaches first: close() may re-fire `error` synchronously
    try {
      ws.close(code === 1006 ? undefined : code);
    } catch {
      // not closable while CONNECTING in some implementations
    }
  }

  #scheduleReconnect(code: number | undefined): void {
    if (this.#state === 'closed') return;
    const { baseDelay = 250, maxDelay = 10_000, maxAttempts = Infinity } = this.#opts.reconnect ?? {};
    this.#attempt++;
    if (this.#attempt > maxAttempts) {
      const error = new PlatformUIError(`Gave up reconnecting after ${maxAttempts} attempts`);
      // With no job to fall back to polling and nobody listening for `error`, only the log can tell.
      // (`maxAttempts: 0` asked for no reconnect at all: no news.)
      const unseen = this.#jobs.size === 0 && !this.#listeners.has('error') && maxAttempts > 0;
      const line = unseen ? this.#log.error : maxAttempts > 0 ? this.#log.warn : this.#log.debug;
      line?.(`socket ${this.#displayUrl}: ${error.message}; it is closed${this.#jobs.size ? '; runs go on by polling' : ''}`, { url: this.#displayUrl, attempts: maxAttempts, jobs: this.#jobs.size });
      this.#emit('error', { error });
      this.close(`gave up after ${maxAttempts} reconnect attempts`);
      return;
    }
    this.#state = 'reconnecting';
    // Full jitter: a random delay up to the capped exponential bound.
    const delay = Math.round(Math.random() * Math.min(maxDelay, baseDelay * 2 ** (this.#attempt - 1)));
    this.#log.debug?.(`socket reconnecting in ${delay} ms (attempt ${this.#attempt})`, { delayMs: delay, attempt: this.#attempt, ...(code !== undefined ? { code } : {}) });
    this.#emit('reconnecting', { attempt: this.#attempt, delay, code });
    const t = setTimeout(() => {
      this.#timers.delete(t);
      void this.#connect();
    }, delay);
    this.#timers.add(t);
  }

  // The watchdog only runs while jobs are followed: an idle account socket is fine.
  // One timer checks the time of the last message, so the hot path only stores a number.
  #armIdle(): void {
    if (this.#idleTimer !== undefined || this.#jobs.size === 0 || this.#state !== 'open') return;
    const check = () => {
      this.#idleTimer = undefined;
      if (this.#jobs.size === 0 || this.#state !== 'open') return;
      const quiet = Date.now() - this.#lastMessageAt;
      if (quiet >= this.#opts.idleTimeout) {
        this.#log.debug?.(`socket silent for ${quiet} ms while following jobs: reconnecting`, { silentMs: quiet, jobs: this.#jobs.size });
        if (this.#ws) this.#drop(this.#ws, 4000);
      }
      else this.#idleTimer = setTimeout(check, this.#opts.idleTimeout - quiet);
    };
    this.#idleTimer = setTimeout(check, this.#opts.idleTimeout);
  }

  #receive(data: unknown): void {
    const log = this.#log;
    if (typeof data === 'string') {
      const message = parseMessage(data);
      const id = promptIdOf(message);
      if (id && (message.type === 'executing' || message.type === 'progress' || message.type === 'execution_start')) this.#lastPromptId = id;
      if (log.debug || log.warn) this.#logMessage(message, id, data.length);
      this.#emit('message', message);
      this.#emit(message.type as Named, message as never);
      if (id) this.#route(id, message);
      return;
    }
    let frame: PreviewFrame;
    try {
      frame = decodeFrame(data as ArrayBuffer);
    } catch (error) {
      // The decoder's reason is about lengths and fields; still cut short, as any text from the wire.
      log.warn?.(`socket: a malformed binary frame (${(data as ArrayBuffer).byteLength} bytes) was skipped: ${redactText(error instanceof Error ? error.message : String(error))}`, { bytes: (data as ArrayBuffer).byteLength, ...errorDetails(error) });
      this.#emit('error', { error });
      return;
    }
    const id = ('promptId' in frame && typeof frame.promptId === 'string' ? frame.promptId : undefined) ?? this.#lastPromptId;
    const event: BinaryEvent = { type: 'binary', frame, promptId: id };
    log.debug?.(`socket: binary frame ${frame.type} (type ${frame.eventType}, ${(data as ArrayBuffer).byteLength} bytes)${id ? ` for ${id}` : ''}`, { type: frame.type, eventType: frame.eventType, bytes: (data as ArrayBuffer).byteLength, ...(id ? { promptId: id } : {}) });
    this.#emit('binary', event);
    if (id) this.#route(id, event);
  }

  /**
   * The line of one text message: its type at debug; a malformed or off-schema
   * one at warn (the first of each type; later ones at debug, so a server that
   * sends it on every step does not flood the console). The reason, never the
   * text: a message may carry a user's prompt.
   */
  #logMessage(message: CloudMessage, id: string | undefined, bytes: number): void {
    const log = this.#log;
    const about = id ? { promptId: id } : {};
    if (message.type !== 'malformed' && message.type !== 'invalid') {
      const type = message.type === 'unknown' ? message.rawType.slice(0, 40) : message.type;
      log.debug?.(`socket: ${message.type === 'unknown' ? `unknown message type ${JSON.stringify(type)}` : type}${id ? ` for ${id}` : ''}`, { type, known: message.type !== 'unknown', ...about, bytes });
      return;
    }
    const kind = message.type === 'malformed' ? 'malformed' : message.rawType;
    const line = this.#warnedTypes.has(kind) ? log.debug : log.warn;
    if (!line) return;
    this.#warnedTypes.add(kind);
    const reason = message.type === 'malformed' ? message.error : message.issues.map((i) => `${i.path.join('.') || '(data)'}: ${i.message.replace(/, got [\s\S]*$/, '')}`).join('; ');
    const what = message.type === 'malformed' ? 'a malformed message' : `a ${message.rawType} message that does not match its schema`;
    line(`socket: ${what} (${bytes} bytes): ${reason}; passed on as '${message.type}'`, { type: message.type, ...(message.type === 'invalid' ? { rawType: message.rawType } : {}), ...about, bytes, reason });
  }

  #route(promptId: string, event: SocketEvent): void {
    const subs = this.#jobs.get(promptId);
    if (subs) {
      for (const h of subs) this.#safely(h, event);
      return;
    }
    // Every socket of an account sees every job: previews of jobs nobody claims would pile up.
    if (event.type === 'binary') return;
    const now = Date.now();
    let held = this.#held.get(promptId);
    if (!held) {
      // Bounded: drop expired jobs, then the oldest, before holding another.
      for (const [id, h] of this.#held) if (h.until < now || this.#held.size >= HOLD_MAX_JOBS) this.#held.delete(id);
      else break;
      this.#held.set(promptId, (held = { until: now + this.#opts.holdFor, events: [], lost: false }));
    }
    if (held.events.length < HOLD_MAX_EVENTS) held.events.push(event);
    else held.lost = true;
  }

  #emit<K extends Named>(type: K, event: EventOf<K>): void {
    const set = this.#listeners.get(type);
    if (set) for (const h of set) this.#safely(h as Handler<EventOf<K>>, event, type !== 'error');
  }

  // A throwing handler must not kill the socket or starve the other handlers;
  // its error is reported once as an `error` event (never from an error handler).
  #safely<T>(handler: Handler<T>, event: T, report = true): void {
    try {
      handler(event);
    } catch (error) {
      if (!report) return;
      // Nobody listens for it: only the log can tell.
      if (!this.#listeners.has('error')) this.#log.error?.(`socket: a listener threw: ${describeError(error)}`, errorDetails(error));
      queueMicrotask(() => this.#emit('error', { error }));
    }
  }
}

function detach(ws: WebSocket): void {
  ws.onopen = ws.onmessage = ws.onclose = null;
  // Not null: the `ws` package throws an `error` with no listener (closing while connecting).
  ws.onerror = () => undefined;
}

function randomId(): string {
  return globalThis.crypto?.randomUUID?.() ?? `${Date.now().toString(16)}-${Math.random().toString(16).slice(2)}`;
}

// Connection errors from some WebSocket implementations quote the URL, token included.
function toSafeError(error: unknown): PlatformUIError {
  return new PlatformUIError(`WebSocket connection failed: ${redactText(error instanceof Error ? error.message : String(error))}`);
}
