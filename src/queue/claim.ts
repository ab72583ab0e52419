/**
 * A job id's claim: the key `job:<id>` → the lane its job was added to,
 * which makes one job of one id across lanes and producers. BullMQ keeps one
 * job per id within a lane, but a claim and a BullMQ add cannot be one Redis
 * step, so a claim is written *pending* (`<lane>?<token>`) before the add and
 * *settled* (`<lane>`) after it, by its producer, by a later `add()` or by the
 * worker that takes the job. A pending claim whose job is not in its lane was
 * left by an add that failed or died: the next `add()` of that id adds the
 * job to that lane under that id (BullMQ keeps one, whoever's lands first).
 * A settled claim whose job is gone was removed (finished past
 * `keepFinished`, or cancelled while waiting): never added again.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { randomUuid } from '../cloud/uuid.ts';
import { canonical } from './lanes.ts';

/** A claim as read: its lane, and whether its job is known to be in BullMQ. */
export interface Claim {
  lane: string;
  /** Written before its add, not settled since: the job may not be in its lane (yet, or ever). */
  pending: boolean;
}

/** A claim's stored value, read. */
export function parseClaim(value: string): Claim {
  const at = value.indexOf('?');
  return at < 0 ? { lane: value, pending: false } : { lane: value.slice(0, at), pending: true };
}

/** A new pending claim of `lane`, unique to one add (so that its producer releases only its own). */
export const pendingClaim = (lane: string): string => `${lane}?${randomUuid()}`;

// Scripts: read and write in one step, so that no claim is released or settled under another producer's feet.
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;
const SETTLE = `local v = redis.call('get', KEYS[1]) if v and string.find(v, '?', 1, true) then redis.call('set', KEYS[1], string.sub(v, 1, string.find(v, '?', 1, true) - 1), 'KEEPTTL') end return 0`;

/** Removes `value`, this producer's pending claim of `key`, if it is still there (its add failed: the id is free again). */
export async function releaseClaim(redis: Redis, key: string, value: string): Promise<void> {
  await redis.eval(RELEASE, 1, key, value);
}

/** Settles the pending claim of `key`, whoever wrote it (its job is in its lane): from now on its removal is final. */
export async function settleClaim(redis: Redis, key: string): Promise<void> {
  await redis.eval(SETTLE, 1, key);
}

/** What a job runs, hashed: two adds of one id with the same workflow and inputs are one job's, others are told apart. */
export const workOf = (workflow: unknown, inputs: unknown): string => createHash('sha256').update(canonical({ workflow, inputs: inputs ?? null })).digest('hex');
