/**
 * One Comfy API v2 job's event stream (`GET /api/v2/jobs/{id}/events`) as the
 * socket a job follower listens to (`FollowSocket`): v2's SSE events become the
 * SDK's `SocketEvent`s, and the stream's life becomes the socket's `open`,
 * `reconnecting` and `close`. It is a live feed only: the follower polls the job,
 * and the poll is the truth (`spec/cloud-v2.md` §3, §9.4).
 *
 * Its life is a small state machine ({@link StreamPhase}, moves in {@link STREAM_MOVES}):
 *
 * ```text
 *  idle ──follow──▶ connecting ──opened──▶ open ──finished──▶ ended
 *   ▲                │    ▲                 │
 *   │          failed│    │timer            │dropped (the body ended or failed
 *   │                ▼    │                 │  before a terminal status, or idle)
 *   │               waiting ◀───────────────┘
 *   └── unfollow (the last handler left: the server's stream slot is released)
 *  any ──close(), or a refusal (501, 401, 403, 404, not an event stream)──▶ closed
 * ```
 *
 * A connection counts as a success only once it has stayed open
 * {@link STREAM_STABLE_AFTER_MS}: a server that accepts and ends streams at once
 * backs off like one that refuses them, so connects stay within the bound of the
 * v1 socket (at most 6 in 10 s).
 *
 * @module
 */
import { backoff } from '../../transport/backoff.ts';
import { describeError, SILENT, type Log } from '../../transport/log.ts';
import { retryAfterMs } from '../../transport/retry-after.ts';
import { realClock, type Clock, type TimerHandle } from '../follow/clock.ts';
import type { FollowSocket } from '../follow/follower.ts';
import type { SocketEvent, SocketState } from '../socket.ts';
import { JOB_STATUS_EVENT, jobSent, translate, type JobSent, type JobStatusEventData } from './events.ts';
import { readEvents, type SseItem } from './sse.ts';

/**
 * The first reconnect waits between half and all of this (ms); each failed
 * attempt in a row doubles it, up to {@link STREAM_BACKOFF_MAX_MS}.
 *
 * @example
 * ```ts
 * // attempt n waits between half and all of:
 * Math.min(STREAM_BACKOFF_MAX_MS, STREAM_BACKOFF_BASE_MS * 2 ** (n - 1)); // 500, 1000, 2000, 4000, 8000, 10000, …
 * // so the shortest waits (250, 500, 1000, 2000, 4000, 5000) allow at most 6 connects in any 10 s.
 * ```
 */
export const STREAM_BACKOFF_BASE_MS = 500;
/** The longest step of the backoff (ms): a wait is between half and all of it. */
export const STREAM_BACKOFF_MAX_MS = 10_000;
/** A stream that ends sooner than this (ms) after opening is a failed attempt: the backoff keeps growing. */
export const STREAM_STABLE_AFTER_MS = 5000;
/** A stream (or an answer to its request) silent this long (ms, comments count) is presumed dead and reopened. */
export const STREAM_IDLE_MS = 45_000;
/** After the job's terminal status, how long (ms) the stream is still read for frames the server sends after it (outputs). */
export const STREAM_AFTER_END_MS = 2000;
/** The longest `Retry-After` (ms) honoured as given; a longer one is cut to this (the follower polls meanwhile). */
export const STREAM_MAX_RETRY_AFTER_MS = 600_000;

/**
 * - `idle`: no job to follow (none subscribed, or only the deferred id).
 * - `connecting`: the request for the job's stream is out.
 * - `open`: the stream is being read.
 * - `waiting`: the backoff before the next attempt.
 * - `ended`: the job's terminal status came and its stream is over: no reconnect.
 * - `closed`: for good (`close()`, or the server refused the stream).
 */
export type StreamPhase = 'idle' | 'connecting' | 'open' | 'waiting' | 'ended' | 'closed';

/** What moves the stream. */
export type StreamInput = 'follow' | 'unfollow' | 'opened' | 'failed' | 'dropped' | 'finished' | 'timer' | 'refused' | 'close';

