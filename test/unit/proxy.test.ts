// ProxyClient request rules and encoding, against msw.
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  InternalServerError,
  InvalidArgumentError,
  ProxyClient,
  RateLimitError,
  ResponseValidationError,
  parseTaskNotification,
  type RelightParams,
} from '../../src/index.ts';

const BASE = 'https://proxy.test';
const TOKEN = 'proxy_SECRET_token_42';
const task = (extra: Record<string, unknown> = {}) => ({ data: { task_id: '3f1c3c5e-7d5a-4b8e-9a51-1f0c2d3e4f5a', status: 'CREATED', generated: [], ...extra } });

const server = setupServer();
const bodies: Array<{ url: string; auth: string | null; body: any }> = [];
beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterEach(() => {
  server.resetHandlers();
  bodies.length = 0;
});
afterAll(() => server.close());

const accept = (status = 200, body: unknown = task()) =>
  server.use(
    http.post(`${BASE}/proxy/:vendor/v1/ai/*`, async ({ request }) => {
      bodies.push({ url: request.url, auth: request.headers.get('authorization'), body: await request.json() });
      return HttpResponse.json(body as object, { status });
    }),
  );
const proxy = (o: Partial<ConstructorParameters<typeof ProxyClient>[0]> = {}) => new ProxyClient({ baseUrl: BASE, token: TOKEN, retry: { limit: 2, backoffLimit: 5 }, ...o });

describe('relightImage', () => {
  it('sends every field with the bearer token and resolves with the task', async () => {
    accept();
    const params: RelightParams = {
      image: 'https://example.com/in.jpg',
      prompt: 'sunset glow (warm light:1.3), soft (rim:1)',
      style: 'contrasted_n_hdr',
      change_background: true,
      interpolate_from_original: false,
      light_transfer_strength: 100,
      preserve_details: true,
      transfer_light_from_lightmap: 'https://example.com/map.png',
      webhook_url: 'https://hooks.example.com/relight',
      advanced_settings: { blacks: 10, brightness: -5, contrast: 0, saturation: 1.5, whites: 3, engine: 'automatic', transfer_light_a: 'automatic', transfer_light_b: 'soft_in', fixed_generation: true },
    };
    const started = await proxy().relightImage(params);
    expect(started).toEqual(task().data);
    expect(started.status).toBe('CREATED');
    expect(bodies[0]!.url).toBe(`${BASE}/proxy/vendor/v1/ai/image-relight`);
    expect(bodies[0]!.auth).toBe(`Bearer ${TOKEN}`);
    expect(bodies[0]!.body).toEqual(params);
  });

  it('replaces the vendor segment, encoded', async () => {
    accept();
    await proxy({ vendor: 'magnific' }).relightImage({ image: 'x' });
    await proxy({ vendor: 'a/b' }).enhanceSkinCreative({ image: 'x' });
    expect(bodies.map((b) => new URL(b.url).pathname)).toEqual(['/proxy/magnific/v1/ai/image-relight', '/proxy/a%2Fb/v1/ai/skin-enhancer/creative']);
  });

  it('encodes bytes as base64 (Uint8Array view, ArrayBuffer, Blob)', async () => {
    accept();
    const bytes = new Uint8Array([0, 1, 2, 250, 251, 252, 253, 254, 255]);
    const view = new Uint8Array(new Uint8Array([9, 9, ...bytes, 9]).buffer, 2, bytes.length);
    const expected = btoa(String.fromCharCode(...bytes));
    await proxy().relightImage({ image: view, transfer_light_from_reference_image: bytes.buffer as ArrayBuffer });
    await proxy().enhanceSkinCreative({ image: new Blob([bytes]) });
    expect(bodies[0]!.body.image).toBe(expected);
    expect(bodies[0]!.body.transfer_light_from_reference_image).toBe(expected);
    expect(bodies[1]!.body.image).toBe(expected);
  });

  it('encodes a large image without overflowing the stack', async () => {
    accept();
    const big = new Uint8Array(3 * 1024 * 1024).map((_, i) => i * 7);
    await proxy().enhanceSkinCreative({ image: big });
    const decoded = Uint8Array.from(atob(bodies[0]!.body.image), (c) => c.charCodeAt(0));
    expect(decoded).toEqual(big);
  });

  const bad: Array<[string, RelightParams]> = [
    ['light_transfer_strength', { image: 'x', light_transfer_strength: 100.5 }],
    ['light_transfer_strength', { image: 'x', light_transfer_strength: -1 }],
    ['style', { image: 'x', style: 'neon' as never }],
    ['transfer_light_from_reference_image', { image: 'x', transfer_light_from_lightmap: 'a', transfer_light_from_reference_image: 'b' }],
    ['prompt', { image: 'x', prompt: 'a (b:1.5)' }],
    ['prompt', { image: 'x', prompt: 'ok (b:1.2) then (c:0.9)' }],
    ['webhook_url', { image: 'x', webhook_url: '/relative/hook' }],
    ['webhook_url', { image: 'x', webhook_url: 'ftp://example.com/hook' }],
    ['advanced_settings.blacks', { image: 'x', advanced_settings: { blacks: '3' as never } }],
    ['advanced_settings.fixed_generation', { image: 'x', advanced_settings: { fixed_generation: 'yes' as never } }],
    ['advanced_settings.engine', { image: 'x', advanced_settings: { engine: 1 as never } }],
    ['image', { image: 42 as never }],
    ['change_background', { image: 'x', change_background: 'true' as never }],
    ['extra', { image: 'x', extra: 1 } as never],
  ];
  it.each(bad)('rejects a bad %s before any request', async (field, params) => {
    accept();
    const err: any = await proxy().relightImage(params).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.field ?? '').toContain(field === 'extra' ? '' : field);
    expect(bodies).toHaveLength(0);
  });

  it('accepts prose parentheses and the weight bounds', async () => {
    accept();
    await proxy().relightImage({ image: 'x', prompt: 'a (note: keep it) (b:1) (c:1.4) (d: 1.25 )' });
    expect(bodies).toHaveLength(1);
  });
});

