// Issue 31, "two workers started with the same name are told apart or refused": each worker has an id in Redis
// (`id`, else a random one); a second one started with the id of a live worker is refused, while one started
// again after its predecessor died takes the id once the old heartbeat lapsed.
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/index.ts';
import { QueueWorker } from '../../src/queue/index.ts';
import { closeAll, emulator, invert, queue, worker } from './helpers.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

let redis: TestRedis;
beforeAll(async () => void (redis = await startRedis()));
afterAll(() => redis.stop());
afterEach(closeAll);

describe('worker ids', () => {
  it('workers without an id are told apart; each job names the worker that ran it', async () => {
    const emu = await emulator();
    const [a, b] = [await worker(redis.url, [emu], { name: 'ids' }), await worker(redis.url, [emu], { name: 'ids' })];
    expect(a.id).not.toBe(b.id);
    const q = queue(redis.url, 'ids');
    expect(Object.keys((await q.counts()).workers).sort()).toEqual([a.id, b.id].sort());
    const named = await worker(redis.url, [emu], { name: 'ids-named', id: 'gpu-a.1' });
    const job = await queue(redis.url, 'ids-named').add(invert('named'));
    await job.result();
    const lane = new Queue(named.lanes[0]!, { connection: { host: '127.0.0.1', port: redis.port }, prefix: 'bull:ids-named' });
    expect((await lane.getJob(job.id))?.processedBy).toBe('gpu-a.1');
    await lane.close();
    expect(Object.keys((await queue(redis.url, 'ids-named').counts()).workers)).toEqual(['gpu-a.1']);
    expect(named.id).toBe('gpu-a.1');
  });

  it('a second live worker with the same id is refused; its close() leaves the first one registered', async () => {
    const emu = await emulator();
    await worker(redis.url, [emu], { name: 'twin', id: 'gpu-a' });
    const twin = new QueueWorker({ connection: redis.url, name: 'twin', id: 'gpu-a', servers: [{ baseUrl: emu.url, id: 's0' }], logLevel: 'off' });
    const refused = await twin.ready().then(() => undefined, (err: unknown) => err);
    await twin.close();
    expect(refused).toBeInstanceOf(InvalidArgumentError);
    expect((refused as Error).message).toBe('id: a worker with id "gpu-a" is running on queue "twin" (its heartbeat goes on): give each worker its own id');
    expect(Object.keys((await queue(redis.url, 'twin').counts()).workers)).toEqual(['gpu-a']);
  });

  it('started again after it died, a worker takes its id once the dead one’s heartbeat lapsed', async () => {
    const emu = await emulator();
    const dead = new QueueWorker({ connection: redis.url, name: 'restart', id: 'gpu-b', servers: [{ baseUrl: emu.url, id: 's0' }], logLevel: 'off' });
    await dead.ready();
    await dead.close({ force: true }); // as if killed: its heartbeat key stays until it lapses
    const again = await worker(redis.url, [emu], { name: 'restart', id: 'gpu-b' });
    await (await queue(redis.url, 'restart').add(invert('restarted'))).result();
    expect(again.id).toBe('gpu-b');
  }, 30_000);

  it('an id that cannot be part of a Redis key is refused at construction', () => {
    expect(() => new QueueWorker({ connection: redis.url, id: 'a:b', servers: [{ baseUrl: 'http://127.0.0.1:1' }] })).toThrow(/^id: must be 1 to 100 letters/);
  });
});