/**
 * Every move; an input a phase does not list changes nothing there.
 *
 * @example
 * ```ts
 * STREAM_MOVES.open.dropped; // 'waiting'
 * STREAM_MOVES.closed.follow; // undefined: closed is for good
 * ```
 */
export const STREAM_MOVES: Readonly<Record<StreamPhase, Partial<Record<StreamInput, StreamPhase>>>> = {
  idle: { follow: 'connecting', close: 'closed' },
  connecting: { opened: 'open', failed: 'waiting', refused: 'closed', unfollow: 'idle', close: 'closed' },
  open: { finished: 'ended', dropped: 'waiting', refused: 'closed', unfollow: 'idle', close: 'closed' },
  waiting: { timer: 'connecting', unfollow: 'idle', close: 'closed' },
  ended: { follow: 'connecting', unfollow: 'idle', close: 'closed' },
  closed: {},
};

/** The socket state a phase shows the follower: never `connecting` (it would wait for it). */
const SHOWN: Readonly<Record<StreamPhase, SocketState>> = { idle: 'reconnecting', connecting: 'reconnecting', open: 'open', waiting: 'reconnecting', ended: 'closed', closed: 'closed' };

/** Lifecycle events of {@link JobEventStream}, the same as `CloudSocket`'s, plus the HTTP status when there was one. */
export interface JobEventStreamEvents {
  open: { reconnect: boolean };
  reconnecting: { attempt: number; delay: number; code: undefined; status?: number; reason: string };
  close: { code: undefined; reason: string; status?: number };
}

/** What {@link JobEventStream} needs. */
export interface JobEventStreamInit {
  /** Opens the job's stream: the 200 response, body unread, or throws the SDK's `APIError` (`status`, `retryAfter`, `code`). */
  open(jobId: string, signal: AbortSignal): Promise<Response>;
  log?: Log;
  /** An id subscribed to without a stream: the Idempotency-Key a run listens under before the server names the job. */
  defer?: string;
  /** Default {@link STREAM_IDLE_MS}. */
  idleMs?: number;
  clock?: Clock;
  /** Jitter source, `Math.random` by default. */
  random?: () => number;
}

type Handler = (e: SocketEvent) => void;
interface Sub { handler: Handler; onLost: (() => void) | undefined }

/**
 * A v2 job's events, as the socket a `JobFollower` follows it with. One job at
 * a time: subscribing another id moves the stream to that job.
 *
 * @example
 * ```ts
 * const stream = new JobEventStream({ open: (id, signal) => transport.send({ method: 'GET', path: path`api/v2/jobs/${id}/events`, options: { signal } }), log, defer: idempotencyKey });
 * const off = stream.subscribe(jobId, (e) => { if (e.type === 'progress') console.log(e.data.value, '/', e.data.max); });
 * stream.on('close', ({ reason }) => console.log('polling from now on:', reason));
 * // … off() releases the server's stream slot; stream.close() ends it for good.
 * ```
 */
export class JobEventStream implements FollowSocket {
  /** v2 streams carry no client id. */
  readonly clientId: undefined = undefined;
  /** The job's end is confirmed by a poll: the follower polls a job just submitted at once. */
  readonly pollsAtOnce = true;
  readonly #open: JobEventStreamInit['open'];
  readonly #log: Log;
  readonly #defer: string | undefined;
  readonly #idleMs: number;
  readonly #clock: Clock;
  readonly #random: () => number;
  #phase: StreamPhase = 'idle';
  #subs = new Map<string, Set<Sub>>();
  #listeners = new Map<string, Set<(e: never) => void>>();
  /** The job the stream follows, and what was sent of it (kept across reconnects). */
  #job: JobSent | undefined;
  /** The current attempt's controller: aborting it ends the request or the stream. */
  #conn: AbortController | undefined;
  #timer: TimerHandle;
  #idleTimer: TimerHandle;
  #lastByteAt = 0;
  #openedAt = 0;
  #opens = 0;
  /** Failed attempts in a row: reset only by a stream that stayed open {@link STREAM_STABLE_AFTER_MS}. */
  #attempt = 0;
  #warned = new Set<string>();

