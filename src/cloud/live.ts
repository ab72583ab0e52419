/**
 * A client's live feed of its jobs: the one socket of the cloud and a local
 * server (opened by `connect()` or by the first run, whose socket closes after
 * the last), or Comfy API v2's stream per job; the code of either loads on
 * first use (`realtime.ts`, `v2/backend.ts`). What `run()` and `follow()` do
 * once their options are checked: a run's input files uploaded, the id a job
 * is followed by, the job followed on its feed.
 *
 * @module
 */
import type { Workflow } from '../schemas/cloud.ts';
import { checkInterval, checkTimeout } from '../transport/options.ts';
import type { Transport } from '../transport/transport.ts';
import type { UploadImageOptions, UploadInput } from './client-options.ts';
import type { FollowSocket } from './follow/follower.ts';
import type { JobBackend } from './jobs.ts';
import { realtime, realtimeLoaded } from './realtime.ts';
import type { FollowOptions, JobResult, RunOptions } from './run-options.ts';
import { checkSocketOptions, type CloudSocketOptions } from './socket/options.ts';
import { SocketHandle } from './socket-handle.ts';
import type { CloudSocket } from './socket.ts';
import type { V2Backend } from './v2/backend.ts';
import type { ServerProtocol } from './protocol/types.ts';
import { randomUuid } from './uuid.ts';

/** Follows with the realtime module and the job's feed. */
export type FollowTask = (realtime: typeof import('./run.ts'), feed: FollowSocket) => Promise<JobResult>;

/** The client a run submits with, follows with, and uploads its input files with. */
export interface RunClient extends JobBackend {
  /** `CloudClient.uploadImage`. */
  uploadImage(file: UploadInput, options: UploadImageOptions): PromiseLike<unknown>;
}

/** The timing options of `run()` and `follow()`, checked before any request. */
export function checkFollowOptions(options: FollowOptions): void {
  checkTimeout(options.timeout, 'timeout');
  checkInterval(options.pollInterval, 'pollInterval');
  if (options.serverLostAfter !== Infinity) checkInterval(options.serverLostAfter, 'serverLostAfter', ' or Infinity');
  checkInterval(options.stopWithin, 'stopWithin');
}

/**
 * One client's live feed.
 *
 * @example
 * ```ts
 * const live = new LiveFeed(transport, undefined);
 * const result = await live.follow(client, protocol, promptId, {});
 * ```
 */
export class LiveFeed {
  readonly #transport: Transport;
  readonly #v2: (() => Promise<V2Backend>) | undefined;
  #socket: SocketHandle | undefined;
  /** Whether the socket was opened by run() alone (then it closes after the last run). */
  #closeWhenIdle = false;
  #runs = 0;

  constructor(transport: Transport, v2: (() => Promise<V2Backend>) | undefined) {
    this.#transport = transport;
    this.#v2 = v2;
  }

  /** The shared socket, opened now if none is open (`options` checked first); it stays open until `close()`. */
  connect(options?: CloudSocketOptions): CloudSocket {
    checkSocketOptions(options);
    this.#closeWhenIdle = false; // asked for: stays open until close()
    return this.#open(options) as unknown as CloudSocket;
  }

  /**
   * `run()` once its workflow is converted (`extraData` as the conversion made it): the files of `inputs` uploaded
   * into it, then the job submitted and followed on its feed.
   */
  async run(client: RunClient, converted: { prompt: Workflow; extraData?: Record<string, unknown> }, options: RunOptions): Promise<JobResult> {
    const { inputs, ...rest } = options;
    // Uploaded here, where the inputs option ends: the follower submits a workflow that names them. Their code loads
    // with the follower's (`realtime.ts`), here first.
    const prompt = inputs === undefined ? converted.prompt : await (await realtime()).withInputs(converted.prompt, inputs, (file) => client.uploadImage(file, options.signal ? { signal: options.signal } : {}));
    // v2's stream waits under the key the job is submitted under until the server names the job; the socket's
    // follower chooses its own id.
    const key = this.#v2 ? (options.promptId ?? randomUuid()) : undefined;
    const { extraData } = converted;
    const opts = { ...rest, ...(extraData ? { extraData } : {}), ...(key ? { promptId: key } : {}) };
    return this.#follow(options, key, (r, feed) => r.runJob(client, feed, prompt, opts));
  }

  /**
   * `follow()` once its options are checked: v2 follows under the job's own id, which a key the caller recorded names
   * too (a queue records the key before the request).
   */
  async follow(client: JobBackend, protocol: ServerProtocol, id: string, options: FollowOptions): Promise<JobResult> {
    const jobId = this.#v2 ? ((await protocol.status(id, options.signal ? { signal: options.signal } : {})).data.id ?? id) : id;
    return this.#follow(options, undefined, (r, feed) => r.followJob(client, feed, jobId, options));
  }

  /** Closes the socket, if any. */
  close(): void {
    this.#socket?.close();
    this.#socket = undefined;
  }

  /**
   * Runs `task` on the job's feed, checking the timing options first: v2's
   * stream for the job (`key`: the key it is submitted under, until the
   * server names it), else the shared socket.
   */
  async #follow(options: FollowOptions, key: string | undefined, task: FollowTask): Promise<JobResult> {
    checkFollowOptions(options);
    if (this.#v2) {
      const stream = (await this.#v2()).events(key);
      try {
        return await task(await realtime(), stream);
      } finally {
        stream.close();
      }
    }
    // A socket that run() opened by itself closes after the last run, so a script
    // that never calls connect() or close() can still exit.
    if (!this.#socket || this.#socket.state === 'closed') this.#closeWhenIdle = true;
    const handle = this.#open();
    this.#runs++;
    try {
      // Closed before its socket loaded (close() at once): the run follows a closed socket, so it polls, as with any closed socket.
      const [r, socket] = await Promise.all([realtime(), handle.loaded().catch((): FollowSocket => handle)]);
      return await task(r, socket);
    } finally {
      if (--this.#runs === 0 && this.#closeWhenIdle) this.close();
    }
  }

  // The handle's socket loads on first use (a REST-only client never loads it): connect() stays synchronous.
  #open(options?: CloudSocketOptions): SocketHandle {
    if (this.#socket && this.#socket.state !== 'closed') return this.#socket;
    const t = this.#transport;
    const target = { baseUrl: t.baseUrl, credential: () => t.optionalCredential(), hasCredential: t.hasCredential, log: t.log };
    return (this.#socket = new SocketHandle(() => realtimeLoaded()?.CloudSocket ?? realtime().then((m) => m.CloudSocket), target, options));
  }
}
