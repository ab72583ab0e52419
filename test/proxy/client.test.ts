// ProxyClient request rules and encoding, against msw.
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  APIUserAbortError,
  InternalServerError,
  InvalidArgumentError,
  NotFoundError,
  ProxyClient,
  TaskFailedError,
  TaskNotFoundError,
  TaskTimeoutError,
  type Task,
  RateLimitError,
  ResponseValidationError,
  parseTaskNotification,
  type RelightParams,
} from '../../src/index.ts';
import { defaultPollDelay } from '../../src/proxy/poll.ts';
import { recorder } from '../helpers/log-recorder.ts';

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
// What the clients log (retry warnings, mostly) is kept here, not printed.
const log = recorder();
afterEach(() => void (log.lines.length = 0));
const proxy = (o: Partial<ConstructorParameters<typeof ProxyClient>[0]> = {}) => new ProxyClient({ baseUrl: BASE, token: TOKEN, retry: { limit: 2, backoffLimit: 5 }, logger: log.logger, ...o });

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

  // Issue 23, item 4: allowPost on the client made relightImageAndWait() start the paid task twice.
  it.each([
    ['a 503', () => HttpResponse.json({ error: 'E', message: 'busy' }, { status: 503 }), InternalServerError],
    ['a reset', () => HttpResponse.error(), APIConnectionError],
  ] as const)('never re-sends a task start after %s, whatever retry.allowPost says', async (_, answer, Err) => {
    server.use(
      http.post(`${BASE}/proxy/:vendor/v1/ai/*`, async ({ request }) => {
        bodies.push({ url: request.url, auth: request.headers.get('authorization'), body: await request.json() });
        return answer();
      }),
    );
    const retry = { limit: 3, allowPost: true, backoffLimit: 5 };
    await expect(proxy({ retry }).relightImageAndWait({ image: 'x' }, { pollInterval: 5 })).rejects.toBeInstanceOf(Err);
    await expect(proxy({ retry }).enhanceSkinCreativeAndWait({ image: 'x' }, { pollInterval: 5 })).rejects.toBeInstanceOf(Err);
    await expect(proxy().relightImage({ image: 'x' }, { retry })).rejects.toBeInstanceOf(Err);
    await expect(proxy().enhanceSkinCreative({ image: 'x' }, { retry })).rejects.toBeInstanceOf(Err);
    expect(bodies.map((b) => new URL(b.url).pathname)).toEqual([
      '/proxy/vendor/v1/ai/image-relight',
      '/proxy/vendor/v1/ai/skin-enhancer/creative',
      '/proxy/vendor/v1/ai/image-relight',
      '/proxy/vendor/v1/ai/skin-enhancer/creative',
    ]);
  });

  it("request() re-sends a POST only when the call itself says allowPost (the client's does not cover it)", async () => {
    accept(503, { error: 'E', message: 'busy' });
    const retry = { limit: 1, allowPost: true, backoffLimit: 5 };
    const post = { method: 'POST', path: '/proxy/acme/v1/ai/image-upscaler', body: { image: 'x' } } as const;
    await expect(proxy({ retry }).request(post)).rejects.toBeInstanceOf(InternalServerError);
    expect(bodies).toHaveLength(1);
    await expect(proxy().request({ ...post, options: { retry } })).rejects.toBeInstanceOf(InternalServerError);
    expect(bodies).toHaveLength(3);
    expect(log.of('warn').map((l) => l.message)).toEqual([expect.stringMatching(/^\[platformui\] POST .*image-upscaler: HTTP 503; retrying in \d+ ms \(attempt 2 of 2\)$/)]);
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

// ---------------------------------------------------------------------------
// Following a task: getTask, waitForTask, results, notifications, request()

const ID = '3f1c3c5e-7d5a-4b8e-9a51-1f0c2d3e4f5a';
const STATUS_URL = `${BASE}/proxy/:vendor/v1/ai/:op/:id`;
type Answer = { status?: number; body?: unknown; error?: true; delayMs?: number };
const polls: Array<{ url: string; auth: string | null; at: number }> = [];
afterEach(() => void (polls.length = 0));

/** Answers status GETs from a script, one entry per request (the last one repeats). */
/** Answers the status reads in turn (the last one again and again); `answered` counts the answers given so far. */
function script(...answers: Answer[]): { readonly answered: number } {
  let i = 0;
  const state = { answered: 0 };
  server.use(
    http.get(STATUS_URL, async ({ request }) => {
      polls.push({ url: request.url, auth: request.headers.get('authorization'), at: Date.now() });
      const a = answers[Math.min(i++, answers.length - 1)]!;
      if (a.delayMs) await new Promise((r) => setTimeout(r, a.delayMs));
      state.answered++;
      if (a.error) return HttpResponse.error();
      return HttpResponse.json((a.body ?? {}) as object, { status: a.status ?? 200 });
    }),
  );
  return state;
}
const wrapped = (status: string, extra: Record<string, unknown> = {}) => ({ body: { data: { task_id: ID, status, ...extra } } });

describe('getTask', () => {
  it('reads the wrapped record with the bearer token, id and vendor encoded', async () => {
    script(wrapped('IN_PROGRESS', { task_id: 'a/b', progress: 40 }));
    const t = await proxy({ vendor: 'ac me' }).getTask('image-relight', 'a/b');
    expect(t).toEqual({ task_id: 'a/b', status: 'IN_PROGRESS', progress: 40 });
    expect(polls[0]!.url).toBe(`${BASE}/proxy/ac%20me/v1/ai/image-relight/a%2Fb`);
    expect(polls[0]!.auth).toBe(`Bearer ${TOKEN}`);
  });

  it('normalizes the bare shape and task_status, keeping unknown fields', async () => {
    script({ body: { task_id: ID, task_status: 'COMPLETED', generated: ['https://cdn.test/r.png'], seed: 7 } });
    const t = await proxy().getTask('skin-enhancer', ID);
    expect(t).toMatchObject({ task_id: ID, status: 'COMPLETED', generated: ['https://cdn.test/r.png'], seed: 7 });
    expect(polls[0]!.url).toBe(`${BASE}/proxy/vendor/v1/ai/skin-enhancer/${ID}`);
  });

  it('fills a missing task_id with the id asked for, and keeps unknown statuses', async () => {
    script({ body: { data: { status: 'QUEUED' } } });
    expect(await proxy().getTask('image-upscaler', ID)).toEqual({ task_id: ID, status: 'QUEUED' });
  });

  it('rejects a record whose status is not a string, and bad arguments before any request', async () => {
    script({ body: { task_id: ID, status: 5 } });
    await expect(proxy().getTask('image-relight', ID)).rejects.toBeInstanceOf(ResponseValidationError);
    await expect(proxy().getTask('', ID)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(proxy().getTask('../x', ID)).rejects.toThrow(/'\.\.' segments/);
    await expect(proxy().getTask('image-relight', '')).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(polls).toHaveLength(1);
  });

  it('rejects an unknown task with NotFoundError', async () => {
    script({ status: 404, body: { error: 'not_found' } });
    await expect(proxy().getTask('image-relight', ID)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('waitForTask', () => {
  it('resolves with the COMPLETED record, calling onStatus once per change', async () => {
    script(wrapped('CREATED'), wrapped('IN_PROGRESS'), wrapped('IN_PROGRESS'), { body: { task_id: ID, task_status: 'COMPLETED', generated: ['https://cdn.test/r.png'] } });
    const seen: string[] = [];
    const p = proxy().waitForTask('image-relight', ID, { pollInterval: 1, onStatus: (t) => seen.push(t.status) });
    const { data, response } = await p.withResponse();
    expect(data.generated).toEqual(['https://cdn.test/r.png']);
    expect(response.status).toBe(200);
    expect(seen).toEqual(['CREATED', 'IN_PROGRESS', 'COMPLETED']);
    expect(polls).toHaveLength(4);
  });

  it('rejects FAILED with a TaskFailedError carrying the record', async () => {
    script(wrapped('IN_PROGRESS'), wrapped('FAILED', { reason: 'nsfw' }));
    const err = await proxy().waitForTask('image-relight', ID, { pollInterval: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskFailedError);
    expect((err as TaskFailedError).task).toEqual({ task_id: ID, status: 'FAILED', reason: 'nsfw' });
    expect((err as TaskFailedError).message).toBe(`Task ${ID} (image-relight) ended FAILED`);
  });

  it('survives 5xx, network failures and an early 404', async () => {
    script({ status: 404 }, { status: 500 }, { error: true }, { status: 503 }, wrapped('COMPLETED'));
    const t = await proxy({ retry: false }).waitForTask('image-relight', ID, { pollInterval: 1 });
    expect(t.status).toBe('COMPLETED');
    expect(polls).toHaveLength(5);
  });

  it('gives up after maxTransientErrors in a row with the last error', async () => {
    script({ status: 500, body: { message: 'boom' } });
    await expect(proxy({ retry: false }).waitForTask('image-relight', ID, { pollInterval: 1, maxTransientErrors: 2 })).rejects.toBeInstanceOf(InternalServerError);
    expect(polls).toHaveLength(3);
  });

  it('treats a 404 after the grace period, or after the task was seen, as no such task', async () => {
    script({ status: 404 });
    await expect(proxy().waitForTask('image-relight', ID, { pollInterval: 1, notFoundGrace: 0 })).rejects.toBeInstanceOf(NotFoundError);
    expect(polls).toHaveLength(1);
    polls.length = 0;
    script(wrapped('IN_PROGRESS'), { status: 404 });
    await expect(proxy().waitForTask('image-relight', ID, { pollInterval: 1 })).rejects.toBeInstanceOf(NotFoundError);
    expect(polls).toHaveLength(2);
  });

  it('has its own wording for the deadline of the whole wait', async () => {
    script(wrapped('IN_PROGRESS'));
    const err = await proxy().waitForTask('image-relight', ID, { pollInterval: 10, timeout: 60 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskTimeoutError);
    expect(err).not.toBeInstanceOf(APIConnectionError); // the task may still run: not a failed request
    expect((err as TaskTimeoutError).message).toBe(`Task ${ID} (image-relight) did not finish within 60 ms (last status IN_PROGRESS); it may still be running`);
    expect((err as TaskTimeoutError).task?.status).toBe('IN_PROGRESS');
  });

  it('times out during a slow read too (the deadline is not per request)', async () => {
    const slow = script({ ...wrapped('IN_PROGRESS'), delayMs: 2000 });
    await expect(proxy().waitForTask('image-relight', ID, { timeout: 50 })).rejects.toThrow(/no status read yet/);
    expect(slow.answered).toBe(0); // not after the read's answer (2 s): ordered, not timed
  });

  it('stops at once on abort between reads, keeping the reason, with no request after it', async () => {
    script(wrapped('IN_PROGRESS'));
    const ctl = new AbortController();
    const reason = new Error('user left');
    const p = proxy().waitForTask('image-relight', ID, { signal: ctl.signal, pollInterval: 30, onStatus: () => setTimeout(() => ctl.abort(reason), 5) });
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect((err as APIUserAbortError).cause).toBe(reason);
    const count = polls.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(polls).toHaveLength(count);
    expect(count).toBe(1);
  });

  it('stops at once on abort during a read, and sends nothing when already aborted', async () => {
    const slow = script({ ...wrapped('IN_PROGRESS'), delayMs: 2000 });
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 20);
    const err = await proxy().waitForTask('image-relight', ID, { signal: ctl.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect((err as Error).cause).toBe(ctl.signal.reason);
    expect(slow.answered).toBe(0); // not after the read's answer (2 s): ordered, not timed
    polls.length = 0;
    await expect(proxy().waitForTask('image-relight', ID, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(APIUserAbortError);
    expect(polls).toHaveLength(0);
  });

  it('checks its options before any request', async () => {
    await expect(proxy().waitForTask('image-relight', ID, { timeout: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(proxy().waitForTask('image-relight', ID, { pollInterval: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(polls).toHaveLength(0);
  });

  it('backs off by default from about 1 s to 10 s, with jitter', () => {
    expect(defaultPollDelay(0, () => 0.5)).toBe(1000);
    expect(defaultPollDelay(1, () => 0.5)).toBe(1500);
    expect(defaultPollDelay(0, () => 0)).toBe(800);
    expect(defaultPollDelay(0, () => 1)).toBe(1200);
    expect(defaultPollDelay(30, () => 1)).toBe(10_000);
    expect(defaultPollDelay(30, () => 0)).toBe(8000);
    const delays = Array.from({ length: 12 }, (_, n) => defaultPollDelay(n, () => 0.5));
    expect(delays).toEqual([...delays].sort((a, b) => a - b));
  });
});

describe('start and wait', () => {
  it('relightImageAndWait posts once, reports the start, and resolves with the finished task', async () => {
    accept();
    script(wrapped('IN_PROGRESS'), wrapped('COMPLETED', { generated: ['https://cdn.test/r.png'] }));
    let started: Task | undefined;
    const done = await proxy().relightImageAndWait({ image: 'https://example.com/in.jpg' }, { pollInterval: 1, onStarted: (t) => (started = t) });
    expect(started?.status).toBe('CREATED');
    expect(done.generated).toEqual(['https://cdn.test/r.png']);
    expect(bodies).toHaveLength(1);
    expect(polls[0]!.url).toContain('/v1/ai/image-relight/');
  });

  it('enhanceSkinCreativeAndWait reads back under skin-enhancer, and never re-sends the POST', async () => {
    accept();
    script(wrapped('COMPLETED'));
    expect((await proxy().enhanceSkinCreativeAndWait({ image: 'https://example.com/in.jpg' }, { pollInterval: 1 })).status).toBe('COMPLETED');
    expect(polls[0]!.url).toBe(`${BASE}/proxy/vendor/v1/ai/skin-enhancer/${ID}`);
    bodies.length = 0;
    accept(500);
    await expect(proxy().enhanceSkinCreativeAndWait({ image: 'https://example.com/in.jpg' })).rejects.toBeInstanceOf(InternalServerError);
    expect(bodies).toHaveLength(1);
  });
});

describe('downloadResult', () => {
  const RESULT = 'https://results.test/r/0.png?X-Amz-Signature=SIGNED_secret';
  it('fetches without the token, client headers or hooks', async () => {
    const got: Headers[] = [];
    server.use(http.get('https://results.test/r/0.png', ({ request }) => (got.push(request.headers), new HttpResponse(new Uint8Array([1, 2, 3])))));
    let hooked = 0;
    const p = proxy({ headers: { 'x-team': 'a', Cookie: 'c=1' }, hooks: { beforeRequest: [() => void hooked++] } });
    const res = await p.downloadResult(RESULT);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array([1, 2, 3]));
    expect(got[0]!.get('authorization')).toBeNull();
    expect(got[0]!.get('x-team')).toBeNull();
    expect(got[0]!.get('cookie')).toBeNull();
    expect(hooked).toBe(0);
  });

  it('follows a redirect without credentials', async () => {
    const got: Headers[] = [];
    server.use(
      http.get('https://results.test/go', () => HttpResponse.redirect('https://cdn2.test/final.png', 302)),
      http.get('https://cdn2.test/final.png', ({ request }) => (got.push(request.headers), new HttpResponse('png'))),
    );
    expect(await (await proxy().downloadResult('https://results.test/go')).text()).toBe('png');
    expect(got[0]!.get('authorization')).toBeNull();
  });

  it('refuses non-http(s) URLs and redacts signatures in errors', async () => {
    for (const bad of ['file:///etc/passwd', 'data:,x', '/relative.png', '']) await expect(proxy().downloadResult(bad)).rejects.toBeInstanceOf(InvalidArgumentError);
    server.use(http.get('https://results.test/r/0.png', () => HttpResponse.json({ message: 'expired' }, { status: 403 })));
    const err = await proxy().downloadResult(RESULT).catch((e: unknown) => e);
    expect(String(err)).toContain('X-Amz-Signature=[REDACTED]');
    expect(String(err)).not.toContain('SIGNED_secret');
  });
});

describe('review fixes: paths, records and timeouts that must not be taken', () => {
  it('a task id or vendor that URL parsing would turn into another path is refused before any request', async () => {
    for (const id of ['..', '.', '%2e%2E', 'a\tb']) await expect(proxy().getTask('image-relight', id)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(proxy().confirmNotification(JSON.stringify({ task_id: '..', status: 'COMPLETED' }))).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(() => proxy({ vendor: '..' })).toThrow(InvalidArgumentError);
    expect(bodies).toHaveLength(0);
  });

  it('a record of another task is not an answer about this one', async () => {
    server.use(http.get(`${BASE}/proxy/vendor/v1/ai/image-relight/:id`, () => HttpResponse.json({ data: { task_id: 'someone-else', status: 'COMPLETED' } })));
    await expect(proxy().getTask('image-relight', 'mine')).rejects.toBeInstanceOf(ResponseValidationError);
  });

  it('request() refuses backslashes and control characters, which fetch would read as path separators', async () => {
    for (const path of ['/a\\..\\..\\admin', '/.\t./admin', '/a\nb']) await expect(proxy({ baseUrl: `${BASE}/prefix` }).request({ method: 'GET', path })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('downloadResult: the timeout covers the wait for the headers, not a long body', async () => {
    server.use(
      http.get('https://results.test/slow.png', () => {
        const stream = new ReadableStream<Uint8Array>({
          async start(c) {
            for (let i = 0; i < 4; i++) {
              c.enqueue(new Uint8Array([i]));
              await new Promise((r) => setTimeout(r, 80));
            }
            c.close();
          },
        });
        return new HttpResponse(stream);
      }),
    );
    const res = await proxy().downloadResult('https://results.test/slow.png', { timeout: 100 });
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array([0, 1, 2, 3]));
  });

  it('TaskFailedError.task never shows the token a server echoed', async () => {
    server.use(http.get(`${BASE}/proxy/vendor/v1/ai/image-relight/:id`, () => HttpResponse.json({ data: { task_id: 't1', status: 'FAILED', detail: `token ${TOKEN}` } })));
    const err = await proxy().waitForTask('image-relight', 't1', { pollInterval: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskFailedError);
    expect(JSON.stringify((err as TaskFailedError).task)).not.toContain(TOKEN);
  });
});

describe('confirmNotification', () => {
  it("answers with the server's record, not the body's", async () => {
    script(wrapped('IN_PROGRESS'));
    const t = await proxy().confirmNotification(JSON.stringify({ task_id: ID, status: 'COMPLETED', generated: ['https://evil.test/x.png'] }), { operation: 'image-relight' });
    expect(t).toEqual({ task_id: ID, status: 'IN_PROGRESS' });
    expect(polls[0]!.auth).toBe(`Bearer ${TOKEN}`);
  });

  it('tries each known operation in turn without one', async () => {
    let i = 0;
    server.use(http.get(STATUS_URL, ({ params }) => (polls.push({ url: String(params.op), auth: null, at: 0 }), i++ === 0 ? HttpResponse.json({}, { status: 404 }) : HttpResponse.json(wrapped('COMPLETED').body))));
    expect((await proxy().confirmNotification({ data: { task_id: ID, status: 'COMPLETED' } })).status).toBe('COMPLETED');
    expect(polls.map((p) => p.url)).toEqual(['image-relight', 'skin-enhancer']);
  });

  it('refuses an unknown task with TaskNotFoundError, and a body without task_id', async () => {
    script({ status: 404 });
    const err = await proxy().confirmNotification({ task_id: 'forged', status: 'COMPLETED' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskNotFoundError);
    expect((err as TaskNotFoundError).operations).toEqual(['image-relight', 'skin-enhancer']);
    expect((err as Error).message).toBe('No task forged under image-relight, skin-enhancer: notification not confirmed');
    await expect(proxy().confirmNotification({ status: 'COMPLETED' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(proxy().confirmNotification('not json')).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('request()', () => {
  it('sends below the base URL with the bearer token, query and JSON body', async () => {
    const got: Array<{ url: string; auth: string | null; body: unknown; method: string }> = [];
    server.use(http.all(`${BASE}/proxy/acme/v1/ai/image-upscaler`, async ({ request }) => (got.push({ url: request.url, method: request.method, auth: request.headers.get('authorization'), body: request.method === 'GET' ? undefined : await request.json() }), HttpResponse.json({ data: { task_id: 'u1' } }))));
    const out = await proxy().request({ method: 'POST', path: '/proxy/acme/v1/ai/image-upscaler', query: { dry: true, x: undefined }, body: { scale_factor: 2 } });
    expect(out).toEqual({ data: { task_id: 'u1' } });
    expect(got[0]).toEqual({ url: `${BASE}/proxy/acme/v1/ai/image-upscaler?dry=true`, method: 'POST', auth: `Bearer ${TOKEN}`, body: { scale_factor: 2 } });
  });

  it('never re-sends a POST or PATCH; retries a GET', async () => {
    let n = 0;
    server.use(http.all(`${BASE}/proxy/acme/v1/ai/x`, () => (n++, HttpResponse.json({ message: 'down' }, { status: 503 }))));
    await expect(proxy().request({ method: 'POST', path: '/proxy/acme/v1/ai/x', body: {} })).rejects.toBeInstanceOf(InternalServerError);
    expect(n).toBe(1);
    await expect(proxy().request({ method: 'PATCH', path: '/proxy/acme/v1/ai/x', body: {}, options: { retry: 5 } })).rejects.toBeInstanceOf(InternalServerError);
    expect(n).toBe(2);
    await expect(proxy().request({ method: 'GET', path: '/proxy/acme/v1/ai/x' })).rejects.toBeInstanceOf(InternalServerError);
    expect(n).toBe(5);
  });

  it('refuses paths that would leave the base URL', async () => {
    for (const bad of ['proxy/x', '//evil.test/x', 'https://evil.test/x', '/a/../b', '/a?b=1', '/a/%2e%2e/b']) {
      await expect(proxy().request({ method: 'GET', path: bad })).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(proxy().request({ method: 'TRACE' as 'GET', path: '/x' })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
