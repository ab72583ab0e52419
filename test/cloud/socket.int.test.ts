// CloudSocket and run() against the emulator over real loopback HTTP and WebSocket.
import { WebSocket as WsWebSocket } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  APITimeoutError,
  JobTimeoutError,
  APIUserAbortError,
  CloudClient,
  ExecutionError,
  JobCancelledError,
  type ImageFrame,
  type SocketEvent,
} from '../../src/index.ts';
import { EMULATOR_API_KEY, EXCEPTION_TYPES, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { onlySocketWarnings, until } from '../helpers/emulator-runs.ts';
import { recorder } from '../helpers/log-recorder.ts';

let emu: Emulator;
const clients: CloudClient[] = [];
beforeAll(async () => {
  emu = await startEmulator({ personality: 'spec', cloud: { stepMs: 2, parallel: 8 } as never, apiKeys: { [EMULATOR_API_KEY]: { mode: 'ok', parallel: 8 } } });
});
afterAll(() => emu.close());
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
  emu.cloud.resetSocketFaults();
  emu.requests.length = 0;
});

const client = (o: Partial<ConstructorParameters<typeof CloudClient>[0]> = {}) => {
  const c = new CloudClient({ baseUrl: emu.url, apiKey: EMULATOR_API_KEY, ...o });
  clients.push(c);
  return c;
};

let uploaded: string;
async function input(c: CloudClient): Promise<string> {
  uploaded ??= (await c.uploadImage(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 7]), { filename: 'in.png' })).name;
  return uploaded;
}
const workflow = (image: string, prefix: string, extra: Record<string, unknown> = {}) => ({
  '1': { class_type: 'LoadImage', inputs: { image, ...extra } },
  '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
});

describe('CloudSocket', () => {
  it('opens /ws with clientId and token, shows the token redacted, announces feature flags first', async () => {
    const c = client();
    const socket = c.connect();
    expect(socket.url).toContain(`clientId=${socket.clientId}`);
    expect(socket.url).toContain('token=[REDACTED]');
    expect(socket.url).not.toContain(EMULATOR_API_KEY);
    const status = socket.once('status');
    await socket.ready();
    expect((await status).data.sid ?? socket.clientId).toBe(socket.clientId);
  });

  it('refuses a wrong token and keeps trying without leaking it', async () => {
    const log = recorder();
    const c = client({ apiKey: 'wrong-key-123456', logger: log.logger });
    const socket = c.connect({ reconnect: { baseDelay: 5, maxDelay: 20, maxAttempts: 3 } });
    const errors: unknown[] = [];
    socket.on('error', (e) => void errors.push(e.error));
    const reconnecting = await socket.once('reconnecting');
    expect(reconnecting.attempt).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(socket.state).toBe('closed');
    for (const e of errors) expect(String(e)).not.toContain('wrong-key-123456');
    // Told twice: when the retries begin, and when they end (a warning: the `error` listener hears it too).
    expect(log.lines.map((l) => `${l.level} ${l.message}`)).toEqual([
      expect.stringMatching(/^warn \[platformui\] socket could not connect to ws:.*&token=\[REDACTED\]: the connection or the upgrade failed; retrying$/),
      expect.stringMatching(/^warn \[platformui\] socket ws:.*&token=\[REDACTED\]: Gave up reconnecting after 3 attempts \(the last: the connection or the upgrade failed\)$/),
    ]);
    expect(JSON.stringify(log.lines)).not.toContain('wrong-key-123456');
  });

  it('reconnects after a drop with the same clientId', async () => {
    const c = client();
    const socket = c.connect({ reconnect: { baseDelay: 5, maxDelay: 50 } });
    await socket.ready();
    const id = socket.clientId;
    const back = socket.once('reconnected');
    emu.cloud.dropAllSockets();
    await back;
    expect(socket.state).toBe('open');
    expect(socket.clientId).toBe(id);
  });

  it('closes a ws-package socket that is still connecting without an uncaught error', async () => {
    const c = client();
    const socket = c.connect({ WebSocket: WsWebSocket as never });
    await new Promise((r) => setTimeout(r, 0)); // the constructor has run; the handshake has not finished
    c.close();
    expect(socket.state).toBe('closed');
    await new Promise((r) => setTimeout(r, 50));
  });

  it('works with the ws package injected', async () => {
    const c = client();
    const socket = c.connect({ WebSocket: WsWebSocket as never });
    await socket.ready();
    const result = await c.run(workflow(await input(c), 'ws-pkg'));
    expect(result.files[0]!.filename).toContain('ws-pkg');
  });

  it('delivers job events through events({ promptId }) and binary previews as zero-copy images', async () => {
    const c = client();
    const socket = c.connect();
    await socket.ready();
    const seen: SocketEvent[] = [];
    const previews: ImageFrame[] = [];
    const result = await c.run(workflow(await input(c), 'events'), { onEvent: (e) => void seen.push(e), onPreview: (f) => void previews.push(f) });
    const types = seen.map((e) => e.type);
    expect(types).toContain('execution_start');
    expect(types).toContain('executed');
    expect(types.at(-1)).toBe('execution_success');
    expect(previews.length).toBeGreaterThan(0);
    expect(previews[0]!.mime).toBe('image/png');
    expect(previews[0]!.image[0]).toBe(0x89);
    expect(result.promptId).toBeTruthy();
  });

  it('close() clears every listener and timer; 10,000 connect/close cycles leak nothing', async () => {
    const c = client();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 10_000; i++) {
      const s = c.connect({ reconnect: { maxAttempts: 0 } });
      s.on('progress', () => {});
      s.subscribe(`p${i}`, () => {});
      c.close();
      expect(s.listenerCount).toBe(0);
      expect(s.state).toBe('closed');
    }
    await new Promise((r) => setTimeout(r, 200));
    globalThis.gc?.();
    const grown = process.memoryUsage().heapUsed - before;
    expect(grown).toBeLessThan(64 * 1024 * 1024);
  }, 120_000);
});

