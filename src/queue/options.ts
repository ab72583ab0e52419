/**
 * The keys of the queue's options types (`types.ts`), for `checkOptions`: a
 * misspelt option is refused, naming the closest, before Redis is touched
 * (issue 32). `satisfies OptionKeys<T>` makes the compiler refuse a list that
 * misses a key of its type. A worker's `servers` entries are checked by its
 * `CloudPool`, as a pool's are.
 *
 * @module
 */
import type { OptionKeys } from '../args.ts';
import type { JobQueueOptions, QueueAddOptions, QueueWorkerOptions } from './types.ts';

export const JOB_QUEUE_OPTIONS = { logLevel: 1, logger: 1, connection: 1, name: 1, keepFinished: 1 } as const satisfies OptionKeys<JobQueueOptions>;

export const QUEUE_ADD_OPTIONS = { jobId: 1, inputs: 1, priority: 1, timeout: 1, waitForWorker: 1, retries: 1 } as const satisfies OptionKeys<QueueAddOptions>;

export const QUEUE_WORKER_OPTIONS = {
  logLevel: 1, logger: 1,
  connection: 1,
  name: 1,
  id: 1,
  servers: 1,
  concurrency: 1,
  stalledInterval: 1,
  lockDuration: 1,
  serverLostAfter: 1,
  previews: 1,
  resubmitOnServerLoss: 1,
  onOutputs: 1,
} as const satisfies OptionKeys<QueueWorkerOptions>;
