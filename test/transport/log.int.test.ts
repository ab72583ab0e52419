// The SDK's log (issue 14) against the emulator over real loopback sockets: what
// run() tells through a socket drop, that no line of any client or of the
// emulator ever carries a secret, a prompt or image bytes, the emulator's own
// log and --log-level, and the CLI's trace on standard error.
import { createServer, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuthenticationError, CloudClient, NotFoundError, PermissionDeniedError, ProxyClient, RegistryClient } from '../../src/index.ts';
import { startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { runEmulatorCommand } from '../../src/emulator/command.ts';
import { main } from '../../src/cli/main.ts';
import { REDACTED } from '../../src/transport/redact.ts';
import { recorder } from '../helpers/log-recorder.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Planted secrets: each one a valid credential where it is used, all containing PLANTED.
const REG_TOKEN = 'regtok_PLANTED_S1_4f9a17';
const PROXY_TOKEN = 'proxytok_PLANTED_S2_b7c1e0';
const CLOUD_KEY = 'cloudkey_PLANTED_S3_e2d8aa';
const PARTNER_KEY = 'partner_PLANTED_S4_a55f03';
const HDR_KEY = 'hdrkey_PLANTED_S5_0c3e55';
const HDR_AUTH = 'hdrauth_PLANTED_S6_91aa2b';
const HDR_SESSION = 'hdrsess_PLANTED_S7_778899';
const AMZ_SIG = 'amzsig_PLANTED_S8_d00d11';
const URL_TOKEN = 'urltok_PLANTED_S9_beef22';
const WRONG_KEY = 'wrongkey_PLANTED_S10_cafe';
const PROMPT = 'a lighthouse at dusk, PLANTED_PROMPT_S11 (warm light:1.2)';
// Distinctive bytes for the relight image: their base64 must never show.
const IMAGE_BYTES = new Uint8Array(Array.from({ length: 96 }, (_, i) => (i * 37 + 11) % 256));
const IMAGE_B64 = Buffer.from(IMAGE_BYTES).toString('base64');
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const SECRET_HEADERS = { 'X-API-Key': HDR_KEY, Authorization: `Bearer ${HDR_AUTH}`, 'X-Session-Token': HDR_SESSION };

const emuLog = recorder();
let emu: Emulator;
const clouds: CloudClient[] = [];
beforeAll(async () => {
  emu = await startEmulator({
    logLevel: 'debug',
    logger: emuLog.logger,
    tokens: { [REG_TOKEN]: ['*'], [PROXY_TOKEN]: ['*'] },
    // The partner key is an account key too: the emulator checks it like one.
    apiKeys: { [CLOUD_KEY]: { mode: 'ok', parallel: 8 }, [PARTNER_KEY]: { mode: 'ok' } },
    cloud: { stepMs: 10 },
    proxy: { stepMs: 10 },
  });
});
afterAll(() => emu.close());
beforeEach(() => {
  vi.stubEnv('PLATFORMUI_LOG', '');
  emuLog.lines.length = 0;
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  for (const c of clouds.splice(0)) c.close();
  emu.cloud.resetSocketFaults();
  emu.faults.reset();
  emu.cloud.stepMs = 10;
});

const cloudClient = (o: ConstructorParameters<typeof CloudClient>[0] = {}) => {
  const c = new CloudClient({ baseUrl: emu.url, apiKey: CLOUD_KEY, ...o });
  clouds.push(c);
  return c;
};

let uploaded: string | undefined;
async function input(c: CloudClient): Promise<string> {
  uploaded ??= (await c.uploadImage(new Uint8Array(PNG), { filename: 'in.png' })).name;
  return uploaded;
}
const workflow = (image: string, prefix: string) => ({
  '1': { class_type: 'LoadImage', inputs: { image } },
  '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
});

describe('run() through a socket drop', () => {
  it('at debug: submitted (info), socket reconnecting, polling, completed (info) with durationMs and outputs, in order', async () => {
    const rec = recorder();
    const c = cloudClient({ logLevel: 'debug', logger: rec.logger });
    const image = await input(c);
    const socket = c.connect({ reconnect: { baseDelay: 100, maxDelay: 100 } });
    await socket.ready();
    emu.cloud.stepMs = 40; // long enough to be running when the drop comes
    let reconnected = 0;
    socket.on('reconnected', () => void reconnected++);
    rec.lines.length = 0;
    const result = await c.run(workflow(image, 'drop-debug'), { pollInterval: 20, onSubmitted: () => emu.cloud.dropAllSockets() });
    expect(result.status).toBe('completed');
    const submitted = rec.index(new RegExp(`job ${result.promptId} submitted`));
    const reconnecting = rec.index(/socket reconnecting in \d+ ms \(attempt 1\)/);
    const polling = rec.index(new RegExp(`job ${result.promptId}: the socket is (reconnecting|connecting); polling the status every 20 ms`));
    const completed = rec.index(new RegExp(`job ${result.promptId} completed in \\d+ ms`));
    expect([submitted, reconnecting, polling, completed].every((i) => i >= 0), JSON.stringify(rec.lines.map((l) => l.message), null, 1)).toBe(true);
    expect(submitted).toBeLessThan(reconnecting);
    expect(reconnecting).toBeLessThan(polling);
    expect(polling).toBeLessThan(completed);
    expect(rec.lines[submitted]!.level).toBe('info');
    expect(rec.lines[submitted]!.details).toMatchObject({ promptId: result.promptId, nodes: 3, clientId: socket.clientId });
    expect(rec.lines[reconnecting]!.level).toBe('debug');
    expect(rec.lines[polling]!.level).toBe('debug');
    expect(rec.lines[completed]!.level).toBe('info');
    expect(rec.lines[completed]!.details).toEqual({ promptId: result.promptId, status: 'completed', durationMs: expect.any(Number), outputs: Object.keys(result.outputs).length, files: result.files.length });
    expect(rec.lines[completed]!.details!.outputs).toBeGreaterThan(0);
    // A drop that heals is no news above debug.
    expect(rec.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    // The REST calls of the run are traced too, all at debug.
    expect(rec.lines.some((l) => /^\[platformui\] POST http:\/\/127\.0\.0\.1:\d+\/api\/prompt → 200/.test(l.message))).toBe(true);
    await socket.ready();
    expect(reconnected).toBeGreaterThanOrEqual(1);
  });

  it('at the default level: no line at all, even with a drop and a reconnect', async () => {
    const rec = recorder();
    const c = cloudClient({ logger: rec.logger });
    const image = await input(c);
    const socket = c.connect({ reconnect: { baseDelay: 50, maxDelay: 50 } });
    await socket.ready();
    emu.cloud.stepMs = 40;
    let dropped = 0;
    socket.on('reconnecting', () => void dropped++);
    const back = socket.once('reconnected');
    const result = await c.run(workflow(image, 'drop-quiet'), { pollInterval: 20, onSubmitted: () => emu.cloud.dropAllSockets() });
    expect(result.status).toBe('completed');
    await back;
    expect(dropped).toBe(1);
    expect(socket.state).toBe('open');
    expect(rec.lines).toEqual([]);
  });

  it('at the default level: the first failed reconnect attempt warns once; the socket coming back adds nothing', async () => {
    const rec = recorder();
    const c = cloudClient({ logger: rec.logger });
    const socket = c.connect({ reconnect: { baseDelay: 5, maxDelay: 10 } });
    await socket.ready();
    emu.cloud.rejectSocketUpgrades(3, 503);
    const back = socket.once('reconnected');
    emu.cloud.dropAllSockets();
    await back;
    expect(rec.lines.map((l) => l.level)).toEqual(['warn']);
    expect(rec.lines[0]!.message).toContain('socket could not connect to ');
    // No run follows a job on this socket: nothing goes on by polling.
    expect(rec.lines[0]!.message).toMatch(/: the connection or the upgrade failed; retrying$/);
    expect(rec.lines[0]!.details).toMatchObject({ url: socket.url, jobs: 0 });
    expect(JSON.stringify(rec.lines)).not.toContain(CLOUD_KEY);
  });
});

describe('a caller who aborts a request', () => {
  it.each([['a string', 'navigated away'], ['an Error', new Error('user left the page')], ['no', undefined]])(
    'gets no retry, and no warning of one, with %s reason (fetch rejects with it, not an AbortError)',
    async (_, reason) => {
      // A server that reads requests and never answers: the abort is the only way out.
      const sockets = new Set<Socket>();
      let requests = 0;
      const silent = createServer((s) => {
        sockets.add(s);
        s.on('data', (d) => void (requests += d.toString().split('GET /publishers ').length - 1));
      });
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      try {
        const log = recorder();
        const ac = new AbortController();
        const registry = new RegistryClient({ baseUrl: `http://127.0.0.1:${(silent.address() as { port: number }).port}`, logger: log.logger });
        const pending = registry.listPublishers({ signal: ac.signal }).catch((e: unknown) => e);
        await vi.waitFor(() => expect(requests).toBe(1));
        ac.abort(reason);
        expect(await pending).toMatchObject({ name: 'APIUserAbortError' });
        await sleep(100);
        expect(requests).toBe(1);
        expect(log.lines).toEqual([]);
      } finally {
        for (const s of sockets) s.destroy();
        await new Promise((r) => silent.close(r));
      }
    },
  );
});

describe('no secret, prompt or image bytes in any line', () => {
  it('registry, proxy, cloud and the emulator at debug, through retries, failures, downloads and a socket', async () => {
    const reg = recorder();
    const prx = recorder();
    const cld = recorder();
    const wrong = recorder();
    const fetched: string[] = [];
    const recordingFetch: typeof fetch = (input, init) => {
      fetched.push(input instanceof Request ? input.url : String(input));
      return globalThis.fetch(input, init);
    };

    // Registry: a retried call whose 503 echoes the token, a call that fails with an echo, a good one.
    const registry = new RegistryClient({ baseUrl: emu.url, token: REG_TOKEN, headers: SECRET_HEADERS, logLevel: 'debug', logger: reg.logger, retry: { limit: 2, backoffLimit: 5 } });
    emu.faults.next(503, { path: '/publishers/:publisherId/nodes/v2', retryAfter: 0, body: { message: `busy for ${REG_TOKEN}` } });
    const publisher = (await registry.listPublishers())[0]!.id!;
    await registry.listPublisherNodes(publisher);
    emu.faults.next(401, { path: '/publishers/:publisherId/nodes/v2', body: { message: `token ${REG_TOKEN} is revoked` } });
    const regErr = await registry.listPublisherNodes(publisher).catch((e: unknown) => e);
    expect(regErr).toBeInstanceOf(AuthenticationError);
    expect(String((regErr as Error).message)).not.toContain(REG_TOKEN);
    await registry.searchNodes({ search: 'upscale', limit: 2 });

    // Proxy: a relight with a prompt and image bytes (sent as base64), waited on; a result URL
    // carrying a signature and a token; a task that does not exist.
    const proxy = new ProxyClient({ baseUrl: emu.url, token: PROXY_TOKEN, headers: SECRET_HEADERS, logLevel: 'debug', logger: prx.logger, fetch: recordingFetch });
    const task = await proxy.relightImageAndWait({ image: IMAGE_BYTES, prompt: PROMPT, style: 'smooth' }, { pollInterval: 10, timeout: 10_000 });
    expect(task.status).toBe('COMPLETED');
    const signedResult = `${task.generated![0]!}?X-Amz-Signature=${AMZ_SIG}&token=${URL_TOKEN}&X-Amz-Expires=60`;
    const bytes = new Uint8Array(await (await proxy.downloadResult(signedResult)).arrayBuffer());
    expect(bytes.byteLength).toBeGreaterThan(0);
    expect(emu.proxy.resultRequests.some((r) => r.url.includes(AMZ_SIG))).toBe(true); // it did travel
    await expect(proxy.getTask('image-relight', '00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(NotFoundError);

    // Cloud: a retried call, a refused call echoing the key, a run with the partner key and a
    // prompt in the workflow through its socket, and a download through the signed URL.
    const cloud = cloudClient({ headers: SECRET_HEADERS, logLevel: 'debug', logger: cld.logger, fetch: recordingFetch, retry: { limit: 2, backoffLimit: 5 } });
    emu.faults.next(503, { path: '/api/queue', method: 'GET', retryAfter: 0 });
    await cloud.getQueue();
    emu.faults.next(403, { path: '/api/queue', method: 'GET', body: { message: `key ${CLOUD_KEY} may not` } });
    await expect(cloud.getQueue()).rejects.toBeInstanceOf(PermissionDeniedError);
    await expect(cloud.getJob('no-such-job-123')).rejects.toBeInstanceOf(NotFoundError);
    const image = await input(cloud);
    emu.cloud.rejectSocketUpgrades(1, 503); // the emulator logs the refused target: its token redacted
    const socket = cloud.connect({ reconnect: { baseDelay: 5, maxDelay: 10 } });
    await socket.ready();
    const relightFlow = {
      '1': { class_type: 'LoadImage', inputs: { image } },
      '2': { class_type: 'PartnerRelightNode', inputs: { image: ['1', 0], prompt: PROMPT } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'secrets' } },
    };
    const result = await cloud.run(relightFlow, { partnerApiKey: PARTNER_KEY, pollInterval: 20 });
    expect(result.status).toBe('completed');
    const downloaded = await (await cloud.download(result.files[0]!)).arrayBuffer();
    expect(downloaded.byteLength).toBeGreaterThan(0);
    const signed = fetched.find((u) => u.includes('/signed/'));
    expect(signed, 'the download went through a signed URL').toBeDefined();
    const sig = new URL(signed!).searchParams.get('sig')!;
    expect(sig.length).toBeGreaterThan(10);

    // A client with a key the emulator refuses: the upgrade's token is not one the emulator knows.
    const refused = cloudClient({ apiKey: WRONG_KEY, logLevel: 'debug', logger: wrong.logger });
    const refusedSocket = refused.connect({ reconnect: { baseDelay: 5, maxDelay: 5, maxAttempts: 1 } });
    refusedSocket.on('error', () => undefined);
    await refusedSocket.once('close');

    await sleep(50); // the emulator writes a request's line when its response closes

    const all = { registry: reg.lines, proxy: prx.lines, cloud: cld.lines, wrongKey: wrong.lines, emulator: emuLog.lines };
    const text = JSON.stringify(all);
    for (const secret of [REG_TOKEN, PROXY_TOKEN, CLOUD_KEY, PARTNER_KEY, HDR_KEY, HDR_AUTH, HDR_SESSION, AMZ_SIG, URL_TOKEN, WRONG_KEY, sig, PROMPT]) {
      expect(text, secret).not.toContain(secret);
    }
    expect(text).not.toContain('PLANTED'); // not even a piece of one
    expect(text).not.toContain(IMAGE_B64.slice(0, 16));
    expect(text).not.toContain(IMAGE_B64.slice(-24, -4));

    // The lines were there to be searched: every source logged what it was asked to do.
    expect(reg.lines.length).toBeGreaterThanOrEqual(6);
    expect(reg.of('warn').some((l) => l.details?.status === 503)).toBe(true);
    expect(reg.lines.some((l) => l.details?.error === 'AuthenticationError')).toBe(true);
    expect(text).toContain(REDACTED); // the echoes were scrubbed, not absent
    expect(prx.of('info').map((l) => l.message)).toEqual([expect.stringContaining(`task image-relight ${task.task_id} started`), expect.stringContaining(`task image-relight ${task.task_id} completed`)]);
    expect(prx.lines.some((l) => l.message.includes('/proxy/vendor/v1/ai/image-relight → 200'))).toBe(true);
    expect(prx.lines.some((l) => String(l.details?.url).includes(`X-Amz-Signature=${REDACTED}&token=${REDACTED}`))).toBe(true);
    expect(cld.of('info').map((l) => l.message)).toEqual([expect.stringContaining(`job ${result.promptId} submitted`), expect.stringContaining(`job ${result.promptId} completed`)]);
    expect(cld.lines.some((l) => l.message.includes(`socket open: ${socket.url}`) && socket.url.includes(`token=${REDACTED}`))).toBe(true);
    expect(cld.lines.some((l) => /\/signed\/.*sig=\[REDACTED\].* → 200/.test(l.message))).toBe(true);
    expect(cld.of('warn').some((l) => l.details?.reason === 'HTTP 503')).toBe(true);
    expect(cld.lines.some((l) => l.details?.error === 'PermissionDeniedError')).toBe(true);
    expect(wrong.lines.some((l) => l.message.includes('socket could not connect'))).toBe(true);
    expect(emuLog.lines.length).toBeGreaterThan(20);
    expect(emuLog.lines.some((l) => l.message.startsWith('[platformui emulator] POST /api/prompt → 200'))).toBe(true);
    expect(emuLog.lines.some((l) => /^\[platformui emulator\] GET \/signed\/\S+\?expires=\d+&sig=\[REDACTED\] → 200/.test(l.message))).toBe(true);
    expect(emuLog.lines.some((l) => l.message.includes(`X-Amz-Signature=${REDACTED}&token=${REDACTED}`))).toBe(true);
    expect(emuLog.lines.filter((l) => l.message.includes('WebSocket /ws?') && l.message.includes(`token=${REDACTED}`)).length).toBeGreaterThanOrEqual(2);
  });
});

describe("the emulator's log", () => {
  it('debug: a line per request with the method, the redacted target and the status', async () => {
    const registry = new RegistryClient({ baseUrl: emu.url });
    await registry.searchNodes({ search: 'upscale', limit: 1 });
    const c = cloudClient({ logLevel: 'off' });
    emu.cloud.rejectSocketUpgrades(1, 503);
    const socket = c.connect({ reconnect: { baseDelay: 5, maxDelay: 5 } });
    await socket.ready();
    await sleep(20);
    const search = emuLog.lines.find((l) => l.message.includes('/nodes/search'));
    expect(search).toEqual({
      level: 'debug',
      message: expect.stringMatching(/^\[platformui emulator\] GET \/nodes\/search\?search=upscale&limit=1&page=1 → 200 in \d+ ms$/),
      details: { method: 'GET', url: '/nodes/search?search=upscale&limit=1&page=1', status: 200, durationMs: expect.any(Number) },
    });
    const refused = emuLog.lines.find((l) => l.message.includes('refused'));
    expect(refused?.message).toMatch(new RegExp(`^\\[platformui emulator\\] WebSocket /ws\\?clientId=${socket.clientId}&token=\\[REDACTED\\] refused: 503`));
    expect(refused?.details).toMatchObject({ url: `/ws?clientId=${socket.clientId}&token=${REDACTED}`, status: 503 });
    expect(emuLog.lines.some((l) => l.message.startsWith(`[platformui emulator] WebSocket open: clientId ${socket.clientId}`))).toBe(true);
    expect(JSON.stringify(emuLog.lines)).not.toContain(CLOUD_KEY);
  });

  it('info shows the start only; the default shows nothing; PLATFORMUI_LOG is not read', async () => {
    vi.stubEnv('PLATFORMUI_LOG', 'debug');
    const info = recorder();
    const quiet = recorder();
    const a = await startEmulator({ logLevel: 'info', logger: info.logger });
    const b = await startEmulator({ logger: quiet.logger });
    try {
      await new RegistryClient({ baseUrl: a.url, logLevel: 'off' }).searchNodes({ limit: 1 });
      await new RegistryClient({ baseUrl: b.url, logLevel: 'off' }).searchNodes({ limit: 1 });
      await sleep(20);
      expect(info.lines).toEqual([{ level: 'info', message: `[platformui emulator] listening on ${a.url} (results on ${a.resultsUrl}; cloud personality cloud)`, details: { url: a.url, resultsUrl: a.resultsUrl, personality: 'cloud' } }]);
      expect(quiet.lines).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('the command refuses an unknown --log-level with exit code 2, starting nothing', async () => {
    for (const argv of [['--log-level', 'loud'], ['--log-level=loud'], ['--log-level']]) {
      let stdout = '';
      let stderr = '';
      const code = await runEmulatorCommand(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
      expect(code, argv.join(' ')).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toMatch(argv.length === 1 && argv[0] === '--log-level' ? /^--log-level needs a value/ : /^Invalid log level: loud \(off, error, warn, info or debug\)/);
      expect(stderr).toContain('--log-level LEVEL');
    }
  });
});

describe('the CLI', () => {
  async function cli(argv: string[], env: Record<string, string>) {
    let stdout = '';
    let stderr = '';
    const code = await main(argv, { stdout: { write: (s: string) => void (stdout += s) }, stderr: { write: (s: string) => void (stderr += s) }, env });
    return { code, stdout, stderr };
  }

  it('PLATFORMUI_LOG=debug traces to standard error, never standard output', async () => {
    const spies = (['error', 'warn', 'info', 'debug', 'log'] as const).map((m) => vi.spyOn(console, m).mockImplementation(() => undefined));
    const traced = await cli(['nodes', 'search', '--limit', '1', '--json', '--server', emu.url], { PLATFORMUI_LOG: 'debug' });
    expect(traced.code).toBe(0);
    expect(traced.stderr).toMatch(/^\[platformui\] GET http:\/\/127\.0\.0\.1:\d+\/nodes\/search\?limit=1&page=1 → 200 in \d+ ms \(req_[0-9a-z]+\)\n$/);
    expect(traced.stdout).not.toContain('[platformui]');
    expect(() => JSON.parse(traced.stdout)).not.toThrow();
    const plain = await cli(['nodes', 'search', '--limit', '1', '--json', '--server', emu.url], {});
    expect(plain.code).toBe(0);
    expect(plain.stderr).toBe('');
    expect(plain.stdout).toBe(traced.stdout);
    for (const s of spies) expect(s).not.toHaveBeenCalled();
  });

  it('by default (level error), a failure the CLI reports itself is not logged twice', async () => {
    emu.faults.next(404, { path: '/nodes/search' });
    const r = await cli(['nodes', 'search', '--limit', '1', '--server', emu.url], {});
    expect(r.code).not.toBe(0);
    expect(r.stderr).not.toContain('[platformui]');
    expect(r.stderr.length).toBeGreaterThan(0);
  });
});
