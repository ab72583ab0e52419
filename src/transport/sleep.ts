/**
 * `sleep()`: a wait that an abort ends at once.
 *
 * @module
 */
import { APIUserAbortError } from '../errors.ts';

/** Waits `ms`; rejects with {@link APIUserAbortError} when the signal aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new APIUserAbortError(undefined, { cause: signal.reason }));
    const onAbort = () => {
      clearTimeout(t);
      reject(new APIUserAbortError(undefined, { cause: signal!.reason }));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
