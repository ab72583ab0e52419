// Issue 31, item 3: a worker frozen (SIGSTOP) past its lock must not send its job a second time, nor run
// onOutputs for a job it no longer holds. Real worker processes, a real redis-server, real signals; no sleeps:
// each freeze lasts until what it is for has happened (another worker sent the job; the lock lapsed).
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { makePng } from '../../src/emulator/index.ts';
import { postsOf, processFixture, runsOf, serverOf, startWorker, until, type Child } from './proc/harness.ts';
import { jobWorkflow } from './proc/workflows.ts';

/** Every onOutputs the workers ran, as `<job id> <prompt id>`, once they have exited (all their output arrived). */
async function outputsRan(...workers: Child[]): Promise<string[]> {
  for (const w of workers) w.kill('SIGTERM');
  for (const w of workers) expect(await w.done()).toBe(0);
  return workers.flatMap((w) => w.lines().filter((l) => l.startsWith('onOutputs ')).map((l) => l.slice('onOutputs '.length)));
}

describe('a worker process frozen past its lock', () => {
  // a: answers an upload only once told to, so the test freezes the worker whose upload is in flight.
  const real = processFixture({ a: [50, 4, { holdUploads: true }], b: [200, 25] });
  const timing = { stalledInterval: 500, lockDuration: 1500 };
  let redis: Redis | undefined;
  afterAll(() => redis?.disconnect());

  it('while its input uploads: the worker that took the job over sends it, the frozen one never does', async () => {
    const connection = real.redis.url;
    const name = 'frozen-upload';
    const options = { connection, name, servers: [serverOf(real.servers.a!, 'a')], ...timing };
    const first = await startWorker(real.children.dir, options);
    const job = await real.queue(name).add(jobWorkflow('frozen-upload'), { jobId: 'job-f1', inputs: { '1.inputs.image': makePng(4, 4, 31) } });

    // Its prompt id is recorded (before any upload) and its upload is on the server, the answer held.
    await until(async () => (await real.servers.a!.uploads()) === 1, 20_000, 'the upload on the server');
    first.kill('SIGSTOP');
    await real.servers.a!.release(); // the answer waits in the frozen worker's socket
    const second = await startWorker(real.children.dir, options);
    // Its lock lapsed, the second worker took the job over, found nothing on the server and sent it.
    await until(async () => (await runsOf({ a: real.servers.a! }, 'frozen-upload')).length === 1, 30_000, 'the job sent by the second worker');
    first.kill('SIGCONT');

    const result = await job.result();
    const ran = await outputsRan(first, second);
    expect([...(await postsOf(real.servers.a!))]).toEqual([[result.promptId, 1]]);
    expect(await runsOf({ a: real.servers.a! }, 'frozen-upload')).toHaveLength(1);
    expect(ran).toEqual([`job-f1 ${result.promptId}`]);
    expect(await job.state()).toBe('completed');
  }, 120_000);

  it('for less than the stall interval, then taking its own job back: onOutputs runs once', async () => {
    const connection = real.redis.url;
    const name = 'frozen-own';
    const worker = await startWorker(real.children.dir, { connection, name, servers: [serverOf(real.servers.b!, 'b')], stalledInterval: 5000, lockDuration: 1000 });
    const job = await real.queue(name).add(jobWorkflow('frozen-own'), { jobId: 'job-f2' });
    await until(async () => (await runsOf({ b: real.servers.b! }, 'frozen-own')).some((r) => r.job.status === 'in_progress'), 20_000, 'the job running on the server');

    worker.kill('SIGSTOP');
    redis ??= new Redis(connection);
    const lock = async () => (await redis!.keys(`*:job-f2:lock`)).length;
    // Frozen until its lock lapsed (a second, a fifth of its stall interval): thawed, its lock cannot be extended
    // any more, and its own stall check hands the job back to it, a second time.
    await until(async () => (await lock()) === 0, 20_000, 'the lock lapsed');
    worker.kill('SIGCONT');

    const result = await job.result();
    const ran = await outputsRan(worker);
    expect([...(await postsOf(real.servers.b!))]).toEqual([[result.promptId, 1]]);
    expect(ran).toEqual([`job-f2 ${result.promptId}`]);
  }, 120_000);
});
