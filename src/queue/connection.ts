/**
 * bullmq and ioredis, loaded once and only here: they are optional peer
 * dependencies of `@platformui/sdk/queue`, so a missing one is one clear line
 * instead of a module-resolution stack; and the connection option, a
 * `redis://` URL or ioredis options, made what both libraries take.
 *
 * @module
 */
import type { ConnectionOptions } from 'bullmq';
import type { Redis as RedisClient, RedisOptions } from 'ioredis';
import { InvalidArgumentError, PlatformUIError } from '@platformui/sdk';
import type { Log } from '../transport/log.ts';

/** Where Redis is: a `redis://` / `rediss://` URL, or ioredis options (`{ host, port, password, … }`) as BullMQ takes them. */
export type Connection = ConnectionOptions | string;

/** What the queue uses of its peer dependencies. */
export interface QueueDeps {
  bullmq: typeof import('bullmq');
  Redis: new (options: RedisOptions) => RedisClient;
}

/**
 * The one line a queue without its optional peers says (thrown as a `PlatformUIError`), to match on.
 *
 * @example
 * ```ts
 * if (err.message === MISSING_DEPS) console.error('install bullmq and ioredis to use the queue');
 * ```
 */
export const MISSING_DEPS = '@platformui/sdk/queue needs bullmq and ioredis: npm install bullmq ioredis';

let deps: Promise<QueueDeps> | undefined;

/** bullmq and ioredis, imported on first use; rejects with one line naming the install when either is missing. */
export function loadQueueDeps(): Promise<QueueDeps> {
  deps ??= Promise.all([import('bullmq'), import('ioredis')]).then(
    ([bullmq, ioredis]) => ({ bullmq, Redis: (ioredis.default ?? ioredis.Redis) as unknown as QueueDeps['Redis'] }),
    (err: unknown) => {
      deps = undefined; // installed later, a next call may succeed
      throw new PlatformUIError(MISSING_DEPS, { cause: err });
    },
  );
  return deps;
}

/**
 * ioredis options for `connection`: a URL parsed (its password kept in the
 * options, never in a message), options copied. Checked before any connection.
 */
export function redisOptions(connection: Connection): RedisOptions {
  if (typeof connection === 'string') {
    if (!URL.canParse(connection)) throw new InvalidArgumentError('must be a redis:// URL or ioredis options', 'connection');
    const u = new URL(connection);
    if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new InvalidArgumentError(`must be a redis:// or rediss:// URL, got ${u.protocol}`, 'connection');
    const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : undefined;
    return {
      host: u.hostname || '127.0.0.1',
      port: u.port ? Number(u.port) : 6379,
      ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
      ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
      ...(db !== undefined && Number.isInteger(db) ? { db } : {}),
      ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    };
  }
  if (typeof connection !== 'object' || connection === null) throw new InvalidArgumentError('must be a redis:// URL or ioredis options', 'connection');
  return { ...(connection as RedisOptions) };
}

/** A queue's name or a worker's id: part of Redis keys, so a `:` (BullMQ's separator) is refused. */
export function checkName(name: unknown, field = 'name'): string {
  if (typeof name !== 'string' || !/^[A-Za-z0-9_.-]{1,100}$/.test(name)) throw new InvalidArgumentError('must be 1 to 100 letters, digits, ".", "_" or "-"', field);
  return name;
}

/** The keys of one queue `name`: BullMQ's queues live under `bull:<name>:<laneId>`, the queue's own records beside them. */
export function keysOf(name: string) {
  const prefix = `bull:${name}`;
  return {
    /** BullMQ's `prefix` option: with the lane id as queue name, a lane's keys are `bull:<name>:<laneId>:…`. */
    prefix,
    lanes: `${prefix}:lanes`,
    laneInfo: (lane: string) => `${prefix}:lane:${lane}`,
    laneWorkers: (lane: string) => `${prefix}:lane:${lane}:workers`,
    worker: (id: string) => `${prefix}:worker:${id}`,
    /** Set of the lanes a server (by id) has served: its object_info changes with each new file or node. */
    serverLanes: (server: string) => `${prefix}:server:${server}:lanes`,
    /** Job id → lane id, one key per job (it expires: see `keepFinished`): a handle finds its job from the id alone. */
    job: (id: string) => `${prefix}:job:${id}`,
    cancelled: (id: string) => `${prefix}:cancelled:${id}`,
    /**
     * Sorted set of the job ids `cancel()` ended (score: when), trimmed to `keepFinished`: BullMQ counts a cancelled
     * job that had started as failed, and keeps none of one removed while waiting; `counts()` reads this instead of
     * every failed job's error.
     */
    cancelledJobs: `${prefix}:cancelled-jobs`,
    /** Pub/sub channel: job ids to cancel, heard by every worker. */
    cancelChannel: `${prefix}:cancel`,
  };
}
/** The Redis keys of one queue (see {@link keysOf}). */
export type QueueKeys = ReturnType<typeof keysOf>;

/**
 * What every BullMQ queue, worker and event reader of one queue `name` is built with. BullMQ's own look at
 * Redis is skipped (it would print "IMPORTANT! Eviction policy is …" on the console once per connection):
 * {@link checkRedis} looks once and says so in the SDK's log.
 */
export function bullOptions(connection: RedisOptions, keys: QueueKeys) {
  return { connection: connection as ConnectionOptions, prefix: keys.prefix, skipVersionCheck: true };
}

/** The oldest Redis the queue runs on (`SET … KEEPTTL`, BullMQ's scripts). */
const MIN_REDIS = [6, 2] as const;

/**
 * Looks at the Redis a `JobQueue` or `QueueWorker` uses, once, when it first connects: an eviction policy
 * other than `noeviction` is a warning in the SDK's log (Redis may then drop a job's keys under memory
 * pressure: a job or its result lost); a Redis older than 6.2 is refused.
 */
export async function checkRedis(redis: RedisClient, log: Log): Promise<void> {
  const info = await redis.info();
  const version = /^(?:redis|valkey)_version:(\S+)/m.exec(info)?.[1];
  const [major = 0, minor = 0] = (version ?? '').split('.').map(Number);
  if (version && (major < MIN_REDIS[0] || (major === MIN_REDIS[0] && minor < MIN_REDIS[1]))) {
    throw new PlatformUIError(`Redis ${version} is too old for @platformui/sdk/queue: it needs Redis ${MIN_REDIS.join('.')} or newer`);
  }
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (policy && policy !== 'noeviction') {
    log.warn?.(`Redis's maxmemory-policy is ${policy}: under memory pressure it may evict the queue's keys (a job or its result lost); set it to noeviction`, { policy });
  }
}

/**
 * `emitter` with its connection errors logged at debug, not thrown: ioredis and BullMQ reconnect by
 * themselves, and an `error` event without a listener would print to the console (ioredis) or crash the process.
 */
export function quiet<T extends { on(event: 'error', listener: (err: Error) => void): unknown }>(emitter: T, log: Log): T {
  emitter.on('error', (err: Error) => log.debug?.(`Redis: ${err.message} (reconnecting)`, { code: (err as { code?: unknown }).code }));
  return emitter;
}
