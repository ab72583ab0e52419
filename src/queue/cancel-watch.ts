/**
 * How a queue worker hears `cancel()` from any process: the cancel channel's
 * messages, and the jobs' cancel flags, read on reconnecting and every
 * {@link CANCEL_CHECK_MS} while jobs run (a message sent while its connection
 * was down is not heard again). A cancel aborts the run's signal, which stops
 * the job on its server.
 *
 * @module
 */
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { QueueKeys } from './connection.ts';

/** How often (ms) a worker reads the cancel flags of the jobs it runs: the bound on a cancel whose message it missed. */
export const CANCEL_CHECK_MS = 1000;

/** Why the processor stopped a job: a cancel from any process. */
const CANCEL = Symbol('cancelled');

/** A worker's watch for cancels of the jobs it runs. */
export class CancelWatch {
  readonly #redis: Redis;
  readonly #keys: QueueKeys;
  readonly #workers: () => Iterable<Worker>;
  readonly #running: () => Iterable<string>;
  #timer: ReturnType<typeof setInterval> | undefined;

  /**
   * @param redis Where the flags are read.
   * @param workers The worker's BullMQ workers, one of which runs the job.
   * @param running The ids of the jobs it runs now.
   */
  constructor(redis: Redis, keys: QueueKeys, workers: () => Iterable<Worker>, running: () => Iterable<string>) {
    this.#redis = redis;
    this.#keys = keys;
    this.#workers = workers;
    this.#running = running;
  }

  /** Listens on `sub` (a connection of its own: it subscribes) and starts reading the flags. */
  async start(sub: Redis): Promise<void> {
    sub.on('message', (_channel: string, jobId: string) => this.cancel(jobId));
    // A cancel published while this worker's connection was down is not heard again: its flag is read at once
    // on reconnecting, and every CANCEL_CHECK_MS while jobs run.
    sub.on('ready', () => void this.check());
    await sub.subscribe(this.#keys.cancelChannel);
    this.#timer = setInterval(() => void this.check(), CANCEL_CHECK_MS);
    this.#timer.unref?.();
  }

  /** Stops `jobId` if this worker runs it (its run's signal aborts: the job is stopped on its server). */
  cancel(jobId: string): void {
    for (const w of this.#workers()) w.cancelJob(jobId, CANCEL.description);
  }

  /** Cancels the jobs it runs whose cancel flag is set (a cancel whose message it missed). */
  async check(): Promise<void> {
    const ids = [...this.#running()];
    if (ids.length === 0) return;
    const flags = await Promise.all(ids.map((id) => this.#redis.exists(this.#keys.cancelled(id)))).catch(() => undefined);
    flags?.forEach((set, i) => set && this.cancel(ids[i]!));
  }

  /** Stops reading the flags (the subscription ends with its connection). */
  stop(): void {
    clearInterval(this.#timer);
  }
}
