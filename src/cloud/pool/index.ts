/**
 * `CloudPool`: one `run()` over many servers. Each job goes to a server that
 * has every class and model it uses, with the least work for its weight; a
 * server that dies gets no new jobs, a job it never received moves at once,
 * and a job it accepted and lost is never re-run unasked.
 *
 * Built on `CloudClient.run()` (one client per server, its socket kept open
 * for the queue counts and as the first sign of a dead server). By concern:
 * `placement.ts` (where a job may and should go), `health.ts` (servers up and
 * down), `waiting.ts` (the waiting line, the start window), `uploads.ts`
 * (inputs, once per server and content), `move.ts` (may a failed job go
 * elsewhere?), `job.ts` (a job and its handle); this file wires them.
 *
 * @module
 */
import { APIConnectionError, APIUserAbortError, InvalidArgumentError } from '../../errors.ts';
import { ExecutionError, JobCancelledError, ServerLostError } from '../job-errors.ts';
import { PlacementError, PoolClosedError } from './errors.ts';
import { createLog, describeError, type Log } from '../../transport/log.ts';
import { checkOptions } from '../../args.ts';
import { checkInterval } from '../../transport/options.ts';
import type { Workflow } from '../../schemas/cloud.ts';
import { CloudClient, withSavedWorkflow, type WorkflowInput } from '../client.ts';
import { Health, newServer, type Server } from './health.ts';
import { newJob, type Entry } from './job.ts';
import { decideAfterFailure, type FailureFacts } from './move.ts';
import { canRun, choose, judge, loadJudging, nowhere } from './placement.ts';
import { POOL_OPTIONS } from './types.ts';
import type { CloudPoolOptions, PoolEvents, PoolJob, PoolJobResult, PoolRunOptions, PoolServer, PoolServerStatus } from './types.ts';
import { uploadsCode } from './uploads-code.ts';
import { StartWindow, WaitingLine } from './waiting.ts';

export type { CloudPoolOptions, PoolEvents, PoolInput, PoolJob, PoolJobResult, PoolRunOptions, PoolServer, PoolServerEvent, PoolServerFields, PoolServerStatus } from './types.ts';

