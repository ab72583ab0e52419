// The queue (JobQueue + QueueWorker) whose servers are Comfy API v2 servers (issue 33, "Pool and queue"):
// a real redis-server, v2 emulators over loopback. Jobs complete; a cancel ends a running job `cancelled`
// with one cancel on the server; a taken-over job is found by its Idempotency-Key (the recorded promptId on
// v2) and never sent twice. Worker processes killed with SIGKILL: process-v2.int.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CloudClient, JobCancelledError, PlacementError } from '../../src/index.ts';
import { EMULATOR_API_KEY, makePng, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import type { PoolServer } from '../../src/index.ts';
import { QueueWorker, type QueueWorkerOptions } from '../../src/queue/index.ts';
import { closeAll, invert, open, queue, until } from './helpers.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

let redis: TestRedis;
let n = 0;
beforeAll(async () => void (redis = await startRedis()));
afterAll(() => redis.stop());
afterEach(closeAll);
const fresh = () => `v2q${++n}-${Date.now()}`;

async function v2emulator(o: { stepMs?: number; personality?: 'v2' | 'v2-real' } = {}): Promise<Emulator> {
  const emu = await startEmulator({ personality: o.personality ?? 'v2', logLevel: 'off', cloud: { stepMs: o.stepMs ?? 5, progressSteps: 2 } });
  open.push(emu);
  emu.cloud.addFile('in.png', makePng(8, 8, 1));
  return emu;
}
const v2Server = (emu: Emulator, id: string, more: Partial<PoolServer> = {}): PoolServer => ({ baseUrl: emu.url, apiKey: EMULATOR_API_KEY, server: 'v2', id, retry: { limit: 0 }, logLevel: 'off', ...more }) as PoolServer;
async function v2worker(name: string, servers: PoolServer[], o: Partial<QueueWorkerOptions> = {}): Promise<QueueWorker> {
  const w = new QueueWorker({ connection: redis.url, name, servers, logLevel: 'off', ...o });
  open.push(w);
  await w.ready();
  return w;
}
const prefixOf = (emu: Emulator, prefix: string) => [...emu.v2!.jobs.values()].filter((j) => (j.submitted['3'] as { inputs?: { filename_prefix?: unknown } } | undefined)?.inputs?.filename_prefix === prefix);

describe('a worker whose server is a v2 server', () => {
  it('runs jobs (a v2 server without objectInfo: its lane takes API-format workflows); the result names the v2 job', async () => {
    const name = fresh();
    const emu = await v2emulator();
    await v2worker(name, [v2Server(emu, 'v2a')]);
    const q = queue(redis.url, name);
    const jobs = await Promise.all([0, 1, 2].map((i) => q.add(invert(`q-${i}`))));
    const results = await Promise.all(jobs.map((j) => j.result()));
    for (const [i, r] of results.entries()) {
      expect(r.server).toBe('v2a');
      expect(r.files).toHaveLength(1);
      expect(prefixOf(emu, `q-${i}`).map((j) => j.id)).toEqual([r.promptId]);
    }
    expect(emu.v2!.counters.jobsCreated).toBe(3);
  });

  it('with objectInfo: its lane is that object_info (placement by class)', async () => {
    const name = fresh();
    const emu = await v2emulator();
    const w = await v2worker(name, [v2Server(emu, 'v2a', { objectInfo: emu.url })]);
    expect(w.lanes).toHaveLength(1);
    const q = queue(redis.url, name);
    const r = await (await q.add(invert('with-info'))).result();
    expect(r.files).toHaveLength(1);
  });

  it('inputs: uploaded as assets; the same content a second time sends no bytes', async () => {
    const name = fresh();
    const emu = await v2emulator();
    await v2worker(name, [v2Server(emu, 'v2a')]);
    const q = queue(redis.url, name);
    const png = makePng(32, 32, 5);
    await (await q.add(invert('in-1'), { inputs: { '1.inputs.image': png } })).result();
    const bytes = emu.v2!.counters.uploadBytes;
    expect(bytes).toBeGreaterThanOrEqual(png.length);
    await (await q.add(invert('in-2'), { inputs: { '1.inputs.image': png } })).result();
    expect(emu.v2!.counters.uploadBytes).toBe(bytes);
  });

  it('cancel of a running job: cancelled, one cancel on the server, the v2 job canceled', async () => {
    const name = fresh();
    const emu = await v2emulator({ stepMs: 300 });
    await v2worker(name, [v2Server(emu, 'v2a')]);
    const q = queue(redis.url, name);
    const job = await q.add(invert('to-cancel'));
    await until(() => prefixOf(emu, 'to-cancel').some((j) => j.job.status === 'in_progress'), 10_000, 'the job runs');
    await job.cancel();
    const err = await job.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobCancelledError);
    expect(await job.state()).toBe('failed');
    expect((await q.counts()).states).toMatchObject({ cancelled: 1, failed: 0 });
    const [record] = prefixOf(emu, 'to-cancel');
    const reader = new CloudClient({ baseUrl: emu.url, apiKey: EMULATOR_API_KEY, server: 'v2', logLevel: 'off' });
    await until(async () => (await reader.getJob(record!.id)).status === 'canceled', 10_000, 'the v2 job canceled');
    expect(emu.v2!.counters.cancels).toBe(1);
    expect(emu.v2!.counters.jobsCreated).toBe(1);
  });

  it('a lost submit answer: sent again under the same key, one job, the queue job completes', async () => {
    const name = fresh();
    const emu = await v2emulator();
    await v2worker(name, [v2Server(emu, 'v2a')]);
    emu.v2!.faults.loseSubmitAnswers = 1;
    const q = queue(redis.url, name);
    const r = await (await q.add(invert('lost'))).result();
    expect(emu.v2!.counters.jobPosts).toBe(2);
    expect(emu.v2!.counters.jobsCreated).toBe(1);
    expect(prefixOf(emu, 'lost').map((j) => j.id)).toEqual([r.promptId]);
  });

  it('a job taken over after its worker died (force-closed) mid-run: followed by its key, not sent again', async () => {
    const name = fresh();
    const emu = await v2emulator({ stepMs: 150 });
    const first = await v2worker(name, [v2Server(emu, 'v2a')], { lockDuration: 1000, stalledInterval: 500 });
    const q = queue(redis.url, name);
    const job = await q.add(invert('taken-over'));
    await until(() => prefixOf(emu, 'taken-over').length === 1, 10_000, 'the job is on the server');
    await first.close({ force: true });
    await v2worker(name, [v2Server(emu, 'v2a')], { lockDuration: 1000, stalledInterval: 500 });
    const r = await job.result();
    expect(r.files).toHaveLength(1);
    expect(emu.v2!.counters.jobsCreated).toBe(1);
    expect(prefixOf(emu, 'taken-over').map((j) => j.id)).toEqual([r.promptId]);
  });

  it('an editor file added to a queue whose lane is a v2 server without objectInfo: PlacementError saying why, nothing sent', async () => {
    const name = fresh();
    const emu = await v2emulator();
    await v2worker(name, [v2Server(emu, 'v2a')]);
    const q = queue(redis.url, name);
    const saved = {
      version: 0.4, last_node_id: 2, last_link_id: 1, groups: [], config: {}, extra: {},
      nodes: [
        { id: 1, type: 'LoadImage', pos: [0, 0], size: [300, 300], flags: {}, order: 0, mode: 0, inputs: [], outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [1] }], properties: {}, widgets_values: ['in.png', 'image'] },
        { id: 2, type: 'SaveImage', pos: [320, 0], size: [300, 300], flags: {}, order: 1, mode: 0, inputs: [{ name: 'images', type: 'IMAGE', link: 1 }], outputs: [], properties: {}, widgets_values: ['ed'] },
      ],
      links: [[1, 1, 0, 2, 0, 'IMAGE']],
    };
    const err = await q.add(saved as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlacementError);
    expect(Object.values((err as PlacementError).reasons).flat().join('\n')).toMatch(/objectInfo/);
    expect(emu.v2!.counters.jobPosts).toBe(0);
  });
});
