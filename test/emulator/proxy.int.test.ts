// The emulator's partner proxy over real loopback HTTP, with plain fetch and a
// bare router, so the service is checked on its own before the SDK relies on it.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Faults, Router } from '../../src/emulator/http.ts';
import { EMULATOR_TOKEN } from '../../src/emulator/registry.ts';
import { isLoopback, ProxyState, proxyRoutes, resultsListener, type TaskStatus } from '../../src/emulator/proxy.ts';
import { startEmulator } from '../../src/emulator/index.ts';

const TOKEN = 'proxy-test-token';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

interface Hook {
  path: string;
  headers: IncomingHttpHeaders;
  body: { data: { task_id: string; status: TaskStatus; generated: string[]; [k: string]: unknown } };
}

interface TaskBody {
  data: { task_id: string; status: string; generated: string[]; [k: string]: unknown };
}

const state = new ProxyState({ tokens: [TOKEN], stepMs: 20 });
let server: Server;
let base: string;
// The result host: a second origin where `generated` URLs point.
let results: Server;
let resultsBase: string;

// The webhook receiver: records every call; `hookStatus` sets its answer, `hookHang` makes it never answer.
let receiver: Server;
let hookBase: string;
let hooks: Hook[] = [];
let hookStatus = 204;
let hookHang = false;

async function listen(s: Server): Promise<string> {
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

async function shut(s: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    s.close(() => resolve());
    s.closeAllConnections();
  });
}

beforeAll(async () => {
  server = createServer(new Router(new Faults()).add(proxyRoutes(state)).listener);
  base = await listen(server);
  results = createServer(resultsListener(state));
  resultsBase = await listen(results);
  state.resultsOrigin = resultsBase;
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hooks.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Hook['body'] });
      if (hookHang) return;
      res.writeHead(hookStatus);
      res.end();
    });
  });
  hookBase = await listen(receiver);
});

afterEach(() => {
  state.reset();
  state.stepMs = 20;
  state.webhookTimeoutMs = 2000;
  state.shape = 'wrapped';
  state.notFoundPolls = 0;
  hooks = [];
  hookStatus = 204;
  hookHang = false;
});

afterAll(async () => {
  state.close();
  await Promise.all([shut(server), shut(receiver), shut(results)]);
});

