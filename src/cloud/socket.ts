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
import { parseMessage, promptIdOf } from './messages.ts';
import { eventIterator } from './socket/iterate.ts';
import { detach, IDLE_DROP_CODE, isRefusal, Reconnects, STABLE_AFTER_MS, toSafeError } from './socket/reconnect.ts';
import { logMessage } from './socket/message-log.ts';
import { JobRoutes } from './socket/routes.ts';
import type { BinaryEvent, CloudSocketEvents, EventOf, Handler, Named, SocketEvent, SocketState, SocketTarget } from './socket/types.ts';
import { randomUuid } from './uuid.ts';
import { socketUrl, type CloudSocketOptions } from './socket/options.ts';

export type { BinaryEvent, CloudSocketEvents, SocketEvent, SocketState, SocketTarget } from './socket/types.ts';
export { checkSocketOptions, type CloudSocketOptions } from './socket/options.ts';
export { HOLD_MAX_EVENTS } from './socket/routes.ts';

export { STABLE_AFTER_MS } from './socket/reconnect.ts';

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
  /** Failed attempts in a row, and why the last failed. */
  #reconnects = new Reconnects();
  /** When the current (or last) connection opened (ms since epoch); 0 before the first. */
  #openedAt = 0;
  /** What `ready()` and `once()` reject with once the socket is closed (a refusal, when there was one). */
  #closedError: PlatformUIError | undefined;
  #timers = new Set<ReturnType<typeof setTimeout>>();
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #lastMessageAt = 0;
  #listeners = new Map<string, Set<Handler<never>>>();
  /** Job subscribers and the events held for jobs nobody has claimed yet. */
  #jobs: JobRoutes;
  #lastPromptId: string | undefined;
  #displayUrl: string;
  #log: Log;
  /** Message types already warned about as malformed or off-schema (`'malformed'` for text that is not a message). */
  #warnedTypes = new Set<string>();

  constructor(target: SocketTarget, options: CloudSocketOptions = {}) {
    this.#target = target;
    this.#opts = { idleTimeout: 30_000, holdFor: 5000, ...options };
    this.#jobs = new JobRoutes(this.#opts.holdFor, (handler, event) => this.#safely(handler, event));
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
    return eventIterator(this, options);
  }

  /**
   * Routes every event of one job to `handler`, starting with the events
   * that arrived before anyone asked for them (held `holdFor` ms). The hold is
   * bounded: when some of those were dropped, `options.onLost` is called
   * before the replay. Returns the unsubscribe function.
   */
  subscribe(promptId: string, handler: Handler<SocketEvent>, options: { onLost?: () => void } = {}): () => void {
    const off = this.#jobs.subscribe(promptId, handler, options.onLost);
    this.#armIdle();
    return () => {
      off();
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
    return this.#jobs.held;
  }

  #url(token: string | undefined): string {
    return socketUrl(this.#target.baseUrl, this.clientId, token);
  }

  // --- lifecycle: #state becomes 'open' in onopen, 'reconnecting' in #scheduleReconnect, 'closed' in #shutdown only.

  async #connect(): Promise<void> {
    let ws: WebSocket;
    let token: string | undefined;
    const attempt = this.#reconnects.attempt;
    this.#log.debug?.(`socket connecting to ${this.#displayUrl}${attempt ? ` (attempt ${attempt + 1})` : ''}`, { url: this.#displayUrl, attempt: attempt + 1 });
    try {
      let Ctor: WebSocketConstructor;
      [Ctor, token] = await Promise.all([this.#opts.WebSocket ?? platform.webSocket(), this.#target.credential()]);
      if (this.#state === 'closed') return;
      ws = new Ctor(this.#url(token));
    } catch (error) {
      const safe = toSafeError(error);
      this.#reconnects.failing(safe.message);
      this.#emit('error', { error: safe });
      this.#scheduleReconnect(undefined);
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.#ws = ws;
    ws.onopen = () => {
      const reconnect = this.#openedAt > 0;
      // The count of failed attempts stays: only a connection that lasts resets it (see #ended).
      this.#state = 'open';
      this.#openedAt = this.#lastMessageAt = Date.now();
      ws.send(JSON.stringify({ type: 'feature_flags', data: this.#opts.featureFlags ?? { supports_preview_metadata: true } }));
      this.#armIdle();
      this.#log.debug?.(`socket open${reconnect ? ' again' : ''}: ${this.#displayUrl}`, { url: this.#displayUrl, reconnect, clientId: this.clientId });
      this.#emit('open', { reconnect });
      if (reconnect) this.#emit('reconnected', { attempt: this.#reconnects.attempt });
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
   * closed (`Reconnects.ended` counts it as a success or a failed attempt).
   */
  #ended(ws: WebSocket, code: number | undefined, why?: string): void {
    if (!this.#forget(ws)) return;
    this.#reconnects.ended(this.#state === 'open' ? Date.now() - this.#openedAt : undefined, code, why);
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

  /** A retry begins after a failed attempt: the first of a run of them is a warning. */
  #retrying(): void {
    const failure = this.#reconnects.warnNow();
    if (failure === undefined) return;
    const jobs = this.#jobs.size;
    this.#log.warn?.(`socket could not connect to ${this.#displayUrl}: ${failure}; retrying${jobs ? ', and runs in flight go on by polling meanwhile' : ''}`, { url: this.#displayUrl, reason: failure, jobs });
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
    const next = this.#reconnects.next(this.#opts.reconnect);
    if ('error' in next) {
      const { error, maxAttempts } = next;
      // With no job to fall back to polling and nobody listening for `error`, only the log can tell.
      // (`maxAttempts: 0` asked for no reconnect at all: no news.)
      const unseen = this.#jobs.size === 0 && !this.#listeners.has('error') && maxAttempts > 0;
      const line = unseen ? this.#log.error : maxAttempts > 0 ? this.#log.warn : this.#log.debug;
      this.#giveUp(error, { code: 1000, reason: `gave up after ${maxAttempts} reconnect attempts` }, line, { attempts: maxAttempts });
      return;
    }
    this.#state = 'reconnecting';
    const { delay } = next;
    const { attempt, failure } = this.#reconnects;
    // The reason at debug now; at warn only once the retry begins (#retrying).
    const why = failure ? `: ${failure}` : '';
    this.#log.debug?.(`socket reconnecting in ${delay} ms (attempt ${attempt})${why}`, { delayMs: delay, attempt, ...(code !== undefined ? { code } : {}) });
    this.#emit('reconnecting', { attempt, delay, code });
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
      if (log.debug || log.warn) logMessage(log, this.#warnedTypes, message, id, data.length);
      this.#emit('message', message);
      this.#emit(message.type as Named, message as never);
      if (id) this.#jobs.route(id, message, data.length);
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
    if (id) this.#jobs.route(id, event, 0);
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
