// Issue 26, "a worker killed with SIGKILL while its job runs on the server": another worker process
// takes the job over after the stall interval, finds its prompt id on that server and follows it to the
// end. The server saw one POST. Short stalledInterval/lockDuration; a slow server (25 steps of 200 ms
// per node) so the job is still running when it is taken over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '../../src/queue/index.ts';
import { bundleChildren, killChildren, localServer, postsOf, runsOf, serverOf, startWorker, until, type LocalServer } from './proc/harness.ts';
import { jobWorkflow } from './proc/workflows.ts';
import { startRedis, type TestRedis } from './redis.ts';

describe('a worker process SIGKILLed while its job runs', () => {
  let redis: TestRedis;
  let children: Awaited<ReturnType<typeof bundleChildren>>;
  let emu: LocalServer;
  let queue: JobQueue;
  beforeAll(async () => {
    [redis, children] = await Promise.all([startRedis(), bundleChildren()]);
    emu = await localServer(children.dir, 200, 25);
  }, 60_000);
  afterAll(async () => {
    await killChildren();
    await queue?.close();
    await redis?.stop();
    children?.cleanup();
  });

  it('another worker process follows it on its server: one POST, the result resolves', async () => {
    const connection = redis.url;
    const name = 'stalled';
    const options = { connection, name, servers: [serverOf(emu, 'a')], stalledInterval: 1000, lockDuration: 2000 };
    const first = await startWorker(children.dir, options);
    queue = new JobQueue({ connection, name });
    const job = await queue.add(jobWorkflow('stalled'), { jobId: 'job-b1' });
    await until(async () => (await runsOf({ a: emu }, 'stalled')).some((r) => r.job.status === 'in_progress'), 20_000, 'the job running on the server');

    // The second worker starts only now: it cannot have taken the job before the first one died.
    await startWorker(children.dir, options);
    first.kill('SIGKILL');
    await first.exited;
    // The server is a process of its own: it runs on, and the job with it.
    const running = (await runsOf({ a: emu }, 'stalled'))[0]!.job;
    expect(running.status).toBe('in_progress');

    const result = await job.result();
    const runs = await runsOf({ a: emu }, 'stalled');
    expect(runs).toHaveLength(1);
    expect(runs[0]!.job.status).toBe('completed');
    expect(result).toMatchObject({ promptId: running.prompt_id, server: 'a', baseUrl: `${emu.url}/` });
    expect(result.resubmittedFrom).toBeUndefined();
    expect(result.files.map((f) => f.filename)).toEqual([expect.stringMatching(/^stalled/)]);
    // Every POST /api/prompt the server received: one, for this job.
    expect([...(await postsOf(emu))]).toEqual([[running.prompt_id, 1]]);
    expect(await job.state()).toBe('completed');
  }, 120_000);
});
