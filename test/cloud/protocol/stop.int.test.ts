// Issue 31, item 4: stopping a job on a local server without the atomic cancel
// (the 0.8.0 kit), whose queue delete leaves a running job alone and whose
// interrupt skips a pending one. The stop goes in an order that cannot miss
// (delete; look; interrupt while it runs; look again), and an aborted run()
// rejects once the server shows the job stopped, or says it may still run.
// Against the emulator over real loopback sockets; `lateDeletes` holds a
// delete until its job has started (the race the old concurrent stop lost).
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { APIUserAbortError, CloudClient, JobNotStoppedError } from '../../../src/index.ts';
import { PERSONALITIES, makePng, startEmulator, type CloudOptions, type Emulator } from '../../../src/emulator/index.ts';
import { until } from '../../helpers/emulator-runs.ts';
import { recorder } from '../../helpers/log-recorder.ts';

const KIT = { ...PERSONALITIES.local, atomicCancel: false };
const PNG = makePng(4, 4, 31);
const emulators: Emulator[] = [];
const clients: CloudClient[] = [];

async function kit(cloud: CloudOptions): Promise<{ emu: Emulator; image: string }> {
  const emu = await startEmulator({ personality: KIT, cloud, logLevel: 'off' });
  emulators.push(emu);
  const image = (await client(emu).uploadImage(PNG, { filename: 'in.png' })).name;
  return { emu, image };
}

function client(emu: Emulator, options: ConstructorParameters<typeof CloudClient>[0] = {}): CloudClient {
  const c = new CloudClient({ baseUrl: emu.url, logLevel: 'off', ...options });
  clients.push(c);
  return c;
}

/** Four nodes, two of them with progress steps: long enough that a job queued behind it is still pending when it is stopped. */
const slowWorkflow = (image: string, prefix: string) => ({
  '1': { class_type: 'LoadImage', inputs: { image } },
  '2': { class_type: 'ImageBlur', inputs: { image: ['1', 0], blur_radius: 1, sigma: 1 } },
  '3': { class_type: 'ImageInvert', inputs: { image: ['2', 0] } },
  '4': { class_type: 'SaveImage', inputs: { images: ['3', 0], filename_prefix: prefix } },
});

/** A job the server still has, pending or running: what a stop that says "stopped" must never leave. */
const alive = (emu: Emulator, id: string) => ['pending', 'in_progress'].includes(emu.cloud.engine.jobs.get(id)?.status ?? 'gone');

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(async () => {
  await Promise.all(emulators.splice(0).map((e) => e.close()));
});

describe('stopping a pending job on a local server without the atomic cancel, whose delete lands after the job started', () => {
  it('run(): aborted while pending, it rejects only once the server shows the job stopped, and the job never completes', async () => {
    const { emu, image } = await kit({ stepMs: 40, lateDeletes: true });
    const c = client(emu);
    const blocker = await c.submit(slowWorkflow(image, 'blocker'));
    const ac = new AbortController();
    let id = '';
    const run = c.run(slowWorkflow(image, 'late'), {
      signal: ac.signal,
      onSubmitted: (promptId) => {
        id = promptId;
        // The local server runs one job at a time: this one waits behind the blocker.
        expect(emu.cloud.engine.jobs.get(promptId)?.status).toBe('pending');
        ac.abort();
      },
    });
    const err: unknown = await run.catch((e: unknown) => e);
    // Read at the moment run() rejected: the job is already stopped, and can no longer complete.
    const at = emu.cloud.engine.jobs.get(id)?.status ?? 'gone';
    expect(at).toBe('cancelled');
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect(err).toMatchObject({ message: `Aborted; job ${id} was stopped`, promptId: id, mayStillRun: false });
    // The delete went first; the interrupt only once the job was seen running.
    const controls = emu.requests.filter((r) => r.method === 'POST' && /\/(queue|interrupt)$/.test(r.path)).map((r) => r.path.replace(/^\/api/, ''));
    expect(controls).toEqual(['/queue', '/interrupt']);
    expect(emu.cloud.engine.jobs.get(blocker.prompt_id)?.status).not.toBe('cancelled');
  });

  it('stopJob() called directly: the same order, and it resolves once the job is stopped', async () => {
    const { emu, image } = await kit({ stepMs: 40, lateDeletes: true });
    const c = client(emu);
    await c.submit(slowWorkflow(image, 'blocker-direct'));
    const { prompt_id: id } = await c.submit(slowWorkflow(image, 'late-direct'));
    expect(emu.cloud.engine.jobs.get(id)?.status).toBe('pending');
    await c.stopJob(id);
    expect(emu.cloud.engine.jobs.get(id)?.status).toBe('cancelled');
  });

  it('a pending job whose delete lands in time is gone at the first look: no interrupt is sent', async () => {
    const { emu, image } = await kit({ stepMs: 40 });
    const c = client(emu);
    await c.submit(slowWorkflow(image, 'blocker-removed'));
    const { prompt_id: id } = await c.submit(slowWorkflow(image, 'removed'));
    await c.stopJob(id);
    expect(emu.cloud.engine.jobs.has(id)).toBe(false); // the kit forgets a deleted job
    expect(emu.requests.filter((r) => r.path.endsWith('/interrupt'))).toEqual([]);
  });
});

describe('a job that no stop reaches (its node never checks for interrupts)', () => {
  // A step of a minute: the job runs through the whole test; the emulator's close ends it.
  const stuck = { stepMs: 60_000, ignoreInterrupts: true };

  it('run(): rejects within `stopWithin` with an abort that says the job may still run, and the log says so', async () => {
    const { emu, image } = await kit(stuck);
    const log = recorder();
    const c = client(emu, { logLevel: 'warn', logger: log.logger });
    const ac = new AbortController();
    let id = '';
    const run = c.run(slowWorkflow(image, 'stuck'), {
      signal: ac.signal,
      stopWithin: 300,
      onSubmitted: (promptId) => void (id = promptId),
      onEvent: (e) => {
        if (e.type === 'execution_start') ac.abort();
      },
    });
    const err: any = await run.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect(err.mayStillRun).toBe(true);
    expect(err.message).toMatch(new RegExp(`^Aborted; job ${id} may still run: .*running`));
    expect(err.stopError).toBeInstanceOf(JobNotStoppedError);
    expect(alive(emu, id)).toBe(true);
    expect(log.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([expect.stringMatching(new RegExp(`^\\[platformui\\] job ${id} could not be stopped \\(aborted\\); it may still run: `))]);
  });

  it('stopJob(): rejects with JobNotStoppedError naming the job and what the server last showed', async () => {
    const { emu, image } = await kit(stuck);
    const c = client(emu);
    const { prompt_id: id } = await c.submit(slowWorkflow(image, 'stuck-direct'));
    await until(() => emu.cloud.engine.jobs.get(id)?.status === 'in_progress', 5000, 'the job running');
    const err: any = await c.stopJob(id, { confirmWithin: 200 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobNotStoppedError);
    expect(err).toMatchObject({ promptId: id, phase: 'running', confirmWithin: 200 });
    expect(emu.requests.filter((r) => r.path.endsWith('/interrupt')).length).toBeGreaterThan(0);
  });
});
