// The Redis queue (issue 26) over two real local servers (ComfyUI 0.8.0 on CPU), named by
// PLATFORMUI_REAL_SERVER_URL and PLATFORMUI_REAL_SERVER_URL_2, with a real redis-server; without
// either server or redis-server this suite skips with one line. Imported by local-server.int.test.ts
// before the pool suite (which stops the second server at its end).
//
// One worker beside each server, as on two GPU machines, and a producer: every job runs exactly once
// (its prompt id in exactly one server's history, no other job of its prefix anywhere), its file
// downloads from the server the result names, and a worker that dies mid-job (closed as if killed)
// leaves its job to be followed by the other worker only if it lists that server, here: the job's
// own worker restarted.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudClient } from '../../src/index.ts';
import { JobQueue, QueueWorker } from '../../src/queue/index.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { blurChain } from './workflows.ts';

const url1 = process.env.PLATFORMUI_REAL_SERVER_URL;
const url2 = process.env.PLATFORMUI_REAL_SERVER_URL_2;
const hasRedis = spawnSync(process.env.REDIS_SERVER ?? 'redis-server', ['--version']).status === 0;

/** How many times each prompt id appears in a server's history, and the prefixes of its saved files. */
async function history(url: string): Promise<Map<string, string[]>> {
  const h = (await (await fetch(new URL('/history?max_items=1000', url))).json()) as Record<string, { outputs?: Record<string, { images?: Array<{ filename: string }> }> }>;
  return new Map(Object.entries(h).map(([id, entry]) => [id, Object.values(entry.outputs ?? {}).flatMap((o) => (o.images ?? []).map((i) => i.filename))]));
}

if (!url1 || !url2 || !hasRedis) {
  it('the Redis queue over two real local servers: skipped', ({ skip }) => skip(!hasRedis ? 'redis-server is not installed (.ci/run installs it)' : 'set PLATFORMUI_REAL_SERVER_URL and PLATFORMUI_REAL_SERVER_URL_2 to two running local servers'));
} else {
  describe('the Redis queue over two real local servers', () => {
    let redis: TestRedis;
    const open: Array<{ close(): unknown }> = [];
    beforeAll(async () => void (redis = await startRedis()));
    afterAll(async () => {
      for (const o of open.splice(0).reverse()) await o.close();
      await redis?.stop();
    });
    const worker = async (id: string, baseUrl: string, name: string) => {
      const w = new QueueWorker({ connection: redis.url, name, servers: [{ id, baseUrl }], logLevel: 'off', lockDuration: 2000, stalledInterval: 1000 });
      open.push(w);
      await w.ready();
      return w;
    };

    it('runs each job exactly once across two workers, and its file comes from the server the result names', async () => {
      const name = `real-${Date.now()}`;
      await Promise.all([worker('one', url1, name), worker('two', url2, name)]);
      const queue = new JobQueue({ connection: redis.url, name, logLevel: 'off' });
      open.push(queue);
      const stamp = Date.now();
      const jobs = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          queue.add(blurChain(2, `sdk_queue_${stamp}_${i}`, { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 1000 + i } }), { jobId: `real-${stamp}-${i}` }),
        ),
      );
      const results = await Promise.all(jobs.map((j) => j.result()));
      const [h1, h2] = [await history(url1), await history(url2)];
      for (const [i, r] of results.entries()) {
        const prefix = `sdk_queue_${stamp}_${i}_`;
        const holders = [h1, h2].filter((h) => h.has(r.promptId));
        expect(holders, `job ${i}: its prompt id in exactly one history`).toHaveLength(1);
        const saved = [...h1.values(), ...h2.values()].flat().filter((f) => f.startsWith(prefix));
        expect(saved, `job ${i}: one run of its prefix on the two servers`).toEqual([`${prefix}00001_.png`]);
        expect((r.server === 'one' ? h1 : h2).has(r.promptId)).toBe(true);
        const bytes = new Uint8Array(await (await new CloudClient({ baseUrl: r.baseUrl, logLevel: 'off' }).download(r.files[0]!)).arrayBuffer());
        expect([...bytes.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
      }
    });

    it('a worker that dies mid-job: its job is followed after the stall by the worker restarted beside that server, not run again', async () => {
      const name = `real-stall-${Date.now()}`;
      const first = await worker('one', url1, name);
      const queue = new JobQueue({ connection: redis.url, name, logLevel: 'off' });
      open.push(queue);
      const stamp = Date.now();
      const job = await queue.add(blurChain(25, `sdk_queue_stall_${stamp}`, { class_type: 'EmptyImage', inputs: { width: 256, height: 256, batch_size: 1, color: 4242 } }));
      // Running on the server: then the worker "dies" (nothing more reaches Redis from it).
      for (let i = 0; i < 200 && (await job.state()) !== 'active'; i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 500));
      await first.close({ force: true });
      await worker('one', url1, name);
      const r = await job.result();
      const saved = [...(await history(url1)).values()].flat().filter((f) => f.startsWith(`sdk_queue_stall_${stamp}_`));
      expect(saved).toEqual([`sdk_queue_stall_${stamp}_00001_.png`]);
      expect(r.server).toBe('one');
      expect(r.resubmittedFrom).toBeUndefined();
    });
  });
}
