// Issue 31, "a failed queue.add() leaves its jobId pointing at nothing": an add that fails (a workflow that is
// not JSON, Redis refusing the write under maxmemory) leaves nothing under its id, so the same add() again adds
// it and it runs once; and one id added with two different workflows is one job, the second producer told so.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, JobCancelledError } from '../../src/index.ts';
import { JobQueue, QueueAddError } from '../../src/queue/index.ts';
import { closeAll, emulator, invert, promptPosts, queue, worker } from './helpers.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { recorder } from '../helpers/log-recorder.ts';

let redis: TestRedis;
let admin: Redis;
let n = 0;
beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  admin.disconnect();
  await redis.stop();
});
afterEach(closeAll);
const fresh = () => `add${++n}-${Date.now()}`;

describe('an add() that fails leaves its id free', () => {
  it('a workflow holding a function is refused before Redis is touched', async () => {
    // Nothing listens there: an add that reached Redis would wait for it instead of failing at once.
    const nowhere = new JobQueue({ connection: 'redis://127.0.0.1:1', logLevel: 'off' });
    const bad = { ...invert('fn'), '9': { class_type: 'Note', inputs: { text: () => 'not JSON' } } };
    await expect(nowhere.add(bad, { jobId: 'fn-1' })).rejects.toThrow(InvalidArgumentError);
    await expect(nowhere.add(bad, { jobId: 'fn-1' })).rejects.toThrow(/workflow: must be JSON data/);
    await nowhere.close();
  });

  it('after a workflow that cannot be copied, the same id with a good one is added and runs once', async () => {
    const name = fresh();
    const emu = await emulator();
    await worker(redis.url, [emu], { name });
    const q = queue(redis.url, name);
    const bad = { ...invert('fn-later'), '9': { class_type: 'Note', inputs: { text: () => 'not JSON' } } };
    await expect(q.add(bad, { jobId: 'order-fn' })).rejects.toThrow(InvalidArgumentError);
    const job = await q.add(invert('fn-later'), { jobId: 'order-fn' });
    expect(job.addResult).toBe('created');
    expect((await job.result()).files).toHaveLength(1);
    expect(promptPosts(emu)).toBe(1);
  });

  it('Redis refusing the write (maxmemory, noeviction: OOM) → QueueAddError; the same add() later runs once', async () => {
    const name = fresh();
    const emu = await emulator();
    await worker(redis.url, [emu], { name });
    const q = queue(redis.url, name);
    // A 10 MB value in the workflow (the server ignores an input it does not know), over what Redis may take now.
    const big = invert('oom', { note: 'x'.repeat(10 * 1024 * 1024) });
    expect(await admin.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
    await admin.config('SET', 'maxmemory', String(used + 4 * 1024 * 1024));
    try {
      const failed = await q.add(big, { jobId: 'order-oom' }).then(() => undefined, (err: unknown) => err);
      expect(failed).toBeInstanceOf(QueueAddError);
      expect((failed as QueueAddError).message).toMatch(/OOM command not allowed/);
      expect((failed as QueueAddError).jobId).toBe('order-oom');
    } finally {
      await admin.config('SET', 'maxmemory', '0');
    }
    expect(await q.job('order-oom').state()).toBe('unknown');
    const job = await q.add(big, { jobId: 'order-oom' });
    expect(job.addResult).toBe('created');
    expect((await job.result()).files).toHaveLength(1);
    expect(promptPosts(emu)).toBe(1);
    expect(await q.job('order-oom').state()).toBe('completed');
  });

  it('a claim left by a producer that died between claiming the id and adding the job is repaired by the next add()', async () => {
    const name = fresh();
    const emu = await emulator();
    const w = await worker(redis.url, [emu], { name });
    const q = queue(redis.url, name);
    // What the producer had written when it died: the id's claim of a lane, pending (its job never added).
    await admin.set(`bull:${name}:job:order-died`, `${w.lanes[0]}?a-token-of-the-dead-producer`);
    expect(await q.job('order-died').state()).toBe('unknown');
    const job = await q.add(invert('died'), { jobId: 'order-died' });
    expect(job.addResult).toBe('created');
    await job.result();
    expect(promptPosts(emu)).toBe(1);
    // Settled: added once more, it is that job (not run again), even after it ended.
    expect((await q.add(invert('died'), { jobId: 'order-died' })).addResult).toBe('existing');
    expect(await admin.get(`bull:${name}:job:order-died`)).toBe(w.lanes[0]);
    expect(promptPosts(emu)).toBe(1);
  });
  it('a job cancelled while its claim waited for its add is not added by a later add(); its result says cancelled', async () => {
    const name = fresh();
    const emu = await emulator();
    const w = await worker(redis.url, [emu], { name });
    const q = queue(redis.url, name);
    await admin.set(`bull:${name}:job:order-gone`, `${w.lanes[0]}?a-token-of-the-dead-producer`);
    await q.job('order-gone').cancel();
    await expect(q.job('order-gone').result()).rejects.toThrow(JobCancelledError);
    await q.add(invert('gone'), { jobId: 'order-gone' });
    await expect(q.job('order-gone').result()).rejects.toThrow(JobCancelledError);
    expect(promptPosts(emu)).toBe(0);
  });
});

describe('one id, two producers, two different workflows', () => {
  it('one job; the producer whose workflow it is not gets it with addResult "conflict" and a warning', async () => {
    const name = fresh();
    const emu = await emulator();
    await worker(redis.url, [emu], { name });
    const [a, b] = [recorder(), recorder()];
    const [qa, qb] = [queue(redis.url, name, { logger: a.logger }), queue(redis.url, name, { logger: b.logger })];
    const [x, y] = await Promise.all([qa.add(invert('first'), { jobId: 'order-9' }), qb.add(invert('second'), { jobId: 'order-9' })]);
    expect([x.addResult, y.addResult].sort()).toEqual(['conflict', 'created']);
    const loser = x.addResult === 'conflict' ? a : b;
    const winner = x.addResult === 'conflict' ? b : a;
    expect(loser.of('warn').map((l) => l.message)).toEqual([expect.stringMatching(/job "order-9": queue "[^"]+" holds this id with another workflow or inputs/)]);
    expect(winner.lines).toEqual([]);
    const [rx, ry] = await Promise.all([x.result(), y.result()]);
    expect(ry.promptId).toBe(rx.promptId);
    expect(rx.files[0]!.filename).toMatch(x.addResult === 'created' ? /^first/ : /^second/);
    expect(promptPosts(emu)).toBe(1);
    // The same workflow again: that job, no warning.
    const again = await qa.add(x.addResult === 'created' ? invert('first') : invert('second'), { jobId: 'order-9' });
    expect(again.addResult).toBe('existing');
    expect(winner.lines).toEqual([]);
  });
});