  constructor(init: JobEventStreamInit) {
    this.#open = init.open;
    this.#log = init.log ?? SILENT;
    this.#defer = init.defer;
    this.#idleMs = init.idleMs ?? STREAM_IDLE_MS;
    this.#clock = init.clock ?? realClock;
    this.#random = init.random ?? Math.random;
  }

  /** `open` while a stream is read; `reconnecting` while none is (never `connecting`); `closed` after the job's end, `close()` or a refusal. */
  get state(): SocketState {
    return SHOWN[this.#phase];
  }

  /** The phase of the state machine (finer than {@link state}). */
  get phase(): StreamPhase {
    return this.#phase;
  }

  /** Listens to `open`, `reconnecting` or `close`; returns the function that stops listening. Other names are accepted and never fire. */
  on<K extends keyof JobEventStreamEvents>(type: K, handler: (event: JobEventStreamEvents[K]) => void): () => void;
  on(type: string, handler: (event: never) => void): () => void;
  on(type: string, handler: (event: never) => void): () => void {
    let set = this.#listeners.get(type);
    if (!set) this.#listeners.set(type, (set = new Set()));
    set.add(handler);
    return () => void set.delete(handler);
  }

  /**
   * Delivers the job's events to `handler`, opening its stream (except for the
   * deferred id). `onLost` is told when the stream drops before the job's end:
   * v2 has no resume, frames sent meanwhile are lost. Unsubscribing the job's
   * last handler ends its stream.
   */
  subscribe(jobId: string, handler: Handler, options: { onLost?: () => void } = {}): () => void {
    let set = this.#subs.get(jobId);
    if (!set) this.#subs.set(jobId, (set = new Set()));
    const sub: Sub = { handler, onLost: options.onLost };
    set.add(sub);
    if (jobId !== this.#defer && this.#job?.id !== jobId && this.#phase !== 'closed') this.#follow(jobId);
    return () => {
      if (!set.delete(sub) || set.size > 0) return;
      this.#subs.delete(jobId);
      if (this.#job?.id !== jobId) return;
      this.#job = undefined;
      this.#move('unfollow');
      const next = [...this.#subs.keys()].reverse().find((id) => id !== this.#defer);
      if (next !== undefined) this.#follow(next);
    };
  }

  /** Ends the stream for good, and forgets every handler. */
  close(reason = 'closed by client'): void {
    this.#move('close', { reason });
  }

  #follow(jobId: string): void {
    if (this.#job) this.#move('unfollow');
    this.#job = jobSent(jobId);
    this.#attempt = 0;
    this.#move('follow');
  }

  /** The one way phases change: the table says where `input` leads, then the new phase is entered. */
  #move(input: StreamInput, why: { reason?: string; status?: number; delay?: number } = {}): void {
    const from = this.#phase;
    const to = STREAM_MOVES[from][input];
    if (!to) return;
    this.#phase = to;
    // Leaving a phase: its attempt and timers are over.
    this.#clock.clearTimeout(this.#timer);
    this.#clock.clearTimeout(this.#idleTimer);
    this.#timer = this.#idleTimer = undefined;
    if (to !== 'open') {
      this.#conn?.abort();
      this.#conn = undefined;
    }
    if (from === 'open' && (input === 'dropped' || input === 'refused') && this.#job && !this.#job.terminal) this.#lost(this.#job.id);
    const id = this.#job?.id;
    switch (to) {
      case 'connecting':
        return void this.#connect();
      case 'open':
        return this.#emit('open', { reconnect: this.#opens++ > 0 });
      case 'waiting': {
        const delay = why.delay ?? this.#backoff();
        this.#log.debug?.(`job ${id}: event stream reconnecting in ${delay} ms (attempt ${this.#attempt}): ${why.reason}`, { promptId: id, delayMs: delay, attempt: this.#attempt, ...(why.status ? { status: why.status } : {}) });
        this.#timer = this.#clock.setTimeout(() => this.#move('timer'), delay);
        return this.#emit('reconnecting', { attempt: this.#attempt, delay, code: undefined, reason: why.reason ?? 'dropped', ...(why.status ? { status: why.status } : {}) });
      }
      case 'ended':
        this.#log.debug?.(`job ${id}: event stream ended with the job`, { promptId: id });
        return this.#emit('close', { code: undefined, reason: 'the job ended' });
      case 'closed':
        this.#emit('close', { code: undefined, reason: why.reason ?? 'closed', ...(why.status ? { status: why.status } : {}) });
        this.#listeners.clear();
        this.#subs.clear();
        this.#job = undefined;
        return;
    }
  }

  /** Attempt `n` (failed attempts in a row) waits a random delay between half and all of `min(max, base · 2^(n-1))`: a storm of clients spreads out, and no attempt comes early. */
  #backoff(): number {
    return backoff(this.#attempt - 1, { first: STREAM_BACKOFF_BASE_MS, max: STREAM_BACKOFF_MAX_MS, jitter: 'half' }, this.#random);
  }

  async #connect(): Promise<void> {
    const job = this.#job!;
    const conn = (this.#conn = new AbortController());
    this.#lastByteAt = this.#clock.now();
    this.#armIdle(conn);
    let res: Response;
    try {
      res = await this.#open(job.id, conn.signal);
    } catch (err) {
      if (this.#conn === conn) this.#failed(err, conn.signal.aborted);
      return;
    }
    if (this.#conn !== conn) return void res.body?.cancel().catch(() => undefined);
    if (!res.ok) {
      // The contract is a throw; an answer handed back as it came is read the same way.
      void res.body?.cancel().catch(() => undefined);
      return this.#failed({ status: res.status, retryAfter: res.headers.get('retry-after') ?? undefined }, false);
    }
    const type = res.headers.get('content-type');
    if (!res.body || (type !== null && !type.toLowerCase().includes('text/event-stream'))) {
      void res.body?.cancel().catch(() => undefined);
      return this.#refused(res.status, 'not_an_event_stream', `the answer is not an event stream (${type ?? 'no body'})`);
    }
    this.#openedAt = this.#lastByteAt = this.#clock.now();
    this.#move('opened');
    if (this.#conn !== conn) return void res.body.cancel().catch(() => undefined); // an `open` listener unsubscribed
    this.#armIdle(conn);
    let why = 'the server ended the stream';
    try {
      const tapped = res.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ transform: (chunk, c) => ((this.#lastByteAt = this.#clock.now()), c.enqueue(chunk)) }));
      for await (const item of readEvents(tapped, conn.signal)) {
        if (this.#conn !== conn) return;
        this.#onItem(job, item);
      }
    } catch (err) {
      why = `the stream failed (${describeError(err)})`;
    }
    if (this.#conn === conn) this.#ended(why);
  }

  /** The stream is over: done after the job's end, else a drop (a failed attempt too unless it lasted). */
  #ended(why: string): void {
    if (this.#job?.terminal) return this.#move('finished');
    // Only a stream that lasted starts the count of failed attempts over.
    if (this.#clock.now() - this.#openedAt >= STREAM_STABLE_AFTER_MS) this.#attempt = 0;
    this.#attempt++;
    this.#move('dropped', { reason: why });
  }

  /** The request failed: a refusal closes for good; anything else is tried again, a 429 no sooner than its Retry-After. */
  #failed(err: unknown, idle: boolean): void {
    const e = (err ?? {}) as { status?: unknown; retryAfter?: unknown; code?: unknown };
    const status = typeof e.status === 'number' ? e.status : undefined;
    const code = typeof e.code === 'string' ? e.code : undefined;
    if (status === 501 || status === 401 || status === 403 || status === 404) return this.#refused(status, code, `${status}${code ? ` ${code}` : ''}`);
    if (status !== undefined && status < 500 && status !== 408 && status !== 429) return this.#refused(status, code, `${status}${code ? ` ${code}` : ''}`);
    this.#attempt++;
    let delay = this.#backoff();
    const after = status === 429 ? retryAfterMs(typeof e.retryAfter === 'string' ? e.retryAfter : undefined, this.#clock.now()) : undefined;
    if (after !== undefined) delay = Math.max(delay, Math.min(after, STREAM_MAX_RETRY_AFTER_MS));
    const reason = idle ? `no answer for ${this.#idleMs} ms` : status === 429 ? `429${code ? ` ${code}` : ''}${after !== undefined ? `, Retry-After ${after} ms` : ''}` : describeError(err);
    this.#move('failed', { reason, delay, ...(status ? { status } : {}) });
  }

  #refused(status: number, code: string | undefined, reason: string): void {
    const id = this.#job?.id;
    const key = `${status}`;
    if (!this.#warned.has(key)) {
      this.#warned.add(key);
      this.#log.warn?.(`job ${id}: the server gives no event stream (${reason}); following the job by polling`, { promptId: id, status, ...(code ? { code } : {}) });
    }
    this.#move('refused', { reason, status });
  }

  /**
   * One timer per attempt checks the time of the last byte (the hot path only
   * stores a number). It moves the machine itself: a request or a body that
   * ignores its abort signal must not hold the stream.
   */
  #armIdle(conn: AbortController): void {
    const check = () => {
      if (this.#conn !== conn) return;
      const quiet = this.#clock.now() - this.#lastByteAt;
      if (quiet < this.#idleMs) return void (this.#idleTimer = this.#clock.setTimeout(check, this.#idleMs - quiet));
      if (this.#phase === 'connecting') this.#failed(undefined, true);
      else this.#ended(`no byte for ${quiet} ms`);
    };
    this.#idleTimer = this.#clock.setTimeout(check, this.#idleMs);
  }

  // --- events

  #onItem(job: JobSent, item: SseItem): void {
    if ('comment' in item) return;
    const events = translate(job, item.event, item.data);
    for (const e of events) this.#deliver(job.id, e);
    if (job.terminal && this.#timer === undefined) {
      // Outputs may follow the terminal status: read them a while, unless the server ends the stream first.
      this.#timer = this.#clock.setTimeout(() => {
        if (this.#job === job && this.#phase === 'open') this.#move('finished');
      }, STREAM_AFTER_END_MS);
    }
    const kind = events[0]?.type;
    if (kind === 'malformed' && this.#warnOnce(`malformed ${item.event}`)) {
      // The reason, never the data: it may carry a user's prompt.
      this.#log.warn?.(`job ${job.id}: a malformed ${item.event.slice(0, 40)} event (${item.data.length} chars) was passed on as 'malformed'`, { promptId: job.id, event: item.event.slice(0, 40), chars: item.data.length });
    }
  }

  #warnOnce(key: string): boolean {
    if (this.#warned.has(key)) return false;
    this.#warned.add(key);
    return true;
  }

  /**
   * Tells the job's followers it ended (`status`, terminal) though its stream
   * did not say so: this client stopped it, and comfy-api-proxy's stream of a
   * job stopped while queued stays silent for 15 s before it says `expired`.
   * The follower then reads the job (the poll is the truth).
   */
  ended(jobId: string, status: string): void {
    this.#deliver(jobId, { type: 'unknown', rawType: JOB_STATUS_EVENT, data: { prompt_id: jobId, status, terminal: true } satisfies JobStatusEventData });
  }

  #deliver(jobId: string, e: SocketEvent): void {
    for (const sub of [...(this.#subs.get(jobId) ?? [])]) this.#safely(() => sub.handler(e));
  }

  #lost(jobId: string): void {
    for (const sub of [...(this.#subs.get(jobId) ?? [])]) if (sub.onLost) this.#safely(sub.onLost);
  }

  #emit<K extends keyof JobEventStreamEvents>(type: K, event: JobEventStreamEvents[K]): void {
    for (const h of [...(this.#listeners.get(type) ?? [])]) this.#safely(() => (h as (e: JobEventStreamEvents[K]) => void)(event));
  }

  // A throwing handler must not end the stream or starve the others: only the log can tell.
  #safely(f: () => void): void {
    try {
      f();
    } catch (err) {
      this.#log.error?.(`event stream: a listener threw: ${describeError(err)}`, { error: err instanceof Error ? err.name : typeof err });
    }
  }
}

