// Review of the queue's guarantees: cases a fleet meets that the other suites did not (each test failed before its fix).
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { makePng } from '../../src/emulator/index.ts';
import { closeAll, emulator, invert, promptPosts, queue, until, worker } from './helpers.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

let redis: TestRedis;
let n = 0;
beforeAll(async () => void (redis = await startRedis()));
afterAll(() => redis.stop());
afterEach(closeAll);
const fresh = () => `rv${++n}-${Date.now()}`;
const producer = (name: string) => queue(redis.url, name);
/** The prompt id of the one job the emulator has. */
const promptIdOn = (emu: Awaited<ReturnType<typeof emulator>>) => [...emu.cloud.engine.jobs.values()][0]!.prompt_id;
const timing = { lockDuration: 1000, stalledInterval: 500 };

it('a job whose workers die twice (a deploy restarting twice) is still followed to its end, not failed as "stalled"', async () => {
  const name = fresh();
  const emu = await emulator({ stepMs: 300, progressSteps: 8 });
  const first = await worker(redis.url, [emu], { name, ...timing });
  const job = await producer(name).add(invert('twice'));
  await until(() => promptPosts(emu) === 1, 10_000, 'the submission');
  await first.close({ force: true });
  const second = await worker(redis.url, [emu], { name, ...timing });
  // The second worker has taken it over (it follows it) before it dies too.
  const requests = emu.requests.length;
  await until(() => emu.requests.slice(requests).some((r) => r.method === 'GET' && r.path.includes(promptIdOn(emu))), 10_000, 'taken over');
  await second.close({ force: true });
  await worker(redis.url, [emu], { name, ...timing });
  const r = await job.result();
  expect(r.server).toBe('s0');
  expect(promptPosts(emu)).toBe(1);
});

it('a worker restarted after its server got a new input file (a new lane id) still takes over the job it held', async () => {
  const name = fresh();
  const emu = await emulator({ stepMs: 300, progressSteps: 6 });
  const first = await worker(redis.url, [emu], { name, ...timing });
  const job = await producer(name).add(invert('new-lane'));
  await until(() => promptPosts(emu) === 1, 10_000, 'the submission');
  // Any job with inputs uploads a file: LoadImage's list in object_info changes, and with it the lane's hash.
  emu.cloud.addFile('uploaded-since.png', makePng(4, 4, 2));
  await first.close({ force: true });
  await worker(redis.url, [emu], { name, ...timing });
  await until(async () => (await job.state()) === 'completed', 15_000, 'the job followed to its end');
  expect((await job.result()).server).toBe('s0');
  expect(promptPosts(emu)).toBe(1);
});
