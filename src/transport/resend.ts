/**
 * May a request be sent again after a failed attempt? The one rule, kept
 * pure so that it can be read and tested as a table: a request that starts
 * paid work (a submission, a proxy task's start, a publication) is never
 * sent twice by the transport, whatever `retry.allowPost` says; for a
 * submission, "again" means looking its chosen id up (`cloud/submission.ts`).
 *
 * @module
 */

/** What the rule looks at. */
export interface ResendQuestion {
  method: 'GET' | 'HEAD' | 'POST' | 'DELETE' | 'PUT';
  /** The request starts paid work (or work with effects that must not repeat). */
  paid: boolean;
  /** The caller's `retry.allowPost`. */
  allowPost: boolean;
  /** The body is a stream, consumed by the first attempt. */
  streamBody: boolean;
}

/**
 * Whether the transport may send this request again after a retryable
 * failure (a connection error, 408, 5xx).
 *
 * @example
 * ```ts
 * mayResend({ method: 'POST', paid: true, allowPost: true, streamBody: false }); // false
 * mayResend({ method: 'GET', paid: false, allowPost: false, streamBody: false }); // true
 * ```
 */
export function mayResend(q: ResendQuestion): boolean {
  if (q.paid || q.streamBody) return false;
  // PUT, like GET and DELETE, is idempotent by definition: sending it again changes nothing.
  return q.method !== 'POST' || q.allowPost;
}
