// Issue 23: paid work runs at most once, is never orphaned, and never touches
// another job. Job ids chosen before the request, the look-up of a submission
// whose answer was lost, and the one seam per kind of server (atomic cancel,
// interrupt), against the emulator over real loopback sockets.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { APIConnectionError, APIUserAbortError, CloudClient } from '../../src/index.ts';
import { EMULATOR_API_KEY, PERSONALITIES, makePng, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { invertWorkflow, until } from '../helpers/emulator-runs.ts';
import { recorder } from '../helpers/log-recorder.ts';

const PNG = makePng(4, 4, 23);
const emulators: Emulator[] = [];
const clients: CloudClient[] = [];

async function emulator(personality: 'spec' | 'cloud' | 'local' | typeof PERSONALITIES.local, stepMs = 5): Promise<Emulator> {
  const emu = await startEmulator({ personality, cloud: { stepMs }, logLevel: 'off' });
  emulators.push(emu);
  return emu;
}

function client(emu: Emulator, options: ConstructorParameters<typeof CloudClient>[0] = {}): CloudClient {
  const personality = emu.cloud.personality;
  const c = new CloudClient({ baseUrl: emu.url, ...(personality.requireKey ? { apiKey: EMULATOR_API_KEY } : {}), logLevel: 'off', ...options });
  clients.push(c);
  return c;
}

const prompts = (emu: Emulator) => emu.requests.filter((r) => r.method === 'POST' && /\/prompt$/.test(r.path));
const slowWorkflow = (image: string, prefix: string) => ({
  '1': { class_type: 'LoadImage', inputs: { image } },
  '2': { class_type: 'ImageBlur', inputs: { image: ['1', 0], blur_radius: 1, sigma: 1 } },
  '3': { class_type: 'ImageInvert', inputs: { image: ['2', 0] } },
  '4': { class_type: 'SaveImage', inputs: { images: ['3', 0], filename_prefix: prefix } },
});

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(async () => {
  await Promise.all(emulators.splice(0).map((e) => e.close()));
});

describe.each(['local', 'cloud'] as const)('a submission whose answer is lost (%s)', (personality) => {
  let emu: Emulator;
  let image: string;
  beforeAll(async () => {
    emu = await emulator(personality);
    image = (await client(emu).uploadImage(PNG, { filename: 'in.png' })).name;
  });

  it('cut after the job was made: submit() finds it by its id, sent once', async () => {
    const c = client(emu);
    emu.faults.loseAnswerNext({ method: 'POST', path: '/api/prompt' });
    const before = prompts(emu).length;
    const { prompt_id } = await c.submit(invertWorkflow(image, 'lost-cut'), { confirmWithin: 5000 });
    expect(prompts(emu)).toHaveLength(before + 1);
    expect(emu.cloud.engine.submissions.get(prompt_id)).toBe(1);
  });

  it('a 502 after the job was made: run() follows it to its outputs, as if the answer had come', async () => {
    const c = client(emu);
    emu.faults.loseAnswerNext({ method: 'POST', path: '/api/prompt', status: 502 });
    const seen: string[] = [];
    const result = await c.run(invertWorkflow(image, 'lost-502'), { confirmWithin: 5000, onSubmitted: (id) => void seen.push(id) });
    expect(result.files).toHaveLength(1);
    expect(seen).toEqual([result.promptId]);
    expect(emu.cloud.engine.submissions.get(result.promptId)).toBe(1);
  });

  it('never made (the connection dropped on the way): rejects naming the job, which may exist; nothing is sent again', async () => {
    const log = recorder();
    const c = client(emu, { retry: { limit: 3, allowPost: true }, logLevel: 'warn', logger: log.logger });
    emu.faults.dropNext({ method: 'POST', path: '/api/prompt' });
    const before = prompts(emu).length;
    const err: any = await c.run(invertWorkflow(image, 'lost-never'), { confirmWithin: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err.sent).toBe('maybe');
    expect(err.promptId).toMatch(/^[0-9a-f-]{36}$/);
    expect(err.message).toContain(`job ${err.promptId} may exist`);
    expect(prompts(emu)).toHaveLength(before + 1);
    expect(emu.cloud.engine.submissions.has(err.promptId)).toBe(false);
    expect(log.of('warn').map((l) => l.message)).toContainEqual(expect.stringContaining(`job ${err.promptId}: its submission's answer was lost and the server does not show it after 300 ms; it may exist (not sent again)`));
  });

  it('resubmitUnconfirmed sends it once more, with the same id', async () => {
    const c = client(emu);
    emu.faults.dropNext({ method: 'POST', path: '/api/prompt' });
    const before = prompts(emu).length;
    const { prompt_id } = await c.submit(invertWorkflow(image, 'lost-again'), { confirmWithin: 300, resubmitUnconfirmed: true, promptId: `mine-${personality}` });
    expect(prompt_id).toBe(`mine-${personality}`);
    expect(prompts(emu)).toHaveLength(before + 2);
    expect(emu.cloud.engine.submissions.get(prompt_id)).toBe(1);
  });

  it('resubmitUnconfirmed asks beforeSubmit again before the second send: refused there, nothing more is sent', async () => {
    const c = client(emu);
    emu.faults.dropNext({ method: 'POST', path: '/api/prompt' });
    const before = prompts(emu).length;
    const refused = new Error('taken over meanwhile');
    const asked: Array<{ id: string; sent: number }> = [];
    const beforeSubmit = (id: string) => {
      asked.push({ id, sent: prompts(emu).length - before });
      if (asked.length === 2) throw refused;
    };
    const err = await c.submit(invertWorkflow(image, 'lost-refused'), { confirmWithin: 300, resubmitUnconfirmed: true, promptId: `refused-${personality}`, beforeSubmit }).catch((e: unknown) => e);
    expect(err).toBe(refused);
    expect(asked).toEqual([{ id: `refused-${personality}`, sent: 0 }, { id: `refused-${personality}`, sent: 1 }]);
    expect(prompts(emu)).toHaveLength(before + 1);
  });
});

describe('ids the server does not use, and requests that never left', () => {
  it("a server that answers with its own id is remembered: a later lost answer is not looked up, and the error names no job", async () => {
    const emu = await emulator('spec');
    const c = client(emu);
    const image = (await c.uploadImage(PNG, { filename: 'in.png' })).name;
    const { prompt_id } = await c.submit(invertWorkflow(image, 'theirs'), { promptId: 'ours-1' });
    expect(prompt_id).not.toBe('ours-1');
    emu.faults.dropNext({ method: 'POST', path: '/api/prompt' });
    const before = emu.requests.length;
    const err: any = await c.submit(invertWorkflow(image, 'theirs'), { confirmWithin: 5000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err).toMatchObject({ sent: 'maybe', promptId: undefined });
    // Only the submission itself: no look-up by an id this server never uses.
    expect(emu.requests.slice(before).map((r) => r.path)).toEqual(['/api/prompt']);
  });

  it('a refused connection: sent "no", the id named, nothing looked up', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const log = recorder();
    const sent: string[] = [];
    const fetch: typeof globalThis.fetch = (input, init) => (sent.push(`${init?.method ?? 'GET'} ${new URL(input instanceof Request ? input.url : String(input)).pathname}`), globalThis.fetch(input, init));
    const c = new CloudClient({ baseUrl: `http://127.0.0.1:${port}`, logLevel: 'debug', logger: log.logger, fetch });
    const err: any = await c.submit({ '1': { class_type: 'SaveImage', inputs: {} } }, { promptId: 'never-left' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err).toMatchObject({ sent: 'no', promptId: 'never-left', code: 'ECONNREFUSED' });
    expect(err.message).toContain('(job never-left was not sent)');
    // No look-up window was waited out, rather than a time bound: none was begun (the line that starts one), and
    // nothing but the submission (tried again as a refused connection is) was sent.
    expect(log.index(/looking it up/)).toBe(-1);
    expect(new Set(sent)).toEqual(new Set(['POST /api/prompt']));
  });
});

describe('giving up while submitting', () => {
  it('run() aborted while a lost answer is looked up rejects at once, naming the job', async () => {
    const emu = await emulator('local');
    const c = client(emu);
    const image = (await c.uploadImage(PNG, { filename: 'in.png' })).name;
    emu.faults.dropNext({ method: 'POST', path: '/api/prompt' });
    const ac = new AbortController();
    const run = c.run(invertWorkflow(image, 'abort-lookup'), { signal: ac.signal, confirmWithin: 20_000 });
    await until(() => emu.requests.some((r) => /\/jobs\/[^/]+$/.test(r.path)), 5000, 'the look-up');
    ac.abort();
    const err: any = await run.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect(err.promptId).toMatch(/^[0-9a-f-]{36}$/);
    expect(err.message).toBe(`Aborted while submitting job ${err.promptId}; it is stopped if it was made`);
  });

  it('run() aborted before its submission left (here, while validating) sends nothing at all', async () => {
    const emu = await emulator('local');
    const c = client(emu);
    const image = (await c.uploadImage(PNG, { filename: 'in.png' })).name;
    emu.faults.latencyMs = 300;
    const ac = new AbortController();
    const run = c.run(invertWorkflow(image, 'abort-validate'), { signal: ac.signal, validate: true });
    await until(() => emu.requests.some((r) => r.path.endsWith('/object_info')), 5000, 'the validation');
    ac.abort();
    await expect(run).rejects.toBeInstanceOf(APIUserAbortError);
    await new Promise((r) => setTimeout(r, 600)); // what the validation's answer would have let through
    emu.faults.latencyMs = 0;
    expect(prompts(emu)).toEqual([]);
  });

  it('run() aborted while a lost answer is looked up never sends it again, even with resubmitUnconfirmed', async () => {
    const emu = await emulator('local');
    const c = client(emu);
    const image = (await c.uploadImage(PNG, { filename: 'in.png' })).name;
    emu.faults.dropNext({ method: 'POST', path: '/api/prompt' });
    const ac = new AbortController();
    const run = c.run(invertWorkflow(image, 'abort-resubmit'), { signal: ac.signal, confirmWithin: 400, resubmitUnconfirmed: true });
    await until(() => emu.requests.some((r) => /\/jobs\/[^/]+$/.test(r.path)), 5000, 'the look-up');
    ac.abort();
    await expect(run).rejects.toBeInstanceOf(APIUserAbortError);
    await new Promise((r) => setTimeout(r, 800)); // past the look-up window
    expect(prompts(emu)).toHaveLength(1);
  });

  it('with resubmitUnconfirmed, a second send that is refused still says the job may exist', async () => {
    // A server that takes the first submission, resets it, and is gone: the look-up and the second send are refused.
    const gone = createServer((req) => void (req.socket.destroy(), gone.close()));
    await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
    const c = new CloudClient({ baseUrl: `http://127.0.0.1:${(gone.address() as AddressInfo).port}`, logLevel: 'off' });
    clients.push(c);
    const err: any = await c.submit({ '1': { class_type: 'SaveImage', inputs: {} } }, { confirmWithin: 200, resubmitUnconfirmed: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err).toMatchObject({ code: 'ECONNREFUSED', sent: 'maybe', promptId: expect.any(String) });
  });
});

describe('stopping one job, and never another', () => {
  it('local: the atomic cancel where the server has it; no interrupt', async () => {
    const emu = await emulator('local', 40);
    const c = client(emu);
    const image = (await c.uploadImage(PNG, { filename: 'in.png' })).name;
    const ac = new AbortController();
    const run = c.run(slowWorkflow(image, 'stop-atomic'), { signal: ac.signal, onProgress: () => ac.abort() });
    await expect(run).rejects.toBeInstanceOf(APIUserAbortError);
    await until(() => emu.requests.some((r) => /\/jobs\/[^/]+\/cancel$/.test(r.path)), 5000, 'the atomic cancel');
    expect(emu.requests.filter((r) => r.path.endsWith('/interrupt'))).toEqual([]);
    const id = /\/jobs\/([^/]+)\/cancel$/.exec(emu.requests.find((r) => /\/jobs\/[^/]+\/cancel$/.test(r.path))!.path)![1]!;
    await until(() => emu.cloud.engine.jobs.get(id)?.status === 'cancelled', 5000, 'the job cancelled');
  });

  it('a local server without it (the 0.8.0 kit): delete, then interrupt { prompt_id } while it runs, the missing route remembered', async () => {
    const emu = await emulator({ ...PERSONALITIES.local, atomicCancel: false }, 40);
    const c = client(emu);
    const image = (await c.uploadImage(PNG, { filename: 'in.png' })).name;
    const first = await c.submit(slowWorkflow(image, 'kit-a'));
    const second = await c.submit(slowWorkflow(image, 'kit-b'));
    await c.stopJob(second.prompt_id);
    await c.stopJob(first.prompt_id);
    const cancels = emu.requests.filter((r) => /\/jobs\/[^/]+\/cancel$/.test(r.path));
    expect(cancels).toHaveLength(1); // asked once, then remembered
    // Issue 31: the delete first, then a look; the pending job is seen gone, so only the running one is interrupted.
    expect(emu.requests.filter((r) => r.path.endsWith('/interrupt'))).toHaveLength(1);
    await until(() => emu.cloud.engine.jobs.get(first.prompt_id)?.status !== 'in_progress', 5000, 'the running job stopped');
    expect(emu.cloud.engine.jobs.has(second.prompt_id)).toBe(false); // the pending one removed (the kit forgets it)
  });

  it('cloud: interrupt({ promptId }) stops that job only; the account-wide interrupt is never sent', async () => {
    const emu = await emulator('cloud', 40);
    const mine = client(emu);
    const other = client(emu);
    const image = (await mine.uploadImage(PNG, { filename: 'in.png' })).name;
    const a = await mine.submit(slowWorkflow(image, 'mine'));
    const otherRun = other.run(slowWorkflow(image, 'other'));
    await until(() => emu.cloud.engine.jobs.get(a.prompt_id)?.status === 'in_progress', 5000, 'my job running');
    await mine.interrupt({ promptId: a.prompt_id });
    expect(emu.requests.filter((r) => r.path === '/api/interrupt')).toEqual([]);
    await until(() => emu.cloud.engine.jobs.get(a.prompt_id)?.status === 'cancelled', 5000, 'my job cancelled');
    expect((await otherRun).status).toBe('completed');
  });
});

describe('a keyless client behind a relay on loopback', () => {
  let relay: Server;
  let emu: Emulator;
  beforeAll(async () => {
    emu = await emulator('cloud', 40);
    // The relay adds the key; it checks its own caller's token, which the client sends as a header of its own.
    relay = createServer((req, res) => {
      if (req.headers.authorization !== 'Bearer relay-token') return void res.writeHead(401).end();
      const { authorization: _a, host: _h, ...headers } = req.headers;
      const target = new URL(req.url ?? '/', emu.url);
      const up = httpRequest(target, { method: req.method, headers: { ...headers, 'x-api-key': EMULATOR_API_KEY } }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise<void>((r) => relay.close(() => r())));

  it("the caller's own credential is scrubbed like the SDK's: a relay that echoes it in an error shows it nowhere", async () => {
    const echo = createServer((req, res) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'boom', message: `bad auth ${String(req.headers.authorization)}` })));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    const c = new CloudClient({ baseUrl: `http://127.0.0.1:${(echo.address() as AddressInfo).port}`, keyless: true, headers: { authorization: 'Bearer relay-SECRET-7' }, retry: false, logLevel: 'off' });
    try {
      const err: any = await c.getQueue().catch((e: unknown) => e);
      expect(err.status).toBe(500);
      for (const text of [err.message, JSON.stringify(err), String(err.stack)]) expect(text).not.toContain('relay-SECRET-7');
    } finally {
      c.close();
      echo.close();
    }
  });

  it('speaks the cloud protocol, sends its own headers, and an abort stops only its job', async () => {
    const c = new CloudClient({ baseUrl: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`, keyless: true, headers: { authorization: 'Bearer relay-token' }, logLevel: 'off' });
    clients.push(c);
    expect(c.server).toBe('cloud');
    const other = client(emu);
    const image = (await c.uploadImage(PNG, { filename: 'in.png' })).name;
    const otherRun = other.run(slowWorkflow(image, 'relay-other'));
    const ac = new AbortController();
    const run = c.run(slowWorkflow(image, 'relay-mine'), { signal: ac.signal, onSubmitted: () => void setTimeout(() => ac.abort(), 50) });
    await expect(run).rejects.toBeInstanceOf(APIUserAbortError);
    expect((await otherRun).status).toBe('completed');
    expect(emu.requests.filter((r) => r.path === '/api/interrupt')).toEqual([]);
  });
});
