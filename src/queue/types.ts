/**
 * What a user of `@platformui/sdk/queue` writes and reads, and the job data
 * kept in Redis between producer and workers.
 *
 * @module
 */
import type { Job } from 'bullmq';
import type { LogOptions } from '@platformui/sdk';
import type { NodeOutputs } from '@platformui/sdk';
import type { OutputFile } from '@platformui/sdk';
import type { PoolInput, PoolServer } from '@platformui/sdk';
import type { Connection } from './connection.ts';
import type { StoredError } from './errors.ts';

export type { Connection } from './connection.ts';

/**
 * Options of `JobQueue`.
 *
 * @example
 * ```ts
 * const queue = new JobQueue({ connection: 'redis://127.0.0.1:6379', name: 'renders' });
 * ```
 */
export interface JobQueueOptions extends LogOptions {
  /** Redis: a `redis://` URL, or ioredis options as BullMQ takes them. */
  connection: Connection;
  /** The queue's name, shared by its producers and workers. Default `'platformui'`. */
  name?: string;
  /**
   * How long (ms) a finished job (its workflow, input files and result) stays in Redis, readable by id
   * from any process (`queue.job(id).result()`); then BullMQ removes it. Default 7 days.
   */
  keepFinished?: number;
}

/**
 * Options of `JobQueue.add`.
 *
 * @example
 * ```ts
 * await queue.add(workflow, { jobId: 'order-1234', inputs: { '10.inputs.image': './photo.png' }, waitForWorker: 30_000 });
 * ```
 */
export interface QueueAddOptions {
  /** The job's id (no `:`): adding the same id again returns the job already there (a producer that retries after a crash adds nothing twice). Default a random UUID. */
  jobId?: string;
  /** Files for the workflow's inputs, by path (`'10.inputs.image'`): read at add() and kept with the job (in Redis) until a worker uploads them. */
  inputs?: Record<string, PoolInput>;
  /** Higher runs first among waiting jobs of a lane, equal ones in order, as in `CloudPool`. Default 0; from -1,048,575 to 1,048,575. */
  priority?: number;
  /** Silence deadline (ms) of the run on its server (`RunOptions.timeout`). */
  timeout?: number;
  /** How long (ms) to wait for a worker that can run the workflow to register, instead of rejecting at once with `PlacementError`. Default 0. */
  waitForWorker?: number;
  /**
   * How many times to run the job again, under a new prompt id, when it fails with an `ExecutionError`
   * (each run is paid work: only when asked). Default 0. Other failures are never retried.
   */
  retries?: number;
}

/** A job's state, in BullMQ's words; `unknown` when no such job is in Redis. */
export type QueueJobState = 'waiting' | 'active' | 'completed' | 'failed' | 'delayed' | 'prioritized' | 'waiting-children' | 'unknown';

/** Sampling progress of a queued job, as its server reported it. */
export interface QueueProgress {
  node?: string;
  /** Steps done of `max`; both -1 on a report that only carries a preview. */
  value: number;
  max: number;
  /** A preview image, when the worker reports them (`previews`): its MIME type and bytes in base64. */
  preview?: { mime: string; base64: string };
}

/**
 * A node-level event of a queued job, as its server reported it, in the socket's words but without payloads
 * (no outputs: each report goes through Redis to every producer listening): the job started, the nodes its
 * server had cached, a node started (`executing`; without `node` once the last one ended), a node finished,
 * the job ended. What a display needs to count `3/3 nodes`, which `on('progress')` (steps only) cannot.
 *
 * @example
 * ```ts
 * job.on('node', (e) => {
 *   if (e.type === 'executing' && e.node) console.log(`running node ${e.node}`);
 *   if (e.type === 'execution_cached') console.log(`${e.nodes?.length ?? 0} cached`);
 * });
 * ```
 */
export interface QueueNodeEvent {
  type: 'execution_start' | 'execution_cached' | 'executing' | 'executed' | 'execution_success' | 'execution_error' | 'execution_interrupted';
  /** `executing` and `executed`: the node; `execution_error` / `execution_interrupted`: the node it stopped at, when the server said. */
  node?: string;
  /** `execution_cached`: the nodes the server did not run again. */
  nodes?: string[];
}

/**
 * One report of a running job as it travels through Redis (BullMQ's job progress), not a public shape: steps,
 * a preview or a node event; the handle sorts them to `on('progress' | 'preview' | 'node')`.
 */
export type QueueReport = QueueProgress & { event?: QueueNodeEvent };

/** A preview image a job's worker reported (`previews` on the worker): `job.on('preview', …)`. */
export interface QueuePreview {
  node?: string;
  mime: string;
  image: Uint8Array;
}

/** What a completed queued job produced, and where. Plain data: it was stored in Redis. */
export interface QueueJobResult {
  promptId: string;
  outputs: Record<string, NodeOutputs>;
  /** Files on the server that ran the job (download them with a client of `baseUrl`). */
  files: OutputFile[];
  /** The id of the server that ran it. */
  server: string;
  /** Its base URL (credentials redacted). */
  baseUrl: string;
  /** Set when the job ran again elsewhere after its server lost it (`resubmitOnServerLoss`). */
  resubmittedFrom?: { server: string; promptId: string | undefined };
}

/**
 * A queued job, by id: the same handle in any process (`queue.job(id)`).
 *
 * @example
 * ```ts
 * const job = await queue.add(workflow);
 * job.on('progress', (p) => console.log(p.value, '/', p.max));
 * const { files, server } = await job.result();
 * ```
 */
