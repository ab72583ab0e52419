/**
 * Lanes: what workers can run, published in Redis. A lane is one distinct
 * `object_info` (its id a hash of it); each worker publishes the lanes of its
 * servers (the info once per lane) and heartbeats its membership with a
 * deadline, so a producer sees only lanes some live worker serves.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ObjectInfo } from '@platformui/sdk';
import type { QueueKeys } from './connection.ts';

/** JSON with its object keys sorted: the same info gives the same text whatever order a server listed it in. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * What a lane knows of its servers' nodes: their `object_info`, or `'unknown'` for Comfy API v2 servers
 * without the `objectInfo` option (nobody can read their nodes: they take any workflow in API format, placed
 * by load, and no editor file).
 */
export type LaneInfo = ObjectInfo | 'unknown';

/** The lane of servers whose nodes are unknown (Comfy API v2 without `objectInfo`): one per queue. */
export const UNKNOWN_LANE = 'nodes-unknown';

/** A lane's id: 16 hex digits of the sha256 of the canonical `object_info`; {@link UNKNOWN_LANE} for unknown nodes. */
export const laneIdOf = (info: LaneInfo): string => (info === 'unknown' ? UNKNOWN_LANE : createHash('sha256').update(canonical(info)).digest('hex').slice(0, 16));

/** What a worker says of itself (in `counts()`): no URL, no credential. */
export interface WorkerInfo {
  lanes: string[];
  servers: string[];
  active: number;
}

/** A lane some live worker serves. */
export interface LiveLane {
  id: string;
  workers: number;
}

/** Lanes in Redis: published by workers, read by producers (lane infos cached by id: a lane's info never changes). */
export class Lanes {
  readonly #infos = new Map<string, LaneInfo>();
  constructor(
    readonly redis: Redis,
    readonly keys: QueueKeys,
  ) {}

  /** Publishes `workerId` as serving `lanes` until `ttl` ms from now (the info written only where missing). */
  async publish(workerId: string, lanes: ReadonlyMap<string, LaneInfo>, ttl: number, self: WorkerInfo): Promise<void> {
    const until = Date.now() + ttl;
    const m = this.redis.multi();
    for (const [id, info] of lanes) {
      m.sadd(this.keys.lanes, id);
      m.set(this.keys.laneInfo(id), JSON.stringify(info), 'NX');
      m.zadd(this.keys.laneWorkers(id), until, workerId);
      // Workers whose heartbeat lapsed (they died without withdrawing) leave the list, so it does not grow.
      m.zremrangebyscore(this.keys.laneWorkers(id), '-inf', Date.now());
    }
    m.set(this.keys.worker(workerId), JSON.stringify(self), 'PX', ttl);
    await m.exec();
  }

  /** Takes `workerId` off its lanes at once (a clean close). */
  async withdraw(workerId: string, lanes: Iterable<string>): Promise<void> {
    const m = this.redis.multi();
    for (const id of lanes) m.zrem(this.keys.laneWorkers(id), workerId);
    m.del(this.keys.worker(workerId));
    await m.exec();
  }

  /** Every lane ever published. */
  all(): Promise<string[]> {
    return this.redis.smembers(this.keys.lanes);
  }

  /** The lanes with a live worker (its heartbeat not past its deadline). */
  async live(): Promise<LiveLane[]> {
    const ids = await this.all();
    const now = Date.now();
    const counts = await Promise.all(ids.map((id) => this.redis.zcount(this.keys.laneWorkers(id), now, '+inf')));
    return ids.map((id, i) => ({ id, workers: counts[i]! })).filter((l) => l.workers > 0);
  }

  /** A lane's `object_info` (`'unknown'`: see {@link LaneInfo}). */
  async info(id: string): Promise<LaneInfo | undefined> {
    const known = this.#infos.get(id);
    if (known) return known;
    const text = await this.redis.get(this.keys.laneInfo(id));
    if (!text) return undefined;
    const info = JSON.parse(text) as LaneInfo;
    this.#infos.set(id, info);
    return info;
  }

  /** Live workers and what they say of themselves, by worker id. */
  async workers(): Promise<Record<string, WorkerInfo>> {
    const ids = new Set<string>();
    const now = Date.now();
    for (const lane of await this.all()) for (const w of await this.redis.zrangebyscore(this.keys.laneWorkers(lane), now, '+inf')) ids.add(w);
    const out: Record<string, WorkerInfo> = {};
    for (const id of ids) {
      const text = await this.redis.get(this.keys.worker(id));
      if (text) out[id] = JSON.parse(text) as WorkerInfo;
    }
    return out;
  }
}
