/**
 * `CloudPool`: one `run()` over many servers. Each job goes to a server that
 * has every class and model it uses, with the least work for its weight; a
 * server that dies gets no new jobs, a job it never received moves at once,
 * and a job it accepted and lost is never re-run unasked.
 *
 * Built on `CloudClient.run()` (one client per server, its socket kept open
 * for the queue counts and as the first sign of a dead server); the rules of
 * placement are in `placement.ts`.
 *
 * @module
 */
import { APIConnectionError, APIUserAbortError, ExecutionError, InvalidArgumentError, JobCancelledError, PlacementError, PoolClosedError, ServerLostError } from '../errors.ts';
import { platform } from '../platform/node.ts';
import type { ObjectInfo, UploadResponse, Workflow } from '../schemas/cloud.ts';
import { isObject } from '../schemas/rule.ts';
import { createLog, describeError, type Log, type LogOptions } from '../transport/log.ts';
import { checkInterval, checkTimeout } from '../transport/options.ts';
import { toValue } from '../workflow/workflow.ts';
import { CloudClient, jsonOf, type CloudClientOptions, type WorkflowInput } from './client.ts';
import { choose, missingOn, type Placeable } from './placement.ts';
import type { CloudSocket } from './socket.ts';
import type { JobResult, RunOptions } from './run.ts';
import { sleep } from './run.ts';

/** The pool's own fields of a server. */
export interface PoolServerFields {
  /** A name for the server in results, events and errors. Default: its base URL. */
  id?: string;
  /** Its share of the work: a faster GPU takes more (load is divided by it). Default 1. */
  weight?: number;
  /** How many of this pool's jobs it holds at once. Default 2: one running, one waiting on the server, so a GPU never idles between jobs. */
  maxConcurrent?: number;
}

/**
 * One server of a pool: `CloudClient` options plus the pool's fields, or an
 * existing client.
 *
 * @example
 * ```ts
 * const servers: PoolServer[] = [
 *   { baseUrl: 'http://gpu-a:8188', weight: 2 },
 *   { client: new CloudClient({ baseUrl: 'https://cloud.example.com', apiKey }), id: 'cloud', maxConcurrent: 4 },
 * ];
 * ```
 */
export type PoolServer = (CloudClientOptions & PoolServerFields & { client?: undefined }) | (PoolServerFields & { client: CloudClient });

/** Options of {@link CloudPool}. */
export interface CloudPoolOptions extends LogOptions {
  /**
   * How long (ms) a server may give no answer before its accepted jobs are
   * given up as lost ({@link ServerLostError}), and before jobs waiting for
   * it alone fail ({@link PlacementError}). Default 15000.
   */
  serverLostAfter?: number;
  /**
   * Re-run, once and elsewhere, a job that a server accepted and then lost
   * (sensible for local fleets; a cloud job may cost money). The result says
   * so in `resubmittedFrom`. Default false: the run rejects with {@link ServerLostError}.
   */
  resubmitOnServerLoss?: boolean;
}

/** An input file of a pool job: uploaded to the server the job is placed on. A string is a file path (Node). */
export type PoolInput = Blob | Uint8Array | ArrayBuffer | string;

/** Options of {@link CloudPool.run}: those of `CloudClient.run()`, plus inputs and a priority. */
export interface PoolRunOptions extends RunOptions {
  /**
   * Files for the workflow's inputs, by path (`'10.inputs.image'`): each is
   * uploaded to the server the job lands on (once per server and content)
   * and its name put into the workflow. Streams are not taken: a job may
   * need its file on a second server.
   */
  inputs?: Record<string, PoolInput>;
  /** Higher runs first among jobs waiting in the pool's queue; equal ones in order. Default 0. */
  priority?: number;
}

/** What a pool's job produced: `CloudClient.run()`'s result, and where it ran. */
export interface PoolJobResult extends JobResult {
  /** The id of the server that ran the job. */
  server: string;
  /**
   * Set when the job ran again after a server lost it (`resubmitOnServerLoss`): that server, and the job's id
   * there (`undefined` when its submission got no answer, so the id was never known).
   */
  resubmittedFrom?: { server: string; promptId: string | undefined };
}

