/**
 * The handle of a queued job, by id, in any process: its state, its result
 * (the typed error rebuilt when it failed), cancel, progress.
 *
 * @module
 */
import type { Job, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { InvalidArgumentError, JobCancelledError } from '@platformui/sdk';
import type { Claim } from './claim.ts';
import type { QueueKeys } from './connection.ts';
import { rebuildError } from './errors.ts';
import { isObject } from '../schemas/rule.ts';
import type { JobData, QueueJob, QueueJobResult, QueueJobState, QueueNodeEvent, QueuePreview, QueueProgress, QueueReport } from './types.ts';

/** What a handle needs of its `JobQueue`. */
export interface QueueContext {
  readonly name: string;
  readonly keys: QueueKeys;
  /** How long (ms) a finished job stays in Redis (`keepFinished`): its cancel record too. */
  readonly keep: number;
  redis(): Promise<Redis>;
  /** The claim of a job id (its lane); `undefined` when no such job was added. */
  claimOf(id: string): Promise<Claim | undefined>;
  bull(lane: string): Promise<Queue>;
  events(lane: string): Promise<QueueEvents>;
}

/** A finished job's result, or its error rebuilt, or `undefined` while it is not finished. */
type Outcome = { result: QueueJobResult } | { error: Error } | undefined;

/** How often result() reads the job's state besides listening (events are not replayed after Redis restarts). */
const RECHECK_MS = 1000;

/** A job's handle ({@link QueueJob}), by id: what `JobQueue.add()` and `JobQueue.job()` return. */
export class QueueJobHandle implements QueueJob {
  readonly #ctx: QueueContext;
  constructor(
    ctx: QueueContext,
    readonly id: string,
    readonly addResult?: QueueJob['addResult'],
  ) {
    this.#ctx = ctx;
  }

  async #claim(): Promise<Claim> {
    const claim = await this.#ctx.claimOf(this.id);
    if (claim === undefined) throw new InvalidArgumentError(`no job ${JSON.stringify(this.id)} in queue ${JSON.stringify(this.#ctx.name)}`, 'id');
    return claim;
  }

  async #lane(): Promise<string> {
    return (await this.#claim()).lane;
  }

  /** The job in `lane`, as BullMQ holds it now (`undefined`: not added yet, or removed). */
  async #job(lane: string): Promise<Job<JobData> | undefined> {
    return (await (await this.#ctx.bull(lane)).getJob(this.id)) as Job<JobData> | undefined;
  }

  async state(): Promise<QueueJobState> {
    const claim = await this.#ctx.claimOf(this.id);
    if (claim === undefined) return 'unknown';
    const job = await this.#job(claim.lane);
    if (!job) return 'unknown';
    const state = await job.getState();
    // Every job carries a BullMQ priority (so that `priority` orders as in CloudPool): "prioritized" is waiting.
    return (state === 'prioritized' ? 'waiting' : state) as QueueJobState;
  }

  async #outcome(): Promise<Outcome> {
    const claim = await this.#claim();
    const job = await this.#job(claim.lane);
    if (!job) {
      const redis = await this.#ctx.redis();
      // Removed while waiting by cancel() (or cancelled before its add() completed): the flag says why.
      if (await redis.exists(this.#ctx.keys.cancelled(this.id))) return { error: new JobCancelledError(this.id) };
      // Claimed by an add() that has not put it in Redis yet, or failed to (the next add() of the id does): not ended.
      if (claim.pending) return undefined;
      return { error: new InvalidArgumentError(`job ${JSON.stringify(this.id)} is no longer in queue ${JSON.stringify(this.#ctx.name)}`, 'id') };
    }
    const state = await job.getState();
    // Read before it completed, the job object has no return value yet: read it again.
    if (state === 'completed') return { result: (job.returnvalue ?? (await this.#job(claim.lane))?.returnvalue) as QueueJobResult };
    if (state === 'failed') {
      // Read before it failed, the job object lacks the error the worker stored just before failing it: read it again
      // (else a job that failed with, say, an ExecutionError read as a bare PlatformUIError, now and then).
      const stored = job.data.error ?? (await this.#job(claim.lane))?.data.error;
      if (stored) return { error: rebuildError(stored) };
      // Failed with no error of the worker's: BullMQ's own ending. A job cancel() recorded is cancelled (BullMQ may
      // fail it with the cancel's reason before the worker has stored its JobCancelledError).
      const redis = await this.#ctx.redis();
      if ((await redis.zscore(this.#ctx.keys.cancelledJobs, this.id)) !== null) return { error: new JobCancelledError(this.id) };
      return { error: rebuildError({ name: 'PlatformUIError', message: job.failedReason || 'the job failed', fields: {} }) };
    }
    return undefined;
  }

  async result(): Promise<QueueJobResult> {
    const lane = await this.#lane();
    const events = await this.#ctx.events(lane);
    return new Promise<QueueJobResult>((resolve, reject) => {
      let done = false;
      let checking = false;
      const finish = (o: NonNullable<Outcome>) => {
        if (done) return;
        done = true;
        clearInterval(timer);
        events.off('completed', onEvent).off('failed', onEvent).off('removed', onEvent);
        if ('result' in o) resolve(o.result);
        else reject(o.error);
      };
      const check = () => {
        if (done || checking) return;
        checking = true;
        this.#outcome().then(
          (o) => {
            checking = false;
            if (o) finish(o);
          },
          (err: unknown) => {
            checking = false;
            // Redis away for a moment: the next check tries again; a bad id ends here.
            if (err instanceof InvalidArgumentError) finish({ error: err });
          },
        );
      };
      const onEvent = (e: { jobId: string }) => void (e.jobId === this.id && check());
      events.on('completed', onEvent).on('failed', onEvent).on('removed', onEvent);
      const timer = setInterval(check, RECHECK_MS);
      check();
    });
  }

  async cancel(): Promise<void> {
    const lane = await this.#lane();
    const redis = await this.#ctx.redis();
    // The flag first: a worker that takes the job from now on sees it.
    await redis.set(this.#ctx.keys.cancelled(this.id), '1', 'EX', 7 * 24 * 3600);
    const job = await this.#job(lane);
    if (!job) return;
    const state = await job.getState();
    if (state === 'completed' || state === 'failed') return void (await redis.del(this.#ctx.keys.cancelled(this.id)));
    // Counted cancelled from now on (the worker fails a started one with JobCancelledError, BullMQ calls it failed),
    // with the record's older entries dropped: it holds what keepFinished keeps.
    const now = Date.now();
    await redis.multi().zadd(this.#ctx.keys.cancelledJobs, now, this.id).zremrangebyscore(this.#ctx.keys.cancelledJobs, '-inf', now - this.#ctx.keep).exec();
    // Waiting and never placed: removed (a locked job refuses, it has just become active: the message reaches its worker).
    // One recorded on a server stays for a worker, which stops it there.
    if (state !== 'active' && !job.data.promptId) {
      try {
        await job.remove();
        return;
      } catch {
        /* taken meanwhile */
      }
    }
    await redis.publish(this.#ctx.keys.cancelChannel, this.id);
  }

  on(event: 'progress', listener: (progress: QueueProgress) => void): this;
  on(event: 'preview', listener: (preview: QueuePreview) => void): this;
  on(event: 'node', listener: (event: QueueNodeEvent) => void): this;
  on(event: 'progress' | 'preview' | 'node', listener: ((progress: QueueProgress) => void) | ((preview: QueuePreview) => void) | ((event: QueueNodeEvent) => void)): this {
    if (event !== 'progress' && event !== 'preview' && event !== 'node') throw new InvalidArgumentError(`must be 'progress', 'preview' or 'node', got ${JSON.stringify(event)}`, 'event');
    // One stream of reports: steps for 'progress', images (a worker with `previews`) for 'preview', node events for 'node'.
    const hear = (p: QueueReport) => {
      if (event === 'progress' && !p.preview && !p.event) (listener as (progress: QueueProgress) => void)({ ...(p.node !== undefined ? { node: p.node } : {}), value: p.value, max: p.max });
      if (event === 'node' && isObject(p.event) && typeof p.event.type === 'string') (listener as (event: QueueNodeEvent) => void)(p.event);
      if (event === 'preview' && p.preview) (listener as (preview: QueuePreview) => void)({ ...(p.node !== undefined ? { node: p.node } : {}), mime: p.preview.mime, image: new Uint8Array(Buffer.from(p.preview.base64, 'base64')) });
    };
    void this.#lane()
      .then((lane) => this.#ctx.events(lane))
      .then(
        (events) => events.on('progress', (e) => void (e.jobId === this.id && isObject(e.data) && hear(e.data as unknown as QueueReport))),
        () => undefined,
      );
    return this;
  }

}
