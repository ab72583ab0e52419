/**
 * `CloudSocket`: one reconnecting WebSocket per client. It turns text frames
 * into typed messages and binary frames into typed preview events, routes
 * both by `prompt_id` in O(1), and holds events of jobs nobody has claimed yet
 * (a job's first events can beat its submit response).
 *
 * Its life is four states ({@link SocketState}):
 *
 * ```text
 * connecting ──open──▶ open ──drop──▶ reconnecting ──open──▶ open …
 *     │                 │                  │
 *     └──── close(), a refusal (1008, 4000–4999), or maxAttempts ──▶ closed (for good)
 * ```
 *
 * A connection counts as a success only once it has stayed open
 * {@link STABLE_AFTER_MS}: one that the server closes sooner is a failed
 * attempt, so the backoff keeps growing against a server (a proxy, a load
 * balancer) that accepts and closes at once.
 *
 * @module
 */
import { APIUserAbortError, PlatformUIError, SocketRefusedError } from '../errors.ts';
import { platform } from '../platform/node.ts';
import type { WebSocketConstructor } from '../platform/types.ts';
import { describeError, errorDetails, SILENT, type Log } from '../transport/log.ts';
import { redactText, redactUrl, scrub } from '../transport/redact.ts';
import { decodeFrame, type PreviewFrame } from './frames.ts';
import { parseMessage, promptIdOf, type CloudMessage } from './messages.ts';
import { randomUuid } from './uuid.ts';
import { socketUrl, type CloudSocketOptions } from './socket-options.ts';

export { checkSocketOptions, type CloudSocketOptions } from './socket-options.ts';

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
  /** The socket dropped and will try again after `delay` ms (`attempt`: failed attempts in a row, this drop included). */
  reconnecting: { attempt: number; delay: number; code: number | undefined };
  /** The socket is back after a drop. Jobs reconcile by polling now. */
  reconnected: { attempt: number };
  /**
   * The socket closed for good: `close()` was called, reconnecting gave up
   * (`maxAttempts`), or the server refused it. A refusal (close code 1008, or
   * 4000–4999 from the server) carries `error`, a {@link SocketRefusedError}.
   */
  close: { code: number | undefined; reason: string | undefined; error?: SocketRefusedError };
  /**
   * A failure: a handler threw, a frame did not decode, a connect attempt
   * failed; or one that stops the socket (`close` follows): the server refused
   * it ({@link SocketRefusedError}), or reconnecting gave up.
   */
  error: { error: unknown };
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

/**
 * `connecting` (the first connection), `open`, `reconnecting` (waiting for or
 * making another attempt after a drop) and `closed` (for good).
 */
export type SocketState = 'connecting' | 'open' | 'reconnecting' | 'closed';

/** A listener of one event type. */
type Handler<T> = (event: T) => void;
/** Everything `on()` accepts: a lifecycle or data event name, or a message type. */
type Named = keyof CloudSocketEvents | CloudMessage['type'];
/** The payload `on(K)` delivers. */
type EventOf<K> = K extends keyof CloudSocketEvents ? CloudSocketEvents[K] : Extract<CloudMessage, { type: K }>;

/** A connection that closes sooner than this (ms) after opening counts as a failed attempt: the backoff keeps growing. */
export const STABLE_AFTER_MS = 5000;
/**
 * The code the socket closes with when it gives up on a silent connection. Never
 * taken for a server's refusal: the socket detaches from a connection before closing it.
 */
const IDLE_DROP_CODE = 4000;
/** Close codes by which the server refuses the credential or the request, when they close a connection that just opened: trying again would only be refused again. */
const isRefusal = (code: number): boolean => code === 1008 || (code >= 4000 && code <= 4999);

