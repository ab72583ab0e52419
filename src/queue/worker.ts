/**
 * `QueueWorker`: takes jobs of the lanes its servers serve and runs each on
 * one of them through a `CloudPool`, recording where before it is sent (so a
 * job taken over after this worker died is followed there, never sent twice).
 *
 * @module
 */
import type { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { ExecutionError, InvalidArgumentError, JobCancelledError, NotFoundError, PlatformUIError, PoolClosedError, ServerLostError, UnsupportedError } from '@platformui/sdk';
import type { CloudClient } from '@platformui/sdk';
import { CloudPool, type PoolInput, type PoolJobResult, type RunOptions, type SocketEvent } from '@platformui/sdk';
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
import { Lanes, laneIdOf, type LaneInfo } from './lanes.ts';
import type { JobData, QueueJobResult, QueueNodeEvent, QueueReport, QueueWorkerOptions } from './types.ts';

const HEARTBEAT_MS = 2000;
const HEARTBEAT_TTL_MS = 10_000;
const SERVER_LOST_AFTER_MS = 15_000;
/** How often (ms) a worker reads the cancel flags of the jobs it runs: the bound on a cancel whose message it missed. */
const CANCEL_CHECK_MS = 1000;

/** BullMQ's default `lockDuration` (ms). */
const BULLMQ_LOCK_MS = 30_000;

/** This run of a job lost its lock (its worker was stalled): another run holds the job now, maybe this worker's own. */
class LockLost extends Error {
  constructor(jobId: string, before: string) {
    super(`job ${jobId}: its lock lapsed before ${before}; the run holding it now does that`);
    this.name = 'LockLost';
  }
}

/** The run's listeners a job reports through. */
type Listeners = Pick<RunOptions, 'onProgress' | 'onPreview' | 'onEvent'>;

/** The socket's node-level messages a job reports as they are (without their payloads: see {@link QueueNodeEvent}). */
const NODE_EVENTS = new Set<string>(['execution_start', 'execution_cached', 'executing', 'executed', 'execution_success', 'execution_error', 'execution_interrupted']);

/**
 * `e` as the job's node events: the socket's node messages reduced to their node ids, and what a `progress_state`
 * snapshot adds (a node newly finished, which the live cloud reports only there). `finished` is the job's memory
 * of what was reported finished, so that a snapshot repeating it sends nothing.
 */
function nodeEvents(e: SocketEvent, finished: Set<string>): QueueNodeEvent[] {
  if (e.type === 'binary' || e.type === 'malformed') return [];
  const type = e.type === 'invalid' || e.type === 'unknown' ? e.rawType : e.type;
  const data = isObject(e.data) ? e.data : {};
  if (type === 'progress_state') {
    const nodes = isObject(data.nodes) ? data.nodes : {};
    const newly = Object.entries(nodes).filter(([id, p]) => isObject(p) && p.state === 'finished' && !finished.has(id));
    return newly.map(([id]) => (finished.add(id), { type: 'executed', node: id }));
  }
  if (!NODE_EVENTS.has(type)) return [];
  const node = typeof data.node === 'string' ? data.node : typeof data.node_id === 'string' ? data.node_id : undefined;
  if (type === 'executed' && node !== undefined) {
    if (finished.has(node)) return [];
    finished.add(node);
  }
  const nodes = type === 'execution_cached' && Array.isArray(data.nodes) ? data.nodes.filter((n): n is string => typeof n === 'string') : undefined;
  return [{ type: type as QueueNodeEvent['type'], ...(node !== undefined ? { node } : {}), ...(nodes ? { nodes } : {}) }];
}

/** The job id a Comfy API v2 server is asked about to see it answer (it serves no object_info): a 404 is an answer. */
const PROBE_JOB_ID = '00000000-0000-0000-0000-000000000000';

/**
 * A server's nodes: its `object_info`, or `'unknown'` for a Comfy API v2 server without the `objectInfo` option
 * (nobody can read them: it takes API-format workflows, placed by load), once it answers a job read.
 */
async function nodesOf(client: CloudClient): Promise<LaneInfo> {
  try {
    return await client.getObjectInfo();
  } catch (err) {
    if (!(err instanceof UnsupportedError)) throw err;
  }
  await Promise.resolve(client.getJobStatus(PROBE_JOB_ID)).catch((err: unknown) => {
    if (!(err instanceof NotFoundError)) throw err;
  });
  return 'unknown';
}

/** The largest preview image a job reports by default (`previews: true`): Redis holds it, every producer listening gets it. */
const PREVIEW_BYTES = 256 * 1024;

/** Why the processor stopped a job: a cancel from any process. */
const CANCEL = Symbol('cancelled');

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
  #cancelCheck: ReturnType<typeof setInterval> | undefined;
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
    this.#sub.on('message', (_channel: string, jobId: string) => this.#cancel(jobId));
    // A cancel published while this worker's connection was down is not heard again: its flag is read at once
    // on reconnecting, and every CANCEL_CHECK_MS while jobs run.
    this.#sub.on('ready', () => void this.#checkCancels());
    await this.#sub.subscribe(this.#keys.cancelChannel);
    this.#cancelCheck = setInterval(() => void this.#checkCancels(), CANCEL_CHECK_MS);
    this.#cancelCheck.unref?.();
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

  /** Stops `jobId` if this worker runs it (its run's signal aborts: the job is stopped on its server). */
  #cancel(jobId: string): void {
    for (const w of this.#workers.values()) w.cancelJob(jobId, CANCEL.description);
  }

  /** Cancels the jobs it runs whose cancel flag is set (a cancel whose message it missed). */
  async #checkCancels(): Promise<void> {
    const ids = [...this.#running.keys()];
    if (ids.length === 0 || !this.#redis) return;
    const flags = await Promise.all(ids.map((id) => this.#redis!.exists(this.#keys.cancelled(id)))).catch(() => undefined);
    flags?.forEach((set, i) => set && this.#cancel(ids[i]!));
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

  /**
   * Throws {@link LockLost} unless this run still holds `job`'s lock (extending it). BullMQ hands a job whose
   * lock lapsed to another run, which may be about to send it under the recorded id, and may be this worker's
   * own (a stall shorter than its stall interval): so the token is this run's, passed along, never looked up
   * by job id (the later run's would pass for the earlier's).
   */
  async #stillMine(job: Job<JobData>, token: string | undefined, before: string): Promise<void> {
    if (token && (await job.extendLock(token, this.#options.lockDuration ?? BULLMQ_LOCK_MS)) !== 1) throw new LockLost(job.id!, before);
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
    const listeners = this.#listeners(job);
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

  /**
   * What a job reports while it runs: progress, its node events (`job.on('node')`), and with `previews`
   * each preview image up to its size bound (base64 in the job's progress: Redis keeps only the latest,
   * every listener hears each). Node events carry value and max -1, as previews do, so that a handle of
   * an SDK before them can tell them from steps.
   */
  #listeners(job: Job<JobData>): Listeners {
    const report = (p: QueueReport) => void job.updateProgress(p as unknown as object).catch(() => undefined);
    const bound = this.#previewBytes;
    const finished = new Set<string>();
    return {
      onProgress: (p) => report({ ...(p.node !== undefined ? { node: p.node } : {}), value: p.value, max: p.max }),
      onEvent: (e) => {
        for (const event of nodeEvents(e, finished)) report({ ...(event.node !== undefined ? { node: event.node } : {}), value: -1, max: -1, event });
      },
      ...(bound > 0
        ? {
            onPreview: (frame) => {
              if (frame.image.byteLength > bound) return;
              const node = 'metadata' in frame ? frame.metadata.node_id : undefined;
              // Node only (this entry is): Buffer encodes in one call.
              report({ ...(typeof node === 'string' ? { node } : {}), value: -1, max: -1, preview: { mime: frame.mime ?? 'application/octet-stream', base64: Buffer.from(frame.image).toString('base64') } });
            },
          }
        : {}),
    };
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
        await this.#stillMine(job, token, 'it was recorded');
        await job.updateData({ ...job.data, promptId, server: s.id });
        await this.#stillMine(job, token, 'it was recorded');
      },
      // Again as the submission leaves: the uploads (and a lost answer's look-up) may have outlasted the lock, and
      // the run holding it now, finding nothing on the server yet, sends the job itself.
      beforeSubmit: () => this.#stillMine(job, token, 'it was sent'),
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
      await this.#stillMine(job, token, 'onOutputs');
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
    clearInterval(this.#cancelCheck);
    if (options.force) this.#dead = true;
    await Promise.allSettled([...this.#workers.values()].map((w) => w.close(options.force === true)));
    if (!options.force) await this.#registry?.withdraw(this.id, this.#lanes.keys()).catch(() => undefined);
    this.#dead = true;
    await this.#pool.close();
    // QUIT waits for a connection that is not up (Redis away): that one is dropped.
    for (const r of [this.#sub, this.#redis]) if (r) await (r.status === 'ready' ? r.quit().catch(() => r.disconnect()) : r.disconnect());
  }
}