export interface QueueJob {
  readonly id: string;
  /**
   * What the `add()` that returned this handle did (`undefined` on a handle from `job(id)`): `'created'`, it
   * queued this job; `'existing'`, the id named a job already, with the same workflow and inputs (a retried
   * add): that job; `'conflict'`, the id named a job with *another* workflow or inputs: that job is returned
   * and nothing of this add was queued (the queue's log says so too).
   */
  readonly addResult?: 'created' | 'existing' | 'conflict';
  /** Its state now. */
  state(): Promise<QueueJobState>;
  /** Resolves once it completed; rejects with the SDK's typed error rebuilt (`ExecutionError`, `JobCancelledError`, `ServerLostError`, `PlacementError`…). */
  result(): Promise<QueueJobResult>;
  /** Cancels it wherever it is: a waiting job is removed; a running one is stopped on its server (that job only). Its result rejects with `JobCancelledError`. */
  cancel(): Promise<void>;
  /** Progress events of the job, from whichever worker runs it. */
  on(event: 'progress', listener: (progress: QueueProgress) => void): this;
  /** Each preview image its worker reports (only a worker with `previews` does). */
  on(event: 'preview', listener: (preview: QueuePreview) => void): this;
  /** Its node events (started, cached, each node running and done, ended), from whichever worker runs it. */
  on(event: 'node', listener: (event: QueueNodeEvent) => void): this;
}

/**
 * A job that failed or was cancelled, in `QueueCounts.ended`.
 *
 * @example
 * ```ts
 * for (const e of (await queue.counts()).ended) console.log(e.id, e.state, e.reason);
 * ```
 */
export interface QueueEndedJob {
  id: string;
  /** `cancelled`: by `cancel()` (while it waited, or ran); `failed`: any other error. */
  state: 'failed' | 'cancelled';
  /** Why: the error's message (`Job … was cancelled`, an `ExecutionError`'s…). */
  reason: string;
  /** When it ended (ms since the epoch). */
  at: number;
}

/** `JobQueue.counts()`: jobs per state over every lane, and the live workers. */
export interface QueueCounts {
  /**
   * Per BullMQ state (`waiting`, `active`, `completed`, `failed`, `delayed`, …), and `cancelled`: the jobs
   * `cancel()` ended within `keepFinished` (BullMQ counts those that had started as `failed`: not here).
   */
  states: Record<string, number>;
  /** The latest failed and cancelled jobs, newest first (at most 10 per lane, 10 in all), with why. */
  ended: QueueEndedJob[];
  /** Per live worker id: its lanes, its servers' ids and how many jobs it runs now. */
  workers: Record<string, { lanes: string[]; servers: string[]; active: number }>;
}

/**
 * Options of `QueueWorker`.
 *
 * @example
 * ```ts
 * const worker = new QueueWorker({ connection: 'redis://127.0.0.1:6379', servers: [{ baseUrl: 'http://gpu-a:8188' }], concurrency: 2 });
 * await worker.ready();
 * ```
 */
export interface QueueWorkerOptions extends LogOptions {
  connection: Connection;
  /** Default `'platformui'`. */
  name?: string;
  /**
   * Its id in Redis, shown by `counts().workers` and kept on each job it runs (BullMQ's `processedBy`):
   * 1 to 100 letters, digits, `.`, `_`, `-`. Default: a random one. A worker started with the id of one
   * still running is refused (`ready()` rejects with `InvalidArgumentError`); started again after its
   * predecessor died, it waits for the old heartbeat to lapse (up to 10 s).
   */
  id?: string;
  /** The servers it runs jobs on, as `CloudPool` takes them (clients and keys stay in this process). */
  servers: readonly PoolServer[];
  /** Jobs it runs at once per lane. Default: the sum of its servers' `maxConcurrent` (2 each). */
  concurrency?: number;
  /** BullMQ's: how often (ms) stalled jobs (their worker gone) are looked for. Default 30000. */
  stalledInterval?: number;
  /** BullMQ's: how long (ms) a job's lock lasts without renewal (a dead worker's jobs are taken over after it). Default 30000. */
  lockDuration?: number;
  /** How long (ms) a server may be silent before its job is lost (`ServerLostError`); also how long a job on a server this worker does not list is handed back for its owner before it is. Default 15000. */
  serverLostAfter?: number;
  /**
   * Report the servers' preview images with the progress: `true` (each up to 256 KB), `{ maxBytes }`, or
   * `false` (the default: they go through Redis to every producer listening, so only when asked).
   */
  previews?: boolean | { maxBytes: number };
  /** Re-run, once and elsewhere, a job its server lost (it may have run there: the result says `resubmittedFrom`). Default false. */
  resubmitOnServerLoss?: boolean;
  /** Called with each result before the job completes (e.g. to copy its files off the server); a throw fails the job. */
  onOutputs?: (result: QueueJobResult, job: Job<JobData>) => unknown;
}

/** The job's data in Redis: what to run, and where it went (recorded before it was sent). Never a credential. */
export interface JobData {
  /** As added: API or editor format (converted by the worker's pool per server). */
  workflow: unknown;
  /** Input files, base64, with the file name when it was a path. */
  inputs?: Record<string, { base64: string; name?: string }>;
  timeout?: number;
  /** A hash of the workflow and inputs as added: an add() of the id with other work is told it got this job. */
  work?: string;
  /** The id the worker chose for the job on its server, recorded before the submission. */
  promptId?: string;
  /** The id of the server it was placed on. */
  server?: string;
  /** When a worker that does not list `server` first handed it back (ms since the epoch). */
  handedBackSince?: number;
  resubmittedFrom?: { server: string; promptId: string | undefined };
  /** Why it failed, to be rebuilt by `result()`. */
  error?: StoredError;
}