/** A job handed to the pool: awaitable for its result, cancellable wherever it is. */
export interface PoolJob extends PromiseLike<PoolJobResult> {
  /** `queued` (in the pool's queue), `placed` (uploading, submitting or on a server), `settled`. */
  readonly state: 'queued' | 'placed' | 'settled';
  /** The server it was placed on, once placed. */
  readonly server: string | undefined;
  /** The job's id on its server, once the server accepted it. */
  readonly promptId: string | undefined;
  /** Settles once: the result, or why there is none. */
  readonly result: Promise<PoolJobResult>;
  /** Cancels the job wherever it is (the pool's queue, or its server, by its own id); the result rejects with `APIUserAbortError`. */
  cancel(): void;
}

/** A server as the pool sees it (a snapshot). */
export interface PoolServerStatus {
  id: string;
  /** `starting` until its nodes are known; `down` while it does not answer. */
  state: 'starting' | 'up' | 'down';
  weight: number;
  maxConcurrent: number;
  /** This pool's jobs there, not settled. */
  active: number;
  /** Its queue as it last said (every client's jobs), plus this pool's submissions it does not show yet. */
  load: number;
}

/** `serverDown` / `serverUp` events. */
export interface PoolServerEvent {
  server: string;
  reason: string;
}

type PoolEvents = { serverDown: PoolServerEvent; serverUp: PoolServerEvent };

const SERVER_LOST_AFTER_MS = 15_000;
const PROBE_FIRST_MS = 250;
const PROBE_MAX_MS = 5_000;
const PROBE_TIMEOUT_MS = 5_000;
/** How many times a job whose submission never reached its server moves to another. */
const MAX_MOVES = 3;
/**
 * Connection failures that prove the request never reached the server. A timeout or a reset may come after the
 * server took the job; browsers give no code at all: neither moves a job unasked.
 */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

interface Server extends Placeable {
  id: string;
  client: CloudClient;
  socket: CloudSocket;
  weight: number;
  maxConcurrent: number;
  state: 'starting' | 'up' | 'down';
  active: number;
  /** `queue_remaining` as the server last said. */
  queued: number;
  /** This pool's jobs placed there and not accepted yet (uploading, submitting): in no queue count. */
  submitting: number;
  /** This pool's accepted jobs that no queue count has shown yet (a status event or a `/queue` read resets it). */
  unseen: number;
  readonly load: number;
  info: ObjectInfo | undefined;
  downSince: number;
  probing: boolean;
  /** Aborted when the server leaves the pool (removeServer, close): ends its probes and their requests. */
  gone: AbortController;
  removed: boolean;
  offs: Array<() => void>;
  /** Uploads by content hash: once per server and content. */
  uploads: Map<string, Promise<UploadResponse>>;
}

interface Entry {
  priority: number;
  workflow: Workflow;
  options: PoolRunOptions;
  uploaded: Set<string>;
  /** Per server id: `[]` can run it, reasons otherwise; absent while its nodes are unknown. */
  verdicts: Map<string, string[]>;
  state: 'queued' | 'placed' | 'settled';
  server: Server | undefined;
  promptId: string | undefined;
  resubmittedFrom: { server: string; promptId: string | undefined } | undefined;
  /** How many times a submission that never reached its server was moved. */
  moves: number;
  /** The server that lost this job: a re-run goes elsewhere. */
  avoid: string | undefined;
  /** Aborts the run on its server: the caller's cancel, or close(). */
  stop: AbortController;
  closing: { cancel: boolean } | undefined;
  result: Promise<PoolJobResult>;
  resolve: (r: PoolJobResult) => void;
  reject: (e: unknown) => void;
  done: () => void;
}

/**
 * One `run()` over many servers (local servers, cloud accounts, or both).
 *
 * - **Placement.** A job goes only to a server whose `object_info` has every
 *   class and every combo value (model file names…) it uses; among those,
 *   to the one with the least work for its `weight` (its own queue, which
 *   every client of it sees, plus this pool's submissions it does not show
 *   yet); ties round-robin. A job no server can run fails at once, before
 *   any upload, with the reasons per server ({@link PlacementError}).
 * - **Waiting.** A server holds at most `maxConcurrent` of the pool's jobs;
 *   the rest wait in the pool's queue (by `priority`, then in order).
 * - **Faults.** Each server's socket is watched, and a cheap GET probes it
 *   with backoff while the socket is down: events `serverDown` / `serverUp`.
 *   A job whose submission never reached its server moves to another at
 *   once. A job a server accepted and lost rejects with
 *   {@link ServerLostError}, or, with `resubmitOnServerLoss`, runs once more
 *   elsewhere. Every run settles exactly once.
 *
 * @example
 * ```ts
 * const pool = new CloudPool([{ baseUrl: 'http://gpu-a:8188', weight: 2 }, { baseUrl: 'http://gpu-b:8188' }], { resubmitOnServerLoss: true });
 * pool.on('serverDown', (e) => console.warn(`${e.server} is down: ${e.reason}`));
 * const result = await pool.run(workflow, { inputs: { '10.inputs.image': './photo.png' }, onProgress: (p) => console.log(p.value, p.max) });
 * console.log(`ran on ${result.server}:`, result.files);
 * await pool.close();
 * ```
 */
