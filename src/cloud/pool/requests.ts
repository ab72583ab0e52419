/**
 * The requests of a pool's health watch (`health.ts`): a server's nodes and
 * queue read when it joins or comes back, and the probe, with backoff, while
 * its socket is down. Loaded when the first pool starts watching: a file of
 * its own in the browser build.
 *
 * @module
 */
import { NotFoundError, UnsupportedError } from '../../errors.ts';
import type { ObjectInfo } from '../../schemas/cloud.ts';
import { describeError } from '../../transport/log.ts';
import { sleep } from '../../transport/sleep.ts';
import { backoff, type BackoffOptions } from '../../transport/backoff.ts';
import type { HealthHooks, Server } from './health.ts';

/** A down server is probed after 250 ms, then twice as late each time, up to every 5 s. */
const PROBE_BACKOFF: BackoffOptions = { first: 250, max: 5_000 };
const PROBE_TIMEOUT_MS = 5_000;
/** The job id a v2 server is asked about to see it answer (it has no queue to read): a 404 is an answer. */
const PROBE_JOB_ID = '00000000-0000-0000-0000-000000000000';

/** What the requests report back to the pool's `Health`. */
export interface Watcher {
  readonly hooks: HealthHooks;
  /** Whether the pool is closed: nothing is reported after it. */
  closed(): boolean;
  /** A request failed without an answer: down, and probed. */
  failed(s: Server, err: unknown): void;
  /** The server is up or down now (events and logs when that changes). */
  mark(s: Server, state: 'up' | 'down', reason: string): void;
}

/** Reads the server's nodes and queue; up when both answer, down (and probed) otherwise. */
export async function readNodes(w: Watcher, s: Server, why: string): Promise<void> {
  let info: ObjectInfo | 'unknown';
  try {
    // object_info at the client's own timeout: a server with many nodes takes seconds to list them.
    const nodes = Promise.resolve(s.client.getObjectInfo({ signal: s.gone.signal })).catch((err: unknown) => {
      if (err instanceof UnsupportedError) return 'unknown' as const;
      throw err;
    });
    [info] = await Promise.all([nodes, readQueue(s, {})]);
  } catch (err) {
    if (!s.removed && !w.closed()) w.failed(s, err);
    return;
  }
  if (s.removed || w.closed()) return;
  s.info = info;
  w.mark(s, 'up', why);
  w.hooks.nodes(s, info);
}

/** While the socket is down: a cheap GET, with backoff, until the server answers. */
export async function probe(w: Watcher, s: Server): Promise<void> {
  if (s.probing) return;
  s.probing = true;
  try {
    // Until the socket is back: it alone tells the queue's changes, so meanwhile the probe reads the queue.
    for (let attempt = 0; !s.removed && !w.closed(); attempt++) {
      if (s.state === 'up' && s.socket.state === 'open') return;
      try {
        await readQueue(s);
        if (s.state !== 'up') await readNodes(w, s, 'it answers again');
      } catch (err) {
        w.mark(s, 'down', describeError(err));
      }
      await sleep(backoff(attempt, PROBE_BACKOFF), s.gone.signal).catch(() => undefined);
    }
  } finally {
    s.probing = false;
  }
}

/** The server's queue as the load: everything it holds, which includes this pool's accepted jobs. Not retried unless `retry` says. */
export async function readQueue(s: Server, retry: { retry?: { limit: number } } = { retry: { limit: 0 } }): Promise<void> {
  if (s.client.server === 'v2') {
    // No queue to read: its load is this pool's own jobs there. Any answer says it is up.
    await Promise.resolve(s.client.getJobStatus(PROBE_JOB_ID, { timeout: PROBE_TIMEOUT_MS, ...retry, signal: s.gone.signal })).catch((err: unknown) => {
      if (!(err instanceof NotFoundError)) throw err;
    });
    return;
  }
  const queue = await s.client.getQueue({ timeout: PROBE_TIMEOUT_MS, ...retry, signal: s.gone.signal });
  s.queued = queue.queue_running.length + queue.queue_pending.length;
  s.unseen = 0;
}
