// Issue 31, "BullMQ warns when Redis's maxmemory-policy is not noeviction": BullMQ prints its warning on the
// console once per connection it opens (every lane's queue, events reader and worker). The queue and the worker
// say it once each, at start, in the SDK's log, and nothing reaches the console (test/setup/quiet.ts fails a
// test that writes there).
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeAll, emulator, invert, queue, worker } from './helpers.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { recorder } from '../helpers/log-recorder.ts';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
  const admin = new Redis(redis.url);
  await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
  admin.disconnect();
});
afterAll(() => redis.stop());
afterEach(closeAll);

describe('a Redis that may evict keys', () => {
  it('the worker and the queue each warn once in the SDK log, naming the policy; BullMQ prints nothing', async () => {
    const [emuA, emuB] = [await emulator(), await emulator()];
    emuB.cloud.addFile('other.png', new Uint8Array([1])); // another object_info: a second lane, more BullMQ connections
    const w = recorder();
    await worker(redis.url, [emuA, emuB], { name: 'evicting', logger: w.logger, logLevel: 'warn' });
    const p = recorder();
    const q = queue(redis.url, 'evicting', { logger: p.logger, logLevel: 'warn' });
    const jobs = await Promise.all([1, 2, 3, 4].map((i) => q.add(invert(`evict-${i}`))));
    await Promise.all(jobs.map((j) => j.result()));
    await q.counts();
    const warning = /^\[platformui queue\] Redis's maxmemory-policy is allkeys-lru: under memory pressure it may evict the queue's keys \(a job or its result lost\); set it to noeviction$/;
    expect(w.lines.map((l) => [l.level, l.message])).toEqual([['warn', expect.stringMatching(warning)]]);
    expect(p.lines.map((l) => [l.level, l.message])).toEqual([['warn', expect.stringMatching(warning)]]);
  });
});
