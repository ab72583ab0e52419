// Issue 26, "Redis stopped gracefully and restarted (append-only on) while jobs wait and run": no job
// lost, none run twice. Two worker processes over two servers; Redis gets SHUTDOWN while some jobs run
// on the servers and others wait in the queue, stays down half a second, comes back on its data.
import { describe, expect, it } from 'vitest';
import type { QueueJob } from '../../src/queue/index.ts';
import { jobsOn, postsOf, processFixture, runsOf, serverOf, startWorker, until } from './proc/harness.ts';
import { jobWorkflow } from './proc/workflows.ts';

const JOBS = 12;

describe('Redis stopped and restarted while jobs wait and run', () => {
  const real = processFixture({ a: [40, 5], b: [40, 5] });

  it('no job is lost and none runs twice', async () => {
    const connection = real.redis.url;
    const name = 'redis-restart';
    await Promise.all(Object.entries(real.servers).map(([id, emu]) => startWorker(real.children.dir, { connection, name, servers: [serverOf(emu, id)] })));
    const queue = real.queue(name);
    const jobs: QueueJob[] = [];
    for (let i = 0; i < JOBS; i++) jobs.push(await queue.add(jobWorkflow(`restart-${i}`), { jobId: `job-c${i}` }));
    const results = jobs.map((j) => j.result());
    results.forEach((r) => r.catch(() => undefined)); // awaited below

    const running = async () => (await jobsOn(real.servers)).filter((r) => r.job.status === 'in_progress').length;
    await until(async () => (await running()) > 0, 20_000, 'a job running on a server');
    expect(['waiting', 'prioritized']).toContain(await jobs[JOBS - 1]!.state());
    await real.redis.restart({ downMs: 500 });

    const settled = await Promise.allSettled(results);
    expect(settled.filter((s) => s.status === 'rejected')).toEqual([]);
    const posts = await postsOf(...Object.values(real.servers));
    for (let i = 0; i < JOBS; i++) {
      const result = (settled[i] as PromiseFulfilledResult<Awaited<ReturnType<QueueJob['result']>>>).value;
      const runs = await runsOf(real.servers, `restart-${i}`);
      expect(runs, `restart-${i}`).toHaveLength(1);
      expect(runs[0]!.job.status).toBe('completed');
      expect(result).toMatchObject({ promptId: runs[0]!.job.prompt_id, server: runs[0]!.server });
      expect(posts.get(result.promptId), `POSTs of restart-${i}`).toBe(1);
    }
    expect([...posts.values()].reduce((a, b) => a + b, 0)).toBe(JOBS);
  }, 120_000);
});
