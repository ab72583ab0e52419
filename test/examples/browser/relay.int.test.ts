// The browser example's relay (examples/browser/relay.ts: it holds the account key, and users copy
// it): its rules as a table, then the relay itself over loopback in front of the emulator's `cloud`
// personality, where every refusal is checked against what the emulator received (issue 23, item 13).
// test/browser/app.mjs checks the same from real pages in Chromium.
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { WebSocket } from 'ws';
import { admit, bodyProblem, createRelay } from '../../../examples/browser/relay.ts';
import { EMULATOR_API_KEY, makePng, startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { invertWorkflow, until } from '../../helpers/emulator-runs.ts';

const PAGE = 'http://127.0.0.1:5173';
const OTHER = 'http://127.0.0.1:5174';
const JSON_TYPE = 'application/json';

describe("the relay's rules", () => {
  const verdict = (method: string, url: string, headers: Record<string, string> = {}) =>
    admit({ method, url, headers: { origin: PAGE, ...headers } }, [PAGE]);

  it.each([
    ['GET', '/api/object_info', {}, { path: '/api/object_info', body: 'none' }],
    ['GET', '/api/view?filename=a%2Fb.png&type=output', {}, { path: '/api/view', search: '?filename=a%2Fb.png&type=output' }],
    ['POST', '/api/prompt', { 'content-type': 'application/json; charset=utf-8' }, { path: '/api/prompt', body: 'json' }],
    ['POST', '/api/upload/image', { 'content-type': 'multipart/form-data; boundary=x' }, { path: '/api/upload/image', body: 'multipart' }],
    ['GET', '/api/job/0b6f3c2e-1d2a-4c8e-9f00-123456789abc/status', {}, { body: 'none' }],
    ['POST', '/api/jobs/0b6f3c2e-1d2a-4c8e-9f00-123456789abc/cancel', {}, { body: 'none' }],
    ['GET', '/ws?clientId=abc', { upgrade: 'websocket' }, { path: '/ws', search: '?clientId=abc' }],
  ])('forwards %s %s', (method, url, headers, want) => {
    expect(verdict(method, url, headers)).toMatchObject(want);
  });

  it.each([
    // Never the account-wide interrupt, however spelt.
    ['not on the list', 'POST', '/api/interrupt', 404],
    ['a dot segment', 'POST', '/api/./interrupt', 404],
    ['a dot-dot segment', 'POST', '/api/../api/interrupt', 404],
    ['an encoded dot-dot segment', 'POST', '/api/%2e%2e/api/interrupt', 404],
    ['an encoded dot segment', 'POST', '/api/%2E/interrupt', 404],
    ['a backslash', 'POST', '/api\\interrupt', 404],
    ['a dot-dot segment', 'GET', '/api/../anything', 404],
    ['an encoded dot-dot segment', 'GET', '/api/%2e%2e/x', 404],
    // Not in normal form, even where the normal form is a route: what is checked is what is forwarded.
    ['a dot segment', 'GET', '/api/./queue', 404],
    ['an encoded dot segment', 'GET', '/api/%2e/queue', 404],
    ['a backslash', 'GET', '/api\\queue', 404],
    ['an encoded slash', 'GET', '/api%2fqueue', 404],
    ['an id that is a dot-dot segment', 'GET', '/api/jobs/%2e%2e', 404],
    ['an id with a dot', 'GET', '/api/jobs/a.b', 404],
    ['another host', 'GET', '//evil.example/api/queue', 404],
    ['an absolute URL', 'GET', 'http://evil.example/api/queue', 404],
    ['not on the list', 'GET', '/api/userdata', 404],
    ['not on the list', 'DELETE', '/api/queue', 404],
    ['an upgrade only', 'GET', '/ws', 404],
    ['no socket there', 'GET', '/api/queue', 404, { upgrade: 'websocket' }],
    // A "simple" cross-site POST is text/plain, form-encoded or multipart: JSON routes take JSON only.
    ['text/plain on a JSON route', 'POST', '/api/prompt', 415, { 'content-type': 'text/plain' }],
    ['a form on a JSON route', 'POST', '/api/prompt', 415, { 'content-type': 'application/x-www-form-urlencoded' }],
    ['multipart on a JSON route', 'POST', '/api/queue', 415, { 'content-type': 'multipart/form-data; boundary=x' }],
    ['no type on a JSON route', 'POST', '/api/queue', 415],
    ['JSON on the upload', 'POST', '/api/upload/image', 415, { 'content-type': JSON_TYPE }],
    ['another origin', 'GET', '/api/queue', 403, { origin: OTHER }],
    ['an opaque origin', 'GET', '/api/queue', 403, { origin: 'null' }],
    ['another origin, on the socket', 'GET', '/ws', 403, { origin: OTHER, upgrade: 'websocket' }],
  ] as const)('refuses %s: %s %s → %i', (_why, method, url, status, headers: Record<string, string> = {}) => {
    expect(verdict(method, url, headers)).toMatchObject({ status });
  });

  it('refuses a request without an Origin', () => {
    expect(admit({ method: 'GET', url: '/api/queue', headers: {} }, [PAGE])).toMatchObject({ status: 403 });
  });

  it("takes only { delete: [ids] } on POST /api/queue, any JSON on /api/prompt", () => {
    expect(bodyProblem('/api/queue', '{"delete":["a","b"]}')).toBeUndefined();
    expect(bodyProblem('/api/queue', '{"clear":true}')).toMatch(/delete/);
    expect(bodyProblem('/api/queue', '{"delete":["a"],"clear":true}')).toMatch(/delete/);
    expect(bodyProblem('/api/queue', '{"delete":[1]}')).toMatch(/delete/);
    expect(bodyProblem('/api/queue', 'null')).toMatch(/delete/);
    expect(bodyProblem('/api/prompt', '{"prompt":{}}')).toBeUndefined();
    expect(bodyProblem('/api/prompt', 'prompt=1')).toMatch(/not JSON/);
  });
});

describe("the relay over loopback, in front of the emulator's cloud", () => {
  let emulator: Emulator;
  let relay: ReturnType<typeof createRelay>;
  let base: string;
  /** Upgrades that reached the emulator (its request log records HTTP requests only). */
  let upgrades = 0;

  beforeAll(async () => {
    emulator = await startEmulator({ personality: 'cloud', cloud: { stepMs: 5, progressSteps: 2 } });
    emulator.server.on('upgrade', () => void upgrades++);
    relay = createRelay({ cloud: new URL(emulator.url), key: EMULATOR_API_KEY, origins: [PAGE] });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    relay.closeAllConnections();
    await new Promise((resolve) => relay.close(resolve));
    await emulator.close();
  });
  beforeEach(() => {
    emulator.cloud.reset();
    emulator.requests.length = 0;
    upgrades = 0;
  });

  /** One request with this exact request target (fetch() would normalize it first). */
  const raw = (method: string, path: string, headers: Record<string, string>, body = '') =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(`${base}/`, { method, path, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject).end(body);
    });
  /** Opens the relay's socket with this Origin: the open socket, or the status of the refused upgrade. */
  const openSocket = (origin: string | undefined) =>
    new Promise<WebSocket | number>((resolve, reject) => {
      const ws = new WebSocket(`${base}/ws?clientId=page`, origin ? { origin } : {});
      ws.once('open', () => resolve(ws));
      ws.once('unexpected-response', (req, res) => {
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      ws.once('error', reject);
    });

  it("passes the cloud's refusal of its socket on to the page (so the page's socket stops reconnecting too)", async () => {
    emulator.cloud.closeSocketsOnOpen({ code: 4001, reason: 'Invalid token' });
    try {
      const ws = await openSocket(PAGE);
      if (typeof ws === 'number') throw new Error(`the upgrade was refused: ${ws}`);
      ws.send(JSON.stringify({ type: 'feature_flags', data: {} }));
      const [code, reason] = await new Promise<[number, string]>((resolve) => ws.once('close', (c, r) => resolve([c, String(r)])));
      expect([code, reason]).toEqual([4001, 'Invalid token']);
    } finally {
      emulator.cloud.closeSocketsOnOpen(null);
    }
  });

  it("forwards the page's calls with the key: an upload, a job, its events on the socket, its output through /api/view's redirect, its cancel by id", async () => {
    const ws = await openSocket(PAGE);
    if (typeof ws === 'number') throw new Error(`the upgrade was refused: ${ws}`);
    onTestFinished(() => ws.close());
    const events: Array<{ type: string; data: { prompt_id?: string; output?: { images?: Array<{ filename: string }> } } }> = [];
    ws.on('message', (m, isBinary) => void (isBinary || events.push(JSON.parse(String(m)))));

    const form = new FormData();
    form.append('image', new Blob([makePng(8, 8, 1) as BlobPart], { type: 'image/png' }), 'in.png');
    const up = await fetch(`${base}/api/upload/image`, { method: 'POST', headers: { origin: PAGE }, body: form });
    expect(up.status).toBe(200);
    expect(up.headers.get('access-control-allow-origin')).toBe(PAGE);
    const { name } = (await up.json()) as { name: string };

    const post = (path: string, body: unknown) => fetch(base + path, { method: 'POST', headers: { origin: PAGE, 'content-type': JSON_TYPE }, body: JSON.stringify(body) });
    const submitted = await post('/api/prompt', { prompt: invertWorkflow(name, 'relay') });
    expect(submitted.status).toBe(200);
    const { prompt_id: id } = (await submitted.json()) as { prompt_id: string };
    await until(() => events.some((e) => e.type === 'execution_success' && e.data.prompt_id === id), 5000, 'execution_success on the socket');

    expect((await fetch(`${base}/api/jobs/${id}`, { headers: { origin: PAGE } })).status).toBe(200);
    const file = events.find((e) => e.type === 'executed' && e.data.prompt_id === id)!.data.output!.images![0]!;
    const view = await fetch(`${base}/api/view?filename=${encodeURIComponent(file.filename)}&type=output`, { headers: { origin: PAGE } });
    expect(view.status).toBe(200);
    expect([...new Uint8Array(await view.arrayBuffer()).slice(1, 4)]).toEqual([0x50, 0x4e, 0x47]); // "PNG"

    expect((await post('/api/queue', { delete: [id] })).status).toBe(200);
    // Every REST call reached the cloud with the key; the signed URL without it.
    const sent = emulator.requests.filter((r) => r.path.startsWith('/api/'));
    expect(sent.map((r) => `${r.method} ${r.path.replace(id, ':id')}`)).toEqual(['POST /api/upload/image', 'POST /api/prompt', 'GET /api/jobs/:id', 'GET /api/view', 'POST /api/queue']);
    expect(sent.every((r) => r.headers['x-api-key'] === EMULATOR_API_KEY)).toBe(true);
    expect(emulator.requests.find((r) => r.path.startsWith('/signed/'))?.headers['x-api-key']).toBeUndefined();
  });

  it.each(['/api/./interrupt', '/api/../api/interrupt', '/api/%2e%2e/api/interrupt', '/api/%2e%2e/x', '/api/../anything', '/api/interrupt', '/api\\interrupt', '//evil.example/api/interrupt'])(
    'never sends %s to the cloud: 404',
    async (path) => {
      const answer = await raw('POST', path, { origin: PAGE, 'content-type': JSON_TYPE }, '{}');
      expect(answer.status).toBe(404);
      expect(emulator.requests).toEqual([]);
    },
  );

  it('refuses another origin and none, on HTTP, on the preflight and on the upgrade: 403, nothing sent to the cloud', async () => {
    const prompt = JSON.stringify({ prompt: invertWorkflow('example.png', 'x') });
    for (const origin of [OTHER, undefined]) {
      const headers: Record<string, string> = origin ? { origin } : {};
      const simple = await raw('POST', '/api/prompt', { ...headers, 'content-type': 'text/plain' }, prompt);
      expect(simple.status).toBe(403);
      const preflight = await raw('OPTIONS', '/api/prompt', { ...headers, 'access-control-request-method': 'POST' });
      expect(preflight.status).toBe(403);
      expect((await raw('GET', '/api/queue', headers)).status).toBe(403);
      expect(await openSocket(origin)).toBe(403);
    }
    expect(emulator.requests).toEqual([]);
    expect(upgrades).toBe(0);
    // The page's own origin gets its preflight.
    const ok = await raw('OPTIONS', '/api/prompt', { origin: PAGE, 'access-control-request-method': 'POST' });
    expect(ok.status).toBe(204);
  });

  it("refuses a non-JSON body on a JSON route (415) and the queue's clear (400): nothing sent to the cloud", async () => {
    const prompt = JSON.stringify({ prompt: invertWorkflow('example.png', 'x') });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      expect((await raw('POST', '/api/prompt', { origin: PAGE, 'content-type': type }, prompt)).status).toBe(415);
    }
    const clear = await raw('POST', '/api/queue', { origin: PAGE, 'content-type': JSON_TYPE }, '{"clear":true}');
    expect(clear).toMatchObject({ status: 400, text: expect.stringMatching(/delete/) });
    expect(emulator.requests).toEqual([]);
  });
});
