// CloudClient's REST side against the emulator over real loopback HTTP: every
// endpoint, every error status with its class and its retry behaviour (counted
// in emulator.requests), redaction of the API key from every error form,
// downloads through the signed-URL redirect (the emulator answers 403 to a
// signed URL fetched with a key, so a leak fails these tests), uploads of each
// input kind, and submission rejections as SubmissionError.
import { createHash } from 'node:crypto';
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  AuthenticationError,
  BadRequestError,
  CloudClient,
  InsufficientCreditsError,
  InternalServerError,
  NotFoundError,
  RegistryClient,
  ResponseValidationError,
  InvalidArgumentError,
  SubmissionError,
  WorkflowValidationError,
  validateWorkflow,
  SubscriptionInactiveError,
  type FileRef,
} from '../../src/index.ts';
import { EMULATOR_API_KEY, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { recorder } from '../helpers/log-recorder.ts';

// A key that looks like a real secret, so a leak is unmistakable in any text.
const KEY = 'ck_live_SECRET_7f3a9c21d4e8b605';
const MiB = 1024 * 1024;
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

let emu: Emulator;
let dir: string;
beforeAll(async () => {
  emu = await startEmulator({ personality: 'spec', apiKeys: { [KEY]: { parallel: 2 }, [EMULATOR_API_KEY]: { parallel: 2 } }, cloud: { stepMs: 2, progressSteps: 2 } });
  dir = mkdtempSync(join(tmpdir(), 'sdk-cloud-it-'));
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  emu.cloud.reset();
  emu.faults.reset();
  emu.cloud.stepMs = 2;
  emu.cloud.progressSteps = 2;
  emu.cloud.maxUploadBytes = 100 * MiB;
  emu.cloud.viewMode = 'redirect';
  emu.cloud.signedUrlTtlMs = 60_000;
  emu.cloud.now = () => Date.now();
  emu.requests.length = 0;
});

const client = (o: Partial<ConstructorParameters<typeof CloudClient>[0]> = {}) =>
  new CloudClient({ baseUrl: emu.url, apiKey: KEY, retry: { limit: 2, backoffLimit: 5 }, ...o });

/** Deterministic pseudo-random bytes (distinct per seed). */
function bytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed * 2654435761 + 1;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);

async function uploadInput(c = client(), data: Uint8Array = PNG): Promise<string> {
  return (await c.uploadImage(data, { filename: 'in.png' })).name;
}

const workflow = (image: string, prefix = 'out', extra: Record<string, unknown> = {}) => ({
  '1': { class_type: 'LoadImage', inputs: { image } },
  '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0], ...extra } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
});

