/**
 * `platformui queue`: the jobs running and waiting (`GET /api/queue`), each
 * with its position, id, creation time and output nodes, whatever tuple shape
 * the server sends (the SDK normalizes them).
 *
 * @module
 */
import type { QueueItem } from '../../index.ts';
import type { Command } from '../command.ts';
import { formatTime, table } from '../format.ts';

/** `platformui queue`. */
export const queue: Command = {
  name: 'queue',
  summary: 'the jobs running and waiting',
  synopsis: '',
  description: 'Lists the jobs running and waiting to run, in order: position, id, creation time, output nodes.',
  options: {},
  args: { min: 0, max: 0 },
  service: 'cloud',
  examples: ['platformui queue', 'platformui queue --json'],
  async run(ctx) {
    const cloud = await ctx.cloud();
    const q = await cloud.getQueue();
    const entries: Array<[state: 'running' | 'pending', item: QueueItem]> = [
      ...q.queue_running.map((i) => ['running', i] as ['running', QueueItem]),
      ...q.queue_pending.map((i) => ['pending', i] as ['pending', QueueItem]),
    ];
    if (ctx.mode === 'json') {
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
