/**
 * Which answers blame the request itself, not the caller's rights or credit nor the server: the one rule a refused
 * submission is judged by (`cloud/submit.ts`). Apart from `to-error.ts`'s status table, which it sits beside, so that
 * the submission's file (loaded on first use) takes no error class with it.
 *
 * @module
 */

/** Statuses that say who may act or pay, not what was sent: a refused submission answered with one keeps its class. */
const ABOUT_THE_CALLER = new Set([401, 402, 403, 429]);

/**
 * Whether an answer with `status` says the request itself was wrong (400,
 * 404, 409, 422…), not the caller's rights or credit nor the server: a
 * submission refused so, with an `error` in its body, is a `SubmissionError`.
 *
 * @example
 * ```ts
 * blamesRequest(400); // true
 * blamesRequest(402); // false: the credits, not the workflow
 * ```
 */
export function blamesRequest(status: number): boolean {
  return status < 500 && !ABOUT_THE_CALLER.has(status);
}
