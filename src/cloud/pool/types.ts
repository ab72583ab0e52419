/**
 * What a `CloudPool` user writes and reads: its servers, options, jobs and
 * results.
 *
 * @module
 */
import { joinKeys, type OptionKeys } from '../../args.ts';
import type { LogOptions } from '../../transport/log.ts';
import type { CloudClient, CloudClientOptions } from '../client.ts';
import { RUN_OPTIONS, type JobResult, type RunOptions } from '../run-options.ts';

/** The pool's own fields of a server. */
export interface PoolServerFields {
  /** A name for the server in results, events and errors. Default: its base URL. */
  id?: string;
  /** Its share of the work: a faster GPU takes more (load is divided by it). Default 1. */
  weight?: number;
  /** How many of this pool's jobs it holds at once. Default 2: one running, one waiting on the server, so a GPU never idles between jobs. */
  maxConcurrent?: number;
}

/** The keys of {@link PoolServerFields}, for `checkOptions`. */
export const POOL_SERVER_FIELDS = { id: 1, weight: 1, maxConcurrent: 1 } as const satisfies OptionKeys<PoolServerFields>;

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

/**
 * Options of `CloudPool`.
 *
 * @example
 * ```ts
 * const pool = new CloudPool(servers, { serverLostAfter: 30_000, resubmitOnServerLoss: true, startWindow: 5000 });
 * ```
 */
export interface CloudPoolOptions extends LogOptions {
  /**
   * How long (ms) a server may give no answer before its accepted jobs are
   * given up as lost (`ServerLostError`), and before jobs waiting for
   * it alone fail (`PlacementError`). Default 15000.
   */
  serverLostAfter?: number;
  /**
   * Re-run, once and elsewhere, a job that a server accepted and then lost,
   * or whose submission got no answer and may exist there (sensible for local
   * fleets; a cloud job may cost money). The result says so in
   * `resubmittedFrom`. Default false: the run rejects with `ServerLostError`
   * (or the submission's `APIConnectionError`, `sent: 'maybe'`).
   */
  resubmitOnServerLoss?: boolean;
  /**
   * How long (ms) a new pool's first jobs wait for every server's first answer
   * (its nodes read, or its failure) before they are placed, so that a burst
   * handed to a fresh pool spreads over all its servers instead of going to
   * whichever answered first. A server that answers within the window takes
   * its share; one that has not by then does not hold the jobs any longer.
   * Default 2000 (a server with many custom nodes takes a second or two to list
   * them); 0 places each job as soon as any server can take it.
   */
  startWindow?: number;
}

/** The keys of {@link CloudPoolOptions}, for `checkOptions`. */
export const POOL_OPTIONS = { logLevel: 1, logger: 1, serverLostAfter: 1, resubmitOnServerLoss: 1, startWindow: 1 } as const satisfies OptionKeys<CloudPoolOptions>;

/** An input file of a pool job: uploaded to the server the job is placed on. A string is a file path (Node). */
export type PoolInput = Blob | Uint8Array | ArrayBuffer | string;

/** Options of `CloudPool.run`: those of `CloudClient.run()`, plus inputs and a priority. */
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
  /**
   * Called each time the job is placed on a server (again when it moves),
   * before its inputs are uploaded and before it is submitted there; the
   * submission waits for a returned promise. For recording where a job goes
   * before it can exist there (with `promptId`, chosen by the caller, the
   * record names the job on that server). If it throws or rejects, nothing is
   * sent and the run rejects with that error. To check again immediately
   * before the submission leaves, after the uploads: `beforeSubmit`.
   *
   * @example
   * ```ts
   * const promptId = crypto.randomUUID();
   * await pool.run(workflow, { promptId, onPlaced: (s) => db.save(jobId, { promptId, server: s.id }) });
   * ```
   */
  onPlaced?: (server: { id: string; baseUrl: string }) => void | Promise<void>;
}

/** The keys of {@link PoolRunOptions}, for `checkOptions`. */
export const POOL_RUN_OPTIONS = /* @__PURE__ */ joinKeys(RUN_OPTIONS, { inputs: 1, priority: 1, onPlaced: 1 } as const) satisfies OptionKeys<PoolRunOptions>;

/** What a pool's job produced: `CloudClient.run()`'s result, and where it ran. */
export interface PoolJobResult extends JobResult {
  /** The id of the server that ran the job. */
  server: string;
  /**
   * Set when the job ran again after a server lost it, or after its submission there got no answer
   * (`resubmitOnServerLoss`): that server, and the job's id there (`undefined` when it was never known).
   */
  resubmittedFrom?: { server: string; promptId: string | undefined };
}

/** A job handed to the pool: awaitable for its result, cancellable wherever it is. */
export interface PoolJob extends PromiseLike<PoolJobResult> {
  /** `queued` (in the pool's queue), `placed` (uploading, submitting or on a server), `settled`. */
  readonly state: 'queued' | 'placed' | 'settled';
  /** The server it was placed on, once placed. */
  readonly server: string | undefined;
  /**
   * The job's id on its server, once the server accepted it; or, when its
   * submission's answer was lost, the id it was sent with (the job may exist
   * there under it: the error's `sent` is `'maybe'`).
   */
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

/** The events of `CloudPool.on`. */
export type PoolEvents = { serverDown: PoolServerEvent; serverUp: PoolServerEvent };
