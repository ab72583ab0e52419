// Issue 26, "cancel() from any process": a waiting job never starts; a running one is stopped on its
// server (that job only) and its handle rejects as cancelled. One worker process over two servers (one
// job each at a time, worker concurrency 2): one job runs on each, a third waits in the queue; a third
// process cancels the waiting one and one of the running ones.
import { describe, expect, it } from 'vitest';
import { JobCancelledError } from '../../src/index.ts';
import { Child, postsOf, processFixture, runsOf, serverOf, startWorker, until } from './proc/harness.ts';
import { jobWorkflow } from './proc/workflows.ts';

describe('cancel() from a third process', () => {
  const real = processFixture({ a: [100, 20], b: [100, 20] });

  it('the waiting job never starts; the running one stops on its server, the other runs on', async () => {
    const connection = real.redis.url;
    const name = 'cancel';
    await startWorker(real.children.dir, { connection, name, concurrency: 2, servers: Object.entries(real.servers).map(([id, e]) => ({ ...serverOf(e, id), maxConcurrent: 1 })) });
    const queue = real.queue(name);
    const run = await queue.add(jobWorkflow('cancel-run'), { jobId: 'job-d-run' });
    const other = await queue.add(jobWorkflow('cancel-other'), { jobId: 'job-d-other' });
    const waiting = await queue.add(jobWorkflow('cancel-wait'), { jobId: 'job-d-wait' });
    const outcomes = [run, other, waiting].map((j) => j.result().then((r) => ({ ok: r }), (err: unknown) => ({ err })));
    const inProgress = async (prefix: string) => (await runsOf(real.servers, prefix)).some((r) => r.job.status === 'in_progress');
    await until(async () => (await inProgress('cancel-run')) && (await inProgress('cancel-other')), 20_000, 'both jobs running on the servers');
    expect(['waiting', 'prioritized']).toContain(await waiting.state());

    const canceller = new Child(real.children.dir, 'client', { connection, name, op: 'cancel', ids: ['job-d-wait', 'job-d-run'] });
    expect(await canceller.done(), canceller.stderr).toBe(0);

    const [ran, otherOutcome, waited] = await Promise.all(outcomes);
    expect((ran as { err?: unknown }).err).toBeInstanceOf(JobCancelledError);
    expect((waited as { err?: unknown }).err).toBeInstanceOf(JobCancelledError);
    const result = (otherOutcome as { ok?: { files: Array<{ filename: string }> } }).ok;
    expect(result?.files.map((f) => f.filename)).toEqual([expect.stringMatching(/^cancel-other/)]);

    // Stopped on its server, that job only.
    const stopped = async () => (await runsOf(real.servers, 'cancel-run')).map((r) => r.job.status);
    await until(async () => (await stopped()).includes('cancelled'), 10_000, 'the cancelled job stopped on its server');
    expect(await stopped()).toEqual(['cancelled']);
    expect((await runsOf(real.servers, 'cancel-other')).map((r) => r.job.status)).toEqual(['completed']);
    // The slot the cancelled job freed stayed free: the waiting job was never sent anywhere.
    expect(await runsOf(real.servers, 'cancel-wait')).toEqual([]);
    const posts = [...(await postsOf(...Object.values(real.servers))).values()].reduce((a, b) => a + b, 0);
    expect(posts).toBe(2);
    expect(await run.state()).not.toBe('completed');
    expect(['failed', 'unknown']).toContain(await waiting.state());
  }, 120_000);
});
