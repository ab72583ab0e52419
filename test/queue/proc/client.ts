// A third process that only knows job ids: QUEUE_PROC = { connection, name?, op: 'result' | 'cancel' | 'state', ids }.
// Prints one JSON line per id: `result` → { id, result } or { id, error: { name, message, ... } };
// `cancel` → { id, cancelled: true }; `state` → { id, state }.
import { JobQueue } from '../../../src/queue/index.ts';

const { connection, name, op, ids } = JSON.parse(process.env.QUEUE_PROC ?? '{}') as { connection: string; name?: string; op: 'result' | 'cancel' | 'state'; ids: string[] };
const queue = new JobQueue({ connection, ...(name ? { name } : {}) });
const print = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);
await Promise.all(ids.map(async (id) => {
  const job = queue.job(id);
  if (op === 'cancel') {
    await job.cancel();
    print({ id, cancelled: true });
  } else if (op === 'state') {
    print({ id, state: await job.state() });
  } else {
    try {
      print({ id, result: await job.result() });
    } catch (err) {
      const e = err as Error & Record<string, unknown>;
      print({ id, error: { ...e, name: e.name, message: e.message } });
    }
  }
}));
await queue.close();
process.exit(0);
