// CloudClient({ server: 'v2' }) against the emulator's v2 personalities over real loopback sockets: run() end to
// end on the job's event stream, inputs as assets sent once, paid work at most once under faults (a lost answer,
// queue_full), nine runs on eight streams, a stream refused (501), a false `expired`, outputs after the terminal
// status, cancel, and downloads through a signed URL that never sees the key.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EMULATOR_API_KEY, makePng, startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { APIUserAbortError, CloudClient, JobCancelledError, type SocketEvent } from '../../../src/index.ts';
import { recorder } from '../../helpers/log-recorder.ts';

const PNG = makePng(8, 8, 7);
const chain = (prefix = 'v2run', extra: Record<string, unknown> = {}) => ({
  '1': { class_type: 'LoadImage', inputs: { image: 'in.png' } },
  '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0], ...extra } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
});
const INPUTS = { '1.inputs.image': new Blob([new Uint8Array(PNG)], { type: 'image/png' }) };

describe.each([
  ['v2', 'the published spec'],
  ['v2-real', 'what comfy-api-proxy does'],
] as const)('personality %s (%s)', (personality, _what) => {
  let emu: Emulator;
  /** comfy-api-proxy takes its label as a string: a new client's first send (a map) is refused, making no job. */
  const LABEL_LEARNING = personality === 'v2-real' ? 1 : 0;
  const client = (o: Partial<ConstructorParameters<typeof CloudClient>[0]> = {}) =>
    new CloudClient({ baseUrl: emu.url, server: 'v2', ...(personality === 'v2' ? { apiKey: EMULATOR_API_KEY } : {}), logLevel: 'off', ...o });

  beforeAll(async () => {
    emu = await startEmulator({ personality, cloud: { stepMs: 5 } });
  });
  afterAll(() => emu.close());
  beforeEach(() => {
    emu.v2!.reset();
    emu.cloud.reset();
  });

  it('run(): inputs uploaded as an asset, the job followed on its stream, the outputs downloadable', async () => {
    // Long enough for its stream to open (a run opens it 50 ms after the submission: a job over by then needs none).
    emu.cloud.stepMs = 60;
    const events: string[] = [];
    const progress: number[] = [];
    const r = await client().run(chain(), { inputs: INPUTS, onEvent: (e: SocketEvent) => events.push(e.type), onProgress: (p) => progress.push(p.value / p.max) });
    expect(r.status).toBe('completed');
    expect(r.files).toHaveLength(1);
    expect(r.files[0]).toMatchObject({ nodeId: '3', mediaType: 'images', type: 'output', filename: expect.stringMatching(/^v2run_\d{5}_\.png$/) });
    expect(emu.v2!.counters.streamsOpened).toBeGreaterThanOrEqual(1);
    expect(events).toContain('execution_start');
    // Never backwards for the user, whatever the server's snapshots do.
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    const bytes = new Uint8Array(await (await client().download(r.files[0]!)).arrayBuffer());
    expect([...bytes.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect(emu.v2!.counters.jobsCreated).toBe(1);
  });

  it('the same input for a second run sends 0 bytes of it', async () => {
    const c = client();
    await c.run(chain(), { inputs: INPUTS });
    const sent = emu.v2!.counters.uploadBytes;
    expect(sent).toBeGreaterThan(0);
    await c.run(chain('again'), { inputs: INPUTS });
    expect(emu.v2!.counters.uploadBytes).toBe(sent);
    expect(emu.v2!.counters.jobsCreated).toBe(2);
  });

  it('a submission whose answer is lost is sent again under its key: one job, and run() resolves', async () => {
    emu.v2!.faults.loseSubmitAnswers = 1;
    const log = recorder();
    const r = await client({ logger: log.logger, logLevel: 'info' }).run(chain(), { inputs: INPUTS });
    expect(r.status).toBe('completed');
    // Two sends under one key (and, on comfy-api-proxy, the first client's label refused once: no job either).
    expect([emu.v2!.counters.jobPosts - LABEL_LEARNING, emu.v2!.counters.jobsCreated]).toEqual([2, 1]);
    expect(log.index(/found under its Idempotency-Key after a lost answer/)).toBeGreaterThanOrEqual(0);
  });

  it('queue_full is waited out under the same key', async () => {
    emu.v2!.faults.queueFull = 1;
    emu.v2!.faults.retryAfter = 1;
    const r = await client().run(chain(), { inputs: INPUTS });
    expect(r.status).toBe('completed');
    expect([emu.v2!.counters.jobPosts - LABEL_LEARNING, emu.v2!.counters.jobsCreated]).toEqual([2, 1]);
  });

  it('nine runs at once on a server of eight streams all resolve (the ninth polls)', async () => {
    emu.cloud.stepMs = 40;
    const c = client();
    const asset = await c.uploadImage(new Blob([new Uint8Array(PNG)], { type: 'image/png' }));
    const wf = (i: number) => ({ ...chain(`nine${i}`), '1': { class_type: 'LoadImage', inputs: { image: (asset as unknown as { reference: unknown }).reference } } });
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => c.run(wf(i) as never)));
    expect(results.map((r) => r.status)).toEqual(Array(9).fill('completed'));
    expect(emu.v2!.counters.jobsCreated).toBe(9);
    expect(emu.v2!.counters.streamsOpen).toBe(0);
  });

  it('a server without streams (501) is followed by polls alone', async () => {
    emu.v2!.faults.eventsNotImplemented = true;
    const log = recorder();
    const r = await client({ logger: log.logger, logLevel: 'warn' }).run(chain(), { inputs: INPUTS });
    expect(r.status).toBe('completed');
    expect(r.files).toHaveLength(1);
  });

  it('a finished job read `expired` once is read again, and completes', async () => {
    emu.v2!.faults.falseExpired = 1;
    emu.v2!.faults.eventsNotImplemented = true; // the poll decides alone
    const r = await client().run(chain(), { inputs: INPUTS });
    expect(r.status).toBe('completed');
    expect(r.files).toHaveLength(1);
  });

  it('aborting run() cancels that job on the server, and no other', async () => {
    emu.cloud.stepMs = 200;
    const c = client();
    const other = c.run(chain('other'), { inputs: INPUTS });
    const ac = new AbortController();
    let id: string | undefined;
    const run = c.run(chain('mine'), { inputs: INPUTS, signal: ac.signal, onSubmitted: (p) => void (id = p) }).catch((e: unknown) => e);
    while (!id) await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    expect(await run).toBeInstanceOf(APIUserAbortError);
    // Stopped: canceled, or (comfy-api-proxy, a job still queued) expired, never run to its end.
    expect((await c.getJob(id)).status).toMatch(personality === 'v2-real' ? /^(canceled|expired)$/ : /^canceled$/);
    expect(emu.v2!.counters.cancels).toBe(1);
    expect((await other).status).toBe('completed');
  });

  it('stopJob(id) from elsewhere: the run following it rejects with JobCancelledError', async () => {
    emu.cloud.stepMs = 200;
    const c = client();
    let id: string | undefined;
    const run = c.run(chain(), { inputs: INPUTS, onSubmitted: (p) => void (id = p) }).catch((e: unknown) => e);
    while (!id) await new Promise((r) => setTimeout(r, 10));
    await client().stopJob(id);
    expect(await run).toBeInstanceOf(JobCancelledError);
  });
});

describe('the spec personality: downloads', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ personality: 'v2', cloud: { stepMs: 5 } });
  });
  afterAll(() => emu.close());

  it('an output is read through a signed URL on another origin, which never sees the key (it refuses any credential)', async () => {
    const c = new CloudClient({ baseUrl: emu.url, server: 'v2', apiKey: EMULATOR_API_KEY, logLevel: 'off' });
    const r = await c.run(chain(), { inputs: INPUTS });
    const res = await c.download(r.files[0]!);
    expect(res.status).toBe(200);
    expect(new URL(res.url).origin).toBe(emu.resultsUrl);
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(8);
  });
});