export class CloudPool {
  readonly #servers: Server[] = [];
  /** Jobs waiting for a server, by priority then order. */
  readonly #waiting: Entry[] = [];
  readonly #placed = new Set<Entry>();
  /** Removed servers, by id: their jobs' files are still theirs to download. */
  readonly #removed = new Map<string, Server>();
  readonly #listeners: { [K in keyof PoolEvents]: Set<(e: PoolEvents[K]) => void> } = { serverDown: new Set(), serverUp: new Set() };
  readonly #lostAfter: number;
  readonly #resubmit: boolean;
  readonly #log: Log;
  #turn = 0;
  #closed = false;
  /** Stops being sent (`#stopJob`): close() waits for them, so a process may exit right after. */
  readonly #stopping = new Set<Promise<void>>();
  #expiry: ReturnType<typeof setInterval> | undefined;

  constructor(servers: readonly PoolServer[], options: CloudPoolOptions = {}) {
    if (!Array.isArray(servers)) throw new InvalidArgumentError('must be an array of servers', 'servers');
    if (options.serverLostAfter !== Infinity) checkInterval(options.serverLostAfter, 'serverLostAfter', ' or Infinity');
    this.#lostAfter = options.serverLostAfter ?? SERVER_LOST_AFTER_MS;
    this.#resubmit = options.resubmitOnServerLoss === true;
    this.#log = createLog(options, () => [], { prefix: '[platformui pool]' });
    for (const s of servers) this.addServer(s);
  }

