// Issue 31, "a cancel() sent while the worker's Redis connection blips is lost": a cancel reaches a running job
// as a pub/sub message, which a worker whose connection is down never hears. The worker process here reaches
// Redis through a relay that cuts its connections for 1.5 s (lock 30 s: the job stays its own); the cancel is
// sent from this process, directly, during the gap. The worker must learn of it from the job's cancel flag
// (read on reconnecting and every second while the job runs) and stop the job on its server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobCancelledError } from '../../src/index.ts';
import { postsOf, processFixture, runsOf, serverOf, startWorker, until } from './proc/harness.ts';
import { jobWorkflow } from './proc/workflows.ts';
import { startRelay, type Relay } from './relay.ts';

describe('a cancel sent while the worker is cut off from Redis', () => {
  // 25 steps of 200 ms per node: the job runs for several seconds after the gap, so "completed" means not stopped.
  const real = processFixture({ a: [200, 25] });
  let relay: Relay;
  beforeAll(async () => void (relay = await startRelay(real.redis.port)));
  afterAll(() => relay?.close());

  it('is not lost: the job is stopped on its server and result() rejects with JobCancelledError', async () => {
    const name = 'blip';
    await startWorker(real.children.dir, { connection: relay.url, name, servers: [serverOf(real.servers.a!, 'a')] });
    const queue = real.queue(name);
    const job = await queue.add(jobWorkflow('blip'), { jobId: 'job-blip' });
    const outcome = job.result().then(() => 'completed', (err: unknown) => err);
    await until(async () => (await runsOf({ a: real.servers.a! }, 'blip')).some((r) => r.job.status === 'in_progress'), 20_000, 'the job running on the server');

    const gap = relay.cut(1500);
    await job.cancel(); // straight to Redis: its message reaches no worker
    await gap;

    expect(await outcome).toBeInstanceOf(JobCancelledError);
    const statuses = async () => (await runsOf({ a: real.servers.a! }, 'blip')).map((r) => r.job.status);
    await until(async () => (await statuses()).includes('cancelled'), 10_000, 'the job stopped on its server');
    expect(await statuses()).toEqual(['cancelled']);
    expect([...(await postsOf(real.servers.a!)).values()]).toEqual([1]);
  }, 120_000);
});
