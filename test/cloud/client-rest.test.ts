// CloudClient REST against msw: paths, parts, bodies, error mapping, download rules, redaction.
import { mkdtempSync, writeFileSync, readFileSync, createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { inspect } from 'node:util';
import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it } from 'vitest';
import { interceptHttp } from '../helpers/msw.ts';
import { recorder } from '../helpers/log-recorder.ts';
import {
  APIConnectionError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  CloudClient,
  DownloadError,
  InsufficientCreditsError,
  InternalServerError,
  InvalidArgumentError,
  SubmissionError,
  SubscriptionInactiveError,
} from '../../src/index.ts';

const BASE = 'https://cloud.test';
const KEY = 'ck_live_SECRET_0123456789';
const { server, seen } = interceptHttp();

const cloud = (o: Partial<ConstructorParameters<typeof CloudClient>[0]> = {}) => new CloudClient({ baseUrl: BASE, apiKey: KEY, retry: { limit: 2, backoffLimit: 5 }, ...o });
const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const workflow = { '1': { class_type: 'LoadImage', inputs: { image: 'a.png' } }, '2': { class_type: 'SaveImage', inputs: { images: ['1', 0] } } };

describe('uploads', () => {
  const parts: Array<Record<string, unknown>> = [];
  const capture = () =>
    server.use(
      http.post(`${BASE}/api/upload/:kind`, async ({ request }) => {
        const form = await request.formData();
        const out: Record<string, unknown> = {};
        for (const [k, v] of form) out[k] = typeof v === 'string' ? v : { name: (v as File).name, bytes: new Uint8Array(await (v as File).arrayBuffer()) };
        parts.push(out);
        return HttpResponse.json({ name: 'abc.png', subfolder: '', type: 'input' });
      }),
    );
  afterEach(() => void (parts.length = 0));

  it('sends image, type and overwrite parts with the API key', async () => {
    capture();
    const res = await cloud().uploadImage(new Blob([png], { type: 'image/png' }), { filename: 'in.png', overwrite: true, type: 'temp' });
    expect(res).toEqual({ name: 'abc.png', subfolder: '', type: 'input' });
    expect(parts[0]).toEqual({ image: { name: 'in.png', bytes: png }, type: 'temp', overwrite: 'true' });
    expect(seen[0]!.headers.get('x-api-key')).toBe(KEY);
    expect(new URL(seen[0]!.url).pathname).toBe('/api/upload/image');
  });

  it('takes every input kind', async () => {
    capture();
    const dir = mkdtempSync(join(tmpdir(), 'sdk-up-'));
    const file = join(dir, 'photo.png');
    writeFileSync(file, png);
    const c = cloud();
    await c.uploadImage(png);
    await c.uploadImage(png.buffer.slice(0) as ArrayBuffer);
    await c.uploadImage(new File([png], 'file.png'));
    await c.uploadImage(new Blob([png]).stream(), { filename: 'web.png' });
    await c.uploadImage(Readable.from([png.subarray(0, 4), png.subarray(4)]), { filename: 'node.png' });
    await c.uploadImage(createReadStream(file), { filename: 'fs.png' });
    await c.uploadImage(file);
    expect(parts.map((p) => (p.image as { name: string }).name)).toEqual(['upload.bin', 'upload.bin', 'file.png', 'web.png', 'node.png', 'fs.png', 'photo.png']);
    for (const p of parts) {
      expect((p.image as { bytes: Uint8Array }).bytes).toEqual(png);
      expect(p.type).toBe('input');
    }
  });

  it('sends a mask with type input and the JSON original_ref', async () => {
    capture();
    const originalRef = { filename: 'abc.png', subfolder: '', type: 'input' as const };
    await cloud().uploadMask(png, { originalRef, filename: 'mask.png' });
    expect(new URL(seen[0]!.url).pathname).toBe('/api/upload/mask');
    expect(parts[0]).toMatchObject({ type: 'input', subfolder: '', original_ref: JSON.stringify(originalRef) });
  });

  it('rejects bad input before any request', async () => {
    const c = cloud();
    await expect(c.uploadImage(42 as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(c.uploadImage(png, { type: 'output' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(c.uploadMask(png, { originalRef: { subfolder: '' } as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(c.uploadImage('/no/such/file.png')).rejects.toThrow();
    expect(seen).toHaveLength(0);
  });

  it('never re-sends an upload stream', async () => {
    server.use(http.post(`${BASE}/api/upload/image`, () => HttpResponse.json({ error: 'x', message: 'y' }, { status: 503 })));
    await expect(cloud().uploadImage(png)).rejects.toBeInstanceOf(InternalServerError);
    expect(seen).toHaveLength(1);
  });
});

describe('submit', () => {
  const bodies: any[] = [];
  afterEach(() => void (bodies.length = 0));
  const answer = (status: number, body: unknown) =>
    server.use(http.post(`${BASE}/api/prompt`, async ({ request }) => (bodies.push(await request.json()), HttpResponse.json(body as object, { status }))));

  it('sends the workflow; partnerApiKey true sends the client key in extra_data', async () => {
    answer(200, { prompt_id: 'p1', number: 3 });
    expect((await cloud().submit(workflow)).prompt_id).toBe('p1');
    await cloud().submit(workflow, { partnerApiKey: true, extraData: { foo: 1 }, clientId: 'c1' });
    await cloud().submit(workflow, { partnerApiKey: 'other_key_123' });
    // Every submission carries an id chosen before the request (a server that answers with its own is remembered).
    expect(bodies[0]).toEqual({ prompt: workflow, prompt_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/) });
    expect(bodies[1]).toEqual({ prompt: workflow, extra_data: { foo: 1, api_key_platform_org: KEY }, client_id: 'c1', prompt_id: expect.any(String) });
    expect(new Set(bodies.map((b) => b.prompt_id)).size).toBe(3);
    await cloud().submit(workflow, { promptId: 'mine-1' });
    expect(bodies[3].prompt_id).toBe('mine-1');
    expect(bodies[2].extra_data).toEqual({ api_key_platform_org: 'other_key_123' });
  });

  it('scrubs an explicit partner key that a rejection echoes', async () => {
    const partner = 'pk_partner_SECRET_777';
    answer(400, { error: { type: 'bad', message: `partner key ${partner} refused` }, node_errors: {} });
    const err: any = await cloud().submit(workflow, { partnerApiKey: partner }).catch((e) => e);
    expect(err).toBeInstanceOf(SubmissionError);
    for (const text of [err.message, JSON.stringify(err), inspect(err, { depth: 10, showHidden: true })]) expect(text).not.toContain(partner);
  });

  it('throws SubmissionError for an error body, whatever the status', async () => {
    const error = { type: 'invalid_prompt', message: 'Cannot execute because node NoSuchNode does not exist.', details: '', extra_info: {} };
    answer(400, { error, node_errors: {} });
    const e1: any = await cloud().submit(workflow).catch((e) => e);
    expect(e1).toBeInstanceOf(SubmissionError);
    expect(e1.status).toBe(400);
    expect(e1.error).toEqual(error);
    expect(e1.message).toContain('NoSuchNode');
    answer(200, { error: 'no credits for partner node' });
    const e2: any = await cloud().submit(workflow).catch((e) => e);
    expect(e2).toBeInstanceOf(SubmissionError);
    expect(e2.status).toBe(200);
  });

  /** The warning of a submission whose answer was lost and whose job its lookups did not find. */
  const lostWarning = (promptId: string) => `warn [platformui] job ${promptId}: its submission's answer was lost and the server does not show it after 50 ms; it may exist (not sent again)`;

  it('never re-sends a submission on 5xx: the job is looked up by its id, and the error names it', async () => {
    answer(502, { error: 'E', message: 'gateway' });
    const looked: string[] = [];
    server.use(http.get(`${BASE}/api/job/:id/status`, ({ params }) => (looked.push(String(params.id)), HttpResponse.json({ error: 'Job not found' }, { status: 404 }))));
    const log = recorder();
    const err: any = await cloud({ logger: log.logger }).submit(workflow, { confirmWithin: 50, retry: { limit: 3, allowPost: true } }).catch((e) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err).toMatchObject({ sent: 'maybe', promptId: bodies[0].prompt_id });
    expect(err.cause).toBeInstanceOf(InternalServerError);
    expect(bodies).toHaveLength(1);
    expect(looked).toContain(bodies[0].prompt_id);
    expect(log.lines.map((l) => `${l.level} ${l.message}`)).toEqual([lostWarning(bodies[0].prompt_id)]);
  });

  it('an answer that names no job (an error body) does not make the client stop looking lost answers up', async () => {
    const log = recorder();
    const c = cloud({ logger: log.logger });
    answer(200, { error: 'no credits for partner node' });
    await expect(c.submit(workflow)).rejects.toBeInstanceOf(SubmissionError);
    const looked: string[] = [];
    server.use(http.get(`${BASE}/api/job/:id/status`, ({ params }) => (looked.push(String(params.id)), HttpResponse.json({ error: 'Job not found' }, { status: 404 }))));
    answer(502, { error: 'E', message: 'gateway' });
    const err: any = await c.submit(workflow, { confirmWithin: 50 }).catch((e) => e);
    expect(err).toMatchObject({ sent: 'maybe', promptId: bodies[1].prompt_id });
    expect(looked).toContain(bodies[1].prompt_id);
    expect(log.lines.map((l) => `${l.level} ${l.message}`)).toEqual([lostWarning(bodies[1].prompt_id)]);
  });

  it('a caller who aborts after sending gets an error naming the job, which may exist', async () => {
    server.use(http.post(`${BASE}/api/prompt`, async ({ request }) => (bodies.push(await request.json()), await new Promise((r) => setTimeout(r, 300)), HttpResponse.json({ prompt_id: 'x' }))));
    const err: any = await cloud().submit(workflow, { signal: AbortSignal.timeout(50) }).catch((e) => e);
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect(err.promptId).toBe(bodies[0].prompt_id);
    expect(err.message).toBe(`Aborted; job ${bodies[0].prompt_id} may exist (its submission may have been sent)`);
  });

  it.each([
    [401, AuthenticationError],
    [402, InsufficientCreditsError],
    [429, SubscriptionInactiveError],
  ] as const)('keeps the status class for %i even with an error body', async (status, Cls) => {
    answer(status, { error: 'E', message: 'no' });
    await expect(cloud().submit(workflow)).rejects.toBeInstanceOf(Cls);
    expect(bodies).toHaveLength(1);
  });

  it('rejects a malformed workflow before any request', async () => {
    for (const w of [{}, { '1': { class_type: 'X' } }, [], null, { '1': 'node' }]) {
      await expect(cloud().submit(w as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(cloud().submit(workflow, { partnerApiKey: '' })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(seen).toHaveLength(0);
  });
});

describe('jobs and queue', () => {
  it('types the five statuses and keeps unknown ones', async () => {
    server.use(http.get(`${BASE}/api/job/:id/status`, ({ params }) => HttpResponse.json({ status: params.id === 'new' ? 'paused_for_review' : 'in_progress' })));
    expect((await cloud().getJobStatus('j/1')).status).toBe('in_progress');
    expect((await cloud().getJobStatus('new')).status).toBe('paused_for_review');
    expect(new URL(seen[0]!.url).pathname).toBe('/api/job/j%2F1/status');
  });

  it('lists, cancels only the given ids, interrupts', async () => {
    const posted: any[] = [];
    server.use(
      http.get(`${BASE}/api/queue`, () => HttpResponse.json({ queue_running: [[0, 'a']], queue_pending: [] })),
      http.post(`${BASE}/api/queue`, async ({ request }) => (posted.push(await request.json()), HttpResponse.json({}))),
      http.post(`${BASE}/api/interrupt`, () => new HttpResponse(null, { status: 200 })),
    );
    expect((await cloud().getQueue()).queue_running).toMatchObject([{ number: 0, promptId: 'a', raw: [0, 'a'] }]);
    await cloud().cancel(['a', 'b']);
    await cloud().cancel('c');
    await cloud().interrupt();
    expect(posted).toEqual([{ delete: ['a', 'b'] }, { delete: ['c'] }]);
    await expect(cloud().cancel([])).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('gets object_info', async () => {
    server.use(http.get(`${BASE}/api/object_info`, () => HttpResponse.json({ LoadImage: { input: { required: { image: [['a.png']] } }, output: ['IMAGE'] } })));
    const info = await cloud().getObjectInfo();
    expect(info.LoadImage!.input!.required!.image).toEqual([['a.png']]);
  });
});

describe('errors', () => {
  it.each([
    [400, BadRequestError, 1],
    [401, AuthenticationError, 1],
    [402, InsufficientCreditsError, 1],
    [429, SubscriptionInactiveError, 1],
    [500, InternalServerError, 3],
  ] as const)('%i → %O, sent %i time(s) in all', async (status, Cls, attempts) => {
    server.use(http.get(`${BASE}/api/queue`, () => HttpResponse.json({ error: 'e', message: `status ${status}` }, { status, headers: { 'retry-after': '0' } })));
    const log = recorder();
    await expect(cloud({ logger: log.logger }).getQueue()).rejects.toBeInstanceOf(Cls);
    expect(seen).toHaveLength(attempts);
    // A warning per retry, none for an error that is not retried.
    const retries = Array.from({ length: attempts - 1 }, (_, i) => `warn [platformui] GET ${BASE}/api/queue: HTTP ${status}; retrying in 0 ms (attempt ${i + 2} of 3)`);
    expect(log.lines.map((l) => `${l.level} ${l.message}`)).toEqual(retries);
  });

  it('never shows the API key', async () => {
    server.use(http.get(`${BASE}/api/queue`, ({ request }) => HttpResponse.json({ error: 'bad key', message: `key ${request.headers.get('x-api-key')} rejected` }, { status: 401 })));
    const err: any = await cloud().getQueue().catch((e) => e);
    for (const text of [err.message, err.stack, JSON.stringify(err), inspect(err, { depth: 10, showHidden: true })]) expect(text).not.toContain(KEY);
  });
});

describe('download', () => {
  const SIGNED = 'https://storage.test/out.png?sig=abc123&expires=99';
  it('follows the 302 itself and fetches the signed URL with no credential', async () => {
    server.use(
      http.get(`${BASE}/api/view`, () => new HttpResponse(null, { status: 302, headers: { location: SIGNED } })),
      http.get('https://storage.test/out.png', () => HttpResponse.arrayBuffer(png.buffer as ArrayBuffer, { headers: { 'content-type': 'image/png' } })),
    );
    const res = await cloud({ headers: { 'X-Extra': '1' } }).download({ filename: 'out.png', subfolder: '', type: 'output' });
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(png);
    const [view, signed] = seen;
    expect(Object.fromEntries(new URL(view!.url).searchParams)).toEqual({ filename: 'out.png', subfolder: '', type: 'output' });
    expect(view!.headers.get('x-api-key')).toBe(KEY);
    expect(signed!.url).toBe(SIGNED);
    expect(signed!.headers.get('x-api-key')).toBeNull();
    expect(signed!.headers.get('authorization')).toBeNull();
    expect(signed!.headers.get('x-extra')).toBeNull();
  });

  it('returns a 200 /api/view answer directly (local counterpart server)', async () => {
    server.use(http.get(`${BASE}/api/view`, () => HttpResponse.arrayBuffer(png.buffer as ArrayBuffer)));
    expect(new Uint8Array(await (await cloud().download({ filename: 'x.png' })).arrayBuffer())).toEqual(png);
  });

  it.each([
    ['missing_location', {}],
    ['insecure_location', { location: 'http://storage.test/out.png?sig=1' }],
  ])('refuses a redirect with %s', async (reason, headers) => {
    server.use(http.get(`${BASE}/api/view`, () => new HttpResponse(null, { status: 302, headers })));
    const err: any = await cloud().download({ filename: 'x.png' }).catch((e) => e);
    expect(err).toBeInstanceOf(DownloadError);
    expect(err.reason).toBe(reason);
    expect(seen).toHaveLength(1);
  });

  it('maps an expired signed URL to an APIError with the signature redacted', async () => {
    server.use(
      http.get(`${BASE}/api/view`, () => new HttpResponse(null, { status: 302, headers: { location: SIGNED } })),
      http.get('https://storage.test/out.png', () => new HttpResponse('expired', { status: 403 })),
    );
    const err: any = await cloud().download({ filename: 'out.png' }).catch((e) => e);
    expect(err.status).toBe(403);
    expect(err.url).not.toContain('abc123');
  });

  it('saves to a file, streaming (Node)', async () => {
    server.use(
      http.get(`${BASE}/api/view`, () => new HttpResponse(null, { status: 302, headers: { location: SIGNED } })),
      http.get('https://storage.test/out.png', () => HttpResponse.arrayBuffer(png.buffer as ArrayBuffer)),
    );
    const dest = join(mkdtempSync(join(tmpdir(), 'sdk-dl-')), 'out.png');
    expect(await cloud().downloadToFile({ filename: 'out.png' }, dest)).toBe(png.length);
    expect(new Uint8Array(readFileSync(dest))).toEqual(png);
  });
});

describe('keyless (a relay of yours adds the key)', () => {
  it('speaks the cloud protocol without a key, even one in the environment', async () => {
    const previous = process.env.PLATFORMUI_API_KEY;
    process.env.PLATFORMUI_API_KEY = KEY;
    try {
      server.use(http.get(`${BASE}/api/job/:id/status`, () => HttpResponse.json({ status: 'success' })));
      const c = new CloudClient({ baseUrl: BASE, server: 'cloud', keyless: true });
      expect(c.server).toBe('cloud');
      expect(await c.getJobStatus('p1')).toMatchObject({ status: 'success', phase: 'completed' });
      expect(new URL(seen[0]!.url).pathname).toBe('/api/job/p1/status'); // the cloud's route, not a local server's /history
      expect(seen[0]!.headers.get('x-api-key')).toBeNull();
      // Without keyless, the same call carries the environment's key: the option is what removed it.
      await new CloudClient({ baseUrl: BASE, server: 'cloud' }).getJobStatus('p2');
      expect(seen[1]!.headers.get('x-api-key')).toBe(KEY);
    } finally {
      if (previous === undefined) delete process.env.PLATFORMUI_API_KEY;
      else process.env.PLATFORMUI_API_KEY = previous;
    }
  });

  it('refuses an apiKey given with keyless', () => {
    expect(() => new CloudClient({ baseUrl: BASE, keyless: true, apiKey: KEY })).toThrow(InvalidArgumentError);
  });
});
