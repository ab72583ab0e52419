/**
 * `sleep()`: a wait that an abort ends at once, on the runtime's timers or on
 * injected ones (the job follower's clock, in tests).
 *
 * @module
 */
import { APIUserAbortError } from '../errors.ts';

/** Timers as `sleep()` uses them. */
export interface Timers {
  /** Calls `fn` once after `ms`. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancels a timer. */
  clearTimeout(handle: unknown): void;
}

const RUNTIME: Timers = { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>) };

/**
 * Waits `ms`; rejects with {@link APIUserAbortError} when the signal aborts first.
 *
 * @example
 * ```ts
 * await sleep(250, controller.signal);
 * ```
 */
export function sleep(ms: number, signal?: AbortSignal, timers: Timers = RUNTIME): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new APIUserAbortError(undefined, { cause: signal.reason }));
    const onAbort = () => {
      timers.clearTimeout(t);
      reject(new APIUserAbortError(undefined, { cause: signal!.reason }));
    };
    const t = timers.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
