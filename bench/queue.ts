// The Redis queue (issue 26), three figures against a real redis-server on a free loopback port and
// emulators of the local personality (one job at a time per server, as a real local server):
//
// (a) Throughput: 60 short jobs (bench/pool.ts's: unique, ~75 ms of execution each) added at once,
//     run by 3 QueueWorkers (one server each) vs by 1 QueueWorker over 1 server; ratio = time over 1 /
//     time over 3, from the first add() to the last result(). Target: ≥ 2.6× (3× is the ceiling).
// (b) The queue's added latency per job: jobs one at a time through JobQueue.add() + result() (one
//     worker, one server) and through CloudPool.run() on the same server (stepMs 0), interleaved in
//     rounds after a warm-up; the difference of the medians. Target: ≤ 5 ms on loopback Redis.
// (c) 10,000 jobs added (no worker registered for them to start: they wait): the time, and Redis's
//     used_memory (INFO memory) before and after, per job.
//
// Skipped with one line when redis-server is not installed or the queue entry is not built
// (dist/queue.js). Every emulator and worker runs in this process. Erasable TS only.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { job } from './pool.ts';
import { median } from './registry.ts';
import { startRedis } from '../test/helpers/redis.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const JOBS = 60;
const SERVERS = 3;
const STEP_MS = 15;
const STEPS = 2;
const RATIO_TARGET = 2.6;
const ROUNDS = 100;
const WARMUP = 20;
const LATENCY_TARGET_MS = 5;
const ADDED = 10_000;

type Sdk = typeof import('../src/index.ts');
type Emu = typeof import('../src/emulator/index.ts');
type QueueEntry = typeof import('../src/queue/index.ts');

