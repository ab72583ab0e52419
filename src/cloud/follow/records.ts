/**
 * What an ended job's record says (outputs, the error it ended with), and
 * stopping a job nobody follows any more. Shared by the follower and
 * `waitForJob`.
 *
 * @module
 */
import { APIUserAbortError, NotFoundError } from '../../errors.ts';
import { describeError, errorDetails } from '../../transport/log.ts';
import type { RequestOptions } from '../../transport/options.ts';
import { jobEndError, toJobRecord, type JobBackend, type JobRecord, type JobStatusResult } from '../jobs.ts';
import { backoff } from '../../transport/backoff.ts';
import { sleep } from '../../transport/sleep.ts';
import { realClock, type Clock } from './clock.ts';

/** Reads of a completed job's record while its outputs are not persisted yet: 250 ms doubling to 2 s, about 6 s in all. */
const OUTPUT_READS = 6;
const OUTPUT_FIRST_DELAY_MS = 250;
const OUTPUT_MAX_DELAY_MS = 2000;

/** Whether a status or record lists outputs (a local server's record, the seed emulator's status). */
export function hasOutputs(s: unknown): s is JobRecord {
  const outputs = (s as { outputs?: unknown } | undefined)?.outputs;
  return !!outputs && typeof outputs === 'object' && Object.keys(outputs).length > 0;
}

/** A status that already lists the outputs, as the job's record (the seed emulator's status has no `id`). */
export const asRecord = (s: JobRecord, promptId: string): JobRecord => ({ ...s, id: promptId });

/**
 * The record of a completed job, read until it lists outputs: `execution_success`
 * can precede the persisted outputs. Bounded; gives the last record read. A
 * server that keeps no records (the spec's: a status endpoint only) lists the
 * outputs in the job's status: that, as the record, or `undefined`.
 *
 * @example
 * ```ts
 * const record = await readCompletedRecord(cloud, promptId);
 * console.log(Object.keys(record?.outputs ?? {}));
 * ```
 */
export async function readCompletedRecord(jobs: JobBackend, promptId: string, options: RequestOptions = {}, clock: Clock = realClock): Promise<JobRecord | undefined> {
  let last: JobRecord | undefined;
  for (let read = 1; ; read++) {
    try {
      last = await jobs.getJob(promptId, options);
      // A local server writes a job's outputs together with its ending, and a v2 job's final record is authoritative: nothing comes later.
      if (hasOutputs(last) || jobs.server === 'local' || jobs.server === 'v2') return last;
    } catch (err) {
      if (err instanceof NotFoundError && last === undefined) {
        const status = await Promise.resolve(jobs.getJobStatus(promptId, options)).catch((e: unknown) => {
          if (e instanceof APIUserAbortError) throw e;
          return undefined;
        });
        return hasOutputs(status) ? asRecord(status, promptId) : undefined;
      }
      if (err instanceof APIUserAbortError) throw err;
      // A connection failure or a 5xx the transport's retries did not cure: read again below.
    }
    if (read >= OUTPUT_READS) return last;
    const delay = backoff(read - 1, { first: OUTPUT_FIRST_DELAY_MS, max: OUTPUT_MAX_DELAY_MS });
    jobs.log?.debug?.(`job ${promptId}: completed, its record lists no outputs yet; reading it again in ${delay} ms`, { promptId, read, delayMs: delay });
    await sleep(delay, options.signal, clock);
  }
}

/**
 * What an ended job resolves or rejects with, given the status that said so:
 * the record (outputs recovered) of a completed job, else the job's error.
 */
export async function settleEnded(jobs: JobBackend, promptId: string, s: JobStatusResult, options: RequestOptions, clock: Clock = realClock): Promise<JobRecord> {
  if (s.phase !== 'completed') throw await failureOf(jobs, promptId, s, options);
  const record = hasOutputs(s) ? asRecord(s, promptId) : await readCompletedRecord(jobs, promptId, options, clock);
  return record ?? toJobRecord({ ...s, id: promptId, status: 'completed', outputs: {} });
}

/** The error of a job whose status says it failed or was cancelled; the record says where and why, when the server keeps one. */
export async function failureOf(jobs: JobBackend, promptId: string, s: JobStatusResult, options: RequestOptions): Promise<Error> {
  if (s.phase === 'cancelled') return jobEndError(promptId, 'cancelled', {});
  const record = 'execution_error' in s ? (s as JobRecord) : await Promise.resolve(jobs.getJob(promptId, options)).catch(() => undefined);
  return jobEndError(promptId, 'failed', { status: s, record });
}

/**
 * Stops a job nobody follows any more: `jobs.stopJob`, which stops this job
 * and never another, and resolves once it is seen stopped (within `within`
 * ms, `stopJob`'s `confirmWithin`). Resolves with `undefined` then, else with
 * the error that says why the job may still run, which is also logged. Its
 * requests may be repeated (a stop is idempotent): the job must not run on
 * unpaid-for.
 *
 * @example
 * ```ts
 * const stopError = await stopAndConfirm(jobs, promptId, undefined, 'aborted');
 * if (stopError) console.log(`job ${promptId} may still run`);
 * ```
 */
export async function stopAndConfirm(jobs: JobBackend, promptId: string, headers: Record<string, string> | undefined, why: string, within?: number): Promise<Error | undefined> {
  jobs.log?.debug?.(`job ${promptId}: stopping it on the server (${why})`, { promptId, reason: why });
  try {
    await jobs.stopJob(promptId, { ...(headers ? { headers } : {}), retry: { limit: 3, allowPost: true }, ...(within === undefined ? {} : { confirmWithin: within }) });
    return undefined;
  } catch (err) {
    jobs.log?.error?.(`job ${promptId} could not be stopped (${why}); it may still run: ${describeError(err)}`, { promptId, ...errorDetails(err) });
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** {@link stopAndConfirm} without waiting: the caller has had their answer, and only the log can say the job may run on. */
export function stopInBackground(jobs: JobBackend, promptId: string, headers: Record<string, string> | undefined, why: string): void {
  void stopAndConfirm(jobs, promptId, headers, why);
}
