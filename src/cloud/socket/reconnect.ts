/**
 * The socket's reconnect policy: failed attempts in a row, why the last one
 * failed, when a run of failures is worth a warning, how long to wait before
 * the next attempt, and which close codes are a refusal. No timers, no socket:
 * `CloudSocket` asks it at each connection's end.
 *
 * @module
 */
import { PlatformUIError } from '../../errors.ts';
import { redactText } from '../../transport/redact.ts';
import { backoff } from '../../transport/backoff.ts';
import type { CloudSocketOptions } from './options.ts';

/** A connection that closes sooner than this (ms) after opening counts as a failed attempt: the backoff keeps growing. */
export const STABLE_AFTER_MS = 5000;
/**
 * The code the socket closes with when it gives up on a silent connection. Never
 * taken for a server's refusal: the socket detaches from a connection before closing it.
 */
export const IDLE_DROP_CODE = 4000;
/** Close codes by which the server refuses the credential or the request, when they close a connection that just opened: trying again would only be refused again. */
export const isRefusal = (code: number): boolean => code === 1008 || (code >= 4000 && code <= 4999);

/** Failed attempts in a row and why the last one failed. */
export class Reconnects {
  /** Failed attempts in a row: reset only by a connection that stayed open {@link STABLE_AFTER_MS}. */
  attempt = 0;
  /** Why the last connection attempt failed; cleared by a connection that lasts. */
  failure: string | undefined;
  /** Whether the current run of failed connection attempts was already warned about. */
  #warned = false;

  /** A failed connection attempt: told by the warning when a retry follows, else by the error that gives up. */
  failing(why: string | undefined): void {
    this.failure = why ?? 'the connection or the upgrade failed';
  }

  /**
   * A connection is over: one that lasted {@link STABLE_AFTER_MS} was a
   * success, so the count of failed attempts starts over; one that never
   * opened (`lived` undefined), or closed sooner, is one more failed attempt.
   */
  ended(lived: number | undefined, code: number | undefined, why: string | undefined): void {
    if (lived !== undefined && lived >= STABLE_AFTER_MS) {
      this.attempt = 0;
      this.failure = undefined;
      this.#warned = false;
    } else if (lived === undefined) this.failing(why);
    // A first short drop is ordinary; a reconnect that the server closes again at once is a failure to connect.
    else if (this.attempt > 0) this.failing(`the server closed it ${lived} ms after opening${code === undefined ? '' : ` (code ${code})`}`);
  }

  /**
   * Counts one more failed attempt: the wait (ms) before the next, or the
   * error to give up with once `maxAttempts` are spent.
   */
  next(options: CloudSocketOptions['reconnect'] = {}): { delay: number } | { error: PlatformUIError; maxAttempts: number } {
    const { baseDelay = 500, maxDelay = 10_000, maxAttempts = Infinity } = options;
    this.attempt++;
    if (this.attempt > maxAttempts) return { error: new PlatformUIError(`Gave up reconnecting after ${maxAttempts} attempts${this.failure ? ` (the last: ${this.failure})` : ''}`), maxAttempts };
    // Jitter that never drops below half the step: a storm of clients spreads out, and no attempt comes early.
    return { delay: backoff(this.attempt - 1, { first: baseDelay, max: maxDelay, jitter: 'half' }) };
  }

  /**
   * The failure to warn about as a retry begins: the first of a run of them
   * (the rest are debug, in the reconnect lines). Not before: a run() whose
   * submission fails for the same reason (a wrong key, a closed port) closes
   * its socket first, and its error says it all.
   */
  warnNow(): string | undefined {
    if (this.failure === undefined || this.#warned) return undefined;
    this.#warned = true;
    return this.failure;
  }
}

/** Stops a connection's handlers from calling back: it is over. */
export function detach(ws: WebSocket): void {
  ws.onopen = ws.onmessage = ws.onclose = null;
  // Not null: the `ws` package throws an `error` with no listener (closing while connecting).
  ws.onerror = () => undefined;
}

/** Connection errors from some WebSocket implementations quote the URL, token included. */
export function toSafeError(error: unknown): PlatformUIError {
  return new PlatformUIError(`WebSocket connection failed: ${redactText(error instanceof Error ? error.message : String(error))}`);
}