describe('enhanceSkinCreative', () => {
  it.each([
    ['sharpen', { image: 'x', sharpen: 101 }],
    ['smart_grain', { image: 'x', smart_grain: -0.1 }],
    ['webhook_url', { image: 'x', webhook_url: 'not a url' }],
  ] as const)('rejects a bad %s', async (field, params) => {
    accept();
    const err: any = await proxy().enhanceSkinCreative(params).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.field).toBe(field);
    expect(bodies).toHaveLength(0);
  });

  it('sends bounds inclusive', async () => {
    accept();
    await proxy().enhanceSkinCreative({ image: 'x', sharpen: 0, smart_grain: 100 });
    expect(bodies[0]!.body).toEqual({ image: 'x', sharpen: 0, smart_grain: 100 });
  });
});

describe('task record and retries', () => {
  it('keeps unknown statuses and fields', async () => {
    accept(200, task({ status: 'IN_PROGRESS', eta: 12 }));
    const started = await proxy().enhanceSkinCreative({ image: 'x' });
    expect(started.status).toBe('IN_PROGRESS');
    expect('eta' in started && started.eta).toBe(12);
  });

  it('resolves with the task itself; withResponse() pairs it with the HTTP response', async () => {
    accept(200, task({ status: 'CREATED' }));
    const { data, response } = await proxy().relightImage({ image: 'x' }).withResponse();
    expect(data).toEqual(task().data);
    expect(data).not.toHaveProperty('data');
    expect(response.status).toBe(200);
  });

  it('rejects a task record of the wrong shape', async () => {
    accept(200, { data: { task_id: 7, status: 'CREATED' } });
    await expect(proxy().enhanceSkinCreative({ image: 'x' })).rejects.toBeInstanceOf(ResponseValidationError);
  });

  it.each([503, 429])('never re-sends a job on %i', async (status) => {
    accept(status, { error: 'E', message: 'busy' });
    await expect(proxy().relightImage({ image: 'x' })).rejects.toBeInstanceOf(status === 429 ? RateLimitError : InternalServerError);
    expect(bodies).toHaveLength(1);
  });

  it('re-sends when the caller opts in', async () => {
    accept(503, { error: 'E', message: 'busy' });
    await expect(proxy().relightImage({ image: 'x' }, { retry: { limit: 1, allowPost: true, backoffLimit: 5 } })).rejects.toBeInstanceOf(InternalServerError);
    expect(bodies).toHaveLength(2);
  });
});

describe('parseTaskNotification', () => {
  it('accepts the task record with and without the data wrapper, keeping everything', () => {
    const inner = { task_id: 't1', status: 'COMPLETED', generated: ['r1'], extra: { a: 1 } };
    expect(parseTaskNotification({ data: inner, event: 'task.updated' })).toMatchObject({ ...inner, event: 'task.updated' });
    expect(parseTaskNotification(inner)).toEqual(inner);
    expect(parseTaskNotification(JSON.stringify({ data: inner }))).toMatchObject(inner);
    expect(parseTaskNotification(new TextEncoder().encode(JSON.stringify(inner)))).toEqual(inner);
  });

  it.each([['null'], ['[1,2]'], ['"text"'], ['not json'], [42], [null]])('rejects %s with a typed error', (body) => {
    expect(() => parseTaskNotification(body)).toThrow(InvalidArgumentError);
  });

  it('rejects known fields of the wrong type, naming them', () => {
    try {
      parseTaskNotification({ data: { task_id: 'a', generated: 'r1' } });
      expect.unreachable();
    } catch (err: any) {
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect(err.field).toBe('body.generated');
    }
  });
});
