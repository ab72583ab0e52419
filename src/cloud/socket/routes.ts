/**
 * The socket's routing of job events by `prompt_id`: subscribers, and the
 * events of jobs nobody has claimed yet, held briefly (a job's first events
 * can beat its submit response) within bounds, with a memory of the jobs whose
 * held events were dropped so that a late subscriber hears it missed some.
 *
 * @module
 */
import type { Handler, SocketEvent } from './types.ts';

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
 * Job subscribers and held events. `deliver` calls one handler (the socket's,
 * which reports a handler that throws); `holdFor` is how long events wait for
 * a subscriber.
 */
export class JobRoutes {
  readonly #holdFor: number;
  readonly #deliver: (handler: Handler<SocketEvent>, event: SocketEvent) => void;
  #jobs = new Map<string, Set<Handler<SocketEvent>>>();
  /** Events of unclaimed jobs, oldest job first (so also in order of `until`). */
  #held = new Map<string, Held>();
  #heldBytes = 0;
  /** Jobs whose held events were dropped → until when that is remembered; oldest first. */
  #dropped = new Map<string, number>();
  /** The one timer that releases held events on time, even when no message comes; set only while something is held. */
  #sweepTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(holdFor: number, deliver: (handler: Handler<SocketEvent>, event: SocketEvent) => void) {
    this.#holdFor = holdFor;
    this.#deliver = deliver;
  }

  /** Jobs with a subscriber. */
  get size(): number {
    return this.#jobs.size;
  }

  /** See `CloudSocket.held`. */
  get held(): { jobs: number; events: number; bytes: number } {
    let events = 0;
    for (const h of this.#held.values()) events += h.events.length;
    return { jobs: this.#held.size, events, bytes: this.#heldBytes };
  }

  /** Adds a subscriber and replays the job's held events to it (`onLost` first when some were dropped). Returns the unsubscribe function. */
  subscribe(promptId: string, handler: Handler<SocketEvent>, onLost: (() => void) | undefined): () => void {
    let set = this.#jobs.get(promptId);
    if (!set) this.#jobs.set(promptId, (set = new Set()));
    set.add(handler);
    const held = this.#held.get(promptId);
    if (held) {
      this.#release(promptId, held);
      // The hold is bounded: a subscriber must know when it does not get every event.
      if (held.lost) onLost?.();
      for (const e of held.events) this.#deliver(handler, e);
    } else if (this.#dropped.delete(promptId)) onLost?.();
    return () => {
      set.delete(handler);
      if (set.size === 0) this.#jobs.delete(promptId);
    };
  }

  /** Delivers a job's event to its subscribers, or holds it (`bytes`: its text length) for a later one. */
  route(promptId: string, event: SocketEvent, bytes: number): void {
    const subs = this.#jobs.get(promptId);
    if (subs) {
      for (const h of subs) this.#deliver(h, event);
      return;
    }
    // Every socket of an account sees every job: previews of jobs nobody claims would pile up,
    // and a job whose first events were dropped already is one its subscriber will hear was lost.
    if (event.type === 'binary' || this.#dropped.has(promptId)) return;
    let held = this.#held.get(promptId);
    if (!held) {
      for (const [id, h] of this.#held) if (this.#held.size >= HOLD_MAX_JOBS) this.#dropHeld(id, h); else break;
      this.#held.set(promptId, (held = { until: Date.now() + this.#holdFor, events: [], bytes: 0, lost: false }));
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

  /** Forgets every subscriber and held event, and stops the sweep: the socket is closed for good. */
  clear(): void {
    this.#closed = true;
    clearTimeout(this.#sweepTimer);
    this.#sweepTimer = undefined;
    this.#jobs.clear();
    this.#held.clear();
    this.#heldBytes = 0;
    this.#dropped.clear();
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
    if (this.#sweepTimer !== undefined || this.#closed) return;
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
}
