/**
 * `QueueWorker`: takes jobs of the lanes its servers serve and runs each on
 * one of them through a `CloudPool`, recording where before it is sent (so a
 * job taken over after this worker died is followed there, never sent twice).
 *
 * @module
 */
import type { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { ExecutionError, InvalidArgumentError, JobCancelledError, NotFoundError, PlatformUIError, PoolClosedError, ServerLostError } from '@platformui/sdk';
import { CloudPool, type PoolInput, type PoolJobResult } from '@platformui/sdk';
import { randomUuid } from '../cloud/uuid.ts';
import { createLog, describeError, type Log } from '../transport/log.ts';
import { checkInterval } from '../transport/options.ts';
import { isObject } from '../schemas/rule.ts';
import { checkFunction, checkOptions } from '../args.ts';
import { QUEUE_WORKER_OPTIONS } from './options.ts';
import type { WorkflowJSON as Workflow } from '@platformui/sdk';
import { bullOptions, checkName, checkRedis, keysOf, loadQueueDeps, quiet, redisOptions, type QueueDeps, type QueueKeys } from './connection.ts';
import { settleClaim } from './claim.ts';
import { storeError } from './errors.ts';
import { CancelWatch } from './cancel-watch.ts';
import { Lanes, laneIdOf, type LaneInfo } from './lanes.ts';
import { LockLost, stillMine } from './lock.ts';
import { jobListeners, PREVIEW_BYTES, type Listeners } from './report.ts';
import { nodesOf } from './server-nodes.ts';
import type { JobData, QueueJobResult, QueueWorkerOptions } from './types.ts';

const HEARTBEAT_MS = 2000;
const HEARTBEAT_TTL_MS = 10_000;
const SERVER_LOST_AFTER_MS = 15_000;

/**
 * Runs queued jobs on its servers. Each server's `object_info` makes a lane;
 * the worker publishes its lanes and takes jobs from their BullMQ queues.
 *
 * - Before a job is submitted, its `promptId` (chosen here) and server are
 *   recorded in the job: a worker taking the job over after this one died
 *   follows it there (or submits it with the same id if it never arrived),
 *   and one that does not list that server hands it back for one that does,
 *   for `serverLostAfter`, then fails it with `ServerLostError`.
 * - A failed job keeps its typed error; it is not retried.
 * - `cancel()` from any process stops the job on its server.
 *
 * @example
 * ```ts
 * import { QueueWorker } from '@platformui/sdk/queue';
 * const worker = new QueueWorker({ connection: 'redis://127.0.0.1:6379', servers: [{ baseUrl: 'http://gpu-a:8188' }, { baseUrl: 'http://gpu-b:8188' }] });
 * await worker.ready();
 * process.on('SIGTERM', () => void worker.close());
 * ```
 */
export class QueueWorker {
  /** Its id in Redis (`counts().workers`, BullMQ's `job.processedBy`): `options.id`, else a random one. */
  readonly id: string;
  readonly #options: QueueWorkerOptions;
  readonly #redisOptions: ReturnType<typeof redisOptions>;
  readonly #name: string;
  readonly #keys: QueueKeys;
  readonly #pool: CloudPool;
  readonly #log: Log;
  readonly #lostAfter: number;
  /** Preview images up to this size are reported (0: none). */
  readonly #previewBytes: number;
  readonly #lanes = new Map<string, LaneInfo>();
  readonly #servers = new Map<string, string>(); // server id → lane id
  readonly #past = new Map<string, Set<string>>(); // lane id → ids of servers that served it before (unpublished)
  readonly #workers = new Map<string, Worker<JobData, QueueJobResult>>();
  #redis: Redis | undefined;
  #sub: Redis | undefined;
  #registry: Lanes | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  #cancels: CancelWatch | undefined;
  /** The jobs it runs now, by id (a job it took back after stalling counts twice). */
  readonly #running = new Map<string, number>();
  /** Its start, begun by the constructor. */
  readonly #ready: Promise<void>;
  /** Whether a caller awaits ready(): else a failed start is logged, not left unsaid. */
  #awaited = false;
  #closing: Promise<void> | undefined;
  #active = 0;
  #dead = false;

  constructor(options: QueueWorkerOptions) {
    if (!isObject(options)) throw new InvalidArgumentError('must be an object with a connection and servers', 'options');
    checkOptions(options, QUEUE_WORKER_OPTIONS, 'QueueWorker');
    this.#redisOptions = redisOptions(options.connection);
    this.#name = checkName(options.name ?? 'platformui');
    this.#keys = keysOf(this.#name);
    this.id = options.id === undefined ? randomUuid() : checkName(options.id, 'id');
    if (options.concurrency !== undefined && (!Number.isInteger(options.concurrency) || options.concurrency < 1)) throw new InvalidArgumentError('must be a positive integer', 'concurrency');
    for (const f of ['stalledInterval', 'lockDuration'] as const) if (options[f] !== undefined) checkInterval(options[f], f);
    checkFunction(options.onOutputs, 'onOutputs');
    this.#options = options;
    this.#lostAfter = options.serverLostAfter ?? SERVER_LOST_AFTER_MS;
    const previews = options.previews;
    if (previews !== undefined && typeof previews !== 'boolean' && !(isObject(previews) && Number.isInteger(previews.maxBytes) && (previews.maxBytes as number) > 0)) {
      throw new InvalidArgumentError('must be true, false or { maxBytes } (a positive integer)', 'previews');
    }
    this.#previewBytes = previews === true ? PREVIEW_BYTES : isObject(previews) ? (previews.maxBytes as number) : 0;
    this.#log = createLog(options, () => [], { prefix: '[platformui queue]' });
    // The worker's log settings are its servers' clients' too, unless a server sets its own (or brings a client).
    const logs = { ...(options.logLevel !== undefined ? { logLevel: options.logLevel } : {}), ...(options.logger !== undefined ? { logger: options.logger } : {}) };
    const servers = Array.isArray(options.servers) ? options.servers.map((s) => (isObject(s) && !('client' in s) ? { ...logs, ...s } : s)) : options.servers;
    this.#pool = new CloudPool(servers, {
      serverLostAfter: this.#lostAfter,
      resubmitOnServerLoss: options.resubmitOnServerLoss === true,
      startWindow: 0,
      ...logs,
    });
    // Started at once, as BullMQ's Worker is: a worker nobody awaits still takes jobs. A start that fails leaves
    // nothing running (the process can exit), and is logged unless ready() reports it.
    this.#ready = this.#start().catch(async (err: unknown) => {
      // The SDK's own errors say what to do (install bullmq, another id): their message, not only their class.
      if (!this.#awaited && !this.#closing) this.#log.error?.(`the worker did not start: ${err instanceof PlatformUIError ? err.message : describeError(err)}`, {});
      await this.close().catch(() => undefined);
      throw err;
    });
    this.#ready.catch(() => undefined);
  }

  /**
   * The lanes it serves and publishes (one per distinct `object_info` of its
   * servers), known once {@link ready} resolved.
   *
   * @example
   * ```ts
   * await worker.ready();
   * console.log(`serving ${worker.lanes.join(', ')}`);
   * ```
   */
  get lanes(): string[] {
    return [...this.#lanes.keys()];
  }

  /**
   * Resolves once it has read its servers' `object_info`, published what they
   * can run and started taking jobs. The worker starts when it is constructed
   * (as BullMQ's does): this only waits. Rejects when it cannot start (no
   * bullmq, a Redis too old, its `id` taken by a live worker), having closed
   * what it opened; a start that fails unawaited is logged instead. A server
   * that does not answer yet is asked again at each heartbeat.
   *
   * @example
   * ```ts
   * await worker.ready(); // producers can now add jobs its servers can run
   * ```
   */
  ready(): Promise<void> {
    this.#awaited = true;
    return this.#ready;
  }

  /** Throws once close() was called: a start under way opens nothing more. */
  #stopIfClosing(): void {
    if (this.#closing) throw new PlatformUIError('the worker was closed while it was starting');
  }

  async #start(): Promise<void> {
    const deps = await loadQueueDeps();
    this.#stopIfClosing();
    this.#redis = quiet(new deps.Redis({ ...this.#redisOptions, maxRetriesPerRequest: null }), this.#log);
    try {
      await checkRedis(this.#redis, this.#log);
      await this.#claimId();
    } catch (err) {
      // Refused: nothing of it stays open (and with no registry yet, close() withdraws nothing of the twin's).
      this.#redis.disconnect();
      throw err;
    }
    this.#stopIfClosing();
    this.#registry = new Lanes(this.#redis, this.#keys);
    this.#sub = quiet(new deps.Redis({ ...this.#redisOptions, maxRetriesPerRequest: null }), this.#log);
    this.#cancels = new CancelWatch(this.#redis, this.#keys, () => this.#workers.values(), () => this.#running.keys());
    await this.#cancels.start(this.#sub);
    await this.#readServers(deps);
    this.#stopIfClosing();
    if (this.#lanes.size === 0) this.#log.warn?.('no server answered yet: the worker takes no job until one does', {});
    await this.#beat();
    this.#heartbeat = setInterval(() => {
      void this.#readServers(deps)
        .then(() => this.#beat())
        .catch((err: unknown) => this.#log.warn?.(`heartbeat failed: ${describeError(err)}`, {}));
    }, HEARTBEAT_MS);
    this.#heartbeat.unref?.();
  }

  /**
   * Takes this worker's id in Redis (its heartbeat key, written only if absent). A key there is another worker's
   * of that id: one that died lapses within the heartbeat's TTL (a restart waits for that), one whose heartbeat
   * goes on (the key's time to live grows back) is a live twin, and this one is refused.
   */
  async #claimId(): Promise<void> {
    const key = this.#keys.worker(this.id);
    let left = Infinity;
    while (!(await this.#redis!.set(key, JSON.stringify({ lanes: [], servers: [], active: 0 }), 'PX', HEARTBEAT_TTL_MS, 'NX'))) {
      const ttl = await this.#redis!.pttl(key);
      // Grown back (renewed), or kept for ever (not a heartbeat of ours): not a worker that died.
      if (ttl > left || ttl === -1) throw new InvalidArgumentError(`a worker with id ${JSON.stringify(this.id)} is running on queue ${JSON.stringify(this.#name)} (its heartbeat goes on): give each worker its own id`, 'id');
      left = ttl;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Reads the object_info of servers without a lane yet, and starts a BullMQ worker for each new lane. */
  async #readServers(deps: QueueDeps): Promise<void> {
    const ids = this.#pool.servers.map((s) => s.id).filter((id) => !this.#servers.has(id));
    await Promise.all(
      ids.map(async (id) => {
        try {
          const info = await nodesOf(this.#pool.client(id)!);
          const lane = laneIdOf(info);
          await this.#pastLanes(deps, id, lane);
          this.#servers.set(id, lane);
          this.#lanes.set(lane, info);
        } catch (err) {
          this.#log.warn?.(`${id}: could not read its nodes: ${describeError(err)}`, { server: id });
        }
      }),
    );
    for (const lane of [...this.#lanes.keys(), ...this.#past.keys()]) if (!this.#workers.has(lane) && !this.#dead) this.#workers.set(lane, this.#bullWorker(deps, lane));
  }

  /**
   * A server's object_info changes (a file uploaded, a model or node installed) and with it its lane: the jobs
   * of the lanes it served before (one this worker held when it died, recorded on that server; waiting ones)
   * would wait forever. Those lanes are served too (not published: no new job goes there) while they hold jobs.
   */
  async #pastLanes(deps: QueueDeps, server: string, lane: string): Promise<void> {
    const key = this.#keys.serverLanes(server);
    await this.#redis!.sadd(key, lane);
    for (const past of await this.#redis!.smembers(key)) {
      if (past === lane) continue;
      const q = new deps.bullmq.Queue(past, bullOptions(this.#redisOptions, this.#keys));
      quiet(q, this.#log);
      const left = await q.getJobCountByTypes('wait', 'active', 'delayed', 'prioritized', 'waiting-children').finally(() => q.close());
      if (left === 0) await this.#redis!.srem(key, past);
      else this.#past.set(past, (this.#past.get(past) ?? new Set()).add(server));
    }
  }

  #bullWorker(deps: QueueDeps, lane: string): Worker<JobData, QueueJobResult> {
    const servers = this.#pool.servers.filter((s) => this.#servers.get(s.id) === lane || this.#past.get(lane)?.has(s.id));
    const concurrency = this.#options.concurrency ?? Math.max(1, servers.reduce((n, s) => n + s.maxConcurrent, 0));
    const worker = new deps.bullmq.Worker<JobData, QueueJobResult>(lane, async (job, token, signal) => {
      // The job is in its lane, taken: its id's claim is settled, so that no add() of the id adds it again.
      await settleClaim(this.#redis!, this.#keys.job(job.id!)).catch(() => undefined);
      this.#running.set(job.id!, (this.#running.get(job.id!) ?? 0) + 1);
      try {
        return await this.#process(job, token, signal);
      } finally {
        const left = this.#running.get(job.id!)! - 1;
        if (left > 0) this.#running.set(job.id!, left);
        else this.#running.delete(job.id!);
      }
    }, {
      ...bullOptions(this.#redisOptions, this.#keys),
      name: this.id,
      concurrency,
      // A stalled job is taken over safely (followed by its recorded prompt id, never sent again): BullMQ's default
      // of 1 would fail a job still running on its server once its workers died twice (a deploy restarting twice).
      maxStalledCount: Number.MAX_SAFE_INTEGER,
      ...(this.#options.stalledInterval !== undefined ? { stalledInterval: this.#options.stalledInterval } : {}),
      ...(this.#options.lockDuration !== undefined ? { lockDuration: this.#options.lockDuration } : {}),
    });
    worker.on('error', (err) => this.#log.warn?.(`lane ${lane}: ${describeError(err)}`, { lane }));
    return worker;
  }

  async #beat(): Promise<void> {
    if (this.#dead || !this.#registry) return;
    await this.#registry.publish(this.id, this.#lanes, HEARTBEAT_TTL_MS, { lanes: [...this.#lanes.keys()], servers: [...this.#servers.keys()], active: this.#active });
  }

  async #process(job: Job<JobData>, token: string | undefined, signal: AbortSignal | undefined): Promise<QueueJobResult> {
    this.#active++;
    try {
      return await this.#runJob(job, token, signal);
    } catch (err) {
      if (this.#dead) return new Promise<never>(() => undefined); // "died": nothing more reaches Redis
      const { bullmq } = await loadQueueDeps();
      // Another worker holds it now: its record and its ending are that worker's to write.
      if (err instanceof bullmq.DelayedError || err instanceof LockLost) throw err;
      const error = err instanceof PoolClosedError ? err : this.#cancelled(err, signal, job);
      // Retries the caller asked for (`add(…, { retries })`): an execution error only, run again under a new prompt id.
      if (error instanceof ExecutionError && job.attemptsMade + 1 < (job.opts.attempts ?? 1)) {
        this.#log.info?.(`job ${job.id} failed (${describeError(error)}): running it again (retries)`, { jobId: job.id });
        const { promptId: _id, server: _server, ...data } = job.data;
        await job.updateData(data);
        throw error;
      }
      this.#log.info?.(`job ${job.id} failed: ${describeError(error)}`, { jobId: job.id });
      await job.updateData({ ...job.data, error: storeError(error) });
      throw new bullmq.UnrecoverableError(error instanceof Error ? error.message : String(error));
    } finally {
      this.#active--;
    }
  }

  /** A run aborted by a cancel is the job cancelled; anything else stays what it was. */
  #cancelled(err: unknown, signal: AbortSignal | undefined, job: Job<JobData>): unknown {
    return signal?.aborted ? new JobCancelledError(job.data.promptId ?? job.id!) : err;
  }

  async #runJob(job: Job<JobData>, token: string | undefined, signal: AbortSignal | undefined): Promise<QueueJobResult> {
    const data = job.data;
    if (await this.#redis!.exists(this.#keys.cancelled(job.id!))) {
      if (data.promptId && data.server && this.#pool.client(data.server)) await this.#pool.client(data.server)!.stopJob(data.promptId).catch(() => undefined);
      throw new JobCancelledError(data.promptId ?? job.id!);
    }
    const listeners = jobListeners(job, this.#previewBytes);
    if (data.promptId && data.server) {
      // Taken over: the job was recorded on a server before it was sent there.
      const client = this.#pool.client(data.server);
      if (!client) return this.#handBack(job, token, listeners, signal);
      // On a Comfy API v2 server the recorded id is the submission's Idempotency-Key: the server chose the job's
      // own id, which its record names (and the result's promptId is, as on a run not taken over).
      let id = data.promptId;
      // Whether it arrived: true, false (never: send it now under the same id), or unknown (no answer: follow finds out).
      const arrived = await client.getJob(data.promptId).then(
        (record) => {
          const named = (record as { id?: unknown } | undefined)?.id;
          if (client.server === 'v2' && typeof named === 'string' && named) id = named;
          return true;
        },
        (err: unknown) => (err instanceof NotFoundError ? false : undefined),
      );
      if (arrived === false) return this.#run(job, token, data.promptId, listeners, signal);
      this.#log.info?.(`job ${job.id}: following ${id} on ${data.server} (taken over)`, { jobId: job.id, server: data.server });
      try {
        const r = await client.follow(id, { ...listeners, ...(signal ? { signal } : {}), stopOnAbort: true, serverLostAfter: this.#lostAfter, ...(data.timeout !== undefined ? { timeout: data.timeout } : {}) });
        return this.#finish(job, token, { ...r, server: data.server }, client.baseUrl);
      } catch (err) {
        if (!(err instanceof ServerLostError)) throw err;
        // Unknown to a server that answers now, and no answer before: it never arrived.
        if (arrived === undefined && err.reason === 'forgotten') return this.#run(job, token, data.promptId, listeners, signal);
        return this.#lost(job, token, err, listeners, signal);
      }
    }
    return this.#run(job, token, randomUuid(), listeners, signal);
  }

  /**
   * A taken-over job whose server is gone: `ServerLostError`, or with
   * `resubmitOnServerLoss` once more on a server of this worker, under a new
   * id, saying where it was lost (as the pool does).
   */
  async #lost(job: Job<JobData>, token: string | undefined, err: ServerLostError, listeners: Listeners, signal: AbortSignal | undefined): Promise<QueueJobResult> {
    if (!this.#options.resubmitOnServerLoss) throw err;
    const from = { server: job.data.server!, promptId: job.data.promptId };
    this.#log.warn?.(`job ${job.id}: ${err.message}; running it once more elsewhere (resubmitOnServerLoss)`, { jobId: job.id, server: from.server });
    const { handedBackSince: _since, ...data } = job.data;
    await job.updateData({ ...data, promptId: undefined, server: undefined, resubmittedFrom: from });
    const r = await this.#run(job, token, randomUuid(), listeners, signal);
    return { ...r, resubmittedFrom: from };
  }

  async #run(job: Job<JobData>, token: string | undefined, promptId: string, listeners: Listeners, signal: AbortSignal | undefined): Promise<QueueJobResult> {
    const data = job.data;
    const inputs: Record<string, PoolInput> | undefined = data.inputs
      ? Object.fromEntries(Object.entries(data.inputs).map(([at, f]) => [at, f.name ? new File([Buffer.from(f.base64, 'base64')], f.name) : new Uint8Array(Buffer.from(f.base64, 'base64'))]))
      : undefined;
    const r = await this.#pool.run(data.workflow as Workflow, {
      promptId,
      // Recorded before the job is sent, by the run that holds it (checked before and after the write).
      onPlaced: async (s) => {
        await stillMine(job, token, this.#options.lockDuration, 'it was recorded');
        await job.updateData({ ...job.data, promptId, server: s.id });
        await stillMine(job, token, this.#options.lockDuration, 'it was recorded');
      },
      // Again as the submission leaves: the uploads (and a lost answer's look-up) may have outlasted the lock, and
      // the run holding it now, finding nothing on the server yet, sends the job itself.
      beforeSubmit: () => stillMine(job, token, this.#options.lockDuration, 'it was sent'),
      ...listeners,
      ...(inputs ? { inputs } : {}),
      ...(signal ? { signal } : {}),
      ...(data.timeout !== undefined ? { timeout: data.timeout } : {}),
    });
    return this.#finish(job, token, r, this.#pool.client(r.server)!.baseUrl);
  }

  async #finish(job: Job<JobData>, token: string | undefined, r: Omit<PoolJobResult, 'status'>, baseUrl: string): Promise<QueueJobResult> {
    const result: QueueJobResult = {
      promptId: r.promptId,
      outputs: r.outputs,
      files: r.files,
      server: r.server,
      baseUrl,
      // A job resubmitted after a loss and then taken over again still says where it was lost first.
      ...(r.resubmittedFrom ?? job.data.resubmittedFrom ? { resubmittedFrom: r.resubmittedFrom ?? job.data.resubmittedFrom } : {}),
    };
    if (this.#options.onOutputs) {
      // Every run that followed the job to its end gets here; only the one holding the lock acts on its outputs.
      await stillMine(job, token, this.#options.lockDuration, 'onOutputs');
      await this.#options.onOutputs(result, job);
    }
    return JSON.parse(JSON.stringify(result)) as QueueJobResult;
  }

  /** A job on a server this worker does not list: back to the queue for its owner, until `serverLostAfter`. */
  async #handBack(job: Job<JobData>, token: string | undefined, listeners: Listeners, signal: AbortSignal | undefined): Promise<QueueJobResult> {
    const data = job.data;
    const since = data.handedBackSince ?? Date.now();
    if (Date.now() - since >= this.#lostAfter) return this.#lost(job, token, new ServerLostError(data.promptId!, data.server!, 'unreachable', Date.now() - since), listeners, signal);
    if (data.handedBackSince === undefined) await job.updateData({ ...data, handedBackSince: since });
    const { bullmq } = await loadQueueDeps();
    await job.moveToDelayed(Date.now() + Math.min(1000, this.#lostAfter / 4), token);
    throw new bullmq.DelayedError();
  }

  /**
   * Stops taking jobs, waits for those it runs to finish, withdraws its lanes
   * and closes its connections and its pool. `{ force: true }` stops at once
   * as if the process died: its jobs keep running on their servers and are
   * taken over (followed, not sent again) by another worker once their lock
   * lapses (`lockDuration`).
   *
   * @example
   * ```ts
   * await worker.close();
   * ```
   */
  close(options: { force?: boolean } = {}): Promise<void> {
    return (this.#closing ??= this.#close(options));
  }

  async #close(options: { force?: boolean }): Promise<void> {
    clearInterval(this.#heartbeat);
    this.#cancels?.stop();
    if (options.force) this.#dead = true;
    await Promise.allSettled([...this.#workers.values()].map((w) => w.close(options.force === true)));
    if (!options.force) await this.#registry?.withdraw(this.id, this.#lanes.keys()).catch(() => undefined);
    this.#dead = true;
    await this.#pool.close();
    // QUIT waits for a connection that is not up (Redis away): that one is dropped.
    for (const r of [this.#sub, this.#redis]) if (r) await (r.status === 'ready' ? r.quit().catch(() => r.disconnect()) : r.disconnect());
  }
}
