// The queue of issue 26 against a real redis-server and emulators: add → run → result from another JobQueue;
// placement by lane; typed errors rebuilt; progress.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionError, JobCancelledError, PlacementError } from '../../src/index.ts';
import type { QueueNodeEvent } from '../../src/queue/index.ts';
import { closeAll, dropClass, emulator, blur, invert, open, queue, until, worker } from './helpers.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { startRelay } from './relay.ts';

let redis: TestRedis;
let n = 0;
beforeAll(async () => void (redis = await startRedis()));
afterAll(() => redis.stop());
afterEach(closeAll);
/** A queue name per test: lanes and jobs of one test are not the next one's. */
const fresh = () => `t${++n}-${Date.now()}`;

describe('add → a worker runs it → result()', () => {
  it('runs a job and another JobQueue reads its result by id', async () => {
    const name = fresh();
    const emu = await emulator();
    await worker(redis.url, [emu], { name });
    const { JobQueue } = await import('../../src/queue/index.ts');
    const a = new JobQueue({ connection: redis.url, name });
    const job = await a.add(invert('basic'));
    await a.close();
    const b = new JobQueue({ connection: redis.url, name });
    const r = await b.job(job.id).result();
    await b.close();
    expect(r.server).toBe('s0');
    expect(r.baseUrl).toBe(`${emu.url}/`);
    expect(r.files).toHaveLength(1);
    expect(r.promptId).toMatch(/^[0-9a-f-]{36}$/);
    expect(emu.requests.filter((x) => x.method === 'POST' && /\/prompt$/.test(x.path))).toHaveLength(1);
  });
});

describe('job ids', () => {
  it('adding the same jobId again, from two producers at once, makes one job: one run, both handles see its result', async () => {
    const name = fresh();
    const emu = await emulator();
    await worker(redis.url, [emu], { name });
    // Two different workflows: the second producer is told (issue 31: queue-add-faults.int.test.ts); its warning is incidental here.
    const [a, b] = [queue(redis.url, name, { logLevel: 'off' }), queue(redis.url, name, { logLevel: 'off' })];
    const [x, y] = await Promise.all([a.add(invert('same-id'), { jobId: 'order-7' }), b.add(invert('same-id-other'), { jobId: 'order-7' })]);
    expect([x.id, y.id]).toEqual(['order-7', 'order-7']);
    const [rx, ry] = await Promise.all([x.result(), y.result()]);
    expect(ry.promptId).toBe(rx.promptId);
    expect(emu.requests.filter((r) => r.method === 'POST' && /\/prompt$/.test(r.path))).toHaveLength(1);
    // Later, the same id again: still that job.
    expect((await (await a.add(invert('same-id-later'), { jobId: 'order-7' })).result()).promptId).toBe(rx.promptId);
  });
});

describe('placement', () => {
  it('a job only one worker’s servers can run goes to that worker', async () => {
    const name = fresh();
    const [plain, withBlur] = [await emulator(), await emulator()];
    dropClass(plain, 'ImageBlur');
    await worker(redis.url, [plain], { name }, ['plain']);
    await worker(redis.url, [withBlur], { name }, ['blur']);
    const q = queue(redis.url, name);
    const results = await Promise.all([1, 2, 3].map(async (i) => (await q.add(blur(`b${i}`))).result()));
    expect(results.map((r) => r.server)).toEqual(['blur', 'blur', 'blur']);
  });

  it('no capable worker → PlacementError at once, with the reasons per lane', async () => {
    const name = fresh();
    const emu = await emulator();
    dropClass(emu, 'ImageBlur');
    await worker(redis.url, [emu], { name });
    const q = queue(redis.url, name);
    const err = (await q.add(blur('nowhere')).catch((e: unknown) => e)) as PlacementError;
    expect(err).toBeInstanceOf(PlacementError);
    const reasons = Object.values(err.reasons).flat().join('\n');
    expect(reasons).toMatch(/ImageBlur/);
    expect(await q.counts()).toMatchObject({ states: { waiting: 0, active: 0 } });
  });

  it('no worker at all → PlacementError; waitForWorker waits for one to register', async () => {
    const name = fresh();
    const q = queue(redis.url, name);
    await expect(q.add(invert('alone'))).rejects.toBeInstanceOf(PlacementError);
    const emu = await emulator();
    const adding = q.add(invert('later'), { waitForWorker: 10_000 });
    await worker(redis.url, [emu], { name });
    expect((await (await adding).result()).server).toBe('s0');
  });
});

