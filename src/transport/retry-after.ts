/**
 * `Retry-After`, read one way for every caller: the transport's retries, a
 * v2 submission waiting out `queue_full`, a v2 event stream told to wait.
 *
 * @module
 */

/**
 * `Retry-After` (delta seconds, or an HTTP date) in ms from `now`;
 * `undefined` when absent or unreadable.
 *
 * @example
 * ```ts
 * retryAfterMs('5'); // 5000
 * retryAfterMs('soon'); // undefined
 * ```
 */
export function retryAfterMs(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
