/**
 * `platformui worker`: a `QueueWorker` over this machine's servers, taking
 * jobs from the Redis queue until SIGINT or SIGTERM, then closing gracefully
 * (what it holds is finished or handed back); a second signal exits at once.
 * Prints one line once ready (the lanes it serves: what its servers can run),
 * and one once stopped.
 *
 * @module
 */
import { parsePositiveInt, UsageError } from '../args.ts';
import type { Command } from '../command.ts';
import { EXIT } from '../errors.ts';
import { DEFAULT_QUEUE, loadQueue, queueNamed, redisUrl, serverId, shownUrl } from '../queue-entry.ts';

/** Resolves on the first SIGINT or SIGTERM; a second one exits at once (130). */
function untilStopped(): { stopped: Promise<string>; dispose(): void } {
  let first: string | undefined;
  let resolve!: (signal: string) => void;
  const stopped = new Promise<string>((r) => (resolve = r));
  const on = (signal: NodeJS.Signals) => () => {
    if (first !== undefined) process.exit(EXIT.interrupted);
    first = signal;
    resolve(signal);
  };
  const onInt = on('SIGINT');
  const onTerm = on('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return { stopped, dispose: () => void (process.off('SIGINT', onInt), process.off('SIGTERM', onTerm)) };
}

/** `platformui worker`. */
export const worker: Command = {
  name: 'worker',
  summary: 'take jobs from a Redis queue and run them on these servers',
  synopsis: '--redis URL --server URL… [options]',
  description: [
    'Runs the jobs of a Redis queue (platformui run --queue, or JobQueue.add() in any process) on the',
    'servers given by --server (PLATFORMUI_CLOUD_URL without one), through a pool: a job goes only to a',
    'server that has its nodes and models, and only when one has room. Prints one line once it has read',
    "its servers' object_info: the lanes it serves (one per distinct object_info). Runs until Ctrl-C or",
    'SIGTERM, then finishes or hands back the jobs it holds, prints one line saying it stopped and exits',
    '0; a second signal exits at once (its jobs are taken over by another worker after the stall',
    'interval, 30 s).',
    '',
    "A server's id in Redis is its URL, a loopback host replaced by this machine's name (localhost:8188",
    'on gpu-a is http://gpu-a:8188): a job taken over after a crash goes only to a worker that lists',
    'the server it ran on. Keys stay here: never in Redis. A Redis password: PLATFORMUI_REDIS_PASSWORD.',
    'Needs bullmq and ioredis (npm install bullmq ioredis) and a Redis: README "Many processes and machines".',
  ].join('\n'),
  options: {
    redis: { type: 'string', value: 'URL', help: 'the Redis of the queue: redis://host:6379 (rediss:// for TLS); required' },
    concurrency: { type: 'string', value: 'N', help: "jobs this worker holds at once (default: QueueWorker's)" },
    name: { type: 'string', value: 'NAME', help: `the queue's name (default ${DEFAULT_QUEUE}): producers add to the same name` },
    id: { type: 'string', value: 'ID', help: "this worker's id in Redis (default: a random one); a second live worker with the same id is refused" },
  },
  args: { min: 0, max: 0 },
  service: 'cloud',
  // Not run by the newcomer check (it has no Redis): `# needs Redis` marks them (test/newcomer/commands.mjs).
  examples: [
    'platformui worker --redis redis://localhost:6379 --server http://localhost:8188   # needs Redis',
    'platformui worker --redis redis://localhost:6379 --server http://gpu-a:8188 --server http://gpu-b:8188 --concurrency 4   # needs Redis',
  ],
  async run(ctx, { values }) {
    if (typeof values.redis !== 'string') throw new UsageError('--redis URL is required: the Redis the jobs are queued in (redis://localhost:6379)');
    const connection = redisUrl(values.redis, '--redis', ctx.io.env);
    const concurrency = typeof values.concurrency === 'string' ? parsePositiveInt(values.concurrency, '--concurrency', 1000) : undefined;
    const name = typeof values.name === 'string' ? values.name : DEFAULT_QUEUE;
    const urls = ctx.global.servers.length ? ctx.global.servers : ctx.io.env.PLATFORMUI_CLOUD_URL ? [ctx.io.env.PLATFORMUI_CLOUD_URL] : [];
    if (urls.length === 0) throw new UsageError('no server: pass --server URL (once per server), or set PLATFORMUI_CLOUD_URL');
    // bullmq first: without it, nothing is connected to (no server is asked, no "server down" before the real reason).
    const { QueueWorker } = await loadQueue();
    const servers = (await ctx.serverOptions(urls)).map((s) => ({ ...s, id: serverId(s.baseUrl) }));

    const signals = untilStopped();
    const w = new QueueWorker({ connection, name, servers, ...(typeof values.id === 'string' ? { id: values.id } : {}), ...(concurrency !== undefined ? { concurrency } : {}), ...ctx.log });
    let stopped = false;
    try {
      const ready = await Promise.race([w.ready().then(() => true), signals.stopped.then(() => false)]);
      stopped = !ready;
      if (ready) {
        const lanes = w.lanes;
        const servedBy = servers.map((s) => s.id).join(', ');
        if (ctx.mode === 'json') ctx.printJSON({ ready: true, worker: w.id, queue: name, redis: shownUrl(connection), lanes, servers: servers.map((s) => s.id) });
        else ctx.print(`Worker ready on ${queueNamed(name)} at ${shownUrl(connection)}: ${lanes.length ? `lane${lanes.length > 1 ? 's' : ''} ${lanes.join(', ')}` : 'no lane yet (no server answered)'} for ${servedBy}. Ctrl-C stops it.`);
        const signal = await signals.stopped;
        stopped = true;
        if (ctx.mode !== 'json') ctx.warn(`${signal}: finishing or handing back the jobs held (${signal} again to exit at once)`);
      }
    } finally {
      await w.close();
      signals.dispose();
    }
    // Said once it is true (close() has returned): until then its jobs may still be finishing.
    if (stopped && ctx.mode === 'json') ctx.printJSON({ stopped: true, worker: w.id, queue: name });
    else if (stopped) ctx.print(`Worker ${w.id} stopped: it takes no more jobs from ${queueNamed(name)}`);
    return EXIT.ok;
  },
};