describe('failures and events', () => {
  it('an execution error rejects result() with ExecutionError (exceptionType kept), not retried', async () => {
    const name = fresh();
    const emu = await emulator();
    await worker(redis.url, [emu], { name });
    const q = queue(redis.url, name);
    const job = await q.add(invert('oom', { fail_with: 'OOMError' }));
    const err = (await job.result().catch((e: unknown) => e)) as ExecutionError;
    expect(err).toBeInstanceOf(ExecutionError);
    expect(err.exceptionType).toBe('OOMError');
    expect(err.promptId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await job.state()).toBe('failed');
    await new Promise((r) => setTimeout(r, 200));
    expect(emu.requests.filter((x) => x.method === 'POST' && /\/prompt$/.test(x.path))).toHaveLength(1);
  });

  it('retries: an execution error runs again under a new prompt id only as often as asked, then rejects with it', async () => {
    const name = fresh();
    const emu = await emulator();
    await worker(redis.url, [emu], { name });
    const q = queue(redis.url, name);
    const job = await q.add(invert('oom-retried', { fail_with: 'OOMError' }), { retries: 2 });
    const err = (await job.result().catch((e: unknown) => e)) as ExecutionError;
    expect(err).toBeInstanceOf(ExecutionError);
    const runs = [...emu.cloud.engine.jobs.values()].filter((j) => j.prompt['3']?.inputs.filename_prefix === 'oom-retried');
    expect(runs).toHaveLength(3);
    expect(new Set(runs.map((j) => j.prompt_id)).size).toBe(3);
    await expect(q.add(invert('x'), { retries: 11 })).rejects.toThrow(/^retries: must be an integer from 0 to 10/);
  });

  it('progress events reach on("progress")', async () => {
    const name = fresh();
    const emu = await emulator({ stepMs: 30, progressSteps: 4 });
    await worker(redis.url, [emu], { name });
    const q = queue(redis.url, name);
    const job = await q.add(invert('progress'));
    const seen: Array<{ value: number; max: number }> = [];
    job.on('progress', (p) => seen.push(p));
    await job.result();
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.at(-1)!.max).toBeGreaterThan(0);
  });
});

describe('node events and cancelled counts (issue 32)', () => {
  it('on("node") hears the run node by node: started, each node running and done, the ending; on("progress") stays steps only', async () => {
    const name = fresh();
    const emu = await emulator({ stepMs: 30, progressSteps: 2 });
    await worker(redis.url, [emu], { name, concurrency: 1 });
    // The producer's new connections take 500 ms to reach Redis (longer than the job runs), and an idle worker
    // takes the job at once: the lane's events must be read from before add() put it there, so that a listener
    // attached as add() resolves hears it from its first event.
    const relay = await startRelay(redis.port);
    open.push(relay);
    const q = queue(relay.url, name);
    await q.counts(); // its first connection, at full speed
    relay.slowNew(500);
    const job = await q.add(invert('nodes'));
    const events: QueueNodeEvent[] = [];
    const steps: Array<{ value: number; max: number }> = [];
    job.on('node', (e) => events.push(e)).on('progress', (p) => steps.push(p));
    await job.result();
    await new Promise((r) => setTimeout(r, 200));
    expect(events[0]).toEqual({ type: 'execution_start' });
    expect(events.filter((e) => e.type === 'executing' && e.node !== undefined).map((e) => e.node)).toEqual(['1', '2', '3']);
    expect(events.some((e) => e.type === 'executed' && e.node === '3')).toBe(true);
    expect(events.at(-1)?.type === 'execution_success' || events.some((e) => e.type === 'execution_success')).toBe(true);
    // Compact: no outputs ride along (Redis carries each report to every listener).
    expect(JSON.stringify(events)).not.toContain('images');
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.every((p) => p.value >= 0 && p.max > 0)).toBe(true);
  });

  it('counts(): a cancelled job is counted cancelled, not failed, and listed with its reason beside the failed ones', async () => {
    const name = fresh();
    const emu = await emulator({ stepMs: 300, progressSteps: 10 });
    await worker(redis.url, [emu], { name, concurrency: 1 });
    const q = queue(redis.url, name);
    const oom = await q.add(invert('counted-oom', { fail_with: 'OOMError', fail_message: 'no memory left' }));
    await oom.result().catch(() => undefined);
    const running = await q.add(invert('counted-running'));
    const waiting = await q.add(invert('counted-waiting'));
    await until(async () => (await running.state()) === 'active', 10_000, 'the job to run');
    await waiting.cancel();
    await running.cancel();
    await expect(running.result()).rejects.toBeInstanceOf(JobCancelledError);
    await expect(waiting.result()).rejects.toBeInstanceOf(JobCancelledError);
    const { states, ended } = await q.counts();
    expect(states.failed).toBe(1);
    expect(states.cancelled).toBe(2);
    expect(ended.map((e) => [e.id, e.state]).sort()).toEqual([[oom.id, 'failed'], [running.id, 'cancelled'], [waiting.id, 'cancelled']].sort());
    expect(ended.find((e) => e.id === oom.id)!.reason).toContain('no memory left');
    expect(ended.find((e) => e.id === running.id)!.reason).toMatch(/^Job \S+ was cancelled$/);
    expect(ended.find((e) => e.id === waiting.id)!.reason).toMatch(/cancelled while waiting/);
    expect(ended.every((e) => e.at > 0)).toBe(true);
  });
});

