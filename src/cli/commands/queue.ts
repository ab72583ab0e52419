/**
 * `platformui queue`: the jobs running and waiting (`GET /api/queue`), each
 * with its position, id, creation time and output nodes, whatever tuple shape
 * the server sends (the SDK normalizes them). With `--redis`: the Redis
 * queue's counts per state and per worker instead (`JobQueue.counts()`).
 *
 * @module
 */
import type { QueueItem } from '../../index.ts';
import { UsageError } from '../args.ts';
import type { Command } from '../command.ts';
import type { Context } from '../context.ts';
import { formatTime, table } from '../format.ts';
import { DEFAULT_QUEUE, loadQueue, queueNamed, redisUrl, shownUrl } from '../queue-entry.ts';

/** `rows` as a table, its header in bold. */
function printTable(ctx: Context, rows: string[][]): void {
  const [head, ...body] = table(rows);
  ctx.print(ctx.style('bold', head!));
  for (const line of body) ctx.print(line);
}

/** `--redis`: the counts per state, then one row per live worker (`JobQueue.counts()`). */
async function redisCounts(ctx: Context, url: string, name: string): Promise<number> {
  const connection = redisUrl(url, '--redis', ctx.io.env);
  const { JobQueue } = await loadQueue();
  const q = new JobQueue({ connection, name });
  try {
    const { states, workers, ended } = await q.counts();
    if (ctx.mode === 'json') {
      ctx.printJSON({ states, workers, ended });
      return 0;
    }
    const counted = Object.entries(states).filter(([, n]) => n > 0);
    ctx.print(`${queueNamed(name, true)} at ${shownUrl(connection)}: ${counted.map(([k, n]) => `${n} ${k}`).join(', ') || 'no jobs'}; ${Object.keys(workers).length} worker(s)`);
    const rows = Object.entries(workers).map(([id, w]) => [id, String(w.active), w.lanes.join(','), w.servers.join(', ')]);
    if (rows.length > 0) printTable(ctx, [['WORKER', 'ACTIVE', 'LANES', 'SERVERS'], ...rows]);
    // Why the latest jobs failed or were cancelled: what a count alone leaves to guess.
    if (ended.length > 0) printTable(ctx, [['JOB', 'STATE', 'ENDED', 'REASON'], ...ended.map((e) => [e.id, e.state, formatTime(e.at), e.reason.split('\n')[0]!])]);
    return 0;
  } finally {
    await q.close();
  }
}

/** `platformui queue`. */
export const queue: Command = {
  name: 'queue',
  summary: 'the jobs running and waiting',
  synopsis: '',
  description: [
    'Lists the jobs running and waiting to run on the server, in order: position, id, creation time,',
    'output nodes. With --json, a line of counts first ({"running":2,"pending":1}, also for an empty',
    "queue), then one line per job. With --redis, the Redis queue's jobs instead (platformui worker,",
    'run --queue): how many in each state (waiting, active, completed, failed, cancelled, delayed…),',
    'each worker with its lanes, and the latest failed and cancelled jobs with why (--json: one line,',
    '{"states":…,"workers":…,"ended":[{"id","state","reason","at"}]}).',
  ].join('\n'),
  options: {
    redis: { type: 'string', value: 'URL', help: "the Redis queue's counts per state and per worker instead: redis://host:6379" },
    name: { type: 'string', value: 'NAME', help: `with --redis: the queue's name (default ${DEFAULT_QUEUE})` },
  },
  args: { min: 0, max: 0 },
  service: 'cloud',
  examples: ['platformui queue', 'platformui queue --json', 'platformui queue --redis redis://localhost:6379   # needs Redis'],
  async run(ctx, { values }) {
    if (typeof values.redis === 'string' && ctx.global.server !== undefined) throw new UsageError('--server: with --redis, the counts come from Redis, not from a server');
    if (typeof values.redis === 'string') return redisCounts(ctx, values.redis, typeof values.name === 'string' ? values.name : DEFAULT_QUEUE);
    if (values.name !== undefined) throw new UsageError('--name: the name of a Redis queue, with --redis');
    const cloud = await ctx.cloud();
    // A Comfy API v2 server has no queue listing: said in the command line's words, before any request.
    if (cloud.server === 'v2') throw new Error('a Comfy API v2 server has no queue listing: see where a job waits with `platformui job <id>` (its queue position), or the recent jobs with `platformui jobs`');
    const q = await cloud.getQueue();
    const entries: Array<[state: 'running' | 'pending', item: QueueItem]> = [
      ...q.queue_running.map((i) => ['running', i] as ['running', QueueItem]),
      ...q.queue_pending.map((i) => ['pending', i] as ['pending', QueueItem]),
    ];
    if (ctx.mode === 'json') {
      // The counts first, as the text's first line: an empty queue is an answer too, not nothing.
      ctx.printJSON({ running: q.queue_running.length, pending: q.queue_pending.length });
      // The normalized entry without `raw` (the tuple again) and `workflow` (whole workflows): what a script reads.
      for (const [state, i] of entries) ctx.printJSON({ state, number: i.number, promptId: i.promptId, createTime: i.createTime, outputNodeIds: i.outputNodeIds });
      return 0;
    }
    ctx.print(`${q.queue_running.length} running, ${q.queue_pending.length} pending`);
    if (entries.length === 0) return 0;
    const rows = entries.map(([state, i]) => [String(i.number ?? '-'), state, i.promptId ?? '-', formatTime(i.createTime), (i.outputNodeIds ?? []).join(',')]);
    const [head, ...body] = table([['#', 'STATE', 'ID', 'CREATED', 'OUTPUT NODES'], ...rows]);
    ctx.print(ctx.style('bold', head!));
    for (const line of body) ctx.print(line);
    return 0;
  },
};