function post(operation: string, body: unknown, headers: Record<string, string> = { Authorization: `Bearer ${TOKEN}` }, vendor = 'vendor'): Promise<Response> {
  return fetch(`${base}/proxy/${vendor}/v1/ai/${operation}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const relight = (body: unknown, headers?: Record<string, string>) => post('image-relight', body, headers);
const skin = (body: unknown, headers?: Record<string, string>) => post('skin-enhancer/creative', body, headers);

async function started(res: Response): Promise<TaskBody['data']> {
  expect(res.status).toBe(200);
  return ((await res.json()) as TaskBody).data;
}

async function expectBadRequest(res: Response, field: string): Promise<void> {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { error: unknown; message: unknown };
  expect(body.error).toBe('bad_request');
  expect(typeof body.message).toBe('string');
  expect(body.message as string).toMatch(new RegExp(`^${field.replace('.', '\\.')}: `));
}

const finished = (id: string) =>
  vi.waitFor(() => {
    const status = state.tasks.get(id)?.status;
    expect(status === 'COMPLETED' || status === 'FAILED').toBe(true);
  }, { timeout: 10_000 }); // a task of two steps: generous for a loaded machine

const IMAGE = 'https://example.com/in.jpg';

describe('auth', () => {
  it('answers 401 ErrorResponse without a token', async () => {
    const res = await relight({ image: IMAGE }, {});
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await res.json()).toEqual({ error: 'unauthorized', message: 'Missing bearer token' });
  });

  it('answers 401 for an unknown token or another scheme', async () => {
    expect((await skin({ image: IMAGE }, { Authorization: 'Bearer nope' })).status).toBe(401);
    expect((await skin({ image: IMAGE }, { Authorization: `Basic ${TOKEN}` })).status).toBe(401);
    expect(state.tasks.size).toBe(0);
  });

  it('checks auth before the body', async () => {
    expect((await relight({ style: 'bogus' }, {})).status).toBe(401);
  });

  it('accepts the registry tokens by default', () => {
    expect(new ProxyState().tokens.has(EMULATOR_TOKEN)).toBe(true);
  });
});

describe('validation', () => {
  const relightCases: Array<[string, unknown, string]> = [
    ['body not an object', [1], 'body'],
    ['empty body', '', 'body'],
    ['image missing', { style: 'clean' }, 'image'],
    ['image not a string', { image: 5 }, 'image'],
    ['image empty', { image: '' }, 'image'],
    ['image ftp URL', { image: 'ftp://example.com/a.png' }, 'image'],
    ['image neither base64 nor URL', { image: 'not base64!' }, 'image'],
    ['style unknown', { image: IMAGE, style: 'cinematic' }, 'style'],
    ['light_transfer_strength above 100', { image: IMAGE, light_transfer_strength: 100.5 }, 'light_transfer_strength'],
    ['light_transfer_strength below 0', { image: IMAGE, light_transfer_strength: -1 }, 'light_transfer_strength'],
    ['light_transfer_strength a string', { image: IMAGE, light_transfer_strength: '50' }, 'light_transfer_strength'],
    [
      'lightmap with reference image',
      { image: IMAGE, transfer_light_from_lightmap: IMAGE, transfer_light_from_reference_image: IMAGE },
      'transfer_light_from_reference_image',
    ],
    ['lightmap not an image', { image: IMAGE, transfer_light_from_lightmap: 'file:///etc/passwd' }, 'transfer_light_from_lightmap'],
    ['prompt weight above 1.4', { image: IMAGE, prompt: 'sunset (warm:1.5)' }, 'prompt'],
    ['prompt weight below 1', { image: IMAGE, prompt: 'sunset (warm:0.9)' }, 'prompt'],
    ['prompt not a string', { image: IMAGE, prompt: 1 }, 'prompt'],
    ['webhook_url relative', { image: IMAGE, webhook_url: '/hook' }, 'webhook_url'],
    ['webhook_url not http(s)', { image: IMAGE, webhook_url: 'ws://127.0.0.1/hook' }, 'webhook_url'],
    ['change_background a string', { image: IMAGE, change_background: 'true' }, 'change_background'],
    ['interpolate_from_original a number', { image: IMAGE, interpolate_from_original: 1 }, 'interpolate_from_original'],
    ['preserve_details null', { image: IMAGE, preserve_details: null }, 'preserve_details'],
    ['advanced_settings not an object', { image: IMAGE, advanced_settings: [] }, 'advanced_settings'],
    ['advanced_settings.blacks a string', { image: IMAGE, advanced_settings: { blacks: '3' } }, 'advanced_settings.blacks'],
    ['advanced_settings.whites a boolean', { image: IMAGE, advanced_settings: { whites: true } }, 'advanced_settings.whites'],
    ['advanced_settings.engine a number', { image: IMAGE, advanced_settings: { engine: 1 } }, 'advanced_settings.engine'],
    ['advanced_settings.transfer_light_b null', { image: IMAGE, advanced_settings: { transfer_light_b: null } }, 'advanced_settings.transfer_light_b'],
    ['advanced_settings.fixed_generation a string', { image: IMAGE, advanced_settings: { fixed_generation: 'yes' } }, 'advanced_settings.fixed_generation'],
    ['advanced_settings unknown member', { image: IMAGE, advanced_settings: { gamma: 1 } }, 'advanced_settings.gamma'],
    ['unknown member', { image: IMAGE, light_strength: 10 }, 'light_strength'],
  ];
  it.each(relightCases)('relight: %s → 400', async (_name, body, field) => {
    await expectBadRequest(await relight(body), field);
  });

  const skinCases: Array<[string, unknown, string]> = [
    ['image missing', { sharpen: 10 }, 'image'],
    ['sharpen above 100', { image: IMAGE, sharpen: 101 }, 'sharpen'],
    ['sharpen below 0', { image: IMAGE, sharpen: -0.1 }, 'sharpen'],
    ['smart_grain above 100', { image: IMAGE, smart_grain: 1000 }, 'smart_grain'],
    ['smart_grain a string', { image: IMAGE, smart_grain: '5' }, 'smart_grain'],
    ['webhook_url not a URL', { image: IMAGE, webhook_url: 'nope' }, 'webhook_url'],
    ['a relight-only member', { image: IMAGE, style: 'clean' }, 'style'],
  ];
  it.each(skinCases)('skin: %s → 400', async (_name, body, field) => {
    await expectBadRequest(await skin(body), field);
  });

  it('starts no task for a refused body', async () => {
    await relight({ image: IMAGE, style: 'x' });
    expect(state.tasks.size).toBe(0);
  });

  it('accepts the boundaries and every documented form', async () => {
    const full = {
      image: 'data:image/png;base64,iVBORw0KGgo=',
      prompt: 'golden hour (warm light:1) (soft:1.4) (note: see above) ((nested:1.2))',
      style: 'contrasted_n_hdr',
      change_background: true,
      interpolate_from_original: false,
      light_transfer_strength: 0,
      preserve_details: true,
      transfer_light_from_lightmap: 'aGVsbG8gd29y\nbGQ=',
      webhook_url: 'https://example.com/hook?x=1',
      advanced_settings: {
        blacks: 0,
        brightness: -10,
        contrast: 3.5,
        saturation: 100,
        whites: 7,
        engine: 'automatic',
        transfer_light_a: 'automatic',
        transfer_light_b: 'soft_in',
        fixed_generation: false,
      },
    };
    await started(await relight(full));
    await started(await relight({ image: IMAGE, light_transfer_strength: 100, transfer_light_from_reference_image: 'http://example.com/r.png' }));
    for (const s of ['standard', 'darker_but_realistic', 'clean', 'smooth', 'brighter', 'contrasted_n_hdr', 'just_composition']) {
      await started(await relight({ image: IMAGE, style: s }));
    }
    await started(await skin({ image: 'iVBORw0KGgo', sharpen: 0, smart_grain: 100 }));
    await started(await skin({ image: IMAGE, sharpen: 100, smart_grain: 0 }));
  });

  it('accepts an inline image above the default 1 MiB body cap', async () => {
    const image = Buffer.alloc(2 * 1024 * 1024, 7).toString('base64');
    await started(await skin({ image }));
  });
});

describe('tasks', () => {
  it('answers 200 with a CREATED task record', async () => {
    const res = await post('image-relight', { image: IMAGE }, { Authorization: `Bearer ${TOKEN}` }, 'acme-ai');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const data = await started(res);
    expect(data.task_id).toMatch(UUID_V4);
    expect(data.status).toBe('CREATED');
    expect(data.generated).toEqual([]);
    expect(data.operation).toBe('image-relight');
    expect(data.vendor).toBe('acme-ai');
    expect(Number.isNaN(Date.parse(data.created_at as string))).toBe(false);
    // Internal bookkeeping stays off the wire.
    expect(data).not.toHaveProperty('request');
    expect(data).not.toHaveProperty('webhooks');

    const task = state.tasks.get(data.task_id);
    expect(task?.vendor).toBe('acme-ai');
    expect(task?.request).toEqual({ image: IMAGE });
  });

  it('gives every task its own id', async () => {
    const a = await started(await skin({ image: IMAGE }));
    const b = await started(await skin({ image: IMAGE }));
    expect(a.task_id).not.toBe(b.task_id);
    expect(state.tasks.get(b.task_id)?.operation).toBe('skin-enhancer/creative');
  });

  it('moves CREATED → IN_PROGRESS → COMPLETED, one step per stepMs', async () => {
    state.stepMs = 80;
    const { task_id } = await started(await relight({ image: IMAGE }));
    const task = state.tasks.get(task_id)!;
    const seen: string[] = [task.status];
    await vi.waitFor(
      () => {
        if (seen.at(-1) !== task.status) seen.push(task.status);
        expect(task.status).toBe('COMPLETED');
      },
      { interval: 5, timeout: 2000 },
    );
    expect(seen).toEqual(['CREATED', 'IN_PROGRESS', 'COMPLETED']);
    expect(task.generated).toEqual([`${resultsBase}/proxy/results/${task_id}/0.png`]);
    expect(Date.parse(task.updated_at)).toBeGreaterThanOrEqual(Date.parse(task.created_at));
  });

  it('serves the result references as PNG, and only once completed', async () => {
    state.stepMs = 200;
    const { task_id } = await started(await skin({ image: IMAGE }));
    expect((await fetch(`${base}/proxy/results/${task_id}/0.png`)).status).toBe(404);

    state.stepMs = 10;
    await finished(task_id);
    const [ref] = state.tasks.get(task_id)!.generated;
    const res = await fetch(ref!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([...bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);

    expect((await fetch(`${base}/proxy/results/${task_id}/1.png`)).status).toBe(404);
    expect((await fetch(`${base}/proxy/results/${crypto.randomUUID()}/0.png`)).status).toBe(404);
  });

  it('stops moving after close()', async () => {
    const own = new ProxyState({ tokens: [TOKEN], stepMs: 10 });
    const task = own.start('image-relight', 'vendor', { image: IMAGE }, base);
    own.close();
    await new Promise((r) => setTimeout(r, 60));
    expect(task.status).toBe('CREATED');
  });
});

describe('fault switches', () => {
  it('failNext makes the next task end FAILED, once', async () => {
    state.failNext = true;
    const a = await started(await relight({ image: IMAGE }));
    expect(state.failNext).toBe(false);
    const b = await started(await relight({ image: IMAGE }));
    await finished(a.task_id);
    await finished(b.task_id);
    expect(state.tasks.get(a.task_id)).toMatchObject({ status: 'FAILED', generated: [] });
    expect(state.tasks.get(b.task_id)?.status).toBe('COMPLETED');
    expect((await fetch(`${base}/proxy/results/${a.task_id}/0.png`)).status).toBe(404);
  });

  it('an image starting with fail:// ends FAILED', async () => {
    const { task_id } = await started(await skin({ image: 'fail://any' }));
    await finished(task_id);
    expect(state.tasks.get(task_id)?.status).toBe('FAILED');
  });
});

describe('webhooks', () => {
  it('posts the task record for every status, in order, to a loopback receiver', async () => {
    state.stepMs = 1; // faster than the deliveries: order must still hold
    const { task_id } = await started(await relight({ image: IMAGE, webhook_url: `${hookBase}/hook?k=v` }));
    await vi.waitFor(() => expect(hooks).toHaveLength(3));

    expect(hooks.map((h) => h.body.data.status)).toEqual(['CREATED', 'IN_PROGRESS', 'COMPLETED']);
    for (const h of hooks) {
      expect(h.path).toBe('/hook?k=v');
      expect(h.headers['content-type']).toBe('application/json');
      expect(h.body.data.task_id).toBe(task_id);
      expect(h.body.data).not.toHaveProperty('request');
    }
    expect(hooks[0]!.body.data.generated).toEqual([]);
    expect(hooks[2]!.body.data.generated).toEqual([`${resultsBase}/proxy/results/${task_id}/0.png`]);

    await vi.waitFor(() => expect(state.tasks.get(task_id)?.webhooks).toHaveLength(3));
    expect(state.tasks.get(task_id)?.webhooks).toEqual([
      { status: 'CREATED', ok: true, httpStatus: 204 },
      { status: 'IN_PROGRESS', ok: true, httpStatus: 204 },
      { status: 'COMPLETED', ok: true, httpStatus: 204 },
    ]);
  });

  it('announces FAILED too', async () => {
    const { task_id } = await started(await skin({ image: 'fail://x', webhook_url: `${hookBase}/skin` }));
    await vi.waitFor(() => expect(hooks).toHaveLength(3));
    expect(hooks.map((h) => h.body.data.status)).toEqual(['CREATED', 'IN_PROGRESS', 'FAILED']);
    expect(hooks.every((h) => h.body.data.task_id === task_id)).toBe(true);
  });

  it('accepts a non-loopback webhook_url but never calls it', async () => {
    const data = await started(await relight({ image: IMAGE, webhook_url: 'https://hooks.example.com/in' }));
    expect(data.webhook_skipped).toBe('non-loopback');
    await finished(data.task_id);
    await new Promise((r) => setTimeout(r, 20));
    const task = state.tasks.get(data.task_id)!;
    expect(task).toMatchObject({ status: 'COMPLETED', webhook_url: 'https://hooks.example.com/in', webhook_skipped: 'non-loopback' });
    expect(task.webhooks).toEqual([]);
  });

  it('records a receiver error and goes on', async () => {
    hookStatus = 500;
    const { task_id } = await started(await skin({ image: IMAGE, webhook_url: `${hookBase}/err` }));
    await vi.waitFor(() => expect(state.tasks.get(task_id)?.webhooks).toHaveLength(3));
    expect(state.tasks.get(task_id)?.webhooks.map((w) => [w.ok, w.httpStatus])).toEqual([
      [false, 500],
      [false, 500],
      [false, 500],
    ]);
    expect(state.tasks.get(task_id)?.status).toBe('COMPLETED');
  });

  it('records an unreachable receiver and a timeout without crashing', async () => {
    const closed = createServer();
    const deadUrl = `${await listen(closed)}/gone`;
    await shut(closed);
    const dead = await started(await skin({ image: IMAGE, webhook_url: deadUrl }));

    hookHang = true;
    state.webhookTimeoutMs = 50;
    const slow = await started(await skin({ image: IMAGE, webhook_url: `${hookBase}/slow` }));

    await vi.waitFor(() => {
      expect(state.tasks.get(dead.task_id)?.webhooks).toHaveLength(3);
      expect(state.tasks.get(slow.task_id)?.webhooks).toHaveLength(3);
    });
    for (const id of [dead.task_id, slow.task_id]) {
      const task = state.tasks.get(id)!;
      expect(task.status).toBe('COMPLETED');
      for (const w of task.webhooks) {
        expect(w.ok).toBe(false);
        expect(w.httpStatus).toBeUndefined();
        expect(typeof w.error).toBe('string');
      }
    }
  });

  it('treats only 127.0.0.0/8, localhost and [::1] as loopback', () => {
    for (const u of ['http://127.0.0.1:1/x', 'http://127.9.8.7/', 'https://localhost/h', 'http://LOCALHOST:9/', 'http://[::1]:8080/']) {
      expect(isLoopback(u), u).toBe(true);
    }
    for (const u of ['http://10.0.0.1/', 'http://128.0.0.1/', 'http://localhost.example.com/', 'http://127.0.0.1.nip.io/', 'http://[::2]/', 'nope']) {
      expect(isLoopback(u), u).toBe(false);
    }
  });
});


const AUTH = { Authorization: `Bearer ${TOKEN}` };

function getTask(operation: string, id: string, headers: Record<string, string> = AUTH, vendor = 'vendor'): Promise<Response> {
  return fetch(`${base}/proxy/${vendor}/v1/ai/${operation}/${id}`, { headers });
}

async function taskBody(res: Response): Promise<Record<string, unknown>> {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return (await res.json()) as Record<string, unknown>;
}

describe('status routes', () => {
  it('need a valid bearer token, checked before the lookup', async () => {
    const { task_id } = await started(await relight({ image: IMAGE }));
    for (const headers of [{}, { Authorization: 'Bearer nope' }, { Authorization: `Basic ${TOKEN}` }] as Array<Record<string, string>>) {
      const res = await getTask('image-relight', task_id, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(((await res.json()) as { error: string }).error).toBe('unauthorized');
    }
    expect((await getTask('skin-enhancer', crypto.randomUUID(), {})).status).toBe(401);
  });

  it('answer the record in the POST shape, for relight and the skin enhancer, under any vendor', async () => {
    // No step before the GET (20 ms, as in the other tests, was sometimes past on a loaded machine: IN_PROGRESS).
    state.stepMs = 60_000;
    const r = await started(await relight({ image: IMAGE }));
    const body = await taskBody(await getTask('image-relight', r.task_id, AUTH, 'other-vendor'));
    expect(body).toEqual({ data: r });
    const s = await started(await skin({ image: IMAGE }));
    expect(await taskBody(await getTask('skin-enhancer', s.task_id))).toEqual({ data: s });
  });

  it('follow the timeline CREATED → IN_PROGRESS → COMPLETED, with generated on the result origin', async () => {
    state.stepMs = 60;
    const { task_id } = await started(await relight({ image: IMAGE }));
    const seen: string[] = [];
    let last: TaskBody['data'] | undefined;
    await vi.waitFor(
      async () => {
        last = ((await taskBody(await getTask('image-relight', task_id))) as unknown as TaskBody).data;
        if (seen.at(-1) !== last.status) seen.push(last.status);
        expect(last.status).toBe('COMPLETED');
      },
      { interval: 10, timeout: 3000 },
    );
    expect(seen).toEqual(['CREATED', 'IN_PROGRESS', 'COMPLETED']);
    expect(last?.generated).toEqual([`${resultsBase}/proxy/results/${task_id}/0.png`]);
  });

  it('answer FAILED for a doomed task', async () => {
    const { task_id } = await started(await skin({ image: 'fail://x' }));
    await finished(task_id);
    const body = (await taskBody(await getTask('skin-enhancer', task_id))) as unknown as TaskBody;
    expect(body.data).toMatchObject({ task_id, status: 'FAILED', generated: [] });
  });

  it('answer 404 not_found for an unknown id or a task of the other operation', async () => {
    const r = await started(await relight({ image: IMAGE }));
    const s = await started(await skin({ image: IMAGE }));
    for (const res of [
      await getTask('image-relight', crypto.randomUUID()),
      await getTask('skin-enhancer', r.task_id),
      await getTask('image-relight', s.task_id),
      // The POST path's mode segment is no task id.
      await getTask('skin-enhancer', 'creative'),
    ]) {
      expect(res.status).toBe(404);
      const body = (await res.json()) as { error: unknown; message: unknown };
      expect(body.error).toBe('not_found');
      expect(typeof body.message).toBe('string');
    }
  });

  it('bare shape: no wrapper, the status under task_status; POSTs and webhooks stay wrapped', async () => {
    state.shape = 'bare';
    state.stepMs = 500; // the first read must find it CREATED, however slow this machine is
    const res = await relight({ image: IMAGE, webhook_url: `${hookBase}/h` });
    const data = await started(res); // still { data }
    const body = await taskBody(await getTask('image-relight', data.task_id));
    expect(body).not.toHaveProperty('data');
    expect(body).not.toHaveProperty('status');
    expect(body).toMatchObject({ task_id: data.task_id, task_status: 'CREATED', generated: [] });
    await finished(data.task_id);
    expect(await taskBody(await getTask('image-relight', data.task_id))).toMatchObject({
      task_id: data.task_id,
      task_status: 'COMPLETED',
      generated: [`${resultsBase}/proxy/results/${data.task_id}/0.png`],
    });
    await vi.waitFor(() => expect(hooks).toHaveLength(3));
    expect(hooks.every((h) => h.body.data.task_id === data.task_id)).toBe(true);

    state.shape = 'wrapped'; // read on every GET
    expect(await taskBody(await getTask('image-relight', data.task_id))).toHaveProperty('data.status', 'COMPLETED');
  });

  it('notFoundPolls: each new task answers 404 to its first N status GETs, then its record', async () => {
    const before = await started(await relight({ image: IMAGE }));
    state.notFoundPolls = 2;
    const a = await started(await relight({ image: IMAGE }));
    const b = await started(await skin({ image: IMAGE }));
    // Unauthenticated GETs do not count.
    expect((await getTask('image-relight', a.task_id, {})).status).toBe(401);
    expect((await getTask('image-relight', a.task_id)).status).toBe(404);
    const second = await getTask('image-relight', a.task_id);
    expect(second.status).toBe(404);
    expect(((await second.json()) as { error: string }).error).toBe('not_found');
    expect((await getTask('image-relight', a.task_id)).status).toBe(200);
    expect((await getTask('image-relight', a.task_id)).status).toBe(200);
    // Counted per task; a task started before the knob was set is not affected.
    expect((await getTask('skin-enhancer', b.task_id)).status).toBe(404);
    expect((await getTask('image-relight', before.task_id)).status).toBe(200);
  });
});

describe('result origin', () => {
  async function completed(): Promise<{ task_id: string; ref: string }> {
    state.stepMs = 5;
    const { task_id } = await started(await relight({ image: IMAGE }));
    await finished(task_id);
    return { task_id, ref: state.tasks.get(task_id)!.generated[0]! };
  }

  it('is another origin than the proxy and serves the PNG without credentials', async () => {
    const { ref } = await completed();
    expect(new URL(ref).origin).toBe(resultsBase);
    expect(resultsBase).not.toBe(base);
    state.resultRequests.length = 0;
    const res = await fetch(ref);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect([...new Uint8Array(await res.arrayBuffer()).subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(state.resultRequests).toHaveLength(1);
    expect(state.resultRequests[0]).toMatchObject({ method: 'GET', path: new URL(ref).pathname });
    expect(state.resultRequests[0]!.headers).not.toHaveProperty('authorization');
  });

  it.each([
    ['Authorization', `Bearer ${TOKEN}`],
    ['Cookie', 'session=1'],
    ['X-API-Key', 'emulator-key'],
    ['Proxy-Authorization', 'Basic eDp5'],
  ])('refuses with 401 a request carrying %s, and logs it', async (name, value) => {
    const { ref } = await completed();
    state.resultRequests.length = 0;
    const res = await fetch(ref, { headers: { [name]: value } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toBe('unauthorized');
    expect(state.resultRequests).toHaveLength(1);
    expect(state.resultRequests[0]!.headers[name.toLowerCase()]).toBe(value);
    // Refused on any path, even an unknown one.
    expect((await fetch(`${resultsBase}/nope`, { headers: { [name]: value } })).status).toBe(401);
  });

  it('answers 404 for an unknown, unfinished or failed task, and has no proxy routes', async () => {
    state.stepMs = 500;
    const { task_id } = await started(await relight({ image: IMAGE }));
    expect((await fetch(`${resultsBase}/proxy/results/${task_id}/0.png`)).status).toBe(404);
    expect((await fetch(`${resultsBase}/proxy/results/${crypto.randomUUID()}/0.png`)).status).toBe(404);
    expect((await fetch(`${resultsBase}/proxy/vendor/v1/ai/image-relight/${task_id}`)).status).toBe(404);
    state.stepMs = 5;
    const failed = await started(await relight({ image: 'fail://x' }));
    await finished(failed.task_id);
    expect((await fetch(`${resultsBase}/proxy/results/${failed.task_id}/0.png`)).status).toBe(404);
  });

  it('GET /redirect/<id>/0.png answers 302 to the result path, which fetch follows', async () => {
    const { task_id, ref } = await completed();
    const manual = await fetch(`${resultsBase}/redirect/${task_id}/0.png`, { redirect: 'manual' });
    expect(manual.status).toBe(302);
    expect(manual.headers.get('location')).toBe(ref);
    state.resultRequests.length = 0;
    const followed = await fetch(`${resultsBase}/redirect/${task_id}/0.png`);
    expect(followed.status).toBe(200);
    expect(followed.url).toBe(ref);
    expect(state.resultRequests.map((r) => r.path)).toEqual([`/redirect/${task_id}/0.png`, `/proxy/results/${task_id}/0.png`]);
    expect((await fetch(`${resultsBase}/redirect/${crypto.randomUUID()}/0.png`, { redirect: 'manual' })).status).toBe(404);
  });

  it('reset() clears the result log', async () => {
    await fetch(`${resultsBase}/nope`);
    expect(state.resultRequests.length).toBeGreaterThan(0);
    state.reset();
    expect(state.resultRequests).toEqual([]);
  });

  it('without a result origin, results are addressed under the origin the task came through', async () => {
    const own = new ProxyState({ tokens: [TOKEN], stepMs: 1 });
    const task = own.start('image-relight', 'vendor', { image: IMAGE }, 'http://127.0.0.1:9');
    await vi.waitFor(() => expect(task.status).toBe('COMPLETED'));
    own.close();
    expect(task.generated).toEqual([`http://127.0.0.1:9/proxy/results/${task.task_id}/0.png`]);
  });
});