describe('previews', () => {
  /** The previews and progress reports a job's listeners hear, from a worker with `previews`. */
  async function heard(previews: boolean | { maxBytes: number } | undefined) {
    const name = fresh();
    const emu = await emulator({ stepMs: 30, progressSteps: 3 });
    await worker(redis.url, [emu], { name, ...(previews === undefined ? {} : { previews }) });
    const q = queue(redis.url, name);
    const job = await q.add(invert(`preview-${String(previews)}-${n}`));
    const images: Array<{ mime: string; image: Uint8Array }> = [];
    const steps: Array<{ value: number }> = [];
    job.on('preview', (p) => images.push(p)).on('progress', (p) => steps.push(p));
    await job.result();
    // Events come over Redis: give the last ones a moment to arrive.
    await new Promise((r) => setTimeout(r, 200));
    return { images, steps };
  }

  it('only when asked: a worker with previews reports each image (a PNG), bounded in size; progress stays steps only', async () => {
    const on = await heard(true);
    expect(on.images.length).toBeGreaterThan(0);
    expect([...on.images[0]!.image.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect(on.images[0]!.mime).toBe('image/png');
    expect(on.steps.every((p) => p.value >= 0)).toBe(true);
    expect((await heard(undefined)).images).toEqual([]);
    expect((await heard({ maxBytes: 8 })).images).toEqual([]);
  });
});

describe('priority', () => {
  it('higher runs first among waiting jobs, equal ones in order, as in CloudPool', async () => {
    const name = fresh();
    const emu = await emulator({ stepMs: 60, progressSteps: 3 });
    await worker(redis.url, [emu], { name, concurrency: 1 }, ['s0']);
    const q = queue(redis.url, name);
    // The first occupies the only slot; the others wait and are taken by priority.
    const first = await q.add(invert('p-first'));
    await until(() => emu.requests.some((x) => x.method === 'POST' && /\/prompt$/.test(x.path)), 10_000, 'the first submission');
    const rest = [];
    for (const [prefix, priority] of [['p-low', -5], ['p-default-1', undefined], ['p-high', 5], ['p-default-2', 0]] as const) {
      rest.push(await q.add(invert(prefix), priority === undefined ? {} : { priority }));
    }
    expect(await rest[0]!.state()).toBe('waiting');
    await Promise.all([first, ...rest].map((j) => j.result()));
    const order = [...emu.cloud.engine.jobs.values()].map((j) => j.prompt['3']?.inputs.filename_prefix);
    expect(order).toEqual(['p-first', 'p-high', 'p-default-1', 'p-default-2', 'p-low']);
  });
});

describe('retention', () => {
  it('a finished job stays readable by id for keepFinished, then BullMQ removes it and its handle says so', async () => {
    const name = fresh();
    const emu = await emulator();
    await worker(redis.url, [emu], { name });
    const q = queue(redis.url, name, { keepFinished: 1000 });
    const first = await q.add(invert('kept-1'));
    await first.result();
    expect(await q.job(first.id).state()).toBe('completed');
    // BullMQ removes aged jobs as later ones finish.
    await new Promise((r) => setTimeout(r, 1500));
    await (await q.add(invert('kept-2'))).result();
    await until(async () => (await q.job(first.id).state()) === 'unknown', 10_000, 'the first job removed');
    await expect(q.job(first.id).result()).rejects.toThrow(/is no longer in queue/);
  });
});