  /**
   * Adds a server; it takes jobs once its `object_info` is read. Returns its id.
   *
   * @example
   * ```ts
   * pool.addServer({ baseUrl: 'http://gpu-c:8188', id: 'gpu-c' });
   * ```
   */
  addServer(server: PoolServer): string {
    if (this.#closed) throw new InvalidArgumentError('the pool is closed', 'server');
    if (!isObject(server)) throw new InvalidArgumentError('must be CloudClient options or { client }', 'server');
    const { id, weight = 1, maxConcurrent = 2 } = server as PoolServer;
    if (typeof weight !== 'number' || !(weight > 0) || !Number.isFinite(weight)) throw new InvalidArgumentError(`must be a positive number, got ${String(weight)}`, 'weight');
    if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) throw new InvalidArgumentError(`must be a whole number ≥ 1, got ${String(maxConcurrent)}`, 'maxConcurrent');
    let client: CloudClient;
    if (server.client !== undefined) {
      if (!(server.client instanceof CloudClient)) throw new InvalidArgumentError('must be a CloudClient', 'client');
      client = server.client;
    } else {
      const { id: _id, weight: _w, maxConcurrent: _m, client: _c, ...clientOptions } = server;
      client = new CloudClient(clientOptions);
    }
    const name = id ?? client.baseUrl;
    if (typeof name !== 'string' || !name) throw new InvalidArgumentError('must be a non-empty string', 'id');
    if (this.#servers.some((s) => s.id === name)) throw new InvalidArgumentError(`a server ${JSON.stringify(name)} is already in the pool`, 'id');
    const s: Server = {
      id: name,
      client,
      socket: client.connect(),
      weight,
      maxConcurrent,
      state: 'starting',
      active: 0,
      queued: 0,
      submitting: 0,
      unseen: 0,
      get load() {
        return this.queued + this.submitting + this.unseen;
      },
      info: undefined,
      downSince: 0,
      probing: false,
      gone: new AbortController(),
      removed: false,
      offs: [],
      uploads: new Map(),
    };
    this.#removed.delete(name);
    this.#servers.push(s);
    this.#watch(s);
    return name;
  }

  /**
   * Removes a server: it gets no new jobs; jobs running there are followed to
   * their end. Returns whether it was in the pool.
   */
  removeServer(id: string): boolean {
    const i = this.#servers.findIndex((s) => s.id === id);
    if (i < 0) return false;
    const [s] = this.#servers.splice(i, 1);
    s!.removed = true;
    s!.gone.abort();
    this.#removed.set(id, s!);
    for (const e of this.#waiting) e.verdicts.delete(id);
    this.#rejectUnplaceable();
    if (s!.active === 0) this.#release(s!);
    return true;
  }

  /** Each server's state and load (a snapshot). */
  get servers(): PoolServerStatus[] {
    return this.#servers.map(({ id, state, weight, maxConcurrent, active, load }) => ({ id, state, weight, maxConcurrent, active, load }));
  }

  /**
   * The client of a server, by id: to download what a job made there
   * (`result.files` are that server's files), or to ask it anything else.
   *
   * @example
   * ```ts
   * const result = await pool.run(workflow);
   * for (const f of result.files) await pool.client(result.server)!.downloadToFile(f, f.filename);
   * ```
   */
  client(id: string): CloudClient | undefined {
    return (this.#servers.find((s) => s.id === id) ?? this.#removed.get(id))?.client;
  }

  /** How many jobs wait in the pool's queue. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * `serverDown` (a server stopped answering: no new jobs for it) and
   * `serverUp` (it answers again). Returns a function that removes the listener.
   */
  on<K extends keyof PoolEvents>(event: K, listener: (e: PoolEvents[K]) => void): () => void {
    const set = this.#listeners[event] as Set<(e: PoolEvents[K]) => void> | undefined;
    if (!set) throw new InvalidArgumentError("must be 'serverDown' or 'serverUp'", 'event');
    set.add(listener);
    return () => void set.delete(listener);
  }

  /**
   * Runs a workflow on the best server for it, to its end: the same options,
   * events and result as `CloudClient.run()`, plus `server` (and
   * `resubmittedFrom` when a lost job ran again).
   */
  run(workflow: WorkflowInput, options: PoolRunOptions = {}): Promise<PoolJobResult> {
    try {
      return this.submit(workflow, options).result;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Hands a workflow to the pool and returns at once: a {@link PoolJob} to
   * await, inspect (`state`, `server`, `promptId`) or `cancel()`. Invalid
   * arguments throw here, before anything is queued.
   */
  submit(workflow: WorkflowInput, options: PoolRunOptions = {}): PoolJob {
    const json = jsonOf(workflow);
    if (!isObject(json)) throw new InvalidArgumentError('must be an API-format workflow (an object of nodes)', 'workflow');
    const priority = options.priority ?? 0;
    if (typeof priority !== 'number' || Number.isNaN(priority)) throw new InvalidArgumentError(`must be a number, got ${String(priority)}`, 'priority');
    const uploaded = checkInputs(json, options.inputs);
    // run()'s own checks, here: a bad option must fail before the inputs are uploaded.
    checkTimeout(options.timeout, 'timeout');
    checkInterval(options.pollInterval, 'pollInterval');
    if (options.serverLostAfter !== Infinity) checkInterval(options.serverLostAfter, 'serverLostAfter', ' or Infinity');
    let resolve!: (r: PoolJobResult) => void;
    let reject!: (e: unknown) => void;
    const result = new Promise<PoolJobResult>((res, rej) => ((resolve = res), (reject = rej)));
    const entry: Entry = {
      priority,
      workflow: structuredClone(json),
      options,
      uploaded,
      verdicts: new Map(),
      state: 'queued',
      server: undefined,
      promptId: undefined,
      resubmittedFrom: undefined,
      moves: 0,
      avoid: undefined,
      stop: new AbortController(),
      closing: undefined,
      result,
      resolve,
      reject,
      done: () => undefined,
    };
    const cancel = () => this.#cancel(entry, new APIUserAbortError(undefined, { cause: options.signal?.reason }));
    if (options.signal) {
      const signal = options.signal;
      signal.addEventListener('abort', cancel, { once: true });
      entry.done = () => signal.removeEventListener('abort', cancel);
    }
    const job: PoolJob = {
      get state() {
        return entry.state;
      },
      get server() {
        return entry.server?.id;
      },
      get promptId() {
        return entry.promptId;
      },
      result,
      cancel,
      then: (onFulfilled, onRejected) => result.then(onFulfilled, onRejected),
    };
    if (this.#closed) this.#settle(entry, new PoolClosedError());
    else if (options.signal?.aborted) cancel();
    else this.#enqueue(entry);
    return job;
  }

  /**
   * Closes the pool: runs waiting in its queue reject ({@link PoolClosedError}),
   * running ones are no longer followed (they reject the same way; their jobs
   * are cancelled on their servers only with `cancel: true`), and every socket
   * of the pool's servers closes. `run()` after `close()` rejects. Resolves
   * when every run has settled and, with `cancel`, the stops were sent.
   */
  async close(options: { cancel?: boolean } = {}): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      for (const s of this.#servers) s.gone.abort();
      clearInterval(this.#expiry);
      for (const e of this.#waiting.splice(0)) this.#settle(e, new PoolClosedError());
      for (const e of this.#placed) {
        e.closing = { cancel: options.cancel === true };
        e.stop.abort(new PoolClosedError(e.promptId, options.cancel));
      }
    }
    await Promise.allSettled([...this.#placed].map((e) => new Promise<void>((r) => void e.result.then(() => r(), () => r()))));
    await Promise.allSettled([...this.#stopping]);
    for (const s of this.#servers) this.#release(s);
  }

  // ---------------------------------------------------------------- servers

  #watch(s: Server): void {
    const socket = s.socket;
    s.offs.push(
      socket.on('status', (m) => {
        const remaining = (m.data as { status?: { exec_info?: { queue_remaining?: unknown } } } | undefined)?.status?.exec_info?.queue_remaining;
        if (typeof remaining === 'number' && remaining >= 0) {
          s.queued = remaining;
          s.unseen = 0;
        }
      }),
      socket.on('open', () => {
        if (s.state === 'down') void this.#readNodes(s, 'its socket is back');
      }),
      socket.on('reconnecting', () => void this.#probe(s)),
    );
    void this.#readNodes(s, 'started');
  }

  /** Reads the server's nodes and queue; up when both answer, down (and probed) otherwise. */
  async #readNodes(s: Server, why: string): Promise<boolean> {
    try {
      // object_info at the client's own timeout: a server with many nodes takes seconds to list them.
      const [info] = await Promise.all([s.client.getObjectInfo({ signal: s.gone.signal }), this.#readQueue(s, {})]);
      if (s.removed || this.#closed) return true;
      s.info = info;
      // Its nodes may have changed (it restarted with others): judge the waiting jobs again.
      for (const e of this.#waiting) e.verdicts.set(s.id, missingOn(e.workflow, info, e.uploaded));
      this.#mark(s, 'up', why);
      this.#rejectUnplaceable();
      this.#drain();
      return true;
    } catch (err) {
      if (s.removed || this.#closed) return false;
      this.#mark(s, 'down', describeError(err));
      void this.#probe(s);
      return false;
    }
  }

  /** While the socket is down: a cheap GET, with backoff, until the server answers. */
  async #probe(s: Server): Promise<void> {
    if (s.probing) return;
    s.probing = true;
    try {
      // Until the socket is back: it alone tells the queue's changes, so meanwhile the probe reads the queue.
      for (let delay = PROBE_FIRST_MS; !s.removed && !this.#closed; delay = Math.min(delay * 2, PROBE_MAX_MS)) {
        if (s.state === 'up' && s.socket.state === 'open') return;
        try {
          await this.#readQueue(s);
          if (s.state !== 'up') await this.#readNodes(s, 'it answers again');
        } catch (err) {
          this.#mark(s, 'down', describeError(err));
        }
        await sleep(delay, s.gone.signal).catch(() => undefined);
      }
    } finally {
      s.probing = false;
    }
  }

  /** The server's queue as the load: everything it holds, which includes this pool's accepted jobs. Not retried unless `retry` says. */
  async #readQueue(s: Server, retry: { retry?: { limit: number } } = { retry: { limit: 0 } }): Promise<void> {
    const queue = await s.client.getQueue({ timeout: PROBE_TIMEOUT_MS, ...retry, signal: s.gone.signal });
    s.queued = queue.queue_running.length + queue.queue_pending.length;
    s.unseen = 0;
  }

  #mark(s: Server, state: 'up' | 'down', reason: string): void {
    if (s.state === state) return;
    const was = s.state;
    s.state = state;
    if (state === 'down') {
      s.downSince = Date.now();
      // It may come back restarted, without the files uploaded to it.
      s.uploads.clear();
      this.#log.warn?.(`server ${s.id} is down: ${reason}`, { server: s.id, reason });
      this.#emit('serverDown', { server: s.id, reason });
      this.#armExpiry();
    } else if (was === 'down') {
      this.#log.info?.(`server ${s.id} is up: ${reason}`, { server: s.id, reason });
      this.#emit('serverUp', { server: s.id, reason });
    }
  }

  #emit<K extends keyof PoolEvents>(event: K, e: PoolEvents[K]): void {
    for (const f of this.#listeners[event] as Set<(e: PoolEvents[K]) => void>) {
      try {
        f(e);
      } catch (err) {
        this.#log.error?.(`a ${event} listener threw: ${describeError(err)}`, { event });
      }
    }
  }

  /** Stops watching; closes the socket the pool opened (a given client stays usable: its next run() opens another). */
  #release(s: Server): void {
    for (const off of s.offs.splice(0)) off();
    s.client.close();
  }

  // ---------------------------------------------------------------- jobs

  #enqueue(entry: Entry, first = false): void {
    entry.state = 'queued';
    entry.server = undefined;
    for (const s of this.#servers) if (s.info && !entry.verdicts.has(s.id)) entry.verdicts.set(s.id, missingOn(entry.workflow, s.info, entry.uploaded));
    if (this.#unplaceable(entry)) return;
    if (this.#servers.some((s) => s.state === 'down')) this.#armExpiry();
    // No waiting job could be placed before this one came (drain leaves none that can): only it may go now.
    const server = choose(this.#servers, (s) => canRun(entry, s), this.#turn);
    if (server) return this.#place(entry, server);
    // By priority, then order (a job that must move goes before its equals).
    let i = this.#waiting.length;
    while (i > 0 && (this.#waiting[i - 1]!.priority < entry.priority || (first && this.#waiting[i - 1]!.priority === entry.priority))) i--;
    this.#waiting.splice(i, 0, entry);
  }

  #place(entry: Entry, server: Server): void {
    this.#turn = (this.#servers.indexOf(server) + 1) % this.#servers.length;
    void this.#start(entry, server);
  }

  /** Rejects the job when no server can run it: all known and none able, or the able ones silent too long. */
  #unplaceable(entry: Entry): boolean {
    const reasons: Record<string, string[]> = {};
    const now = Date.now();
    let hope = false;
    for (const s of this.#servers) {
      const verdict = entry.verdicts.get(s.id);
      if (s.id === entry.avoid) reasons[s.id] = ['lost this job before: it runs again elsewhere'];
      else if (verdict && verdict.length) reasons[s.id] = verdict;
      else if (s.state === 'down' && now - s.downSince >= this.#lostAfter) reasons[s.id] = [`down for ${Math.round((now - s.downSince) / 1000)} s`];
      else hope = true; // able, or not known yet
    }
    if (hope) return false;
    const i = this.#waiting.indexOf(entry);
    if (i >= 0) this.#waiting.splice(i, 1);
    this.#settle(entry, new PlacementError(reasons));
    return true;
  }

  #rejectUnplaceable(): void {
    for (const e of [...this.#waiting]) this.#unplaceable(e);
  }

  /** While a server is down and jobs wait: fail those only silent servers could run. */
  #armExpiry(): void {
    if (this.#expiry) return;
    this.#expiry = setInterval(() => {
      this.#rejectUnplaceable();
      if (this.#closed || this.#waiting.length === 0 || !this.#servers.some((s) => s.state === 'down')) {
        clearInterval(this.#expiry);
        this.#expiry = undefined;
      }
    }, Math.min(1000, this.#lostAfter));
    (this.#expiry as { unref?: () => void }).unref?.();
  }

  /** Places waiting jobs while some server has a free slot. */
  #drain(): void {
    for (let i = 0; i < this.#waiting.length; ) {
      if (!this.#servers.some((s) => s.state === 'up' && s.active < s.maxConcurrent)) return;
      const entry = this.#waiting[i]!;
      const server = choose(this.#servers, (s) => canRun(entry, s), this.#turn);
      if (!server) {
        i++;
        continue;
      }
      this.#waiting.splice(i, 1);
      this.#place(entry, server);
    }
  }

  async #start(entry: Entry, s: Server): Promise<void> {
    entry.state = 'placed';
    entry.server = s;
    entry.promptId = undefined;
    this.#placed.add(entry);
    s.active++;
    s.submitting++;
    let accepted = false;
    const { inputs, priority: _priority, onSubmitted, signal: _signal, stopOnAbort = true, ...runOptions } = entry.options;
    try {
      const workflow = inputs ? await this.#withUploads(entry, s, inputs) : entry.workflow;
      const result = await s.client.run(workflow, {
        ...runOptions,
        signal: entry.stop.signal,
        stopOnAbort: false, // the pool decides: close() without cancel must leave the job running
        serverLostAfter: runOptions.serverLostAfter ?? this.#lostAfter,
        onSubmitted: async (promptId) => {
          accepted = true;
          s.submitting--;
          s.unseen++;
          entry.promptId = promptId;
          if (onSubmitted) await onSubmitted(promptId);
        },
      });
      this.#settle(entry, undefined, { ...result, server: s.id, ...(entry.resubmittedFrom ? { resubmittedFrom: entry.resubmittedFrom } : {}) });
    } catch (err) {
      this.#failed(entry, s, err, accepted);
    } finally {
      s.active--;
      // Settled: the job is off the server's queue, whether or not a status event said so.
      if (accepted) s.unseen = Math.max(0, s.unseen - 1);
      else s.submitting--;
      // Without its socket the server tells no queue changes: read its queue now, not at the probe's next turn.
      if (s.socket.state !== 'open' && s.state === 'up') void this.#readQueue(s).catch(() => undefined);
      if (s.removed && s.active === 0) this.#release(s);
      this.#drain();
    }
  }

  /** Why a placed job ended without a result: move it, re-run it, stop it, or pass the error on. */
  #failed(entry: Entry, s: Server, err: unknown, accepted: boolean): void {
    const promptId = entry.promptId;
    if (entry.closing) {
      if (promptId && entry.closing.cancel) this.#stopJob(s, promptId);
      return this.#settle(entry, new PoolClosedError(promptId, entry.closing.cancel && !!promptId));
    }
    if (entry.stop.signal.aborted) {
      if (promptId && entry.options.stopOnAbort !== false) this.#stopJob(s, promptId);
      return this.#settle(entry, entry.stop.signal.reason);
    }
    if (!accepted && err instanceof APIConnectionError && !this.#closed) {
      this.#mark(s, 'down', describeError(err));
      void this.#probe(s);
      // Certainly never reached the server (refused, DNS, no route): another server takes it at once. A few
      // times at most: servers that answer a probe but never take a job must not bounce it forever.
      if (NOT_SENT.has(err.code ?? '') && ++entry.moves <= MAX_MOVES) {
        this.#log.info?.(`job moves off ${s.id}: ${describeError(err)}`, { server: s.id });
        return this.#enqueue(entry, true);
      }
      // A timeout or a reset after sending: the server may have the job. Only resubmitOnServerLoss runs it again.
      if (this.#resubmit && !entry.resubmittedFrom && ++entry.moves <= MAX_MOVES) return this.#rerun(entry, s, undefined, `its submission got no answer (${describeError(err)})`);
      return this.#settle(entry, err);
    }
    if (err instanceof ServerLostError) {
      // Named by the pool's id for the server, which the caller knows it by.
      if (err.server !== s.id) err = new ServerLostError(err.promptId, s.id, err.reason, err.silentMs, { cause: err.cause });
      const lost = err as ServerLostError;
      // A server that forgot the job answers: it is up (its uploads are gone with its restart, though).
      if (lost.reason === 'unreachable') {
        this.#mark(s, 'down', lost.message);
        void this.#probe(s);
      } else s.uploads.clear();
      if (this.#resubmit && !entry.resubmittedFrom && !this.#closed) return this.#rerun(entry, s, lost.promptId, 'the server lost it');
      return this.#settle(entry, lost);
    }
    // A silence deadline or a callback that threw: the job nobody follows any more is stopped.
    if (promptId && !(err instanceof ExecutionError || err instanceof JobCancelledError) && entry.options.stopOnAbort !== false) this.#stopJob(s, promptId);
    this.#settle(entry, err);
  }

  /** `resubmitOnServerLoss`: the job runs once more, on another server than `s`. */
  #rerun(entry: Entry, s: Server, promptId: string | undefined, why: string): void {
    this.#log.warn?.(`job ${promptId ?? '(no id)'} on ${s.id}: ${why}; running it again elsewhere`, { server: s.id, promptId });
    entry.resubmittedFrom = { server: s.id, promptId };
    entry.avoid = s.id;
    this.#enqueue(entry, true);
  }

  #stopJob(s: Server, promptId: string): void {
    const stopping = s.client.stopJob(promptId, { retry: { limit: 3, allowPost: true } }).catch((err: unknown) => {
      this.#log.warn?.(`could not stop job ${promptId} on ${s.id}: ${describeError(err)}`, { server: s.id, promptId });
    });
    this.#stopping.add(stopping);
    void stopping.finally(() => this.#stopping.delete(stopping));
  }

  #cancel(entry: Entry, reason: Error): void {
    if (entry.state === 'settled') return;
    if (entry.state === 'queued') {
      const i = this.#waiting.indexOf(entry);
      if (i >= 0) this.#waiting.splice(i, 1);
      return this.#settle(entry, reason);
    }
    entry.stop.abort(reason);
  }

  #settle(entry: Entry, err: unknown, result?: PoolJobResult): void {
    if (entry.state === 'settled') return;
    entry.state = 'settled';
    this.#placed.delete(entry);
    entry.done();
    if (result) entry.resolve(result);
    else entry.reject(err);
  }

  /** The workflow with its inputs uploaded to `s` (each content once per server) and their names set. */
  async #withUploads(entry: Entry, s: Server, inputs: Record<string, PoolInput>): Promise<Workflow> {
    const workflow = structuredClone(entry.workflow);
    await Promise.all(
      Object.entries(inputs).map(async ([at, file]) => {
        const blob = await asBlob(file);
        const hash = await sha256(blob);
        let upload = s.uploads.get(hash);
        if (!upload) {
          // Shared by every job with this content: no one job's cancel may stop it.
          upload = Promise.resolve(s.client.uploadImage(blob, { filename: `${hash.slice(0, 16)}${extensionOf(file)}` }));
          s.uploads.set(hash, upload);
          upload.catch(() => s.uploads.get(hash) === upload && s.uploads.delete(hash));
        }
        const ref = await untilAborted(upload, entry.stop.signal);
        const [nodeId, input] = split(at)!; // checked by submit()
        (workflow[nodeId]!.inputs as Record<string, unknown>)[input] = toValue(ref);
      }),
    );
    return workflow;
  }
}

/** Whether a job may go to a server: its nodes and models are there, and it did not lose this job before. */
const canRun = (entry: Entry, s: Server) => s.id !== entry.avoid && entry.verdicts.get(s.id)?.length === 0;

/** `promise`, or a rejection with the signal's reason once it aborts (the promise itself goes on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** `'10.inputs.image'` → `['10', 'image']`; the node id may hold dots, the input name not. `undefined` without `.inputs.`. */
function split(at: string): [nodeId: string, input: string] | undefined {
  const i = at.lastIndexOf('.inputs.');
  return i < 0 ? undefined : [at.slice(0, i), at.slice(i + '.inputs.'.length)];
}

/** Checks `inputs` against the workflow before anything is queued; returns their paths. */
function checkInputs(workflow: Workflow, inputs: Record<string, PoolInput> | undefined): Set<string> {
  if (inputs === undefined) return new Set();
  if (!isObject(inputs)) throw new InvalidArgumentError("must be an object of files by input path ('10.inputs.image')", 'inputs');
  for (const [at, file] of Object.entries(inputs)) {
    const [nodeId, input] = split(at) ?? [];
    const node = nodeId ? workflow[nodeId] : undefined;
    if (!node || !isObject(node.inputs) || !input) throw new InvalidArgumentError(`must name an input of a node of the workflow, as 'nodeId.inputs.name'`, `inputs.${at}`);
    const ok = file instanceof Blob || file instanceof Uint8Array || file instanceof ArrayBuffer || typeof file === 'string';
    if (!ok) throw new InvalidArgumentError('must be a Blob, bytes or (Node) a file path: a stream can be read only once, and a job may need its file on a second server', `inputs.${at}`);
  }
  return new Set(Object.keys(inputs));
}

async function asBlob(file: PoolInput): Promise<Blob> {
  if (typeof file === 'string') return platform.fileBlob(file);
  return file instanceof Blob ? file : new Blob([file as BlobPart]);
}

async function sha256(blob: Blob): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', await blob.arrayBuffer()));
  let hex = '';
  for (const b of digest) hex += b.toString(16).padStart(2, '0');
  return hex;
}

function extensionOf(file: PoolInput): string {
  const name = typeof file === 'string' ? file : file instanceof Blob ? ((file as File).name ?? '') : '';
  const m = /\.[A-Za-z0-9]{1,8}$/.exec(name);
  return m ? m[0].toLowerCase() : '.png';
}
