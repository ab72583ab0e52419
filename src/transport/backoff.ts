/**
 * The one backoff formula of the SDK: every wait that grows with failures
 * (the transport's retries, the socket's and the event stream's reconnects,
 * polls, probes, look-ups) names its parameters here instead of writing its own.
 */

/** The parameters of a growing wait. */
export interface BackoffOptions {
  /** The wait (ms) of attempt 0, before jitter. */
  first: number;
  /** The longest wait (ms): no attempt, jitter included, waits longer. */
  max: number;
  /** Each attempt's step is the previous one's times this. Default 2. */
  factor?: number;
  /**
   * How a wait is spread around its step, so that many clients do not retry in step:
   * `'none'` (the step), `'full'` (between 0 and the step), `'half'` (between half the step and
   * the step), or a fraction `f` (the step ± f, never above `max`). Default `'none'`.
   */
  jitter?: 'none' | 'full' | 'half' | number;
}

/**
 * The wait (ms, rounded) before retry `attempt` (0 for the first retry).
 *
 * @example
 * ```ts
 * backoff(0, { first: 500, max: 8000 }); // 500
 * backoff(3, { first: 500, max: 8000 }); // 4000
 * backoff(9, { first: 500, max: 8000 }); // 8000
 * backoff(2, { first: 1000, max: 10_000, factor: 1.5, jitter: 0.2 }); // 1800 to 2700
 * ```
 */
export function backoff(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const { first, max, factor = 2, jitter = 'none' } = options;
  const step = Math.min(max, first * factor ** Math.max(0, attempt));
  if (jitter === 'none') return Math.round(step);
  if (jitter === 'full') return Math.round(random() * step);
  if (jitter === 'half') return Math.round(step / 2 + (random() * step) / 2);
  return Math.min(max, Math.round(step * (1 - jitter + 2 * jitter * random())));
}