describe('startEmulator wiring', () => {
  it('opens the result server, takes shape and notFoundPolls, and closes both servers', async () => {
    const emulator = await startEmulator({ proxy: { stepMs: 5, shape: 'bare', notFoundPolls: 1 } });
    try {
      expect(emulator.proxy.resultsOrigin).toBe(emulator.resultsUrl);
      expect(emulator.resultsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(emulator.resultsUrl).not.toBe(emulator.url);
      expect(emulator.proxy.shape).toBe('bare');
      expect(emulator.proxy.notFoundPolls).toBe(1);

      const auth = { Authorization: `Bearer ${EMULATOR_TOKEN}` };
      const post = await fetch(`${emulator.url}/proxy/acme/v1/ai/image-relight`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...auth },
        body: JSON.stringify({ image: IMAGE }),
      });
      const { data } = (await post.json()) as TaskBody;
      const statusUrl = `${emulator.url}/proxy/acme/v1/ai/image-relight/${data.task_id}`;
      expect((await fetch(statusUrl, { headers: auth })).status).toBe(404);
      let record: { task_status?: string; generated?: string[] } = {};
      await vi.waitFor(async () => {
        record = (await (await fetch(statusUrl, { headers: auth })).json()) as typeof record;
        expect(record.task_status).toBe('COMPLETED');
      });
      const ref = record.generated![0]!;
      expect(ref.startsWith(`${emulator.resultsUrl}/`)).toBe(true);
      expect((await fetch(ref)).status).toBe(200);
      expect((await fetch(ref, { headers: auth })).status).toBe(401);
      expect(emulator.proxy.resultRequests.map((r) => r.headers.authorization)).toEqual([undefined, `Bearer ${EMULATOR_TOKEN}`]);
      // The emulator's own request log and faults do not see the result host.
      expect(emulator.requests.some((r) => r.path.startsWith('/proxy/results/'))).toBe(false);
    } finally {
      await emulator.close();
    }
    expect(emulator.resultsServer.listening).toBe(false);
    await expect(fetch(`${emulator.resultsUrl}/nope`)).rejects.toThrow();
  });
});
