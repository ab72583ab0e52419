/**
 * The pool's decision that costs money: after a job failed on a server, may
 * it go to another? One pure function over the facts of the failure, so the
 * rule is read (and tested, as a table) in one place.
 *
 * @module
 */

/** How many times a job may change server (its moves and its one re-run together): servers that answer a probe but never take a job must not bounce it forever. */
export const MAX_MOVES = 3;

/** What the pool knows when a placed job failed on its server. */
export interface FailureFacts {
  /**
   * How far the job got there: `upload` (its inputs; an upload never creates
   * a job), `submit` (the submission was under way, no id confirmed), or
   * `accepted` (the server confirmed the job's id).
   */
  stage: 'upload' | 'submit' | 'accepted';
  /**
   * For a connection error, whether the request may have reached the server
   * (`APIConnectionError.sent`: `'no'` only when refused, DNS, no route);
   * `undefined` when the server answered (an HTTP error) or for any other failure.
   */
  sent: 'no' | 'maybe' | undefined;
  /** For a `ServerLostError`, why the server lost the accepted job; else `undefined`. */
  lost: 'unreachable' | 'forgotten' | undefined;
  /** The pool's `resubmitOnServerLoss`: the caller accepts a job running twice over one lost. */
  resubmitOnServerLoss: boolean;
  /** How many times the job changed server so far. */
  moves: number;
  /** It already ran again once after a loss (`resubmittedFrom` is set). */
  resubmitted: boolean;
  /** The caller cancelled it, or the pool is closing. */
  ended: boolean;
  /** Another server than this one may still take it (able, or its nodes not known yet; not one it failed on). */
  elsewhere: boolean;
}

/**
 * What becomes of the job: `move` (back to the waiting line, to run where it
 * can: no job exists on this server), `rerun` (once more, on another server,
 * though it may exist or have run on this one; the result says
 * `resubmittedFrom`), or `reject` (the run rejects with the failure).
 */
export type AfterFailure = 'move' | 'rerun' | 'reject';

/**
 * Whether a failed job may move to another server. A job moves only when no
 * job can exist on its server: its inputs' upload failed (whatever the error),
 * or its submission provably never left (`sent: 'no'`). When it may exist (a
 * submission whose answer was lost, `sent: 'maybe'`) or existed and was lost
 * (`ServerLostError`), it runs again only with `resubmitOnServerLoss`, once,
 * elsewhere. A server that answered an upload with an error is not used for
 * the job again, so that move needs another server; one that did not answer
 * is down, and the job may wait for it to come back. Never after a cancel or
 * close, and never more than {@link MAX_MOVES} times.
 *
 * @example
 * ```ts
 * decideAfterFailure({ stage: 'submit', sent: 'no', lost: undefined, resubmitOnServerLoss: false, moves: 0, resubmitted: false, ended: false, elsewhere: true }); // 'move'
 * decideAfterFailure({ stage: 'submit', sent: 'maybe', lost: undefined, resubmitOnServerLoss: false, moves: 0, resubmitted: false, ended: false, elsewhere: true }); // 'reject'
 * ```
 */
export function decideAfterFailure(f: FailureFacts): AfterFailure {
  if (f.ended || f.moves >= MAX_MOVES) return 'reject';
  if (f.stage === 'upload' || (f.stage === 'submit' && f.sent === 'no')) return f.sent !== undefined || f.elsewhere ? 'move' : 'reject';
  const mayExist = f.stage === 'submit' ? f.sent === 'maybe' : f.lost !== undefined;
  return mayExist && f.resubmitOnServerLoss && !f.resubmitted && f.elsewhere ? 'rerun' : 'reject';
}