/** Bounds of the events held for unclaimed jobs (besides `holdFor`): jobs, events of one job, and message text in all (UTF-16 code units of the text frames). */
const HOLD_MAX_JOBS = 256;
/** Events held for one unclaimed job (a follower keeps as many for a job still being submitted). */
export const HOLD_MAX_EVENTS = 2000;
// 1 MiB, as a literal: bundlers keep an unused `1024 * 1024` in bundles that never use the socket.
const HOLD_MAX_BYTES = 1_048_576;
/**
 * Jobs whose held events were dropped are remembered (by id) this long (ms) and
 * this many at most, so that a late subscriber learns through `onLost` that it
 * missed the job's first events. A submission's answer comes well within it.
 */
const DROPPED_FOR_MS = 60_000;
const DROPPED_MAX_JOBS = 1024;

/** Events held for a job nobody has subscribed to yet. */
interface Held {
  /** When they are dropped (ms since epoch). */
  until: number;
  events: SocketEvent[];
  /** Text length of `events`. */
  bytes: number;
  /** Some of the job's events were not held (a bound was reached). */
  lost: boolean;
}

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
  #state: SocketState = 'connecting';
  /** Failed attempts in a row: reset only by a connection that stayed open {@link STABLE_AFTER_MS}. */
  #attempt = 0;
  /** When the current (or last) connection opened (ms since epoch); 0 before the first. */
  #openedAt = 0;
  /** What `ready()` and `once()` reject with once the socket is closed (a refusal, when there was one). */
  #closedError: PlatformUIError | undefined;
  #timers = new Set<ReturnType<typeof setTimeout>>();
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #lastMessageAt = 0;
  #listeners = new Map<string, Set<Handler<never>>>();
  #jobs = new Map<string, Set<Handler<SocketEvent>>>();
  /** Events of unclaimed jobs, oldest job first (so also in order of `until`). */
  #held = new Map<string, Held>();
  #heldBytes = 0;
  /** Jobs whose held events were dropped → until when that is remembered; oldest first. */
  #dropped = new Map<string, number>();
  /** The one timer that releases held events on time, even when no message comes; set only while something is held. */
  #sweepTimer: ReturnType<typeof setTimeout> | undefined;
  #lastPromptId: string | undefined;
  #displayUrl: string;
  #log: Log;
  /** Message types already warned about as malformed or off-schema (`'malformed'` for text that is not a message). */
  #warnedTypes = new Set<string>();
  /** Why the last connection attempt failed; cleared by a connection that lasts. */
  #failure: string | undefined;
  /** Whether the current run of failed connection attempts was already warned about. */
  #connectWarned = false;

  constructor(target: SocketTarget, options: CloudSocketOptions = {}) {
    this.#target = target;
    this.#opts = { idleTimeout: 30_000, holdFor: 5000, ...options };
    this.clientId = options.clientId ?? randomUuid();
    this.#displayUrl = redactUrl(this.#url(target.hasCredential ? '[REDACTED]' : undefined));
    this.#log = target.log ?? SILENT;
    void this.#connect();
  }

  /** The socket URL with the token redacted. */
  get url(): string {
    return this.#displayUrl;
  }

  /** `connecting`, `open`, `reconnecting` or `closed` (see {@link SocketState}). */
  get state(): SocketState {
    return this.#state;
  }

  /**
   * Resolves once the socket is open. Rejects if the signal aborts, or once
   * the socket is closed: with the {@link SocketRefusedError} when the server
   * refused it, else a `PlatformUIError('Socket is closed')`.
   */
  ready(signal?: AbortSignal): Promise<void> {
    if (this.#state === 'open') return Promise.resolve();
    return this.once('open', signal).then(() => undefined);
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

  /**
   * Resolves with the next event of that type. Rejects if the signal aborts,
   * or once the socket is closed (as {@link ready} does): `once('close')`
   * resolves with the `close` event instead.
   *
   * @example
   * ```ts
   * const { data } = await socket.once('execution_start');
   * ```
   */
  once<K extends Named>(type: K, signal?: AbortSignal): Promise<EventOf<K>> {
    if (this.#state === 'closed') return Promise.reject(this.#closedError ?? new PlatformUIError('Socket is closed'));
    if (signal?.aborted) return Promise.reject(new APIUserAbortError(undefined, { cause: signal.reason }));
    return new Promise((resolve, reject) => {
      const settle = (done: () => void) => {
        off();
        offClose();
        signal?.removeEventListener('abort', onAbort);
        done();
      };
      const onAbort = () => settle(() => reject(new APIUserAbortError(undefined, { cause: signal?.reason })));
      const off = this.on(type, (e) => settle(() => resolve(e)));
      const offClose = type === 'close' ? () => undefined : this.on('close', () => settle(() => reject(this.#closedError ?? new PlatformUIError('Socket is closed'))));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Events as an async iterator: every message and frame, or only those of
   * one job. The buffer is bounded (`bufferSize`, default 1024); when a slow
   * consumer lets it fill, the oldest events are dropped. It ends when the
   * socket closes, the signal aborts, or the consumer leaves the loop.
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
   * that arrived before anyone asked for them (held `holdFor` ms). The hold is
   * bounded: when some of those were dropped, `options.onLost` is called
   * before the replay. Returns the unsubscribe function.
   */
  subscribe(promptId: string, handler: Handler<SocketEvent>, options: { onLost?: () => void } = {}): () => void {
    let set = this.#jobs.get(promptId);
    if (!set) this.#jobs.set(promptId, (set = new Set()));
    set.add(handler);
    const held = this.#held.get(promptId);
    if (held) {
      this.#release(promptId, held);
      // The hold is bounded: a subscriber must know when it does not get every event.
      if (held.lost) options.onLost?.();
      for (const e of held.events) this.#safely(handler, e);
    } else if (this.#dropped.delete(promptId)) options.onLost?.();
    this.#armIdle();
    return () => {
      set.delete(handler);
      if (set.size === 0) this.#jobs.delete(promptId);
      this.#armIdle();
    };
  }

  /** Closes the socket for good: clears every timer and listener. */
  close(reason = 'closed by client'): void {
    this.#shutdown({ code: 1000, reason });
  }

  /** Number of listeners and job subscriptions held (for leak checks). */
  get listenerCount(): number {
    let n = this.#jobs.size;
    for (const s of this.#listeners.values()) n += s.size;
    return n;
  }

  /**
   * Events held for jobs nobody has subscribed to yet: jobs, events and their
   * text length (for leak checks). Empty again `holdFor` ms after the last job
   * arrived, whether or not more messages come.
   *
   * @example
   * ```ts
   * console.log(socket.held); // { jobs: 3, events: 41, bytes: 9817 }
   * ```
   */
  get held(): { jobs: number; events: number; bytes: number } {
    let events = 0;
    for (const h of this.#held.values()) events += h.events.length;
    return { jobs: this.#held.size, events, bytes: this.#heldBytes };
  }

  #url(token: string | undefined): string {
    return socketUrl(this.#target.baseUrl, this.clientId, token);
  }

  // --- lifecycle: #state becomes 'open' in onopen, 'reconnecting' in #scheduleReconnect, 'closed' in #shutdown only.

  async #connect(): Promise<void> {
    let ws: WebSocket;
    let token: string | undefined;
    this.#log.debug?.(`socket connecting to ${this.#displayUrl}${this.#attempt ? ` (attempt ${this.#attempt + 1})` : ''}`, { url: this.#displayUrl, attempt: this.#attempt + 1 });
    try {
      let Ctor: WebSocketConstructor;
      [Ctor, token] = await Promise.all([this.#opts.WebSocket ?? platform.webSocket(), this.#target.credential()]);
      if (this.#state === 'closed') return;
      ws = new Ctor(this.#url(token));
    } catch (error) {
      const safe = toSafeError(error);
      this.#failing(safe.message);
      this.#emit('error', { error: safe });
      this.#scheduleReconnect(undefined);
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.#ws = ws;
    ws.onopen = () => {
      const reconnect = this.#openedAt > 0;
      // #attempt stays: only a connection that lasts resets it (see #ended).
      this.#state = 'open';
      this.#openedAt = this.#lastMessageAt = Date.now();
      ws.send(JSON.stringify({ type: 'feature_flags', data: this.#opts.featureFlags ?? { supports_preview_metadata: true } }));
      this.#armIdle();
      this.#log.debug?.(`socket open${reconnect ? ' again' : ''}: ${this.#displayUrl}`, { url: this.#displayUrl, reconnect, clientId: this.clientId });
      this.#emit('open', { reconnect });
      if (reconnect) this.#emit('reconnected', { attempt: this.#attempt });
    };
    ws.onmessage = (ev: MessageEvent) => {
      this.#lastMessageAt = Date.now();
      this.#receive(ev.data);
    };
    ws.onerror = () => {
      // Node's global WebSocket fires only `error` (no `close`, readyState stuck at
      // CONNECTING) when the upgrade is refused, so an error before open ends the attempt.
      // Nothing of the event is kept: it may quote the URL, token included.
      if (ws.readyState !== 1 /* OPEN */) this.#drop(ws, 1006);
    };
    ws.onclose = (ev: CloseEvent) => {
      // The reason is the server's text: cut short, URLs, tokens and the credential in it redacted.
      const reason = redactText(token ? scrub(ev.reason ?? '', [token]) : (ev.reason ?? ''), 100);
      this.#log.debug?.(`socket closed: code ${ev.code}${reason ? ` (${reason})` : ''}`, { code: ev.code, reason });
      // Only the server's close frames reach here: the socket's own closes (the idle drop's
      // 4000 included) detach first, so they are never taken for a refusal. A connection that
      // lived long and then got such a code (a session that expired) is tried again: if the
      // credential is refused, the next one is closed at once, and that is the refusal.
      const lived = this.#state === 'open' ? Date.now() - this.#openedAt : 0;
      if (isRefusal(ev.code) && lived < STABLE_AFTER_MS) this.#refused(ws, ev.code, reason);
      else this.#ended(ws, ev.code, `closed with code ${ev.code}`);
    };
  }

  /**
   * This connection is over (whichever event said so first): reconnect unless
   * closed. A connection that lasted {@link STABLE_AFTER_MS} was a success, so
   * the count of failed attempts starts over; one that never opened, or closed
   * sooner, is one more failed attempt.
   */
  #ended(ws: WebSocket, code: number | undefined, why?: string): void {
    if (!this.#forget(ws)) return;
    const lived = this.#state === 'open' ? Date.now() - this.#openedAt : undefined;
    if (lived !== undefined && lived >= STABLE_AFTER_MS) {
      this.#attempt = 0;
      this.#failure = undefined;
      this.#connectWarned = false;
    } else if (lived === undefined) this.#failing(why);
    // A first short drop is ordinary; a reconnect that the server closes again at once is a failure to connect.
    else if (this.#attempt > 0) this.#failing(`the server closed it ${lived} ms after opening${code === undefined ? '' : ` (code ${code})`}`);
    this.#scheduleReconnect(code);
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

  /** A failed connection attempt: told by {@link #retrying} if a retry follows, else by the error that gives up. */
  #failing(why: string | undefined): void {
    this.#failure = why ?? 'the connection or the upgrade failed';
  }

  /**
   * A retry begins after a failed attempt: the first of a run of them is a
   * warning (the rest are debug, in the reconnect lines). Not before: a
   * run() whose submission fails for the same reason (a wrong key, a closed
   * port) closes its socket first, and its error says it all.
   */
  #retrying(): void {
    if (this.#failure === undefined || this.#connectWarned) return;
    this.#connectWarned = true;
    const jobs = this.#jobs.size;
    this.#log.warn?.(`socket could not connect to ${this.#displayUrl}: ${this.#failure}; retrying${jobs ? ', and runs in flight go on by polling meanwhile' : ''}`, { url: this.#displayUrl, reason: this.#failure, jobs });
  }

  /** Detaches a connection that is over; `false` when the socket is closed for good (nothing more to do). */
  #forget(ws: WebSocket): boolean {
    detach(ws);
    if (this.#ws === ws) this.#ws = undefined;
    return this.#state !== 'closed';
  }

  /** The server refused the socket with its close code: retrying would be refused again. */
  #refused(ws: WebSocket, code: number, reason: string): void {
    if (!this.#forget(ws)) return;
    const error = new SocketRefusedError(code, reason);
    this.#giveUp(error, { code, reason, error }, this.#log.warn, { code, reason });
  }

  /**
   * Closes for good when reconnecting ends (a refusal, or `maxAttempts`): one
   * line, which says whether runs in flight go on by polling, then `error`, then `close`.
   */
  #giveUp(error: PlatformUIError, close: CloudSocketEvents['close'], line: Log['warn'], details: Record<string, unknown>): void {
    const jobs = this.#jobs.size;
    line?.(`socket ${this.#displayUrl}: ${error.message}${jobs ? '; runs in flight go on by polling' : ''}`, { url: this.#displayUrl, ...details, jobs });
    this.#emit('error', { error });
    this.#shutdown(close);
  }

  #scheduleReconnect(code: number | undefined): void {
    if (this.#state === 'closed') return;
    const { baseDelay = 500, maxDelay = 10_000, maxAttempts = Infinity } = this.#opts.reconnect ?? {};
    this.#attempt++;
    if (this.#attempt > maxAttempts) {
      const error = new PlatformUIError(`Gave up reconnecting after ${maxAttempts} attempts${this.#failure ? ` (the last: ${this.#failure})` : ''}`);
      // With no job to fall back to polling and nobody listening for `error`, only the log can tell.
      // (`maxAttempts: 0` asked for no reconnect at all: no news.)
      const unseen = this.#jobs.size === 0 && !this.#listeners.has('error') && maxAttempts > 0;
      const line = unseen ? this.#log.error : maxAttempts > 0 ? this.#log.warn : this.#log.debug;
      this.#giveUp(error, { code: 1000, reason: `gave up after ${maxAttempts} reconnect attempts` }, line, { attempts: maxAttempts });
      return;
    }
    this.#state = 'reconnecting';
    // Jitter that never drops below half the step: a storm of clients spreads out, and no attempt comes early.
    const step = Math.min(maxDelay, baseDelay * 2 ** (this.#attempt - 1));
    const delay = Math.round(step / 2 + (Math.random() * step) / 2);
    // The reason at debug now; at warn only once the retry begins (#retrying).
    const why = this.#failure ? `: ${this.#failure}` : '';
    this.#log.debug?.(`socket reconnecting in ${delay} ms (attempt ${this.#attempt})${why}`, { delayMs: delay, attempt: this.#attempt, ...(code !== undefined ? { code } : {}) });
    this.#emit('reconnecting', { attempt: this.#attempt, delay, code });
    const t = setTimeout(() => {
      this.#timers.delete(t);
      this.#retrying();
      void this.#connect();
    }, delay);
    this.#timers.add(t);
  }

  /** The one way to `closed`: clears every timer, the connection, listeners and held events, after telling `close` listeners. */
  #shutdown(event: CloudSocketEvents['close']): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#closedError = event.error;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    clearTimeout(this.#idleTimer);
    clearTimeout(this.#sweepTimer);
    this.#sweepTimer = undefined;
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
    if (!event.error) this.#log.debug?.(`socket closed: ${event.reason}`, { code: event.code, reason: event.reason });
    this.#emit('close', event);
    this.#listeners.clear();
    this.#jobs.clear();
    this.#held.clear();
    this.#heldBytes = 0;
    this.#dropped.clear();
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
        if (this.#ws) this.#drop(this.#ws, IDLE_DROP_CODE);
      }
      else this.#idleTimer = setTimeout(check, this.#opts.idleTimeout - quiet);
    };
    this.#idleTimer = setTimeout(check, this.#opts.idleTimeout);
  }

  // --- messages

  #receive(data: unknown): void {
    const log = this.#log;
    if (typeof data === 'string') {
      const message = parseMessage(data);
      const id = promptIdOf(message);
      if (id && (message.type === 'executing' || message.type === 'progress' || message.type === 'execution_start')) this.#lastPromptId = id;
      if (log.debug || log.warn) this.#logMessage(message, id, data.length);
      this.#emit('message', message);
      this.#emit(message.type as Named, message as never);
      if (id) this.#route(id, message, data.length);
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
    if (id) this.#route(id, event, 0);
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

  /** Delivers a job's event to its subscribers, or holds it (`bytes`: its text length) for a later one. */
  #route(promptId: string, event: SocketEvent, bytes: number): void {
    const subs = this.#jobs.get(promptId);
    if (subs) {
      for (const h of subs) this.#safely(h, event);
      return;
    }
    // Every socket of an account sees every job: previews of jobs nobody claims would pile up,
    // and a job whose first events were dropped already is one its subscriber will hear was lost.
    if (event.type === 'binary' || this.#dropped.has(promptId)) return;
    let held = this.#held.get(promptId);
    if (!held) {
      for (const [id, h] of this.#held) if (this.#held.size >= HOLD_MAX_JOBS) this.#dropHeld(id, h); else break;
      this.#held.set(promptId, (held = { until: Date.now() + this.#opts.holdFor, events: [], bytes: 0, lost: false }));
      this.#armSweep();
    }
    // The byte bound drops other jobs, oldest first; this job keeps its first events.
    for (const [id, h] of this.#held) {
      if (this.#heldBytes + bytes <= HOLD_MAX_BYTES) break;
      if (id !== promptId) this.#dropHeld(id, h);
    }
    if (held.events.length >= HOLD_MAX_EVENTS || this.#heldBytes + bytes > HOLD_MAX_BYTES) {
      held.lost = true;
      return;
    }
    held.events.push(event);
    held.bytes += bytes;
    this.#heldBytes += bytes;
  }

  /** Forgets a job's held events (handed to its subscriber). */
  #release(promptId: string, held: Held): void {
    this.#held.delete(promptId);
    this.#heldBytes -= held.bytes;
  }

  /** Drops a job's held events, remembering (bounded) that it lost them. */
  #dropHeld(promptId: string, held: Held): void {
    this.#release(promptId, held);
    for (const id of this.#dropped.keys()) if (this.#dropped.size >= DROPPED_MAX_JOBS) this.#dropped.delete(id); else break;
    this.#dropped.set(promptId, Date.now() + DROPPED_FOR_MS);
  }

  /** Arms the sweep for the earliest expiry, unless armed or nothing is held. Unref'd: it never keeps a process alive. */
  #armSweep(): void {
    if (this.#sweepTimer !== undefined || this.#state === 'closed') return;
    const first = Math.min(this.#held.values().next().value?.until ?? Infinity, this.#dropped.values().next().value ?? Infinity);
    if (first === Infinity) return;
    this.#sweepTimer = setTimeout(() => {
      this.#sweepTimer = undefined;
      const now = Date.now();
      // Both maps are in order of expiry: stop at the first entry still due later.
      for (const [id, h] of this.#held) if (h.until <= now) this.#dropHeld(id, h); else break;
      for (const [id, until] of this.#dropped) if (until <= now) this.#dropped.delete(id); else break;
      this.#armSweep();
    }, Math.max(0, first - Date.now()));
    (this.#sweepTimer as { unref?: () => void }).unref?.();
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

// Connection errors from some WebSocket implementations quote the URL, token included.
function toSafeError(error: unknown): PlatformUIError {
  return new PlatformUIError(`WebSocket connection failed: ${redactText(error instanceof Error ? error.message : String(error))}`);
}