/** Polls the job status through the SDK until `want` (or throws after `ms`). */
async function waitStatus(c: CloudClient, id: string, want: string | ((s: string) => boolean), ms = 5000): Promise<Record<string, unknown>> {
  const ok = typeof want === 'string' ? (s: string) => s === want : want;
  const until = Date.now() + ms;
  for (;;) {
    const status: Record<string, unknown> & { status: string } = { ...(await c.getJobStatus(id)) };
    if (ok(status.status)) return status;
    if (Date.now() > until) throw new Error(`job ${id} stayed ${status.status}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Runs a job to completion and returns its SaveImage output reference. */
async function produceOutput(c = client(), prefix = 'out'): Promise<FileRef & { filename: string; type: string }> {
  const { prompt_id } = await c.submit(workflow(await uploadInput(c), prefix));
  const done = await waitStatus(c, prompt_id, 'completed');
  const ref = (done.outputs as Record<string, { images: Array<{ filename: string; subfolder: string; type: string }> }>)['3']!.images[0]!;
  return ref;
}

const requestsTo = (method: string, path: RegExp | string) =>
  emu.requests.filter((r) => r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path)));

/** Every text form an error can take when logged or reported. */
function errorTexts(err: unknown): string[] {
  const e = err as Error;
  return [
    e.message,
    String(e.stack),
    String(e),
    JSON.stringify(e),
    inspect(e, { showHidden: true, depth: Infinity }),
    inspect(e, { showHidden: true, depth: Infinity, getters: true }),
  ];
}

function expectNoKey(err: unknown, key = KEY): void {
  expect(err).toBeInstanceOf(Error);
  for (const text of errorTexts(err)) expect(text).not.toContain(key);
}

// ---------------------------------------------------------------------------

describe('getObjectInfo', () => {
  it('returns the node catalogue, with uploaded inputs listed for LoadImage', async () => {
    const c = client();
    const before = await c.getObjectInfo();
    expect(Object.keys(before).sort()).toEqual(['EmptyImage', 'ImageBlur', 'ImageInvert', 'ImageScale', 'LoadImage', 'PartnerRelightNode', 'PreviewAny', 'PreviewImage', 'SaveAnimatedPNG', 'SaveImage', 'VHS_VideoCombine']);
    expect(before.LoadImage!.input!.required!.image).toEqual([[], { image_upload: true }]);
    const name = await uploadInput(c);
    const after = await c.getObjectInfo();
    expect(after.LoadImage!.input!.required!.image).toEqual([[name], { image_upload: true }]);
    const gets = requestsTo('GET', '/api/object_info');
    expect(gets).toHaveLength(2);
    for (const r of gets) expect(r.headers['x-api-key']).toBe(KEY);
  });
});

describe('uploads', () => {
  // 200 KiB: several chunks for the stream kinds, small enough for the emulator to keep the bytes.
  const data = bytes(200 * 1024, 1);
  const file = () => {
    const p = join(dir, 'photo.png');
    writeFileSync(p, data);
    return p;
  };
  const chunks = (b: Uint8Array, size: number) => Array.from({ length: Math.ceil(b.length / size) }, (_, i) => b.subarray(i * size, (i + 1) * size));
  const kinds: Array<[string, (b: Uint8Array) => Parameters<CloudClient['uploadImage']>[0], string]> = [
    ['Blob', (b) => new Blob([b as BlobPart], { type: 'image/png' }), '.bin'],
    ['File', (b) => new File([b as BlobPart], 'photo.png', { type: 'image/png' }), '.png'],
    ['Uint8Array', (b) => b, '.bin'],
    ['Uint8Array view into a larger buffer', (b) => new Uint8Array([9, 9, ...b, 9]).subarray(2, 2 + b.length), '.bin'],
    ['ArrayBuffer', (b) => b.slice().buffer as ArrayBuffer, '.bin'],
    [
      'web ReadableStream',
      (b) => {
        const parts = chunks(b, 7000);
        return new ReadableStream<Uint8Array>({ pull: (ctl) => void (parts.length ? ctl.enqueue(parts.shift()!) : ctl.close()) });
      },
      '.bin',
    ],
    ['Node Readable', (b) => Readable.from(chunks(b, 9000)), '.bin'],
  ];

  it.each(kinds)('uploads a %s, streamed to a content-addressed name', async (_kind, make, ext) => {
    const c = client();
    const res = await c.uploadImage(make(data));
    expect(res).toEqual({ name: sha(data) + ext, subfolder: '', type: 'input' });
    const stored = emu.cloud.files.get(res.name, 'input')!;
    expect(stored.size).toBe(data.length);
    expect(stored.sha256).toBe(sha(data));
    expect(new Uint8Array(stored.data!)).toEqual(data);
    const posts = requestsTo('POST', '/api/upload/image');
    expect(posts).toHaveLength(1);
    expect(posts[0]!.headers['x-api-key']).toBe(KEY);
    expect(posts[0]!.headers['content-type']).toMatch(/^multipart\/form-data; ?boundary=/);
  });

  it('uploads a file path and an fs.createReadStream of it', async () => {
    const c = client();
    const p = file();
    const fromPath = await c.uploadImage(p);
    expect(fromPath.name).toBe(`${sha(data)}.png`); // the path's base name gives the extension
    const fromStream = await c.uploadImage(createReadStream(p), { filename: 'stream.png' });
    expect(fromStream.name).toBe(fromPath.name);
    expect(new Uint8Array(emu.cloud.files.get(fromPath.name, 'input')!.data!)).toEqual(data);
  });

  it('names by content: same bytes, same name whatever the kind or file name; other bytes, another name', async () => {
    const c = client();
    const names = new Set<string>();
    for (const [, make] of kinds) names.add((await c.uploadImage(make(data), { filename: 'x.PNG' })).name);
    names.add((await c.uploadImage(file(), { filename: 'y.png' })).name);
    expect([...names]).toEqual([`${sha(data)}.png`]);
    const other = bytes(data.length, 2);
    const otherName = (await c.uploadImage(other, { filename: 'x.png' })).name;
    expect(otherName).toBe(`${sha(other)}.png`);
    expect(otherName).not.toBe([...names][0]);
    expect(emu.cloud.files.names('input')).toEqual([`${sha(data)}.png`, otherName].sort());
  });

  it('sends type and overwrite', async () => {
    const c = client();
    const res = await c.uploadImage(PNG, { filename: 'tmp.png', type: 'temp', overwrite: true });
    expect(res).toEqual({ name: `${sha(PNG)}.png`, subfolder: '', type: 'temp' });
    expect(emu.cloud.files.has(res.name, 'temp')).toBe(true);
    expect(emu.cloud.files.has(res.name, 'input')).toBe(false);
  });

  it('uploads a mask with its original_ref', async () => {
    const c = client();
    const image = await c.uploadImage(PNG, { filename: 'in.png' });
    const mask = bytes(1000, 3);
    const res = await c.uploadMask(mask, { originalRef: { filename: image.name, subfolder: '', type: 'input' }, filename: 'mask.png' });
    expect(res).toEqual({ name: `${sha(mask)}.png`, subfolder: '', type: 'input' });
    expect(new Uint8Array(emu.cloud.files.get(res.name, 'input')!.data!)).toEqual(mask);
    expect(requestsTo('POST', '/api/upload/mask')).toHaveLength(1);
  });

  it('maps the server refusing a mask for an unknown original to BadRequestError', async () => {
    const err: any = await client()
      .uploadMask(PNG, { originalRef: { filename: 'never-uploaded.png', subfolder: '', type: 'input' } })
      .catch((e) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.status).toBe(400);
    expect(err.message).toContain('never-uploaded.png');
  });

  it('maps an upload above the server limit to BadRequestError, without retrying', async () => {
    emu.cloud.maxUploadBytes = 1000;
    const err: any = await client().uploadImage(bytes(5000, 4)).catch((e) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.error).toBe('file_too_large');
    expect(requestsTo('POST', '/api/upload/image')).toHaveLength(1);
  });
});

describe('submit and job status', () => {
  it('submits, reports in_progress then completed with outputs', async () => {
    emu.cloud.stepMs = 40;
    const c = client();
    const { prompt_id, ...rest } = await c.submit(workflow(await uploadInput(c)));
    expect(prompt_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(rest).toMatchObject({ number: expect.any(Number), node_errors: {} });
    await waitStatus(c, prompt_id, 'in_progress');
    const done = await waitStatus(c, prompt_id, 'completed');
    expect(done.outputs).toEqual({ '3': { images: [{ filename: 'out_00001_.png', subfolder: '', type: 'output' }] } });
    expect(emu.cloud.engine.jobs.get(prompt_id)!.key).toBe(KEY);
  });

  it('reports pending behind a parallel limit of 1', async () => {
    emu.cloud.stepMs = 200;
    emu.cloud.setParallel(KEY, 1);
    const c = client();
    const image = await uploadInput(c);
    const a = (await c.submit(workflow(image, 'a'))).prompt_id;
    const b = (await c.submit(workflow(image, 'b'))).prompt_id;
    await waitStatus(c, a, 'in_progress');
    expect((await c.getJobStatus(b)).status).toBe('pending');
    await c.cancel([a, b]);
  });

  it('reports failed with the error', async () => {
    const c = client();
    emu.cloud.failNextWith(KEY, 'OOMError', { message: 'out of memory (emulated)' });
    const { prompt_id } = await c.submit(workflow(await uploadInput(c)));
    const failed = await waitStatus(c, prompt_id, (s) => s !== 'pending' && s !== 'in_progress');
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ exception_type: 'OOMError', exception_message: 'out of memory (emulated)', node_id: '1' });
    expect(failed.outputs).toBeUndefined();
  });

  it('reports cancelled', async () => {
    emu.cloud.stepMs = 200;
    const c = client();
    const { prompt_id } = await c.submit(workflow(await uploadInput(c)));
    await c.cancel(prompt_id);
    expect((await c.getJobStatus(prompt_id)).status).toBe('cancelled');
  });

  it('answers NotFoundError for an unknown id, and for another key’s job', async () => {
    const c = client();
    await expect(c.getJobStatus('no-such-job')).rejects.toBeInstanceOf(NotFoundError);
    const other = client({ apiKey: EMULATOR_API_KEY });
    const { prompt_id } = await other.submit(workflow(await uploadInput(other)));
    await expect(c.getJobStatus(prompt_id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await other.getJobStatus(prompt_id)).status).toMatch(/^(pending|in_progress|completed)$/);
    // A GET 404 is not retried.
    expect(requestsTo('GET', /^\/api\/job\//)).toHaveLength(3);
  });

  it('encodes the prompt id as one path segment', async () => {
    await expect(client().getJobStatus('a/b?c')).rejects.toBeInstanceOf(NotFoundError);
    expect(requestsTo('GET', /^\/api\/job\//)[0]!.path).toBe('/api/job/a%2Fb%3Fc/status');
  });
});

describe('getQueue, cancel, interrupt', () => {
  async function threeJobs(c: CloudClient) {
    emu.cloud.stepMs = 200;
    emu.cloud.setParallel(KEY, 1);
    const image = await uploadInput(c);
    const ids: string[] = [];
    for (const p of ['a', 'b', 'c']) ids.push((await c.submit(workflow(image, p))).prompt_id);
    await waitStatus(c, ids[0]!, 'in_progress');
    return { image, ids: ids as [string, string, string] };
  }

  it('lists running and pending jobs, normalized from [number, prompt_id, prompt, extra_data, outputs]', async () => {
    const c = client();
    const { image, ids } = await threeJobs(c);
    const q = await c.getQueue();
    expect(q.queue_running).toHaveLength(1);
    const running = q.queue_running[0]!;
    expect(running.promptId).toBe(ids[0]);
    expect(running.workflow).toEqual(workflow(image, 'a'));
    expect(running.outputNodeIds).toEqual(['3']);
    expect(typeof running.number).toBe('number');
    expect(typeof running.createTime).toBe('number');
    expect(running.extraData?.create_time).toBe(running.createTime);
    const raw = running.raw as [number, string, unknown, Record<string, unknown>, string[]];
    expect(raw[1]).toBe(ids[0]);
    expect(raw[4]).toEqual(['3']);
    const pending = q.queue_pending;
    expect(pending.map((e) => e.promptId)).toEqual([ids[1], ids[2]]);
    expect(pending[0]!.number).toBeLessThan(pending[1]!.number!);
    expect(pending[0]!.number).toBeGreaterThan(running.number!);
    // Another key sees none of them.
    expect(await client({ apiKey: EMULATOR_API_KEY }).getQueue()).toEqual({ queue_running: [], queue_pending: [] });
    await c.cancel(ids);
    expect(await c.getQueue()).toEqual({ queue_running: [], queue_pending: [] });
  });

  it('cancels only the given ids', async () => {
    const c = client();
    const { ids } = await threeJobs(c);
    const [a, b, cc] = ids;
    expect(await c.cancel([b])).toEqual({ deleted: [b] });
    expect((await c.getJobStatus(b)).status).toBe('cancelled');
    expect((await c.getJobStatus(a)).status).toBe('in_progress');
    expect((await c.getJobStatus(cc)).status).toBe('pending');
    // A string is one id; the running job can be cancelled too, and the next one starts.
    expect(await c.cancel(a)).toEqual({ deleted: [a] });
    expect((await c.getJobStatus(a)).status).toBe('cancelled');
    await waitStatus(c, cc, 'in_progress');
    // Unknown and finished ids are ignored.
    expect(await c.cancel(['no-such-job', a])).toEqual({ deleted: [] });
    expect((await c.getJobStatus(cc)).status).toBe('in_progress');
    await c.cancel(cc);
  });

  it('interrupts the running job only', async () => {
    const c = client();
    const { ids } = await threeJobs(c);
    const [a, b, cc] = ids;
    expect(await c.interrupt()).toEqual({});
    expect((await c.getJobStatus(a)).status).toBe('cancelled');
    await waitStatus(c, b, 'in_progress');
    expect((await c.getJobStatus(cc)).status).toBe('pending');
    expect(requestsTo('POST', '/api/interrupt')).toHaveLength(1);
    await c.cancel([b, cc]);
  });
});

describe('submission rejections', () => {
  /** The same body posted with plain fetch: what the server sends, to compare with the error. */
  async function raw(prompt: unknown, extra?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${emu.url}/api/prompt`, {
      method: 'POST',
      headers: { 'X-API-Key': KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ prompt, ...(extra ? { extra_data: extra } : {}) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  const cases: Array<[string, (image: string) => Record<string, { class_type: string; inputs: Record<string, unknown> }>, string, string | undefined]> = [
    ['an unknown class', (image) => ({ ...workflow(image), '2': { class_type: 'NoSuchNode', inputs: {} } }), 'invalid_prompt', undefined],
    ['a missing required input', (image) => ({ ...workflow(image), '2': { class_type: 'ImageInvert', inputs: {} } }), 'prompt_outputs_failed_validation', 'required_input_missing'],
    ['a dangling link', (image) => ({ ...workflow(image), '2': { class_type: 'ImageInvert', inputs: { image: ['99', 0] } } }), 'prompt_outputs_failed_validation', 'bad_linked_input'],
    ['no output node', (image) => ({ '1': workflow(image)['1'] }), 'prompt_no_outputs', undefined],
  ];

  it.each(cases)('throws SubmissionError for %s, keeping the server’s error object', async (_name, make, type, nodeErrorType) => {
    const c = client();
    const prompt = make(await uploadInput(c));
    const err: any = await c.submit(prompt).catch((e) => e);
    expect(err).toBeInstanceOf(SubmissionError);
    expect(err.status).toBe(400);
    expect(err.error.type).toBe(type);
    expect(err.message).toContain(err.error.message);
    if (nodeErrorType) expect(err.nodeErrors['2'].errors[0].type).toBe(nodeErrorType);
    else expect(err.nodeErrors).toEqual({});
    expect(requestsTo('POST', '/api/prompt')).toHaveLength(1);
    expect(emu.cloud.engine.jobs.size).toBe(0);
    // Preserved as sent: the very body a plain request gets.
    const server = await raw(prompt);
    expect(server.status).toBe(400);
    expect(err.body).toEqual(server.body);
    expect(err.error).toEqual(server.body.error);
  });

  it('runs a partner node with partnerApiKey: true, and rejects it without', async () => {
    const c = client();
    const image = await uploadInput(c);
    const partner = {
      '1': { class_type: 'LoadImage', inputs: { image } },
      '2': { class_type: 'PartnerRelightNode', inputs: { image: ['1', 0], prompt: 'warm light' } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'partner' } },
    };
    const err: any = await c.submit(partner).catch((e) => e);
    expect(err).toBeInstanceOf(SubmissionError);
    expect(err.error.type).toBe('missing_partner_api_key');
    expect(err.message).toContain('api_key_platform_org');
    expect(emu.cloud.engine.jobs.size).toBe(0);

    const bad: any = await c.submit(partner, { partnerApiKey: 'not-a-known-key' }).catch((e) => e);
    expect(bad).toBeInstanceOf(SubmissionError);
    expect(bad.error.type).toBe('invalid_partner_api_key');

    const { prompt_id } = await c.submit(partner, { partnerApiKey: true });
    const job = emu.cloud.engine.jobs.get(prompt_id)!;
    expect(job.partnerKey).toBe(KEY);
    expect(JSON.stringify(job.extraData)).not.toContain(KEY);
    const done = await waitStatus(c, prompt_id, (s) => s === 'completed' || s === 'failed');
    expect(done.status).toBe('completed');
    expect(done.outputs).toEqual({ '3': { images: [{ filename: 'partner_00001_.png', subfolder: '', type: 'output' }] } });
  });

  it('keeps the status classes of 402 and 429 over SubmissionError, and never re-sends', async () => {
    const c = client();
    const prompt = workflow(await uploadInput(c));
    emu.cloud.setKeyMode(KEY, 'insufficient_credits');
    await expect(c.submit(prompt)).rejects.toBeInstanceOf(InsufficientCreditsError);
    emu.cloud.setKeyMode(KEY, 'inactive');
    await expect(c.submit(prompt)).rejects.toBeInstanceOf(SubscriptionInactiveError);
    expect(requestsTo('POST', '/api/prompt')).toHaveLength(2);
    expect(emu.cloud.engine.jobs.size).toBe(0);
  });
});

// ---------------------------------------------------------------------------

interface Endpoint {
  name: string;
  method: 'GET' | 'POST';
  path: RegExp;
  call: (c: CloudClient) => Promise<unknown>;
}

const ENDPOINTS: Endpoint[] = [
  { name: 'getObjectInfo', method: 'GET', path: /^\/api\/object_info$/, call: (c) => c.getObjectInfo() },
  { name: 'uploadImage', method: 'POST', path: /^\/api\/upload\/image$/, call: (c) => c.uploadImage(PNG, { filename: 'e.png' }) },
  { name: 'uploadMask', method: 'POST', path: /^\/api\/upload\/mask$/, call: (c) => c.uploadMask(PNG, { originalRef: { filename: 'e.png', subfolder: '', type: 'input' } }) },
  { name: 'submit', method: 'POST', path: /^\/api\/prompt$/, call: (c) => c.submit({ '1': { class_type: 'SaveImage', inputs: {} } }, { confirmWithin: 300 }) },
  { name: 'getJobStatus', method: 'GET', path: /^\/api\/job\/[^/]+\/status$/, call: (c) => c.getJobStatus('some-job') },
  { name: 'getQueue', method: 'GET', path: /^\/api\/queue$/, call: (c) => c.getQueue() },
  { name: 'cancel', method: 'POST', path: /^\/api\/queue$/, call: (c) => c.cancel(['some-job']) },
  { name: 'interrupt', method: 'POST', path: /^\/api\/interrupt$/, call: (c) => c.interrupt() },
  { name: 'download', method: 'GET', path: /^\/api\/view$/, call: (c) => c.download({ filename: 'x.png', subfolder: '', type: 'output' }) },
];

describe('error statuses, on every endpoint', () => {
  const KEY_MODES = [
    ['unauthorized', 401, AuthenticationError, 'unauthorized'],
    ['insufficient_credits', 402, InsufficientCreditsError, 'InsufficientCredits'],
    ['inactive', 429, SubscriptionInactiveError, 'SubscriptionInactive'],
  ] as const;

  describe.each(ENDPOINTS)('$name', (ep) => {
    it.each(KEY_MODES)('key mode %s → %i %O, sent once', async (mode, status, Cls, code) => {
      emu.cloud.setKeyMode(KEY, mode);
      const err: any = await ep.call(client()).catch((e) => e);
      expect(err).toBeInstanceOf(Cls);
      expect(err.constructor).toBe(Cls);
      expect(err.status).toBe(status);
      expect(err.error).toBe(code);
      expect(err.method).toBe(ep.method);
      // Never retried, GET or POST: waiting fixes neither credits nor a subscription.
      expect(emu.requests.filter((r) => r.path.startsWith('/api/'))).toHaveLength(1);
      expect(requestsTo(ep.method, ep.path)).toHaveLength(1);
      expectNoKey(err);
    });

    it('400 → BadRequestError (SubmissionError for submit), sent once', async () => {
      emu.faults.next(400, { method: ep.method, path: ep.path, body: { error: 'bad_request', message: 'injected 400' } });
      const err: any = await ep.call(client()).catch((e) => e);
      if (ep.name === 'submit') {
        expect(err).toBeInstanceOf(SubmissionError);
        expect(err.error).toBe('bad_request');
      } else {
        expect(err).toBeInstanceOf(BadRequestError);
        expect(err.body).toEqual({ error: 'bad_request', message: 'injected 400' });
      }
      expect(err.status).toBe(400);
      expect(requestsTo(ep.method, ep.path)).toHaveLength(1);
    });

    it(`500 → InternalServerError, ${ep.method === 'GET' ? 'retried (3 attempts)' : 'never re-sent'}`, async () => {
      emu.faults.next(500, { method: ep.method, path: ep.path }).next(500, { method: ep.method, path: ep.path }).next(500, { method: ep.method, path: ep.path });
      const log = recorder();
      const err: any = await ep.call(client({ logger: log.logger })).catch((e) => e);
      const warned = log.lines.map((l) => `${l.level} ${l.message}`);
      if (ep.name === 'submit') {
        // The answer that counts was lost: the job was looked up by its id, not found, and may exist.
        expect(err).toBeInstanceOf(APIConnectionError);
        expect(err).toMatchObject({ sent: 'maybe', promptId: expect.any(String) });
        expect(err.cause).toBeInstanceOf(InternalServerError);
        expect(warned).toEqual([expect.stringMatching(new RegExp(`^warn \\[platformui\\] job ${err.promptId}: its submission's answer was lost .* \\(not sent again\\)$`))]);
      } else {
        expect(err).toBeInstanceOf(InternalServerError);
        expect(err.status).toBe(500);
        // A warning per retry; a POST that is not retried has nothing to warn about (its error says it all).
        const retries = ep.method === 'GET' ? [2, 3] : [];
        expect(warned).toEqual(retries.map((n) => expect.stringMatching(new RegExp(`^warn \\[platformui\\] GET .*: HTTP 500; retrying in \\d+ ms \\(attempt ${n} of 3\\)$`))));
      }
      expect(err).not.toBeInstanceOf(SubmissionError);
      expect(requestsTo(ep.method, ep.path)).toHaveLength(ep.method === 'GET' ? 3 : 1);
      expect(emu.cloud.engine.jobs.size).toBe(0);
    });
  });

  it('an unknown key is a 401 AuthenticationError', async () => {
    const err: any = await client({ apiKey: 'ck_live_unknown_00000000' }).getQueue().catch((e) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err.status).toBe(401);
    expect(requestsTo('GET', '/api/queue')).toHaveLength(1);
  });

  it('a 401 when no key was sent (a loopback URL taken for a local server) says so, and how to send one (issue 32)', async () => {
    const keyless = new CloudClient({ baseUrl: emu.url, retry: false });
    expect(keyless.server).toBe('local');
    const err: any = await keyless.getQueue().catch((e) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err.status).toBe(401);
    expect(err.message).toMatch(/no API key was sent/);
    expect(err.message).toMatch(/apiKey/);
    expect(err.message).toMatch(/server: 'cloud'/);
    expect(err.message.endsWith(`; ${err.hint}`)).toBe(true);
    expect(emu.requests.filter((r) => r.path === '/api/queue').map((r) => r.headers['x-api-key'])).toEqual([undefined]);
    // A key that was sent and refused is not told to send one.
    const refused: any = await client({ apiKey: 'ck_live_unknown_00000000' }).getQueue().catch((e) => e);
    expect(refused.message).not.toMatch(/no API key was sent/);
    expect(refused.hint).toBeUndefined();
  });

  it('a misspelt option of run() is refused before any request, naming the closest (issue 32)', async () => {
    const wf = { '1': { class_type: 'SaveImage', inputs: {} } };
    const err: any = await client().run(wf, { onProgres: () => {} } as object).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.field).toBe('onProgres');
    expect(err.message).toBe('onProgres: unknown option of run() (did you mean "onProgress"?)');
    expect(() => new CloudClient({ baseUrl: emu.url, apikey: KEY } as object)).toThrow('apikey: unknown option of CloudClient (did you mean "apiKey"?)');
    expect(emu.requests).toHaveLength(0);
  });

  it('a misspelt option of any other method is refused before any request, naming the closest (issue 32)', async () => {
    const c = client();
    const errs: any[] = [
      await c.getJob('p1', { tiemout: 5 } as object).catch((e) => e),
      await c.uploadImage(new Blob(['x']), { overwite: true } as object).catch((e) => e),
      await c.stopJob('p1', { confirmWithn: 5 } as object).catch((e) => e),
      await c.validateWorkflow({ '1': { class_type: 'SaveImage', inputs: {} } }, { refrsh: true } as object).catch((e) => e),
    ];
    for (const err of errs) expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(errs.map((e) => e.message)).toEqual([
      'tiemout: unknown option of getJob() (did you mean "timeout"?)',
      'overwite: unknown option of uploadImage() (did you mean "overwrite"?)',
      'confirmWithn: unknown option of stopJob() (did you mean "confirmWithin"?)',
      'refrsh: unknown option of validateWorkflow() (did you mean "refresh"?)',
    ]);
    expect(() => c.connect({ reconnect: { maxAtempts: 1 } } as object)).toThrow('reconnect.maxAtempts: unknown option of reconnect (did you mean "maxAttempts"?)');
    expect(emu.requests).toHaveLength(0);
    expect(emu.sockets.count()).toBe(0);
  });

  it('a GET recovers from one 500 by retrying', async () => {
    emu.faults.next(500, { method: 'GET', path: '/api/queue' });
    const log = recorder();
    expect(await client({ logger: log.logger }).getQueue()).toEqual({ queue_running: [], queue_pending: [] });
    expect(requestsTo('GET', '/api/queue')).toHaveLength(2);
    expect(log.lines.map((l) => `${l.level} ${l.message}`)).toEqual([expect.stringMatching(/^warn \[platformui\] GET .*\/api\/queue: HTTP 500; retrying in \d+ ms \(attempt 2 of 3\)$/)]);
  });

  it('retry: false sends a GET once even on 500', async () => {
    emu.faults.next(500, { path: '/api/queue' });
    await expect(client({ retry: false }).getQueue()).rejects.toBeInstanceOf(InternalServerError);
    expect(requestsTo('GET', '/api/queue')).toHaveLength(1);
  });
});

describe('redaction of the API key', () => {
  const echo = `the key ${KEY} is not valid`;

  it('is absent from every form of a 401, even when the server echoes the key', async () => {
    emu.faults.next(401, { path: '/api/queue', body: { error: 'unauthorized', message: echo, key: KEY } });
    const err: any = await client().getQueue().catch((e) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    // The server did echo it: the body shows where it was, redacted.
    expect(err.body).toEqual({ error: 'unauthorized', message: 'the key [REDACTED] is not valid', key: '[REDACTED]' });
    expect(err.message).toContain('[REDACTED]');
    expectNoKey(err);
  });

  it('is absent from a plain-text 5xx that echoes it', async () => {
    emu.faults.next(502, { path: '/api/object_info', body: `upstream refused X-API-Key: ${KEY}` }).next(502, { path: '/api/object_info', body: `again ${KEY}` });
    const log = recorder();
    const err: any = await client({ retry: { limit: 1, backoffLimit: 5 }, logger: log.logger }).getObjectInfo().catch((e) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect(err.body).toBe('again [REDACTED]');
    expectNoKey(err);
    // The retry's warning was written, and holds no key either.
    expect(log.of('warn')).toHaveLength(1);
    expect(JSON.stringify(log.lines)).not.toContain(KEY);
  });

  it('is absent from 402 and 429 errors', async () => {
    for (const mode of ['insufficient_credits', 'inactive'] as const) {
      emu.cloud.setKeyMode(KEY, mode);
      emu.faults.next(mode === 'inactive' ? 429 : 402, { path: '/api/prompt', body: { error: 'x', message: echo } });
      const err: any = await client().submit(workflow('a.png')).catch((e) => e);
      expect(err).toBeInstanceOf(mode === 'inactive' ? SubscriptionInactiveError : InsufficientCreditsError);
      expect(err.body.message).toContain('[REDACTED]');
      expectNoKey(err);
    }
  });

  it('is absent from a SubmissionError whose 400 body echoes it', async () => {
    const c = client();
    emu.faults.next(400, { path: '/api/prompt', body: { error: { type: 'invalid_prompt', message: echo }, node_errors: {} } });
    const e400: any = await c.submit(workflow('a.png')).catch((e) => e);
    expect(e400).toBeInstanceOf(SubmissionError);
    expect(e400.error.message).toBe('the key [REDACTED] is not valid');
    expectNoKey(e400);
  });

  it('is absent from a SubmissionError of a 200 { error } that echoes it', async () => {
    emu.faults.next(200, { path: '/api/prompt', body: { error: echo, extra_data: { api_key_platform_org: KEY } } });
    const e200: any = await client().submit(workflow('a.png'), { partnerApiKey: true }).catch((e) => e);
    expect(e200).toBeInstanceOf(SubmissionError);
    expect(e200.status).toBe(200);
    expectNoKey(e200);
  });

  it('is absent from a ResponseValidationError of an off-spec 2xx that echoes it', async () => {
    emu.faults.next(200, { path: /^\/api\/job\//, body: { status: 42, echo: KEY } });
    const e1: any = await client().getJobStatus('j').catch((e) => e);
    expect(e1).toBeInstanceOf(ResponseValidationError);
    expect(e1.body).toEqual({ status: 42, echo: '[REDACTED]' });
    expectNoKey(e1);
    emu.faults.next(200, { path: '/api/queue', body: `<html>${KEY}</html>` });
    const e2: any = await client().getQueue().catch((e) => e);
    expect(e2).toBeInstanceOf(ResponseValidationError);
    expect(e2.body).toBe('<html>[REDACTED]</html>');
    expectNoKey(e2);
  });

  it('is absent from connection and timeout errors', async () => {
    emu.faults.dropNext({ path: '/api/interrupt' });
    const dropped: any = await client().interrupt().catch((e) => e);
    expect(dropped).toBeInstanceOf(APIConnectionError);
    expectNoKey(dropped);
    emu.faults.latencyMs = 300;
    const slow: any = await client({ timeout: 30, retry: false }).getQueue().catch((e) => e);
    expect(slow).toBeInstanceOf(APITimeoutError);
    expectNoKey(slow);
  });

  it('is absent when the key comes from a function', async () => {
    emu.faults.next(401, { path: '/api/queue', body: { error: 'unauthorized', message: echo } });
    const err: any = await client({ apiKey: async () => KEY }).getQueue().catch((e) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err.body.message).toContain('[REDACTED]');
    expectNoKey(err);
  });

  it('the check itself can fail: the raw key shows in an unredacted error', () => {
    // Guards expectNoKey against a typo'd KEY or an empty error text.
    expect(() => expectNoKey(new Error(`boom ${KEY}`))).toThrow();
  });
});

describe('download', () => {
  it('follows the 302 itself and fetches the signed URL without the key', async () => {
    const c = client();
    const ref = await produceOutput(c);
    emu.requests.length = 0;
    const res = await c.download(ref);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array(emu.cloud.files.get(ref.filename, 'output')!.data!));
    const [view, signed, ...rest] = emu.requests;
    expect(rest).toHaveLength(0);
    expect(view!.path).toBe('/api/view');
    expect(view!.headers['x-api-key']).toBe(KEY);
    expect(Object.fromEntries(new URLSearchParams(view!.url.split('?')[1]))).toEqual({ filename: ref.filename, subfolder: '', type: 'output' });
    expect(signed!.path).toMatch(/^\/signed\//);
    expect(signed!.headers['x-api-key']).toBeUndefined();
    expect(signed!.headers.authorization).toBeUndefined();
    expect(signed!.headers.cookie).toBeUndefined();
  });

  it('the leak check is real: the emulator refuses a signed URL fetched with the key', async () => {
    const ref = await produceOutput();
    const view = await fetch(`${emu.url}/api/view?filename=${encodeURIComponent(ref.filename)}&type=output`, { headers: { 'X-API-Key': KEY }, redirect: 'manual' });
    expect(view.status).toBe(302);
    const location = view.headers.get('location')!;
    const leaked = await fetch(location, { headers: { 'X-API-Key': KEY } });
    expect(leaked.status).toBe(403);
    expect(await leaked.json()).toMatchObject({ error: 'forbidden' });
    // fetch's own redirect following forwards the key to the same origin: also refused.
    const followed = await fetch(`${emu.url}/api/view?filename=${encodeURIComponent(ref.filename)}&type=output`, { headers: { 'X-API-Key': KEY } });
    expect(followed.status).toBe(403);
    // Without the key the same URL serves the file.
    const clean = await fetch(location);
    expect(clean.status).toBe(200);
    expect((await clean.arrayBuffer()).byteLength).toBe(emu.cloud.files.get(ref.filename, 'output')!.size);
  });

  it("returns the file of /api/view itself in viewMode 'direct'", async () => {
    const c = client();
    const ref = await produceOutput(c);
    emu.cloud.viewMode = 'direct';
    emu.requests.length = 0;
    const res = await c.download(ref);
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array(emu.cloud.files.get(ref.filename, 'output')!.data!));
    expect(emu.requests.map((r) => r.path)).toEqual(['/api/view']);
  });

  it('maps an expired signed URL to APIError 410, signature redacted', async () => {
    const c = client();
    const ref = await produceOutput(c);
    emu.cloud.signedUrlTtlMs = -1000;
    const err: any = await c.download(ref).catch((e) => e);
    expect(err).toBeInstanceOf(APIError);
    expect(err.name).toBe('APIError');
    expect(err.status).toBe(410);
    // The body of a signed-URL failure is kept as text by download() (not parsed like other bodies).
    const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
    expect(body).toEqual({ error: 'expired', message: 'Signed URL expired' });
    expect(err.method).toBe('GET');
    expect(err.url).toMatch(/\/signed\/.*sig=\[REDACTED\]/);
    const sig = /[?&]sig=([^&]+)/.exec(emu.requests.find((r) => r.path.startsWith('/signed/'))!.url)![1]!;
    for (const text of errorTexts(err)) expect(text).not.toContain(sig);
    expectNoKey(err);
  });

  it('maps an unknown file to NotFoundError', async () => {
    const err: any = await client().download({ filename: 'nope.png', subfolder: '', type: 'output' }).catch((e) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.status).toBe(404);
    expect(requestsTo('GET', '/api/view')).toHaveLength(1);
  });

  it('downloadToFile streams an output to disk', async () => {
    const c = client();
    const ref = await produceOutput(c);
    const dest = join(dir, 'out.png');
    const n = await c.downloadToFile(ref, dest);
    const want = new Uint8Array(emu.cloud.files.get(ref.filename, 'output')!.data!);
    expect(n).toBe(want.length);
    expect(new Uint8Array(readFileSync(dest))).toEqual(want);
  });

  it('downloadToFile writes a multi-MiB synthetic output, byte for byte', async () => {
    const size = 3 * MiB + 123;
    const ref: FileRef = { ...emu.cloud.addSyntheticOutput('big.bin', size) };
    const dest = join(dir, 'big.bin');
    expect(await client().downloadToFile(ref, dest)).toBe(size);
    const got = readFileSync(dest);
    expect(got.length).toBe(size);
    // The emulator's pattern: a 64 KiB block of (i * 31 + 7) & 0xff, repeated.
    const block = Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => (i * 31 + 7) & 0xff));
    for (let off = 0; off < size; off += block.length) expect(got.subarray(off, off + block.length).equals(block.subarray(0, Math.min(block.length, size - off)))).toBe(true);
  });
});

describe('workflow validation before submission', () => {
  const bad = (image: string): Record<string, Record<string, unknown>> => ({
    'no class': { '1': { class_type: 'NoSuchNode', inputs: {} }, '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'x' } } },
    'no outputs': { '1': { class_type: 'LoadImage', inputs: { image } } },
    'missing input': { '1': { class_type: 'LoadImage', inputs: { image } }, '2': { class_type: 'SaveImage', inputs: { images: ['1', 0] } } },
    'out of range': {
      '1': { class_type: 'LoadImage', inputs: { image } },
      '2': { class_type: 'ImageScale', inputs: { image: ['1', 0], upscale_method: 'bilinear', width: 99999, height: 8, crop: 'disabled' } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'x' } },
    },
    'not in list': {
      '1': { class_type: 'LoadImage', inputs: { image } },
      '2': { class_type: 'ImageScale', inputs: { image: ['1', 0], upscale_method: 'bilinar', width: 8, height: 8, crop: 'disabled' } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'x' } },
    },
    'wrong link type': { '1': { class_type: 'LoadImage', inputs: { image } }, '3': { class_type: 'SaveImage', inputs: { images: ['1', 1], filename_prefix: 'x' } } },
    'dangling link': { '3': { class_type: 'SaveImage', inputs: { images: ['9', 0], filename_prefix: 'x' } } },
    cycle: { '1': { class_type: 'ImageInvert', inputs: { image: ['2', 0] } }, '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } }, '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'x' } } },
  });

  it('submit({ validate: true }) throws WorkflowValidationError before anything is sent; object_info is fetched once', async () => {
    const c = client();
    const image = await uploadInput(c);
    for (const [name, wf] of Object.entries(bad(image))) {
      const err = await c.submit(wf as never, { validate: true }).catch((e: unknown) => e);
      expect(err, name).toBeInstanceOf(WorkflowValidationError);
      expect(err, name).toBeInstanceOf(InvalidArgumentError);
      expect((err as WorkflowValidationError).issues.some((i) => i.severity === 'error'), name).toBe(true);
      expect((err as Error).message, name).toMatch(/^workflow: \d+ errors?: /);
    }
    expect(requestsTo('POST', '/api/prompt')).toHaveLength(0);
    expect(requestsTo('GET', '/api/object_info')).toHaveLength(1);
    const { prompt_id } = await c.submit({ '1': { class_type: 'LoadImage', inputs: { image } }, '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'ok' } } }, { validate: true });
    expect(typeof prompt_id).toBe('string');
  });

  it('getObjectInfo() answers become what validation checks against: no second fetch', async () => {
    const c = client();
    const image = await uploadInput(c);
    await c.getObjectInfo();
    await c.submit({ '1': { class_type: 'LoadImage', inputs: { image } }, '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'ok' } } }, { validate: true });
    expect(requestsTo('GET', '/api/object_info')).toHaveLength(1);
  });

  it('the emulator rejects exactly the workflows validateWorkflow finds errors in, with the server’s 400 body', async () => {
    const c = client();
    const image = await uploadInput(c);
    const info = await c.getObjectInfo();
    const cases = { ...bad(image), fine: { '1': { class_type: 'LoadImage', inputs: { image } }, '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'ok' } } } };
    for (const [name, wf] of Object.entries(cases)) {
      const sdkSays = validateWorkflow(wf, info).some((i) => i.severity === 'error');
      const serverSays = await c.submit(wf as never).then(
        () => false,
        (e: unknown) => {
          expect(e, name).toBeInstanceOf(SubmissionError);
          return true;
        },
      );
      expect(serverSays, name).toBe(sdkSays);
    }
  });

  it('run({ validate: true }) validates too, and cloud.validateWorkflow refreshes object_info on demand', async () => {
    const c = client();
    const image = await uploadInput(c);
    await expect(c.run(bad(image)['missing input'] as never, { validate: true })).rejects.toBeInstanceOf(WorkflowValidationError);
    // A file uploaded after object_info was read is only a warning (the list is a snapshot).
    const later = await c.uploadImage(new Uint8Array([...PNG, ...bytes(64, 7)]), { filename: 'later.png' });
    const issues = await c.validateWorkflow({ '1': { class_type: 'LoadImage', inputs: { image: later.name } }, '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'ok' } } });
    expect(issues.map((i) => [i.severity, i.code])).toEqual([['warning', 'value_not_in_list']]);
    expect(await c.validateWorkflow({ '1': { class_type: 'LoadImage', inputs: { image: later.name } }, '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'ok' } } }, { refresh: true })).toEqual([]);
    c.close();
  });

  it('with a RegistryClient, an unknown class names the pack that provides it; known classes cost no registry request', async () => {
    const c = client();
    const registry = new RegistryClient({ baseUrl: emu.url });
    const image = await uploadInput(c);
    const known = { '1': { class_type: 'LoadImage', inputs: { image } }, '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'ok' } } };
    emu.requests.length = 0;
    expect(await c.validateWorkflow(known, { registry })).toEqual([]);
    expect(emu.requests.filter((r) => !r.path.startsWith('/api/'))).toEqual([]);

    const pack = await registry.getNodeForClass('TiledKSampler');
    const issues = await c.validateWorkflow({ ...known, '3': { class_type: 'TiledKSampler', inputs: {} }, '4': { class_type: 'NoPackHasThis', inputs: {} } }, { registry });
    const [tiled, none] = issues.filter((i) => i.code === 'unknown_class');
    expect(tiled).toMatchObject({ nodeId: '3', pack: { id: pack!.id, version: pack!.latest_version!.version } });
    expect(tiled!.message).toBe(`#3 TiledKSampler: this server has no node class "TiledKSampler": install the pack "${pack!.id}" (${pack!.latest_version!.version}) from the registry`);
    expect(none!.pack).toBeUndefined();
    expect(none!.message).toContain('(no pack in the registry provides it)');
    c.close();
  });
});
