/**
 * `JobQueue`: the producer's side. add() judges the workflow against the
 * lanes live workers published and adds it to the BullMQ queue of a capable
 * lane; `job(id)` is the handle in any process.
 *
 * @module
 */
import type { Job, JobsOptions, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { InvalidArgumentError, PlacementError } from '@platformui/sdk';
import { toBase64 } from '../base64.ts';
import { jsonOf } from '../cloud/client.ts';
import type { WorkflowInput } from '@platformui/sdk';
import { checkInputs } from '../cloud/inputs.ts';
import { randomUuid } from '../cloud/uuid.ts';
import { platform } from '../platform/node.ts';
import { isObject } from '../schemas/rule.ts';
import { checkOptions } from '../args.ts';
import { JOB_QUEUE_OPTIONS, QUEUE_ADD_OPTIONS } from './options.ts';
import type { WorkflowJSON as Workflow } from '@platformui/sdk';
import { checkInterval, checkTimeout } from '../transport/options.ts';
import { isEditorFormat } from '../workflow/issue.ts';
import { copyJSON } from '../workflow/node-handle.ts';
import { createLog, type Log } from '../transport/log.ts';
import { bullOptions, checkName, checkRedis, keysOf, loadQueueDeps, quiet, redisOptions, type QueueKeys } from './connection.ts';
import { parseClaim, pendingClaim, releaseClaim, settleClaim, workOf, type Claim } from './claim.ts';
import { QueueAddError } from './errors.ts';
import { QueueJobHandle, type QueueContext } from './job.ts';
import { Lanes } from './lanes.ts';
import { capableLanes, leastWaiting } from './placement.ts';
import type { JobData, JobQueueOptions, QueueAddOptions, QueueCounts, QueueEndedJob, QueueJob } from './types.ts';

const WAIT_POLL_MS = 250;

/** The most runs again an execution error may ask for (`retries`). */
const MAX_RETRIES = 10;

/** How long a finished job (its workflow, inputs and result) stays in Redis by default: a week. */
const KEEP_FINISHED_MS = 7 * 24 * 3600_000;
/** How long a job's id → lane record outlives `keepFinished`: a bound on how long a job may wait. */
const MAX_WAIT_MS = 30 * 24 * 3600_000;

/** The SDK's priorities, higher first as in CloudPool, map onto BullMQ's 1 (first) … 2,097,152 (last). */
const MAX_PRIORITY = 1_048_575;

/**
 * The producer's side of the queue: jobs added here survive this process,
 * the workers' and Redis's restarts (with Redis's append-only file), and run
 * once on a server that has every class and model they use.
 *
 * @example
 * ```ts
 * import { JobQueue } from '@platformui/sdk/queue';
 * const queue = new JobQueue({ connection: 'redis://127.0.0.1:6379' });
 * const job = await queue.add(workflow, { inputs: { '10.inputs.image': './photo.png' } });
 * console.log(job.id); // keep it: queue.job(id) in any process finds the job again
 * const { files, server } = await job.result();
 * await queue.close();
 * ```
 */
export class JobQueue {
  readonly name: string;
  readonly #keys: QueueKeys;
  readonly #options: ReturnType<typeof redisOptions>;
  #redis: Promise<Redis> | undefined;
  #lanes: Promise<Lanes> | undefined;
  readonly #queues = new Map<string, Promise<Queue>>();
  readonly #events = new Map<string, Promise<QueueEvents>>();
  readonly #ctx: QueueContext;
  /** Id → lane of the settled claims this queue has seen: they never change. */
  readonly #settled = new Map<string, string>();
  readonly #log: Log;
  /** How long (ms) a finished job stays readable by id (`keepFinished`). */
  readonly #keep: number;
  #closed = false;

  constructor(options: JobQueueOptions) {
    if (!isObject(options)) throw new InvalidArgumentError('must be an object with a connection', 'options');
    checkOptions(options, JOB_QUEUE_OPTIONS, 'JobQueue');
    this.#options = redisOptions(options.connection);
    this.name = checkName(options.name ?? 'platformui');
    this.#log = createLog(options, () => [], { prefix: '[platformui queue]' });
    if (options.keepFinished !== undefined) checkInterval(options.keepFinished, 'keepFinished');
    this.#keep = options.keepFinished ?? KEEP_FINISHED_MS;
    this.#keys = keysOf(this.name);
    this.#ctx = {
      name: this.name,
      keys: this.#keys,
      keep: this.#keep,
      redis: () => this.#redisClient(),
      claimOf: async (id) => {
        const known = this.#settled.get(id);
        if (known) return { lane: known, pending: false };
        const value = await (await this.#redisClient()).get(this.#keys.job(id));
        if (value === null) return undefined;
        const claim = parseClaim(value);
        if (!claim.pending) this.#settled.set(id, claim.lane);
        return claim;
      },
      bull: (lane) => this.#queue(lane),
      events: (lane) => this.#eventsOf(lane),
    };
  }

  #redisClient(): Promise<Redis> {
    if (this.#closed) return Promise.reject(new InvalidArgumentError('the queue is closed', 'queue'));
    return (this.#redis ??= loadQueueDeps().then(async ({ Redis }) => {
      const redis = quiet(new Redis({ ...this.#options, maxRetriesPerRequest: null }), this.#log);
      await checkRedis(redis, this.#log);
      return redis;
    }));
  }

  #laneRegistry(): Promise<Lanes> {
    return (this.#lanes ??= this.#redisClient().then((r) => new Lanes(r, this.#keys)));
  }

  #queue(lane: string): Promise<Queue> {
    let q = this.#queues.get(lane);
    if (!q) {
      q = loadQueueDeps().then(({ bullmq }) => quiet(new bullmq.Queue(lane, bullOptions(this.#options, this.#keys)), this.#log));
      this.#queues.set(lane, q);
    }
    return q;
  }

  #eventsOf(lane: string): Promise<QueueEvents> {
    let e = this.#events.get(lane);
    if (!e) {
      e = loadQueueDeps().then(async ({ bullmq }) => {
        const events = new bullmq.QueueEvents(lane, bullOptions(this.#options, this.#keys));
        events.setMaxListeners(0); // one listener per handle awaiting a result
        quiet(events, this.#log); // reconnects by itself; result() also polls
        await events.waitUntilReady();
        return events;
      });
      this.#events.set(lane, e);
    }
    return e;
  }

  /**
   * Adds a workflow (API or editor format, or a `Workflow`) for a worker
   * that can run it. Rejects at once with `PlacementError` (the reasons per
   * lane) when no live worker can, unless `waitForWorker` gives one time to
   * register. Inputs are read here and kept with the job.
   *
   * @example
   * ```ts
   * const job = await queue.add(editorJson, { jobId: 'order-1234', waitForWorker: 10_000 });
   * ```
   */
  async add(workflow: WorkflowInput, options: QueueAddOptions = {}): Promise<QueueJob> {
    const json = jsonOf(workflow);
    if (!isObject(json)) throw new InvalidArgumentError('must be a workflow: API format (an object of nodes) or as the editor saves it', 'workflow');
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('must be an object', 'options');
    checkOptions(options, QUEUE_ADD_OPTIONS, 'JobQueue.add()');
    const uploaded = checkInputs(isEditorFormat(json) ? undefined : (json as Workflow), options.inputs);
    if (options.jobId !== undefined && (typeof options.jobId !== 'string' || !/^[^:]{1,200}$/.test(options.jobId))) throw new InvalidArgumentError('must be 1 to 200 characters, no ":"', 'jobId');
    if (options.priority !== undefined && (!Number.isInteger(options.priority) || Math.abs(options.priority) > MAX_PRIORITY)) throw new InvalidArgumentError(`must be an integer from -${MAX_PRIORITY} to ${MAX_PRIORITY} (higher runs first, as in CloudPool)`, 'priority');
    checkTimeout(options.timeout, 'timeout');
    if (options.waitForWorker !== undefined && options.waitForWorker !== 0) checkInterval(options.waitForWorker, 'waitForWorker', ' or 0');
    if (options.retries !== undefined && (!Number.isInteger(options.retries) || options.retries < 0 || options.retries > MAX_RETRIES)) throw new InvalidArgumentError(`must be an integer from 0 to ${MAX_RETRIES}`, 'retries');
    // BullMQ stores JSON: what is not (a function, a symbol) is refused here, before Redis is touched.
    const copy = copyJSON(json, 'workflow');
    const inputs = options.inputs ? await storedInputs(options.inputs) : undefined;
    const data: JobData = { workflow: copy, ...(inputs ? { inputs } : {}), ...(options.timeout !== undefined ? { timeout: options.timeout } : {}), work: workOf(copy, inputs) };
    // Every job gets a BullMQ priority (1 runs first): one without would go before all prioritized ones.
    const age = Math.ceil(this.#keep / 1000);
    const jobOptions: JobsOptions = { attempts: 1 + (options.retries ?? 0), priority: MAX_PRIORITY + 1 - (options.priority ?? 0), removeOnComplete: { age }, removeOnFail: { age } };

    const redis = await this.#redisClient();
    const id = options.jobId ?? randomUuid();
    const key = this.#keys.job(id);
    for (;;) {
      const held = await redis.get(key);
      if (held !== null) return this.#claimed(id, parseClaim(held), data, jobOptions);
      const lane = await this.#place(json as Workflow, uploaded, options.waitForWorker ?? 0);
      // The lane's events are read from before the job exists: a listener the caller attaches to the handle as
      // soon as add() resolves hears the job from its first event.
      await this.#eventsOf(lane);
      // The claim first, only if new: two producers adding one id add it once. It outlives the job's record by a
      // waiting time bound: a handle of a removed job then says so.
      const claim = pendingClaim(lane);
      if (!(await redis.set(key, claim, 'PX', this.#keep + MAX_WAIT_MS, 'NX'))) continue; // claimed meanwhile: read it
      try {
        await (await this.#queue(lane)).add('run', data, { ...jobOptions, jobId: id });
      } catch (err) {
        // The id is free again (if Redis takes even that, else the next add() of it repairs the claim).
        await releaseClaim(redis, key, claim).catch(() => undefined);
        throw new QueueAddError(id, this.name, err);
      }
      await settleClaim(redis, key).catch(() => undefined); // else its worker or a later add() settles it
      this.#settled.set(id, lane); // its handle's listeners attach without asking Redis first
      return new QueueJobHandle(this.#ctx, id, 'created');
    }
  }

  /** A capable lane (the least waiting), or `PlacementError` once none became capable in `waitForWorker` ms. */
  async #place(workflow: Workflow, uploaded: ReturnType<typeof checkInputs>, waitForWorker: number): Promise<string> {
    const lanes = await this.#laneRegistry();
    const deadline = Date.now() + waitForWorker;
    let able: string[] | PlacementError;
    for (;;) {
      able = await capableLanes(lanes, workflow, uploaded, this.name);
      if (!(able instanceof PlacementError) || Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, Math.min(WAIT_POLL_MS, deadline - Date.now())));
    }
    if (able instanceof PlacementError) throw able;
    const candidates = await Promise.all(able.map(async (lane) => ({ id: lane, waiting: await (await this.#queue(lane)).getJobCountByTypes('waiting', 'prioritized', 'delayed') })));
    return leastWaiting(candidates).id;
  }

  /**
   * `add()` of an id already claimed: that job's handle, saying whether it runs this add's work. A pending claim
   * without its job (an add that failed or died, or one landing now) gets the job added to its lane, under the id.
   */
  async #claimed(id: string, claim: Claim, data: JobData, jobOptions: JobsOptions): Promise<QueueJob> {
    const queue = await this.#queue(claim.lane);
    let job = (await queue.getJob(id)) as Job<JobData> | undefined;
    let result: 'created' | 'existing' = 'existing';
    if (claim.pending) {
      const redis = await this.#redisClient();
      // A job cancelled while waiting was removed on purpose: not added again.
      if (!job && !(await redis.exists(this.#keys.cancelled(id)))) {
        try {
          await queue.add('run', data, { ...jobOptions, jobId: id });
        } catch (err) {
          throw new QueueAddError(id, this.name, err);
        }
        job = (await queue.getJob(id)) as Job<JobData> | undefined;
        result = 'created';
      }
      await settleClaim(redis, this.#keys.job(id));
    }
    // Jobs added before `work` was recorded cannot be compared: taken as this add's.
    if (job?.data.work === undefined || job.data.work === data.work) return new QueueJobHandle(this.#ctx, id, result);
    this.#log.warn?.(`job ${JSON.stringify(id)}: queue ${JSON.stringify(this.name)} holds this id with another workflow or inputs; add() returned that job (addResult 'conflict'), nothing of this one was queued`, { jobId: id });
    return new QueueJobHandle(this.#ctx, id, 'conflict');
  }

  /**
   * The handle of a job by id, in any process (nothing is read until it is used).
   *
   * @example
   * ```ts
   * const result = await new JobQueue({ connection }).job(id).result();
   * ```
   */
  job(id: string): QueueJob {
    if (typeof id !== 'string' || !id) throw new InvalidArgumentError('must be a non-empty string', 'id');
    return new QueueJobHandle(this.#ctx, id);
  }

  /**
   * Jobs per state over every lane (BullMQ's words, and `cancelled`), the latest failed and cancelled jobs
   * with why, and the live workers. Its cost does not grow with the failed jobs kept: the cancelled ones are
   * read from a record `cancel()` keeps (as long as `keepFinished`), the latest failures from each lane's
   * newest ten.
   *
   * @example
   * ```ts
   * const { states, ended } = await queue.counts(); // states.waiting, states.active, states.cancelled, …
   * for (const e of ended) console.log(`${e.id} ${e.state}: ${e.reason}`);
   * ```
   */
  async counts(): Promise<QueueCounts> {
    const lanes = await this.#laneRegistry();
    const redis = await this.#redisClient();
    const states: Record<string, number> = {};
    const failed: QueueEndedJob[] = [];
    const all = await lanes.all();
    for (const lane of all) {
      const queue = await this.#queue(lane);
      const c = await queue.getJobCounts();
      // Every job carries a BullMQ priority: its "prioritized" jobs are the waiting ones.
      for (const [k, v] of Object.entries(c)) states[k === 'prioritized' ? 'waiting' : k] = (states[k === 'prioritized' ? 'waiting' : k] ?? 0) + v;
      failed.push(...(await endedIn(redis, queue.toKey('failed'), (id) => queue.toKey(id), LATEST_ENDED)));
    }
    const cancelled = await this.#cancelled(redis, all);
    const byId = new Map(cancelled.map((e) => [e.id, e]));
    // A started job cancel() ended is in BullMQ's failed: counted and listed as cancelled instead.
    states.failed = Math.max(0, (states.failed ?? 0) - cancelled.filter((e) => e.inFailed).length);
    states.cancelled = cancelled.length;
    const ended = [...cancelled.map(({ inFailed: _, ...e }) => e), ...failed.filter((e) => !byId.has(e.id))].sort((a, b) => b.at - a.at).slice(0, LATEST_ENDED);
    return { states, ended, workers: await lanes.workers() };
  }

  /**
   * The jobs `cancel()` ended that are still kept: those in a lane's failed set (they had started) with the
   * worker's reason, and those removed while they waited. One still running (its stop not confirmed yet) or
   * that completed before the cancel reached it is not one.
   */
  async #cancelled(redis: Redis, lanes: readonly string[]): Promise<Array<QueueEndedJob & { inFailed: boolean }>> {
    const key = this.#keys.cancelledJobs;
    await redis.zremrangebyscore(key, '-inf', Date.now() - this.#keep);
    const ids = withScores(await redis.zrange(key, 0, -1, 'WITHSCORES'));
    if (ids.length === 0) return [];
    const claims = await redis.mget(ids.map(([id]) => this.#keys.job(id)));
    const out: Array<QueueEndedJob & { inFailed: boolean }> = [];
    await Promise.all(
      ids.map(async ([id, at], i) => {
        const lane = claims[i] ? parseClaim(claims[i]!).lane : undefined;
        if (lane === undefined || !lanes.includes(lane)) return;
        const queue = await this.#queue(lane);
        const replies = (await redis.multi().zscore(queue.toKey('failed'), id).exists(queue.toKey(id)).hget(queue.toKey(id), 'failedReason').exec()) ?? [];
        const [score, exists, reason] = replies.map(([, v]) => v);
        if (score !== null && score !== undefined) out.push({ id, state: 'cancelled', reason: String(reason ?? `Job ${id} was cancelled`), at: Number(score), inFailed: true });
        else if (exists === 0) out.push({ id, state: 'cancelled', reason: 'cancelled while waiting: it never ran', at, inFailed: false });
      }),
    );
    return out;
  }

  /** Closes its connections to Redis. Jobs stay in the queue. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const all = await Promise.allSettled([...this.#queues.values(), ...this.#events.values()]);
    await Promise.allSettled(all.map((r) => (r.status === 'fulfilled' ? r.value.close() : undefined)));
    const redis = await this.#redis?.catch(() => undefined);
    await redis?.quit().catch(() => redis.disconnect());
  }
}

/** How many of the latest failed and cancelled jobs `counts()` lists (per lane read, and in all). */
const LATEST_ENDED = 10;

/** The newest `count` jobs of a BullMQ finished set (score: when it ended), with their reason. */
async function endedIn(redis: Redis, set: string, jobKey: (id: string) => string, count: number): Promise<QueueEndedJob[]> {
  const out: QueueEndedJob[] = [];
  for (const [id, at] of withScores(await redis.zrevrange(set, 0, count - 1, 'WITHSCORES'))) {
    out.push({ id, state: 'failed', reason: (await redis.hget(jobKey(id), 'failedReason')) ?? '', at });
  }
  return out;
}

/** A sorted set's `WITHSCORES` reply (member, score, member, score, …) as pairs. */
function withScores(flat: readonly string[]): Array<[member: string, score: number]> {
  const pairs: Array<[string, number]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i]!, Number(flat[i + 1])]);
  return pairs;
}

/** Input files as kept in Redis: base64, with the name of a path (its extension names the upload). */
async function storedInputs(inputs: NonNullable<QueueAddOptions['inputs']>): Promise<NonNullable<JobData['inputs']>> {
  const out: NonNullable<JobData['inputs']> = {};
  for (const [at, file] of Object.entries(inputs)) {
    const blob = typeof file === 'string' ? await platform.fileBlob(file) : file;
    const name = typeof file === 'string' ? file.split(/[\\/]/).pop() : file instanceof File ? file.name : undefined;
    out[at] = { base64: await toBase64(blob as Blob | Uint8Array | ArrayBuffer), ...(name ? { name } : {}) };
  }
  return out;
}