// ---------------------------------------------------------------- redis-server and its INFO
// The tests' redis-server (a free port, append-only on, stopped at the end), and Redis's own count of its memory.
const usedMemory = async (url: string) => {
  const { Redis } = await import('ioredis');
  const client = new Redis(url);
  try {
    return Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
  } finally {
    client.disconnect();
  }
};

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'JobQueue: 60 jobs by 3 workers vs 1, the added latency over CloudPool.run(), 10,000 jobs added';
  if (spawnSync('redis-server', ['--version']).status !== 0) return { name, lines: ['skipped: redis-server is not installed (apt install redis-server)'], ok: true };
  if (!existsSync(join(root, 'dist', 'queue.js'))) return { name, lines: ['skipped: dist/queue.js is not built (the queue entry)'], ok: true };
  const { JobQueue, QueueWorker } = (await import(`${root}dist/queue.js`)) as QueueEntry;
  const { CloudPool } = (await import(`${root}dist/index.js`)) as Sdk;
  const { startEmulator } = (await import(`${root}dist/emulator.js`)) as Emu;
  const redis = await startRedis();
  const lines: string[] = [];
  let ok = true;
  let queueNo = 0;
  /** Workers over `urls` on a queue of its own, and a producer of it. */
  const fleet = async (urls: string[], perWorker: number, concurrency?: number) => {
    const qname = `bench${queueNo++}`;
    const workers: Array<InstanceType<QueueEntry['QueueWorker']>> = [];
    for (let i = 0; i < urls.length; i += perWorker) {
      workers.push(new QueueWorker({ connection: redis.url, name: qname, servers: urls.slice(i, i + perWorker).map((baseUrl, k) => ({ baseUrl, id: `s${i + k}` })), ...(concurrency ? { concurrency } : {}), logLevel: 'off' }));
    }
    await Promise.all(workers.map((w) => w.ready()));
    const queue = new JobQueue({ connection: redis.url, name: qname });
    return { queue, close: async () => void (await Promise.all([queue.close(), ...workers.map((w) => w.close())])) };
  };
  try {
    // ------------------------------------------------------------ (a) throughput
    {
      const emus = await Promise.all(Array.from({ length: SERVERS }, () => startEmulator({ personality: 'local', cloud: { stepMs: STEP_MS, progressSteps: STEPS } })));
      try {
        const timed = async (urls: string[], tag: string) => {
          const f = await fleet(urls, 1);
          try {
            const t0 = performance.now();
            const jobs = await Promise.all(Array.from({ length: JOBS }, () => f.queue.add(job(tag))));
            const results = await Promise.all(jobs.map((j) => j.result()));
            return { ms: performance.now() - t0, results };
          } finally {
            await f.close();
          }
        };
        const urls = emus.map((e) => e.url);
        await timed(urls, 'warm3'); // JIT, sockets, the emulators' first jobs: not timed
        const one = await timed(urls.slice(0, 1), 'one');
        const three = await timed(urls, 'three');
        const ratio = one.ms / three.ms;
        const spread = new Map<string, number>();
        for (const { server } of three.results) spread.set(server, (spread.get(server) ?? 0) + 1);
        const pass = ratio >= RATIO_TARGET;
        ok &&= pass;
        const jobMs = STEP_MS * (1 + 2 * STEPS);
        lines.push(`(a) ${JOBS} jobs of ~${jobMs} ms execution each, local personality (one job at a time per server), loopback Redis`);
        lines.push(`    1 worker over 1 server:   ${one.ms.toFixed(0).padStart(6)} ms  (${(one.ms / JOBS).toFixed(1)} ms/job; ideal ${JOBS * jobMs} ms)`);
        lines.push(`    3 workers over 3 servers: ${three.ms.toFixed(0).padStart(6)} ms  (${(three.ms / JOBS).toFixed(1)} ms/job); jobs per server ${[...spread.entries()].sort().map(([s, n]) => `${s}=${n}`).join(' ')}`);
        lines.push(`    throughput ratio ${ratio.toFixed(2)}x (target >= ${RATIO_TARGET}x): ${pass ? 'PASS' : 'FAIL'}`);
      } finally {
        await Promise.all(emus.map((e) => e.close()));
      }
    }

    // ------------------------------------------------------------ (b) the queue's added latency per job
    {
      const emu = await startEmulator({ personality: 'local', cloud: { stepMs: 0, progressSteps: 1 } });
      const pool = new CloudPool([{ baseUrl: emu.url, id: 'only' }], { logLevel: 'off' });
      const f = await fleet([emu.url], 1);
      try {
        const sides: Array<() => Promise<unknown>> = [() => pool.run(job('p'), { timeout: 30_000 }), async () => (await f.queue.add(job('q'))).result()];
        const times: number[][] = [[], []];
        for (let r = 0; r < WARMUP + ROUNDS; r++) {
          for (let k = 0; k < 2; k++) {
            const side = (r + k) % 2;
            const t = performance.now();
            await sides[side]!();
            if (r >= WARMUP) times[side]!.push(performance.now() - t);
          }
        }
        const [pm, qm] = [median(times[0]!), median(times[1]!)];
        const added = qm - pm;
        const pass = added <= LATENCY_TARGET_MS;
        ok &&= pass;
        lines.push(`(b) ${ROUNDS} jobs each side, one at a time, interleaved (after ${WARMUP} warm-up rounds), stepMs 0, one server`);
        lines.push(`    CloudPool.run():            median ${pm.toFixed(2)} ms/job`);
        lines.push(`    JobQueue.add() + result():  median ${qm.toFixed(2)} ms/job (one QueueWorker, same server)`);
        lines.push(`    the queue's added latency ${added.toFixed(2)} ms/job by medians (target <= ${LATENCY_TARGET_MS} ms): ${pass ? 'PASS' : 'FAIL'}`);
      } finally {
        await f.close();
        await pool.close();
        await emu.close();
      }
    }

    // ------------------------------------------------------------ (c) 10,000 jobs added
    {
      // add() needs a live worker able to run the jobs: one whose only server is then stopped, so it starts
      // none of them (concurrency 1: at most one held) and the 10,000 wait in Redis.
      const emu = await startEmulator({ personality: 'local' });
      const f = await fleet([emu.url], 1, 1);
      await emu.close();
      try {
        const before = await usedMemory(redis.url);
        const t0 = performance.now();
        for (let i = 0; i < ADDED; i += 100) await Promise.all(Array.from({ length: 100 }, () => f.queue.add(job('many'))));
        const ms = performance.now() - t0;
        const after = await usedMemory(redis.url);
        lines.push(`(c) ${ADDED.toLocaleString('en')} jobs added (100 at a time, their worker's server down): ${(ms / 1000).toFixed(1)} s (${((ADDED / ms) * 1000).toFixed(0)} jobs/s)`);
        lines.push(`    Redis used_memory ${(before / 2 ** 20).toFixed(1)} MB before, ${(after / 2 ** 20).toFixed(1)} MB after: ${((after - before) / ADDED / 1024).toFixed(2)} KB per waiting job`);
      } finally {
        await f.close();
      }
    }
  } finally {
    await redis.stop();
  }
  return { name, lines, ok };
}
