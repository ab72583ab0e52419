/**
 * Whether a run still holds its job: BullMQ hands a job whose lock lapsed (its
 * worker stalled) to another run, which may send it under the recorded id;
 * the run that lost it must not record, send or act on it again.
 *
 * @module
 */
import type { Job } from 'bullmq';
import type { JobData } from './types.ts';

/** BullMQ's default `lockDuration` (ms). */
export const BULLMQ_LOCK_MS = 30_000;

/** This run of a job lost its lock (its worker was stalled): another run holds the job now, maybe this worker's own. */
export class LockLost extends Error {
  constructor(jobId: string, before: string) {
    super(`job ${jobId}: its lock lapsed before ${before}; the run holding it now does that`);
    this.name = 'LockLost';
  }
}

/**
 * Throws {@link LockLost} unless this run still holds `job`'s lock (extending it). BullMQ hands a job whose
 * lock lapsed to another run, which may be about to send it under the recorded id, and may be this worker's
 * own (a stall shorter than its stall interval): so the token is this run's, passed along, never looked up
 * by job id (the later run's would pass for the earlier's).
 */
export async function stillMine(job: Job<JobData>, token: string | undefined, lockDuration: number | undefined, before: string): Promise<void> {
  if (token && (await job.extendLock(token, lockDuration ?? BULLMQ_LOCK_MS)) !== 1) throw new LockLost(job.id!, before);
}
