// Takeover after a dead worker (its job followed, not sent again), cancel from another JobQueue (waiting and
// running), an editor-format workflow converted per lane, and no credential in Redis.
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobCancelledError, ServerLostError, type PoolServer } from '../../src/index.ts';
import { EMULATOR_API_KEY, makePng } from '../../src/emulator/index.ts';
import { QueueWorker } from '../../src/queue/index.ts';
import { closeAll, emulator, invert, open, promptPosts, queue, until, worker } from './helpers.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

let redis: TestRedis;
let n = 0;
beforeAll(async () => void (redis = await startRedis()));
afterAll(() => redis.stop());
afterEach(closeAll);
const fresh = () => `r${++n}-${Date.now()}`;
const producer = (name: string) => queue(redis.url, name);

it('a job whose worker died after recording its promptId is followed by the next worker, not sent again', async () => {
  const name = fresh();
  const emu = await emulator({ stepMs: 150, progressSteps: 4 });
  const first = await worker(redis.url, [emu], { name, lockDuration: 1000, stalledInterval: 500 });
  const q = producer(name);
  const job = await q.add(invert('stalled'));
  // Recorded on the server and sent there: then the worker "dies".
  await until(() => promptPosts(emu) === 1, 10_000, 'the submission');
  await first.close({ force: true });
  await worker(redis.url, [emu], { name, lockDuration: 1000, stalledInterval: 500 });
  const r = await job.result();
  expect(r.server).toBe('s0');
  expect(promptPosts(emu)).toBe(1);
  expect([...emu.cloud.engine.jobs.values()].filter((j) => j.prompt['3']?.inputs.filename_prefix === 'stalled')).toHaveLength(1);
});

describe('a job taken over whose server is gone', () => {
  /** A worker on server A records and sends the job, then "dies"; A goes down too; a worker listing only B takes over. */
  async function lostOnA(resubmitOnServerLoss: boolean) {
    const name = fresh();
    const [a, b] = [await emulator({ stepMs: 150, progressSteps: 4 }), await emulator()];
    const timing = { name, lockDuration: 1000, stalledInterval: 500, serverLostAfter: 1500 };
    const first = await worker(redis.url, [a], timing, ['a']);
    const job = await producer(name).add(invert(`lost-${resubmitOnServerLoss}`));
    await until(() => promptPosts(a) === 1, 10_000, 'the submission on a');
    await first.close({ force: true });
    await a.close();
    // The same object_info, so the same lane: B's worker takes the job over, and does not list a.
    await worker(redis.url, [b], { ...timing, resubmitOnServerLoss }, ['b']);
    return { job, b };
  }

  it('hands it back for a worker listing that server, then fails it with ServerLostError', async () => {
    const { job, b } = await lostOnA(false);
    const err = await job.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerLostError);
    expect((err as ServerLostError).server).toBe('a');
    expect(promptPosts(b)).toBe(0);
  });

  it('with resubmitOnServerLoss, runs it once on a server of its own and says where it was lost', async () => {
    const { job, b } = await lostOnA(true);
    const r = await job.result();
    expect(r.server).toBe('b');
    expect(r.resubmittedFrom).toEqual({ server: 'a', promptId: expect.any(String) });
    expect(r.resubmittedFrom!.promptId).not.toBe(r.promptId);
    expect(promptPosts(b)).toBe(1);
  });
});

it('cancel() of a waiting job from another JobQueue removes it: result() rejects with JobCancelledError, nothing sent', async () => {
  const name = fresh();
  const emu = await emulator({ stepMs: 100 });
  await worker(redis.url, [emu], { name, concurrency: 1 });
  const q = producer(name);
  const busy = await q.add(invert('busy'));
  await until(async () => (await busy.state()) === 'active', 10_000, 'busy active');
  const waiting = await q.add(invert('to-cancel'));
  expect(await waiting.state()).toBe('waiting');
  await producer(name).job(waiting.id).cancel();
  await expect(waiting.result()).rejects.toBeInstanceOf(JobCancelledError);
  await busy.result();
  await new Promise((r) => setTimeout(r, 100));
  expect([...emu.cloud.engine.jobs.values()].filter((j) => j.prompt['3']?.inputs.filename_prefix === 'to-cancel')).toHaveLength(0);
});

it('cancel() of a running job stops it on its server (that job only); result() rejects with JobCancelledError', async () => {
  const name = fresh();
  const emu = await emulator({ stepMs: 200, progressSteps: 10 });
  await worker(redis.url, [emu], { name });
  const q = producer(name);
  const other = await q.add(invert('other'));
  const job = await q.add(invert('running'));
  await until(() => promptPosts(emu) === 2, 10_000, 'both submitted');
  await producer(name).job(job.id).cancel();
  const err = await job.result().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(JobCancelledError);
  expect((await other.result()).files).toHaveLength(1);
  const ran = [...emu.cloud.engine.jobs.values()];
  expect(ran.find((j) => j.prompt['3']?.inputs.filename_prefix === 'running')?.status).not.toBe('completed');
});

it('an editor-format workflow is judged and converted per lane', async () => {
  const name = fresh();
  const emu = await emulator();
  emu.cloud.addFile('photo.png', makePng(8, 8, 3));
  await worker(redis.url, [emu], { name });
  const q = producer(name);
  const editor = JSON.parse(readFileSync('test/fixtures/named-inputs/blur-twice.json', 'utf8'));
  const r = await (await q.add(editor)).result();
  expect(r.server).toBe('s0');
  const sent = [...emu.cloud.engine.jobs.values()].at(-1)!.prompt;
  expect(Object.values(sent).filter((node) => node.class_type === 'ImageBlur')).toHaveLength(2);
});

it('credentials never reach Redis', async () => {
  const name = fresh();
  const emu = await emulator({ personality: 'cloud' });
  const servers = [{ baseUrl: emu.url, apiKey: EMULATOR_API_KEY, id: 'keyed', retry: { limit: 0 }, logLevel: 'off' } as PoolServer];
  const w = new QueueWorker({ connection: redis.url, name, servers, logLevel: 'off' });
  open.push(w);
  await w.ready();
  const q = producer(name);
  const job = await q.add(invert('keyed'), { inputs: { '1.inputs.image': makePng(4, 4, 9) } });
  expect((await job.result()).server).toBe('keyed');
  const failing = await q.add(invert('keyed-fail', { fail_with: 'OOMError' }));
  await failing.result().catch(() => undefined);
  const r = new Redis(redis.url);
  try {
    const dump: string[] = [];
    for (const key of await r.keys('*')) {
      const type = await r.type(key);
      if (type === 'string') dump.push((await r.get(key)) ?? '');
      else if (type === 'hash') dump.push(JSON.stringify(await r.hgetall(key)));
      else if (type === 'set') dump.push(JSON.stringify(await r.smembers(key)));
      else if (type === 'zset') dump.push(JSON.stringify(await r.zrange(key, 0, -1)));
      else if (type === 'list') dump.push(JSON.stringify(await r.lrange(key, 0, -1)));
      else if (type === 'stream') dump.push(JSON.stringify(await r.xrange(key, '-', '+')));
    }
    expect(dump.join('\n')).toContain('keyed'); // the dump is of this run
    expect(dump.join('\n')).not.toContain(EMULATOR_API_KEY);
  } finally {
    await r.quit();
  }
});
