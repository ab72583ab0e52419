/**
 * Each server of a pool as the pool sees it, and whether it answers: its
 * socket watched for queue counts and as the first sign of trouble, a cheap
 * GET probing it with backoff while the socket is down (`requests.ts`,
 * loaded when the first pool starts watching), `serverDown` / `serverUp`
 * when that changes.
 *
 * @module
 */
import { InvalidArgumentError } from '../../errors.ts';
import type { ObjectInfo, UploadResponse } from '../../schemas/cloud.ts';
import { describeError, type Log } from '../../transport/log.ts';
import { isObject } from '../../schemas/rule.ts';
import { CLOUD_CLIENT_OPTIONS, CloudClient } from '../client.ts';
import type { CloudSocket } from '../socket.ts';
import type { Placeable } from './placement.ts';
import { checkOptions, joinKeys } from '../../args.ts';
import { POOL_SERVER_FIELDS, type PoolEvents, type PoolServer } from './types.ts';

// A server entry: a client's options, or { client }, with the pool's own fields.
const POOL_SERVER = /* @__PURE__ */ joinKeys(CLOUD_CLIENT_OPTIONS, /* @__PURE__ */ joinKeys(POOL_SERVER_FIELDS, { client: 1 } as const));
import type { UploadTarget } from './uploads.ts';
import type { Watcher } from './requests.ts';
import { onFirstUse } from '../../on-first-use.ts';

/** The health's requests, loaded once per process when a first pool starts watching (a file of its own in the browser build). */
const requests = /* @__PURE__ */ onFirstUse(() => import('./requests.ts'));

/** What the pool reads of a server's socket: none on a Comfy API v2 server (one stream per job), which never opens. */
export type ServerSocket = Pick<CloudSocket, 'state' | 'on'>;
const NO_SOCKET: ServerSocket = { state: 'closed', on: () => () => undefined };

/** One server of the pool, and what the pool knows of it. */
export interface Server extends Placeable, UploadTarget {
  id: string;
  client: CloudClient;
  socket: ServerSocket;
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
  /** Its nodes; `'unknown'` where nobody can read them (v2 without `objectInfo`: placed by load). */
  info: ObjectInfo | 'unknown' | undefined;
  downSince: number;
  probing: boolean;
  /** Aborted when the server leaves the pool (removeServer, close): ends its probes and their requests. */
  gone: AbortController;
  removed: boolean;
  offs: Array<() => void>;
  /** Uploads by content hash: once per server and content (cleared when it goes down: it may come back restarted). */
  uploads: Map<string, Promise<UploadResponse>>;
}

/**
 * A server joining the pool, its fields checked (a bad one, or an id `taken`
 * already, throws before any request): `starting` until its nodes are read.
 * Opens its client's socket (a client of its own, unless given one).
 */
export function newServer(server: PoolServer, taken: (id: string) => boolean): Server {
  if (!isObject(server)) throw new InvalidArgumentError('must be CloudClient options or { client }', 'server');
  checkOptions(server, POOL_SERVER, 'a pool server');
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
  if (taken(name)) throw new InvalidArgumentError(`a server ${JSON.stringify(name)} is already in the pool`, 'id');
  return {
    id: name,
    client,
    socket: client.server === 'v2' ? NO_SOCKET : client.connect(),
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
}

/** What the pool does when a server's health changes. */
export interface HealthHooks {
  /** The server answered with its nodes, and is up: judge the waiting jobs against them and place what can go. */
  nodes(s: Server, info: ObjectInfo | 'unknown'): void;
  /** The server went down (or failed its first answer). */
  down(s: Server): void;
}

/** Watches the pool's servers: up, down, their queues; the `serverDown` / `serverUp` events. */
export class Health {
  readonly #listeners: { [K in keyof PoolEvents]: Set<(e: PoolEvents[K]) => void> } = { serverDown: new Set(), serverUp: new Set() };
  readonly #log: Log;
  readonly #hooks: HealthHooks;
  /** What the health's requests (`requests.ts`) report back. */
  readonly #watcher: Watcher;

  constructor(log: Log, hooks: HealthHooks, closed: () => boolean) {
    this.#log = log;
    this.#hooks = hooks;
    this.#watcher = { hooks, closed, failed: (s, err) => this.failed(s, err), mark: (s, state, reason) => this.#mark(s, state, reason) };
  }

  /** Adds an event listener; returns a function that removes it. */
  on<K extends keyof PoolEvents>(event: K, listener: (e: PoolEvents[K]) => void): () => void {
    const set = this.#listeners[event] as Set<(e: PoolEvents[K]) => void> | undefined;
    if (!set) throw new InvalidArgumentError("must be 'serverDown' or 'serverUp'", 'event');
    set.add(listener);
    return () => void set.delete(listener);
  }

  /** Starts watching a new server: its socket's queue counts and drops, and a first read of its nodes. */
  watch(s: Server): void {
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

  /** A request to the server failed without an answer: down, and probed until it answers. */
  failed(s: Server, err: unknown): void {
    this.#mark(s, 'down', describeError(err));
    void this.#probe(s);
  }

  /** The server answers but forgot a job (it restarted): the files uploaded to it are gone. */
  restarted(s: Server): void {
    s.uploads.clear();
  }

  /** After a job ended there: without its socket the server tells no queue changes, so its queue is read now, not at the probe's next turn. */
  jobEnded(s: Server): void {
    if (s.socket.state !== 'open' && s.state === 'up') this.#readQueue(s).catch(() => undefined);
  }

  /** Stops watching; closes the socket the pool opened (a given client stays usable: its next run() opens another). */
  release(s: Server): void {
    for (const off of s.offs.splice(0)) off();
    s.client.close();
  }

  /** Reads the server's nodes and queue; up when both answer, down (and probed) otherwise. */
  async #readNodes(s: Server, why: string): Promise<void> {
    return (await requests()).readNodes(this.#watcher, s, why);
  }

  /** While the socket is down: a cheap GET, with backoff, until the server answers. */
  async #probe(s: Server): Promise<void> {
    return (await requests()).probe(this.#watcher, s);
  }

  /** The server's queue as its load (not retried). */
  async #readQueue(s: Server): Promise<void> {
    return (await requests()).readQueue(s);
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
      this.#hooks.down(s);
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
}
