/**
 * The retry decision of the transport's own requests: whether a failed
 * attempt is tried again, and after how long. (Whether the request may be
 * sent twice at all is `resend.ts`'s.)
 *
 * @module
 */
import { HttpFailure, NetworkFailure } from './attempt.ts';
import { backoff } from './backoff.ts';
import type { ResolvedRetry } from './options.ts';
import { retryAfterMs } from './retry-after.ts';
import { blockedPort, type ServiceKind } from './to-error.ts';

// 429 means "subscription inactive" on the cloud and 402 "insufficient credits":
// waiting does not fix either, so neither is ever retried there. (Comfy API v2's 429s say "wait": `rate_limited`, `queue_full`.)
const retryable = (status: number, service: ServiceKind): boolean => status === 408 || (status === 429 && service !== 'cloud') || (status >= 500 && status < 600);

/**
 * How long to wait before the next attempt, or `undefined` not to retry:
 * a 408, 429 (not on the cloud, where it means an inactive subscription)
 * or 5xx after the server's `Retry-After` (capped) or an exponential
 * backoff with full jitter; a network failure after the backoff. A timeout
 * is not retried: the request may still be running.
 */
export function retryDelay(failure: unknown, retry: ResolvedRetry, attempt: number, service: ServiceKind): number | undefined {
  // Full jitter: a random wait up to the capped step, so that clients failed together do not retry together.
  const wait = () => backoff(attempt, { first: 500, max: retry.backoffLimit, jitter: 'full' });
  if (failure instanceof HttpFailure) {
    if (!retryable(failure.response.status, service)) return undefined;
    const after = retryAfterMs(failure.response.headers.get('retry-after'));
    return after === undefined ? wait() : Math.min(retry.maxRetryAfter, after);
  }
  // A blocked port is refused again on every attempt.
  return failure instanceof NetworkFailure && !blockedPort(failure.cause) ? wait() : undefined;
}
