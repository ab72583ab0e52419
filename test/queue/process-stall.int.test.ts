// Issue 26, "a worker killed with SIGKILL while its job runs on the server": another worker process
// takes the job over after the stall interval, finds its prompt id on that server and follows it to the
// end. The server saw one POST. Short stalledInterval/lockDuration; a slow server (25 steps of 200 ms
// per node) so the job is still running when it is taken over.
import { describe, expect, it } from 'vitest';
import { postsOf, processFixture, runsOf, serverOf, startWorker, until } from './proc/harness.ts';
import { jobWorkflow } from './proc/workflows.ts';

describe('a worker process SIGKILLed while its job runs', () => {
  const real = processFixture({ a: [200, 25] });

  it('another worker process follows it on its server: one POST, the result resolves', async () => {
    const connection = real.redis.url;
    const name = 'stalled';
    const options = { connection, name, servers: [serverOf(real.servers.a!, 'a')], stalledInterval: 1000, lockDuration: 2000 };
    const first = await startWorker(real.children.dir, options);
    const queue = real.queue(name);
    const job = await queue.add(jobWorkflow('stalled'), { jobId: 'job-b1' });
    await until(async () => (await runsOf({ a: real.servers.a! }, 'stalled')).some((r) => r.job.status === 'in_progress'), 20_000, 'the job running on the server');

    // The second worker starts only now: it cannot have taken the job before the first one died.
    await startWorker(real.children.dir, options);
    first.kill('SIGKILL');
    await first.exited;
    // The server is a process of its own: it runs on, and the job with it.
    const running = (await runsOf({ a: real.servers.a! }, 'stalled'))[0]!.job;
    expect(running.status).toBe('in_progress');

    const result = await job.result();
    const runs = await runsOf({ a: real.servers.a! }, 'stalled');
    expect(runs).toHaveLength(1);
    expect(runs[0]!.job.status).toBe('completed');
    expect(result).toMatchObject({ promptId: running.prompt_id, server: 'a', baseUrl: `${real.servers.a!.url}/` });
    expect(result.resubmittedFrom).toBeUndefined();
    expect(result.files.map((f) => f.filename)).toEqual([expect.stringMatching(/^stalled/)]);
    // Every POST /api/prompt the server received: one, for this job.
    expect([...(await postsOf(real.servers.a!))]).toEqual([[running.prompt_id, 1]]);
    expect(await job.state()).toBe('completed');
  }, 120_000);
});
