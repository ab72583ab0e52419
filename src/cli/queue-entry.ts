/**
 * What the Redis commands (`worker`, `queue --redis`, `run --queue`) share:
 * the queue entry loaded on first use, so that no other command loads bullmq
 * or ioredis (optional peer dependencies: a user without them still has the
 * rest of the command line); the `--redis` URL, checked; and the ids the
 * worker gives its servers in Redis.
 *
 * @module
 */
import { hostname } from 'node:os';
import { UsageError } from './args.ts';

/** The queue's name when none is given (the entry's default too). */
export const DEFAULT_QUEUE = 'platformui';

/**
 * Loads the queue entry and its peers bullmq and ioredis, rejecting with the one line that says what to install
 * when one is missing: before the command connects to Redis or to any server.
 */
export async function loadQueue(): Promise<typeof import('../queue/index.ts')> {
  const [entry, { loadQueueDeps }] = await Promise.all([import('../queue/index.ts'), import('../queue/connection.ts')]);
  await loadQueueDeps();
  return entry;
}

/**
 * The Redis URL of `--redis` / `--queue`, checked. A password never comes from
 * the command line (it shows in `ps`): `PLATFORMUI_REDIS_PASSWORD` gives it.
 *
 * @example
 * ```ts
 * redisUrl('redis://localhost:6379', '--redis', {}); // 'redis://localhost:6379'
 * ```
 */
export function redisUrl(text: string, option: string, env: Readonly<Record<string, string | undefined>>): string {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || !url.hostname) {
    throw new UsageError(`${option} must be a Redis URL like redis://localhost:6379 (rediss:// for TLS), got ${JSON.stringify(text)}`);
  }
  if (url.password) throw new UsageError(`${option}: a password in the URL shows in \`ps\` and in shell history: set PLATFORMUI_REDIS_PASSWORD instead`);
  if (env.PLATFORMUI_REDIS_PASSWORD) url.password = encodeURIComponent(env.PLATFORMUI_REDIS_PASSWORD);
  return url.href;
}

/**
 * How a message names a queue: `queue "platformui"` (`start`: beginning a sentence), quoted as the SDK's own messages do, so that the
 * default name does not read as the program's.
 *
 * @example
 * ```ts
 * `Worker ready on ${queueNamed('renders')}`; // 'Worker ready on queue "renders"'
 * ```
 */
export const queueNamed = (name: string, start = false): string => `${start ? 'Queue' : 'queue'} ${JSON.stringify(name)}`;

/** The URL as printed: without the password {@link redisUrl} may have put in. */
export const shownUrl = (url: string): string => {
  const u = new URL(url);
  u.password = '';
  return u.href.replace(/\/$/, '');
};

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * A server's id in Redis: its URL, with a loopback host replaced by this
 * machine's name. The id is how a job taken over after a crash finds its
 * server, and `localhost:8188` on two machines is two servers: as
 * `http://gpu-a:8188` and `http://gpu-b:8188` no worker follows (or runs
 * again) a job of the other's server, and a worker listing `http://gpu-a:8188`
 * by name takes over the jobs of gpu-a's own worker.
 *
 * @example
 * ```ts
 * serverId('http://localhost:8188'); // 'http://gpu-a:8188' on gpu-a
 * ```
 */
export function serverId(baseUrl: string): string {
  if (!URL.canParse(baseUrl)) return baseUrl;
  const url = new URL(baseUrl);
  if (!LOOPBACK.test(url.hostname)) return baseUrl;
  url.hostname = hostname();
  return url.href.replace(/\/$/, '');
}

/**
 * Where to download a queued job's outputs from: the URL its worker used,
 * unless that is a loopback URL of another machine (its id names the
 * machine: {@link serverId}), where the URL here is the id.
 */
export function downloadUrl(result: { server: string; baseUrl: string }): string {
  if (!URL.canParse(result.baseUrl) || !LOOPBACK.test(new URL(result.baseUrl).hostname) || !URL.canParse(result.server)) return result.baseUrl;
  const id = new URL(result.server);
  return id.hostname === hostname() || LOOPBACK.test(id.hostname) ? result.baseUrl : result.server;
}