const SERVER_LOST_AFTER_MS = 15_000;
const START_WINDOW_MS = 2_000;

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
 *   the rest wait in the pool's queue (by `priority`, then in order). A new
 *   pool's first jobs wait until every server has answered once, for at most
 *   `startWindow` ms, so that a first burst spreads.
 * - **Faults.** Each server's socket is watched, and a cheap GET probes it
 *   with backoff while the socket is down: events `serverDown` / `serverUp`.
 *   A job on a server that cannot have it moves to another at once: its
 *   inputs' upload failed (an upload never creates a job), or its submission
 *   provably never left (`sent: 'no'`). A job that may exist there (its
 *   submission's answer was lost) or that the server accepted and lost
 *   rejects ({@link APIConnectionError} with `sent: 'maybe'`,
 *   {@link ServerLostError}), or, with `resubmitOnServerLoss`, runs once
 *   more elsewhere. Every run settles exactly once.
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
  readonly #waiting = new WaitingLine<Entry>();
  readonly #placed = new Set<Entry>();
  /** Removed servers, by id: their jobs' files are still theirs to download. */
  readonly #removed = new Map<string, Server>();
  readonly #lostAfter: number;
  readonly #resubmit: boolean;
  readonly #log: Log;
  readonly #health: Health;
  readonly #start: StartWindow;
  #turn = 0;
  #closed = false;
  /** Stops being sent (`#stopJob`): close() waits for them, so a process may exit right after. */
  readonly #stopping = new Set<Promise<void>>();
  #expiry: ReturnType<typeof setInterval> | undefined;

  constructor(servers: readonly PoolServer[], options: CloudPoolOptions = {}) {
    if (!Array.isArray(servers)) throw new InvalidArgumentError('must be an array of servers', 'servers');
    checkOptions(options, POOL_OPTIONS, 'CloudPool');
    if (options.serverLostAfter !== Infinity) checkInterval(options.serverLostAfter, 'serverLostAfter', ' or Infinity');
    if (options.startWindow !== 0) checkInterval(options.startWindow, 'startWindow', ' or 0');
    this.#lostAfter = options.serverLostAfter ?? SERVER_LOST_AFTER_MS;
    this.#resubmit = options.resubmitOnServerLoss === true;
    this.#log = createLog(options, () => [], { prefix: '[platformui pool]' });
    this.#health = new Health(
      this.#log,
      {
        nodes: (s, info) => {
          // Its nodes may have changed (it restarted with others): judge the waiting jobs again.
          for (const e of this.#waiting) this.#judge(e, s, info);
          this.#rejectUnplaceable();
          this.#drain();
        },
        down: () => {
          this.#armExpiry();
          // Its first answer was a failure: the jobs held for it may go to the others now.
          if (this.#start.open) this.#drain();
        },
      },
      () => this.#closed,
    );
    this.#start = new StartWindow(options.startWindow ?? START_WINDOW_MS, () => this.#drain());
    void loadJudging()?.catch(() => undefined); // the validator, well before a server answers: every job needs it
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
    const s = newServer(server, (id) => this.#servers.some((o) => o.id === id));
    this.#removed.delete(s.id);
    this.#servers.push(s);
    this.#health.watch(s);
    return s.id;
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
    if (s!.active === 0) this.#health.release(s!);
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
    return this.#health.on(event, listener);
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
    const { entry, job } = newJob(workflow, options, (e) => this.#cancel(e, new APIUserAbortError(undefined, { cause: options.signal?.reason })));
    if (this.#closed) this.#settle(entry, new PoolClosedError());
    else if (options.signal?.aborted) job.cancel();
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
      this.#start.close();
      for (const e of this.#waiting.takeAll()) this.#settle(e, new PoolClosedError());
      for (const e of this.#placed) {
        e.closing = { cancel: options.cancel === true };
        e.stop.abort(new PoolClosedError(e.promptId, options.cancel));
      }
    }
    await Promise.allSettled([...this.#placed].map((e) => new Promise<void>((r) => void e.result.then(() => r(), () => r()))));
    await Promise.allSettled([...this.#stopping]);
    for (const s of this.#servers) this.#health.release(s);
  }

  // ---------------------------------------------------------------- the waiting line

  #enqueue(entry: Entry, first = false): void {
    entry.state = 'queued';
    entry.server = undefined;
    for (const s of this.#servers) if (s.info && !entry.verdicts.has(s.id)) this.#judge(entry, s, s.info);
    if (this.#unplaceable(entry)) return;
    if (this.#servers.some((s) => s.state === 'down')) this.#armExpiry();
    // No waiting job could be placed before this one came (drain leaves none that can): only it may go now.
    const server = this.#start.holds(this.#servers) ? undefined : choose(this.#servers, (s) => canRun(entry, s), this.#turn);
    if (server) this.#place(entry, server);
    else this.#waiting.add(entry, first);
  }

  /** Judges a job for a server; while what that needs loads (placement.ts), the job waits there unjudged. */
  #judge(entry: Entry, s: Server, info: NonNullable<Server['info']>): void {
    const verdict = judge(entry, s.id, info);
    if (verdict) return void entry.verdicts.set(s.id, verdict);
    entry.verdicts.delete(s.id);
    // Once it is here, judge and place the waiting jobs; if it cannot load (a browser offline), they fail with why.
    void loadJudging(entry.workflow)?.then(
      () => {
        if (this.#closed) return;
        for (const e of this.#waiting) for (const x of this.#servers) if (x.info && !e.verdicts.has(x.id)) this.#judge(e, x, x.info);
        this.#rejectUnplaceable();
        this.#drain();
      },
      (err: Error) => [...this.#waiting].filter((e) => e === entry || e.verdicts.size === 0).forEach((e) => this.#cancel(e, err)),
    );
  }

  /** Places waiting jobs while some server has a free slot. */
  #drain(): void {
    if (this.#start.holds(this.#servers)) return;
    this.#waiting.drain(
      () => this.#servers.some((s) => s.state === 'up' && s.active < s.maxConcurrent),
      (entry) => choose(this.#servers, (s) => canRun(entry, s), this.#turn),
      (entry, server) => this.#place(entry, server),
    );
  }

  #place(entry: Entry, server: Server): void {
    this.#turn = (this.#servers.indexOf(server) + 1) % this.#servers.length;
    void this.#run(entry, server);
  }

  /** Rejects the job when no server can run it: all known and none able, or the able ones silent too long. */
  #unplaceable(entry: Entry): boolean {
    const reasons = nowhere(this.#servers, entry, Date.now(), this.#lostAfter);
    if (!reasons) return false;
    this.#waiting.remove(entry);
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

  // ---------------------------------------------------------------- a job on its server

  /** Uploads the job's inputs to `s`, submits it there and follows it to its end; a failure goes to {@link #failed}. */
  async #run(entry: Entry, s: Server): Promise<void> {
    entry.state = 'placed';
    entry.server = s;
    entry.promptId = undefined;
    this.#placed.add(entry);
    s.active++;
    s.submitting++;
    // An object: the callback below moves it on, out of the compiler's sight.
    const at: { stage: FailureFacts['stage'] } = { stage: 'submit' };
    const { inputs, priority: _priority, onSubmitted, onPlaced, signal: _signal, stopOnAbort = true, ...runOptions } = entry.options;
    try {
      // Before anything reaches the server: the caller's record of where the job goes precedes the job.
      if (onPlaced) await onPlaced({ id: s.id, baseUrl: s.client.baseUrl });
      // The editor's format: the workflow converted with this server's object_info when it was judged.
      const converted = entry.converted.get(s.id);
      for (const w of converted?.warnings ?? []) this.#log.warn?.(`${s.id}: ${w.message}`, { server: s.id, nodeId: w.nodeId, code: w.code });
      let workflow = converted?.workflow ?? (entry.workflow as Workflow);
      if (inputs) {
        const uploads = await uploadsCode();
        const files = await (entry.files ??= uploads.readInputs(inputs));
        at.stage = 'upload';
        workflow = await uploads.uploadInputs(workflow, files, s, entry.stop.signal);
        at.stage = 'submit';
      }
      const result = await s.client.run(workflow, {
        ...runOptions,
        ...(entry.converted.size > 0 ? { extraData: withSavedWorkflow(entry.workflow, runOptions.extraData) } : {}),
        signal: entry.stop.signal,
        stopOnAbort: false, // the pool decides: close() without cancel must leave the job running
        serverLostAfter: runOptions.serverLostAfter ?? this.#lostAfter,
        // A lost answer is looked up for as long as the pool waits on a silent server, not the client's 15 s.
        confirmWithin: runOptions.confirmWithin ?? (Number.isFinite(this.#lostAfter) ? this.#lostAfter : undefined),
        onSubmitted: async (promptId) => {
          at.stage = 'accepted';
          s.submitting--;
          s.unseen++;
          entry.promptId = promptId;
          if (onSubmitted) await onSubmitted(promptId);
        },
      });
      this.#settle(entry, undefined, { ...result, server: s.id, ...(entry.resubmittedFrom ? { resubmittedFrom: entry.resubmittedFrom } : {}) });
    } catch (err) {
      this.#failed(entry, s, err, at.stage);
    } finally {
      s.active--;
      // Settled: the job is off the server's queue, whether or not a status event said so.
      if (at.stage === 'accepted') s.unseen = Math.max(0, s.unseen - 1);
      else s.submitting--;
      this.#health.jobEnded(s);
      if (s.removed && s.active === 0) this.#health.release(s);
      this.#drain();
    }
  }

  /** Why a placed job ended without a result: the server's health, then move it, re-run it, or reject. */
  #failed(entry: Entry, s: Server, error: unknown, stage: FailureFacts['stage']): void {
    let err = error;
    const ended = !!entry.closing || entry.stop.signal.aborted || this.#closed;
    const sent = err instanceof APIConnectionError ? err.sent : undefined;
    if (err instanceof ServerLostError && err.server !== s.id) {
      // Named by the pool's id for the server, which the caller knows it by.
      err = new ServerLostError(err.promptId, s.id, err.reason, err.silentMs, { cause: err.cause });
    }
    const lost = err instanceof ServerLostError ? err : undefined;
    if (!ended) {
      // No answer: the server is down (probed until it answers). One that forgot the job answers: it is up, restarted.
      if ((sent && stage !== 'accepted') || lost?.reason === 'unreachable') this.#health.failed(s, err);
      else if (lost) this.#health.restarted(s);
    }
    // Where the submission's answer was lost, the job may exist on `s` under the id it was sent with.
    if (stage === 'submit' && sent === 'maybe') entry.promptId = (err as APIConnectionError).promptId;
    const decision = decideAfterFailure({
      stage,
      sent,
      lost: lost?.reason,
      resubmitOnServerLoss: this.#resubmit,
      moves: entry.moves,
      resubmitted: !!entry.resubmittedFrom,
      ended,
      elsewhere: !nowhere(this.#servers.filter((o) => o !== s), entry, Date.now(), this.#lostAfter),
    });
    if (decision === 'reject') return this.#reject(entry, s, err, stage);
    entry.moves++;
    if (decision === 'move') {
      this.#log.info?.(`job moves off ${s.id}: ${stage === 'upload' ? 'its inputs’ upload failed' : 'its submission never reached it'} (${describeError(err)})`, { server: s.id });
      // A server that answered the upload with an error would answer the same: this job goes elsewhere.
      if (sent === undefined) entry.avoid.set(s.id, `failed this job’s upload: ${describeError(err)}`);
      return this.#enqueue(entry, true);
    }
    const promptId = lost?.promptId ?? entry.promptId;
    this.#log.warn?.(`job ${promptId ?? '(no id)'} on ${s.id}: ${lost ? 'the server lost it' : `its submission got no answer (${describeError(err)})`}; running it again elsewhere`, { server: s.id, promptId });
    entry.resubmittedFrom = { server: s.id, promptId };
    entry.avoid.set(s.id, 'lost this job before: it runs again elsewhere');
    this.#enqueue(entry, true);
  }

  /**
   * The run rejects: with PoolClosedError or the caller's abort when it ended so, else with `err`. A job that
   * exists, or may (its id known), is stopped when the caller cancelled it, and when nobody follows it any more.
   */
  #reject(entry: Entry, s: Server, err: unknown, stage: FailureFacts['stage']): void {
    const promptId = entry.promptId;
    if (entry.closing) {
      if (promptId && entry.closing.cancel) this.#stopJob(s, promptId);
      return this.#settle(entry, new PoolClosedError(promptId, entry.closing.cancel && !!promptId));
    }
    if (entry.stop.signal.aborted) {
      if (promptId && entry.options.stopOnAbort !== false) this.#stopJob(s, promptId);
      return this.#settle(entry, entry.stop.signal.reason);
    }
    // A silence deadline or a callback that threw: the accepted job nobody follows any more is stopped.
    const over = err instanceof ExecutionError || err instanceof JobCancelledError || err instanceof ServerLostError;
    if (stage === 'accepted' && promptId && !over && entry.options.stopOnAbort !== false) this.#stopJob(s, promptId);
    this.#settle(entry, err);
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
      this.#waiting.remove(entry);
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
}
