// ProxyClient against the emulator over loopback: tasks, webhook notifications, rules, auth.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  APIUserAbortError,
  AuthenticationError,
  InternalServerError,
  InvalidArgumentError,
  NotFoundError,
  ProxyClient,
  TaskFailedError,
  TaskNotFoundError,
  TaskTimeoutError,
  parseTaskNotification,
  type TaskNotification,
} from '../../src/index.ts';
import { EMULATOR_TOKEN, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { recorder } from '../helpers/log-recorder.ts';

let emu: Emulator;
let hook: Server;
let hookUrl: string;
const received: TaskNotification[] = [];

beforeAll(async () => {
  emu = await startEmulator();
  hook = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    received.push(parseTaskNotification(Buffer.concat(chunks).toString()));
    res.end();
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await emu.close();
  await new Promise((r) => hook.close(r));
});
beforeEach(() => {
  emu.requests.length = 0;
  received.length = 0;
  log.lines.length = 0;
  emu.faults.reset();
  emu.proxy.shape = 'wrapped';
  emu.proxy.notFoundPolls = 0;
  emu.proxy.stepMs = 50;
  emu.proxy.failNext = false;
  emu.proxy.resultRequests.length = 0;
});

// What the clients log (retry warnings, mostly) is kept here, not printed.
const log = recorder();
const proxy = (o: Partial<ConstructorParameters<typeof ProxyClient>[0]> = {}) => new ProxyClient({ baseUrl: emu.url, token: EMULATOR_TOKEN, logger: log.logger, ...o });

async function until<T>(f: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('ProxyClient against the emulator', () => {
  it('starts a relight task that reports every status to the webhook', async () => {
    const started = await proxy().relightImage({
      image: 'https://example.com/portrait.jpg',
      prompt: 'golden hour (warm rim light:1.25)',
      style: 'brighter',
      light_transfer_strength: 60,
      advanced_settings: { engine: 'automatic', fixed_generation: true, whites: 5 },
      webhook_url: hookUrl,
    });
    expect(started.status).toBe('CREATED');
    expect(started.task_id).toMatch(/^[0-9a-f-]{36}$/);
    const done = await until(() => received.find((n) => n.status === 'COMPLETED'));
    expect(received.map((n) => n.status)).toEqual(['CREATED', 'IN_PROGRESS', 'COMPLETED']);
    expect(received.every((n) => n.task_id === started.task_id)).toBe(true);
    expect(done.generated).toHaveLength(1);
    const result = await fetch(done.generated![0]!);
    expect(result.headers.get('content-type')).toBe('image/png');
  });

  it('sends bytes as base64 and uses the vendor segment', async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const started = await proxy({ vendor: 'acme-ai' }).enhanceSkinCreative({ image: new Blob([png]), sharpen: 20, smart_grain: 80 });
    expect(started.status).toBe('CREATED');
    expect(emu.requests[0]!.path).toBe('/proxy/acme-ai/v1/ai/skin-enhancer/creative');
  });

  it('lets no request leave for a value the rules refuse', async () => {
    const bad = [
      () => proxy().relightImage({ image: 'x', light_transfer_strength: 101 }),
      () => proxy().relightImage({ image: 'x', style: 'vivid' as never }),
      () => proxy().relightImage({ image: 'x', transfer_light_from_lightmap: 'a', transfer_light_from_reference_image: 'b' }),
      () => proxy().relightImage({ image: 'x', prompt: '(too strong:2)' }),
      () => proxy().relightImage({ image: 'x', webhook_url: 'mailto:a@b.c' }),
      () => proxy().enhanceSkinCreative({ image: 'x', sharpen: -1 }),
      () => proxy().enhanceSkinCreative({ image: 'x', smart_grain: 100.01 }),
    ];
    for (const f of bad) await expect(f()).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(emu.requests).toHaveLength(0);
  });

  it('maps a wrong token to AuthenticationError and does not retry the POST', async () => {
    await expect(proxy({ token: 'not-a-token' }).relightImage({ image: 'x' })).rejects.toBeInstanceOf(AuthenticationError);
    expect(emu.requests).toHaveLength(1);
  });
});

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47];
const statusGets = () => emu.requests.filter((r) => r.method === 'GET' && /\/v1\/ai\/(image-relight|skin-enhancer)\//.test(r.path));
const FAST = { pollInterval: 20, timeout: 10_000 };

describe('following a task against the emulator', () => {
  it('getTask reads both operations, wrapped and bare', async () => {
    const relight = await proxy().relightImage({ image: 'https://example.com/a.jpg' });
    const skin = await proxy().enhanceSkinCreative({ image: 'https://example.com/a.jpg' });
    const a = await proxy().getTask('image-relight', relight.task_id);
    expect(a.task_id).toBe(relight.task_id);
    expect(['CREATED', 'IN_PROGRESS', 'COMPLETED']).toContain(a.status);
    emu.proxy.shape = 'bare';
    const b = await proxy().getTask('skin-enhancer', skin.task_id);
    expect(b.task_id).toBe(skin.task_id);
    expect(typeof b.status).toBe('string');
    expect(b).toHaveProperty('task_status', b.status);
    expect(emu.requests.at(-1)!.headers.authorization).toBe(`Bearer ${EMULATOR_TOKEN}`);
    await expect(proxy().getTask('image-relight', '00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('waitForTask follows CREATED → IN_PROGRESS → COMPLETED in the bare shape, through early 404s', async () => {
    emu.proxy.shape = 'bare';
    emu.proxy.notFoundPolls = 2;
    const { task_id } = await proxy().relightImage({ image: 'https://example.com/a.jpg' });
    const seen: string[] = [];
    const done = await proxy().waitForTask('image-relight', task_id, { ...FAST, onStatus: (t) => seen.push(t.status) });
    expect(done.status).toBe('COMPLETED');
    expect(done.generated).toHaveLength(1);
    expect(seen.at(-1)).toBe('COMPLETED');
    expect(new Set(seen).size).toBe(seen.length);
    expect(statusGets().length).toBeGreaterThanOrEqual(3);
  });

  it('survives a 500 mid-wait', async () => {
    emu.proxy.stepMs = 150;
    const client = proxy({ retry: false });
    const { task_id } = await client.relightImage({ image: 'https://example.com/a.jpg' });
    let faulted = false;
    const done = await client.waitForTask('image-relight', task_id, {
      ...FAST,
      onStatus: () => {
        if (!faulted) (faulted = true), emu.faults.next(500, { method: 'GET' });
      },
    });
    expect(done.status).toBe('COMPLETED');
    expect(emu.faults.queue).toHaveLength(0);
  });

  it('rejects FAILED with the record', async () => {
    const { task_id } = await proxy().relightImage({ image: 'fail://broken.jpg' });
    const err = await proxy().waitForTask('image-relight', task_id, FAST).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskFailedError);
    expect((err as TaskFailedError).task).toMatchObject({ task_id, status: 'FAILED' });
  });

  it('an abort sends no further request and keeps the reason', async () => {
    emu.proxy.stepMs = 5000;
    const { task_id } = await proxy().relightImage({ image: 'https://example.com/a.jpg' });
    const ctl = new AbortController();
    const reason = new Error('shutting down');
    const p = proxy().waitForTask('image-relight', task_id, { signal: ctl.signal, pollInterval: 50 });
    await until(() => (statusGets().length >= 2 ? true : undefined));
    ctl.abort(reason);
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect((err as Error).cause).toBe(reason);
    const count = statusGets().length;
    await new Promise((r) => setTimeout(r, 200));
    expect(statusGets()).toHaveLength(count);
  });

  it('a timeout has its own wording and leaves the task running', async () => {
    emu.proxy.stepMs = 5000;
    const { task_id } = await proxy().relightImage({ image: 'https://example.com/a.jpg' });
    const err = await proxy().waitForTask('image-relight', task_id, { pollInterval: 20, timeout: 150 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskTimeoutError);
    expect((err as Error).message).toMatch(new RegExp(`^Task ${task_id} \\(image-relight\\) did not finish within 150 ms \\(last status CREATED\\)`));
  });

  // Issue 23, item 4: with allowPost on the client, a 503 or a reset on the start made relightImageAndWait() start a second paid task.
  it.each([
    ['a 503', () => emu.faults.next(503, { method: 'POST', path: '/proxy/vendor/v1/ai/image-relight' }), InternalServerError],
    ['a reset', () => emu.faults.dropNext({ method: 'POST', path: '/proxy/vendor/v1/ai/image-relight' }), APIConnectionError],
  ] as const)('sends the start of relightImageAndWait() once after %s, even with retry.allowPost on the client', async (_, fault, Err) => {
    fault();
    const tasks = emu.proxy.tasks.size;
    const client = proxy({ retry: { allowPost: true, limit: 3, backoffLimit: 5 } });
    await expect(client.relightImageAndWait({ image: 'https://example.com/a.jpg' }, FAST)).rejects.toBeInstanceOf(Err);
    expect(emu.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(emu.proxy.tasks.size).toBe(tasks);
  });

  it('starts and waits in one call for each operation, the POST sent once', async () => {
    let started = '';
    const relit = await proxy().relightImageAndWait({ image: 'https://example.com/a.jpg', style: 'smooth' }, { ...FAST, onStarted: (t) => (started = t.task_id) });
    expect(relit).toMatchObject({ task_id: started, status: 'COMPLETED' });
    const skin = await proxy().enhanceSkinCreativeAndWait({ image: 'https://example.com/a.jpg', sharpen: 10 }, FAST);
    expect(skin.status).toBe('COMPLETED');
    expect(emu.requests.filter((r) => r.method === 'POST')).toHaveLength(2);
  });
});

describe('results against the emulator', () => {
  it('downloads a result (in memory and to a file) without the token ever reaching the result host', async () => {
    const task = await proxy().relightImageAndWait({ image: 'https://example.com/a.jpg' }, FAST);
    const url = task.generated![0]!;
    expect(url.startsWith(emu.proxy.resultsOrigin!)).toBe(true);
    const client = proxy({ headers: { 'x-api-key': 'k', cookie: 'a=b', 'x-team': 't' } });
    const bytes = new Uint8Array(await (await client.downloadResult(url)).arrayBuffer());
    expect([...bytes.slice(0, 4)]).toEqual(PNG_MAGIC);
    const dir = mkdtempSync(join(tmpdir(), 'proxy-result-'));
    try {
      const file = join(dir, 'relit.png');
      expect(await client.downloadResultToFile(url, file)).toBe(bytes.byteLength);
      expect(readFileSync(file)).toEqual(Buffer.from(bytes));
      // Through a redirect too.
      const redirect = `${emu.proxy.resultsOrigin}/redirect/${task.task_id}/0.png`;
      expect(await client.downloadResultToFile(redirect, join(dir, 'via-redirect.png'))).toBe(bytes.byteLength);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const seen = emu.proxy.resultRequests;
    expect(seen.length).toBeGreaterThanOrEqual(4);
    for (const r of seen) {
      for (const h of ['authorization', 'cookie', 'x-api-key', 'x-team']) expect(r.headers[h]).toBeUndefined();
      expect(JSON.stringify(r.headers)).not.toContain(EMULATOR_TOKEN);
    }
  });

  it('refuses non-http(s) URLs and maps a missing result to NotFoundError', async () => {
    await expect(proxy().downloadResult('file:///etc/passwd')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(proxy().downloadResult(`${emu.proxy.resultsOrigin}/proxy/results/nope/0.png`)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('notifications against the emulator', () => {
  it('confirms a real notification with the server record, under the right operation', async () => {
    const started = await proxy().enhanceSkinCreative({ image: 'https://example.com/a.jpg', webhook_url: hookUrl });
    const note = await until(() => received.find((n) => n.status === 'COMPLETED'));
    const confirmed = await proxy().confirmNotification(note);
    expect(confirmed).toMatchObject({ task_id: started.task_id, status: 'COMPLETED' });
    expect(confirmed.generated).toEqual(note.generated);
    const paths = emu.requests.filter((r) => r.method === 'GET').map((r) => r.path.split('/')[5]);
    expect(paths).toEqual(['image-relight', 'skin-enhancer']);
  });

  it('refuses a forged notification (unknown task id)', async () => {
    const forged = JSON.stringify({ data: { task_id: '11111111-2222-4333-8444-555555555555', status: 'COMPLETED', generated: ['https://evil.example/x.png'] } });
    const err = await proxy().confirmNotification(forged).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskNotFoundError);
    await expect(proxy().confirmNotification(forged, { operation: 'image-relight' })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it("answers a notification whose status disagrees with the server's record", async () => {
    emu.proxy.stepMs = 5000;
    const { task_id } = await proxy().relightImage({ image: 'https://example.com/a.jpg' });
    const lie = { task_id, status: 'COMPLETED', generated: ['https://evil.example/x.png'] };
    const confirmed = await proxy().confirmNotification(lie, { operation: 'image-relight' });
    expect(confirmed.status).toBe('CREATED');
    expect(confirmed.generated ?? []).toEqual([]);
  });
});

describe('request() against the emulator', () => {
  it('reaches any path below the base URL with the bearer token', async () => {
    const { task_id } = await proxy().relightImage({ image: 'https://example.com/a.jpg' });
    const body = (await proxy().request({ method: 'GET', path: `/proxy/vendor/v1/ai/image-relight/${task_id}` })) as { data: { task_id: string } };
    expect(body.data.task_id).toBe(task_id);
    await expect(proxy().request({ method: 'POST', path: '/proxy/acme/v1/ai/image-upscaler', body: { image: 'x' } })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('never re-sends a POST that failed once', async () => {
    emu.faults.next(500, { method: 'POST' });
    await expect(proxy().request({ method: 'POST', path: '/proxy/vendor/v1/ai/image-relight', body: { image: 'https://example.com/a.jpg' } })).rejects.toBeInstanceOf(InternalServerError);
    expect(emu.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    // A GET is retried past the same fault.
    emu.faults.next(500, { method: 'GET' });
    const { task_id } = await proxy().relightImage({ image: 'https://example.com/a.jpg' });
    await proxy().request({ method: 'GET', path: `/proxy/vendor/v1/ai/image-relight/${task_id}` });
    expect(emu.requests.filter((r) => r.method === 'GET')).toHaveLength(2);
  });
});

describe('unknown options (issue 32)', () => {
  it('a misspelt option of a method is refused, naming the closest, and nothing reaches the proxy', async () => {
    const errs: any[] = [
      await proxy().relightImageAndWait({ image: 'https://example.com/a.jpg' }, { onStarterd: () => {} } as object).catch((e) => e),
      await proxy().request({ method: 'POST', path: '/proxy/vendor/v1/ai/image-relight', body: { image: 'https://example.com/a.jpg' }, options: { retyr: 0 } as object }).catch((e) => e),
      await proxy().downloadResult(`${emu.resultsUrl}/r.png`, { tiemout: 5 } as object).catch((e) => e),
    ];
    for (const err of errs) expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(errs.map((e) => e.message)).toEqual([
      'onStarterd: unknown option of relightImageAndWait() (did you mean "onStarted"?)',
      'options.retyr: unknown option of request() (did you mean "retry"?)',
      'tiemout: unknown option of downloadResult() (did you mean "timeout"?)',
    ]);
    expect(emu.requests).toHaveLength(0);
    expect(emu.proxy.resultRequests).toHaveLength(0);
  });
});
