/**
 * The errors of a `CloudPool`: no server can take a job, the pool closed.
 * They live with the pool; the root entry exports them under the same names.
 *
 * @module
 */
import { PlatformUIError } from '../../errors.ts';

/**
 * A `CloudPool` job that no server can take: every server lacks a class or a
 * model the workflow uses (checked before any upload or submission), or the
 * servers that could run it have not answered for the pool's
 * `serverLostAfter`. `reasons` says why, per server id.
 *
 * @example
 * ```ts
 * // PlacementError: No server can run this workflow: gpu-a: #4 TiledKSampler: this server has no node class "TiledKSampler" …; gpu-b: down (connect ECONNREFUSED)
 * for (const [server, why] of Object.entries(err.reasons)) console.log(server, why.join('; '));
 * ```
 */
export class PlacementError extends PlatformUIError {
  static override name = 'PlacementError';
  /** Why each server cannot take the job, by server id. */
  readonly reasons: Readonly<Record<string, readonly string[]>>;
  constructor(reasons: Record<string, readonly string[]>, why = 'No server can run this workflow') {
    const shown = Object.entries(reasons).map(([id, r]) => `${id}: ${r.slice(0, 2).join('; ')}${r.length > 2 ? ` (+${r.length - 2} more)` : ''}`);
    super(`${why}${shown.length ? `: ${shown.join('; ')}` : ' (the pool has no servers)'}`);
    this.reasons = reasons;
  }
}

/**
 * `CloudPool.close()` ended this run: it was waiting in the pool's queue, or
 * the pool stopped following it (its job was cancelled on the server only
 * with `close({ cancel: true })`). `promptId` is set when the job existed.
 */
export class PoolClosedError extends PlatformUIError {
  static override name = 'PoolClosedError';
  readonly promptId: string | undefined;
  constructor(promptId?: string, cancelled = false) {
    super(promptId ? `The pool closed; job ${promptId} ${cancelled ? 'was cancelled' : 'is no longer followed (it keeps running)'}` : 'The pool closed before this job was placed');
    this.promptId = promptId;
  }
}
