/**
 * `@platformui/sdk/queue`: a durable job queue on Redis (BullMQ) that feeds a
 * fleet of servers. Producers add workflows with {@link JobQueue}; workers
 * ({@link QueueWorker}) run them on their servers through a `CloudPool`.
 * Jobs survive crashes of producers, workers and Redis (with its append-only
 * file), and a job a server accepted is never sent twice: a worker records
 * where it sends each job before sending it, and a worker taking over a
 * dead one's job follows it there.
 *
 * Node only; needs the optional peer dependencies bullmq and ioredis
 * (`npm install bullmq ioredis`). The root entry never loads them.
 *
 * @example
 * ```ts
 * import { JobQueue, QueueWorker } from '@platformui/sdk/queue';
 * const connection = 'redis://127.0.0.1:6379';
 * // In the worker process, next to the GPUs:
 * const worker = new QueueWorker({ connection, servers: [{ baseUrl: 'http://gpu-a:8188' }] });
 * await worker.ready();
 * // Anywhere:
 * const queue = new JobQueue({ connection });
 * const job = await queue.add(workflow, { inputs: { '10.inputs.image': './photo.png' } });
 * job.on('progress', (p) => console.log(`${p.value}/${p.max}`));
 * const { files, server, baseUrl } = await job.result();
 * ```
 *
 * @module
 */
export { JobQueue } from './queue.ts';
export { QueueWorker } from './worker.ts';
export { MISSING_DEPS } from './connection.ts';
export { QueueAddError, type StoredError } from './errors.ts';
export type { Connection, JobData, JobQueueOptions, QueueAddOptions, QueueCounts, QueueEndedJob, QueueJob, QueueJobResult, QueueJobState, QueueNodeEvent, QueuePreview, QueueProgress, QueueWorkerOptions } from './types.ts';