describe('run()', () => {
  it('runs concurrent jobs on one socket, each with its own outputs', async () => {
    const c = client();
    const image = await input(c);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => c.run(workflow(image, `job${i}`))));
    results.forEach((r, i) => expect(r.files.map((f) => f.filename).join()).toContain(`job${i}_`));
    expect(new Set(results.map((r) => r.promptId)).size).toBe(12);
    const upgrades = emu.requests.filter((r) => r.path.startsWith('/ws'));
    expect(upgrades.length).toBeLessThanOrEqual(1);
  });

  it('200 runs with sockets dropped at random: every run resolves once, with its own outputs', async () => {
    const log = recorder();
    const c = client({ logger: log.logger });
    c.connect({ reconnect: { baseDelay: 5, maxDelay: 100 } });
    const image = await input(c);
    emu.cloud.dropSockets({ probability: 0.02 });
    let settled = 0;
    const runs = Array.from({ length: 200 }, (_, i) =>
      c.run(workflow(image, `drop${i}`), { pollInterval: 20 }).finally(() => void settled++),
    );
    const results = await Promise.all(runs);
    emu.cloud.dropSockets(null);
    expect(settled).toBe(200);
    results.forEach((r, i) => {
      expect(r.status).toBe('completed');
      expect(r.files).toHaveLength(1);
      expect(r.files[0]!.filename.startsWith(`drop${i}_`)).toBe(true);
    });
    expect(new Set(results.map((r) => r.promptId)).size).toBe(200);
    onlySocketWarnings(log);
  }, 120_000);

  it('finds a completion that happened while the socket was down', async () => {
    const c = client();
    const socket = c.connect({ reconnect: { baseDelay: 300, maxDelay: 300 } });
    await socket.ready();
    emu.cloud.dropSockets({ afterMessages: 1, times: 1 });
    const result = await c.run(workflow(await input(c), 'offline'), { pollInterval: 20 });
    expect(result.files[0]!.filename).toContain('offline');
  });

  it('resolves a run whose every node was cached', async () => {
    const c = client();
    const wf = workflow(await input(c), 'cached');
    const first = await c.run(wf);
    const seen: string[] = [];
    const again = await c.run(wf, { onEvent: (e) => void seen.push(e.type) });
    expect(seen).toContain('execution_cached');
    expect(again.files.map((f) => f.filename)).toEqual(first.files.map((f) => f.filename));
  });

  it.each(EXCEPTION_TYPES)('surfaces %s as an ExecutionError', async (type) => {
    const c = client();
    const err: any = await c.run(workflow(await input(c), `fail-${type}`, { fail_with: type })).catch((e) => e);
    expect(err).toBeInstanceOf(ExecutionError);
    expect(err.exceptionType).toBe(type);
    expect(err.nodeId).toBe('1');
    expect(err.traceback).toBeTruthy();
  });

  it('aborting cancels only its own job, never interrupt', async () => {
    const c = client();
    const image = await input(c);
    const ac = new AbortController();
    const slow = { '1': { class_type: 'LoadImage', inputs: { image } }, ...Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`${i + 2}`, { class_type: 'ImageInvert', inputs: { image: [`${i + 1}`, 0] } }])), '99': { class_type: 'SaveImage', inputs: { images: ['31', 0], filename_prefix: 'slow' } } };
    // Aborted once the server has it (30 ms after run(), as it was, could be before the submission on a loaded
    // machine: nothing to cancel then).
    let submitted!: () => void;
    const onServer = new Promise<void>((r) => (submitted = r));
    const victim = c.run(slow, { signal: ac.signal, onSubmitted: () => submitted() });
    const bystander = c.run(slow);
    await onServer;
    ac.abort();
    await expect(victim).rejects.toBeInstanceOf(APIUserAbortError);
    const ok = await bystander;
    expect(ok.status).toBe('completed');
    // The cancel may still be on its way when run() rejected: waited for, then 50 ms more for a second one.
    const cancelsOf = () => emu.requests.filter((r) => r.method === 'POST' && r.path === '/api/queue');
    await until(() => cancelsOf().length > 0, 10_000, 'the cancel on the server').catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    const cancels = cancelsOf();
    expect(cancels).toHaveLength(1);
    expect(emu.requests.some((r) => r.path === '/api/interrupt')).toBe(false);
  });

  it('rejects with JobCancelledError when someone else cancels the job', async () => {
    const c = client();
    const image = await input(c);
    const socket = c.connect();
    await socket.ready();
    const started = socket.once('execution_start');
    const run = c.run(workflow(image, 'cancelled')).catch((e: unknown) => e);
    const { data } = await started;
    await c.cancel([data.prompt_id!]);
    expect(await run).toBeInstanceOf(JobCancelledError);
  });

  it('times out on silence and cancels the job', async () => {
    const c = client();
    const image = await input(c);
    const socket = c.connect();
    await socket.ready();
    emu.cloud.silenceSockets(2000);
    const err: any = await c.run(workflow(image, 'silent'), { timeout: 150, pollInterval: 10_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(JobTimeoutError);
    expect(err).not.toBeInstanceOf(APITimeoutError); // the job may still run: no retry wrapper may take it for a failed request
    await new Promise((r) => setTimeout(r, 50));
    expect(emu.requests.some((r) => r.method === 'POST' && r.path === '/api/queue')).toBe(true);
  });

  it('runs on polling alone when the socket cannot open', async () => {
    const c = client();
    emu.cloud.rejectSocketUpgrades(1000);
    c.connect({ reconnect: { baseDelay: 1000, maxDelay: 1000 } });
    const result = await c.run(workflow(await input(c), 'polled'), { pollInterval: 20 });
    expect(result.status).toBe('completed');
  }, 20_000);

  it('sends the run headers with its requests', async () => {
    const c = client();
    await c.run(workflow(await input(c), 'traced'), { headers: { 'x-trace': 'run-42' } });
    const submit = emu.requests.find((r) => r.method === 'POST' && r.path === '/api/prompt');
    expect(submit?.headers['x-trace']).toBe('run-42');
  });

  it('waitForJob polls to a final status', async () => {
    const c = client();
    const { prompt_id } = await c.submit(workflow(await input(c), 'waited'));
    const s = await c.waitForJob(prompt_id, { pollInterval: 10 });
    expect(s.status).toBe('completed');
  });
});
