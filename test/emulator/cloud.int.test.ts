// The emulator's cloud service over real loopback HTTP and WebSockets, with
// plain fetch and the `ws` client: it is the ground truth of the SDK's cloud
// integration tests, so it is checked on its own first.
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { decodeFrame, type PreviewFrame } from '../../src/cloud/frames.ts';
import { MultipartParser } from '../../src/emulator/cloud-multipart.ts';
import { createRandom } from '../../src/emulator/seed.ts';
import { DEFAULT_API_KEYS, EMULATOR_API_KEY, EXCEPTION_TYPES, startEmulator, type Emulator } from '../../src/emulator/index.ts';

const KEY = EMULATOR_API_KEY;
const OTHER = 'other-key';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

let emu: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ personality: 'spec', apiKeys: { ...DEFAULT_API_KEYS, [OTHER]: { parallel: 2 } }, cloud: { stepMs: 5, progressSteps: 2 } });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(() => {
  emu.cloud.reset();
  emu.cloud.stepMs = 5;
  emu.cloud.progressSteps = 2;
  emu.cloud.maxUploadBytes = 100 * 1024 * 1024;
  emu.cloud.viewMode = 'redirect';
  emu.cloud.signedUrlTtlMs = 60_000;
  emu.cloud.now = () => Date.now();
  emu.faults.reset();
});

// --- helpers ---------------------------------------------------------------

function api(path: string, init: RequestInit & { key?: string | null } = {}): Promise<Response> {
  const { key = KEY, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (key !== null) headers.set('X-API-Key', key);
  return fetch(emu.url + path, { ...rest, headers, redirect: 'manual' });
}

function postJson(path: string, body: unknown, key: string | null = KEY): Promise<Response> {
  return api(path, { method: 'POST', key, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

async function upload(bytes: Uint8Array, filename: string, fields: Record<string, string> = {}, path = '/api/upload/image', key = KEY): Promise<Response> {
  const form = new FormData();
  form.append('image', new Blob([bytes as BlobPart], { type: 'image/png' }), filename);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return api(path, { method: 'POST', key, body: form });
}

async function uploadPng(bytes: Uint8Array = PNG, filename = 'in.png'): Promise<string> {
  const res = await upload(bytes, filename);
  expect(res.status).toBe(200);
  return ((await res.json()) as { name: string }).name;
}

/** The HTTP status of a refused WebSocket upgrade. */
function upgradeStatus(pathAndQuery: string): Promise<number> {
  const ws = new WebSocket(emu.url.replace('http', 'ws') + pathAndQuery);
  return new Promise((resolve, reject) => {
    ws.on('unexpected-response', (req, res) => {
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    ws.on('error', () => undefined); // the destroyed request
    ws.on('open', () => reject(new Error('upgrade was accepted')));
  });
}

type Msg = { type: string; data: Record<string, unknown> };
type Received = { kind: 'json'; msg: Msg } | { kind: 'binary'; frame: PreviewFrame };

interface TestSocket {
  ws: WebSocket;
  received: Received[];
  json(promptId?: string): Msg[];
  frames(): PreviewFrame[];
  waitFor(pred: (r: Received) => boolean, timeoutMs?: number): Promise<Received>;
  closed: Promise<{ code: number }>;
}

async function openSocket(clientId: string, opts: { key?: string; flags?: Record<string, unknown> } = {}): Promise<TestSocket> {
  const url = `${emu.url.replace('http', 'ws')}/ws?clientId=${encodeURIComponent(clientId)}&token=${encodeURIComponent(opts.key ?? KEY)}`;
  const ws = new WebSocket(url);
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  ws.on('message', (data, isBinary) => {
    const buf = data as Buffer;
    received.push(isBinary ? { kind: 'binary', frame: decodeFrame(buf) } : { kind: 'json', msg: JSON.parse(buf.toString('utf8')) as Msg });
    for (const w of waiters) w();
  });
  const closed = new Promise<{ code: number }>((resolve) => ws.on('close', (code) => resolve({ code })));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  if (opts.flags) ws.send(JSON.stringify({ type: 'feature_flags', data: opts.flags }));
  const s: TestSocket = {
    ws,
    received,
    closed,
    json: (promptId) =>
      received.flatMap((r) => (r.kind === 'json' && (promptId === undefined || r.msg.data.prompt_id === promptId) ? [r.msg] : [])),
    frames: () => received.flatMap((r) => (r.kind === 'binary' ? [r.frame] : [])),
    waitFor: (pred, timeoutMs = 5000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const hit = received.find(pred);
          if (!hit) return;
          waiters.delete(check);
          clearTimeout(t);
          resolve(hit);
        };
        const t = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting; got ${received.map((r) => (r.kind === 'json' ? r.msg.type : 'binary')).join(',')}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
  };
  // The greeting is always the first message.
  await s.waitFor((r) => r.kind === 'json' && r.msg.type === 'status');
  return s;
}

const isType = (type: string, promptId?: string) => (r: Received) =>
  r.kind === 'json' && r.msg.type === type && (promptId === undefined || r.msg.data.prompt_id === promptId);
const isEnd = (promptId: string) => (r: Received) => r.kind === 'json' && r.msg.type === 'executing' && r.msg.data.node === null && r.msg.data.prompt_id === promptId;

function workflow(image: string, extra: Record<string, unknown> = {}, prefix = 'out') {
  return {
    '1': { class_type: 'LoadImage', inputs: { image } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0], ...extra } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
  };
}

async function submit(prompt: unknown, extra: Record<string, unknown> = {}, key = KEY): Promise<string> {
  const res = await postJson('/api/prompt', { prompt, ...extra }, key);
  const body = (await res.json()) as { prompt_id: string; number: number; node_errors: unknown };
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(body.node_errors).toEqual({});
  expect(typeof body.number).toBe('number');
  return body.prompt_id;
}

async function status(id: string, key = KEY): Promise<Record<string, unknown>> {
  const res = await api(`/api/job/${id}/status`, { key });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

async function waitStatus(id: string, want: string, key = KEY): Promise<Record<string, unknown>> {
  for (let i = 0; i < 400; i++) {
    const s = await status(id, key);
    if (s.status === want) return s;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`job ${id} never reached ${want}`);
}

async function expectRejection(body: unknown, type: string): Promise<{ error: Record<string, unknown>; node_errors: Record<string, { errors: Array<Record<string, unknown>>; dependent_outputs: string[]; class_type: string }> }> {
  const res = await postJson('/api/prompt', body);
  expect(res.status).toBe(400);
  const b = (await res.json()) as { error: Record<string, unknown>; node_errors: Record<string, { errors: Array<Record<string, unknown>>; dependent_outputs: string[]; class_type: string }> };
  expect(b.error.type).toBe(type);
  expect(typeof b.error.message).toBe('string');
  expect(b.error).toHaveProperty('details');
  expect(b.error).toHaveProperty('extra_info');
  expect(b).toHaveProperty('node_errors');
  return b;
}

// --- auth --------------------------------------------------------------------

describe('auth', () => {
  it('answers 401 without a key or with an unknown one', async () => {
    for (const key of [null, 'nope']) {
      const res = await api('/api/queue', { key });
      expect(res.status).toBe(401);
      const body = (await res.json()) as { error: string; message: string };
      expect(typeof body.error).toBe('string');
      expect(typeof body.message).toBe('string');
    }
  });

  it('switches a key to 401, 402 and 429, and back', async () => {
    const cases = [
      ['unauthorized', 401, 'unauthorized'],
      ['insufficient_credits', 402, 'InsufficientCredits'],
      ['inactive', 429, 'SubscriptionInactive'],
    ] as const;
    for (const [mode, code, error] of cases) {
      emu.cloud.setKeyMode(KEY, mode);
      for (const res of [await api('/api/object_info'), await postJson('/api/prompt', { prompt: {} })]) {
        expect(res.status).toBe(code);
        expect(((await res.json()) as { error: string }).error).toBe(error);
      }
    }
    emu.cloud.setKeyMode(KEY, 'ok');
    expect((await api('/api/queue')).status).toBe(200);
  });

  it('refuses a WebSocket upgrade with a wrong or missing token (401)', async () => {
    for (const token of ['', 'nope']) expect(await upgradeStatus(`/ws?clientId=x&token=${token}`)).toBe(401);
    expect(await upgradeStatus(`/elsewhere?token=${KEY}`)).toBe(404);
  });
});

// --- object_info and uploads ----------------------------------------------------

describe('object_info', () => {
  it('lists the node classes in the real format, LoadImage listing uploads', async () => {
    const name = await uploadPng();
    const info = (await (await api('/api/object_info')).json()) as Record<string, Record<string, any>>;
    for (const cls of ['LoadImage', 'ImageInvert', 'ImageScale', 'SaveImage', 'PreviewImage', 'PartnerRelightNode']) {
      expect(info[cls]).toMatchObject({ name: cls, input: { required: expect.any(Object) }, output: expect.any(Array), output_node: expect.any(Boolean) });
      expect(typeof info[cls]!.display_name).toBe('string');
      expect(typeof info[cls]!.category).toBe('string');
    }
    expect(info.LoadImage!.input.required.image[0]).toContain(name);
    expect(info.SaveImage!.output_node).toBe(true);
    expect(info.PartnerRelightNode!.api_node).toBe(true);
    expect(info.ImageScale!.input.required.width).toEqual(['INT', { default: 512, min: 0, max: 16384, step: 1 }]);
  });
});

describe('uploads', () => {
  it('names files by the sha256 of their bytes plus the extension', async () => {
    const res = await upload(PNG, 'Photo.PNG', { overwrite: 'true' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name: `${sha(PNG)}.png`, subfolder: '', type: 'input' });
    // Same bytes, other name: same file.
    expect(((await (await upload(PNG, 'other.png')).json()) as { name: string }).name).toBe(`${sha(PNG)}.png`);
    const temp = await upload(PNG, 'x.png', { type: 'temp', subfolder: 'ignored' });
    expect(await temp.json()).toEqual({ name: `${sha(PNG)}.png`, subfolder: '', type: 'temp' });
    expect((await upload(PNG, 'x.png', { type: 'output' })).status).toBe(400);
  });

  it('streams a large upload without keeping it, and answers 400 above maxUploadBytes', async () => {
    const size = 24 * 1024 * 1024;
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const hash = createHash('sha256');
    for (let i = 0; i < size / chunk.length; i++) hash.update(chunk);
    const big = new Blob(Array.from({ length: size / chunk.length }, () => chunk));
    const res = await upload(new Uint8Array(await big.arrayBuffer()), 'big.bin');
    expect(res.status).toBe(200);
    const { name } = (await res.json()) as { name: string };
    expect(name).toBe(`${hash.digest('hex')}.bin`);
    const stored = emu.cloud.files.get(name, 'input');
    expect(stored?.size).toBe(size);
    expect(stored?.data).toBeUndefined(); // above retainUploadBytes: hashed, counted, not kept

    emu.cloud.maxUploadBytes = 1000;
    const over = await upload(Buffer.alloc(5000, 1), 'a.png');
    expect(over.status).toBe(400);
    expect(((await over.json()) as { error: string }).error).toBe('file_too_large');
    expect((await upload(Buffer.alloc(1000, 1), 'a.png')).status).toBe(200);
  });

  it('rejects bodies that are not multipart or lack the image part', async () => {
    expect((await api('/api/upload/image', { method: 'POST', body: 'x', headers: { 'Content-Type': 'text/plain' } })).status).toBe(400);
    const form = new FormData();
    form.append('type', 'input');
    expect((await api('/api/upload/image', { method: 'POST', body: form })).status).toBe(400);
  });

  it('parses multipart split at every possible chunk boundary', () => {
    const boundary = '----b0undary';
    const body = Buffer.from(
      `preamble\r\n--${boundary}\r\nContent-Disposition: form-data; name="type"\r\n\r\ninput\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a\\"b.png"\r\nContent-Type: image/png\r\n\r\n` +
        `\r\n--${boundary.slice(0, 5)}not-a-boundary\r\n\r\n` +
        `\r\n--${boundary}--\r\nepilogue`,
      'latin1',
    );
    for (let split = 1; split < body.length; split += 3) {
      const parts: Record<string, string> = {};
      const names: Record<string, string | undefined> = {};
      const p = new MultipartParser(boundary, (part) => {
        let text = '';
        names[part.name] = part.filename;
        return { write: (c) => void (text += c.toString('latin1')), end: () => void (parts[part.name] = text) };
      });
      p.write(body.subarray(0, split));
      p.write(body.subarray(split));
      p.end();
      expect(parts).toEqual({ type: 'input', image: `\r\n--${boundary.slice(0, 5)}not-a-boundary\r\n\r\n` });
      expect(names.image).toBe('a"b.png');
    }
  });

  it('parses bodies full of near-boundaries under random chunking', () => {
    const boundary = 'formdata-boundary-42';
    const random = createRandom(7);
    const pieces = ['\r\n--', '\r\n--formdata', '\r\n--formdata-boundary-4', '--formdata-boundary-42', '\r', '\n', 'x'.repeat(50)];
    for (let round = 0; round < 30; round++) {
      let content = '';
      while (content.length < 4000) content += pieces[Math.floor(random() * pieces.length)];
      // A real sender picks a boundary its content does not contain.
      while (content.includes(`\r\n--${boundary}`)) content = content.replace(`\r\n--${boundary}`, `\r\n-+${boundary}`);
      const body = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="f.bin"\r\n\r\n${content}\r\n--${boundary}--`, 'latin1');
      const out: Buffer[] = [];
      const p = new MultipartParser(boundary, () => ({ write: (c) => void out.push(Buffer.from(c)), end: () => undefined }));
      for (let at = 0; at < body.length; ) {
        const n = 1 + Math.floor(random() * (random() < 0.5 ? 8 : 300));
        p.write(body.subarray(at, at + n));
        at += n;
      }
      p.end();
      expect(Buffer.concat(out).toString('latin1')).toBe(content);
    }
  });

  it('uploads a mask with original_ref, checking the reference', async () => {
    const name = await uploadPng();
    const mask = Buffer.concat([PNG, Buffer.from([1])]);
    const ok = await upload(mask, 'mask.png', { type: 'input', subfolder: 'clipspace', original_ref: JSON.stringify({ filename: name, subfolder: '', type: 'input' }) }, '/api/upload/mask');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ name: `${sha(mask)}.png`, subfolder: '', type: 'input' });
    for (const ref of [undefined, '{not json', JSON.stringify({ subfolder: '' }), JSON.stringify({ filename: 'missing.png', type: 'input' })]) {
      const res = await upload(mask, 'mask.png', ref === undefined ? {} : { original_ref: ref }, '/api/upload/mask');
      expect(res.status, String(ref)).toBe(400);
    }
  });
});

// --- submissions -------------------------------------------------------------------

describe('prompt validation', () => {
  it('answers like the local server for each kind of bad workflow', async () => {
    const name = await uploadPng();
    await expectRejection({}, 'no_prompt');
    const unknown = await expectRejection({ prompt: { '1': { class_type: 'NoSuchNode', inputs: {} } } }, 'invalid_prompt');
    expect(unknown.error.message).toContain('NoSuchNode');
    await expectRejection({ prompt: { '1': { class_type: 'LoadImage', inputs: { image: name } } } }, 'prompt_no_outputs');

    const missing = await expectRejection({ prompt: { '1': { class_type: 'LoadImage', inputs: { image: name } }, '2': { class_type: 'SaveImage', inputs: { filename_prefix: 'x' } } } }, 'prompt_outputs_failed_validation');
    expect(missing.node_errors['2']).toMatchObject({ class_type: 'SaveImage', dependent_outputs: ['2'] });
    expect(missing.node_errors['2']!.errors[0]).toMatchObject({ type: 'required_input_missing', extra_info: { input_name: 'images' } });

    const dangling = await expectRejection({ prompt: { '2': { class_type: 'SaveImage', inputs: { images: ['9', 0], filename_prefix: 'x' } } } }, 'prompt_outputs_failed_validation');
    expect(dangling.node_errors['2']!.errors[0]!.details).toContain("'9'");

    const badFile = await expectRejection({ prompt: workflow('nope_missing.png') }, 'prompt_outputs_failed_validation');
    expect(badFile.node_errors['1']).toMatchObject({ class_type: 'LoadImage', dependent_outputs: ['3'] });
    expect(badFile.node_errors['1']!.errors[0]!.type).toBe('custom_validation_failed');

    const range = await expectRejection(
      {
        prompt: {
          '1': { class_type: 'LoadImage', inputs: { image: name } },
          '2': { class_type: 'ImageScale', inputs: { image: ['1', 0], upscale_method: 'bogus', width: 99999, height: 8, crop: 'disabled' } },
          '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'x' } },
        },
      },
      'prompt_outputs_failed_validation',
    );
    expect(range.node_errors['2']!.errors.map((e) => e.type).sort()).toEqual(['value_bigger_than_max', 'value_not_in_list']);

    const mismatch = await expectRejection({ prompt: { '1': { class_type: 'LoadImage', inputs: { image: name } }, '3': { class_type: 'SaveImage', inputs: { images: ['1', 1], filename_prefix: 'x' } } } }, 'prompt_outputs_failed_validation');
    expect(mismatch.node_errors['3']!.errors[0]!.type).toBe('return_type_mismatch');
  });

  it('requires a valid account key in extra_data for partner nodes', async () => {
    const name = await uploadPng();
    const prompt = {
      '1': { class_type: 'LoadImage', inputs: { image: name } },
      '2': { class_type: 'PartnerRelightNode', inputs: { image: ['1', 0], prompt: 'golden hour' } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'relit' } },
    };
    const missing = await expectRejection({ prompt }, 'missing_partner_api_key');
    expect(missing.error.message).toContain('api_key_platform_org');
    await expectRejection({ prompt, extra_data: { api_key_platform_org: 'not-a-key' } }, 'invalid_partner_api_key');
    const id = await submit(prompt, { extra_data: { api_key_platform_org: KEY } });
    const done = await waitStatus(id, 'completed');
    expect(done.outputs).toEqual({ '3': { images: [{ filename: 'relit_00001_.png', subfolder: '', type: 'output' }] } });
    // The key is never echoed back.
    expect(JSON.stringify(await (await api('/api/queue')).json())).not.toContain(KEY);
  });
});

// --- jobs and events ------------------------------------------------------------------

describe('jobs over the socket', () => {
  it('sends every event of a job to every socket of the key, whatever its clientId', async () => {
    const name = await uploadPng();
    const a = await openSocket('client-a');
    const b = await openSocket('client-b');
    const stranger = await openSocket('client-c', { key: OTHER });
    expect(a.json()[0]).toEqual({ type: 'status', data: { status: { exec_info: { queue_remaining: 0 } }, sid: 'client-a' } });

    const id = await submit(workflow(name), { client_id: 'client-a' });
    await Promise.all([a.waitFor(isEnd(id)), b.waitFor(isEnd(id))]);
    const seq = (s: TestSocket) => s.json().slice(1).map((m) => m.type);
    expect(seq(a)).toEqual(seq(b));
    expect(stranger.json().filter((m) => m.data.prompt_id === id)).toEqual([]);

    const msgs = a.json(id);
    const types = msgs.map((m) => m.type);
    expect(types.slice(0, 2)).toEqual(['execution_start', 'execution_cached']);
    expect(msgs[1]!.data.nodes).toEqual([]);
    expect(types.slice(-2)).toEqual(['execution_success', 'executing']);
    // Nodes in topological order, each announced by progress_state then executing.
    expect(msgs.filter((m) => m.type === 'executing' && m.data.node !== null).map((m) => m.data.node)).toEqual(['1', '2', '3']);
    expect(msgs.find((m) => m.type === 'executing')).toEqual({ type: 'executing', data: { node: '1', display_node: '1', prompt_id: id } });
    const progress = msgs.filter((m) => m.type === 'progress');
    expect(progress.map((m) => `${m.data.node}:${m.data.value}/${m.data.max}`)).toEqual(['2:1/2', '2:2/2', '3:1/2', '3:2/2']);
    const executed = msgs.filter((m) => m.type === 'executed');
    expect(executed).toEqual([
      { type: 'executed', data: { node: '3', display_node: '3', output: { images: [{ filename: 'out_00001_.png', subfolder: '', type: 'output' }] }, prompt_id: id } },
    ]);
    const lastState = msgs.filter((m) => m.type === 'progress_state').at(-1)!;
    expect(Object.keys(lastState.data.nodes as object).sort()).toEqual(['1', '2', '3']);
    expect((lastState.data.nodes as Record<string, Record<string, unknown>>)['3']).toMatchObject({ state: 'finished', node_id: '3', display_node_id: '3', real_node_id: '3', parent_node_id: null, prompt_id: id });
    // status updates: one at submit and one at start (queue_remaining 1), one at the end (0), then the legacy end marker.
    const statuses = a.json().filter((m) => m.type === 'status').slice(1).map((m) => (m.data.status as any).exec_info.queue_remaining);
    expect(statuses).toEqual([1, 1, 0]);
    const all = a.json().map((m) => m.type);
    expect(all.indexOf('execution_success')).toBeLessThan(all.lastIndexOf('status'));
    expect(all.lastIndexOf('status')).toBeLessThan(all.length - 1);

    const st = await status(id);
    expect(st).toEqual({ status: 'completed', outputs: { '3': executed[0]!.data.output } });
    for (const s of [a, b, stranger]) s.ws.close();
  });

  it('sends type 4 previews to sockets that announced preview metadata, type 1 to others, type 3 to all', async () => {
    const name = await uploadPng();
    const flagged = await openSocket('flags', { flags: { supports_preview_metadata: true } });
    const plain = await openSocket('plain');
    const reply = await flagged.waitFor(isType('feature_flags'));
    expect(reply.kind === 'json' && reply.msg.data).toMatchObject({ supports_preview_metadata: true, max_upload_size: 100 * 1024 * 1024 });

    const id = await submit(workflow(name));
    await Promise.all([flagged.waitFor(isEnd(id)), plain.waitFor(isEnd(id))]);
    const kinds = (s: TestSocket) => s.frames().map((f) => f.type);
    expect(new Set(kinds(flagged))).toEqual(new Set(['preview_image_with_metadata', 'text']));
    expect(new Set(kinds(plain))).toEqual(new Set(['preview_image', 'text']));
    const meta = flagged.frames().find((f) => f.type === 'preview_image_with_metadata');
    expect(meta?.type === 'preview_image_with_metadata' && meta.metadata).toEqual({
      node_id: '2',
      display_node_id: '2',
      real_node_id: '2',
      prompt_id: id,
      parent_node_id: null,
      image_type: 'image/png',
    });
    const one = plain.frames().find((f) => f.type === 'preview_image');
    expect(one?.type === 'preview_image' && [one.imageType, Buffer.from(one.image.subarray(0, 4)).toString('latin1')]).toEqual([2, '\x89PNG']);
    const text = plain.frames().find((f) => f.type === 'text');
    expect(text?.type === 'text' && text.nodeId).toBe('2');
    // A type-1 preview follows a `progress` of its job, so a client can attribute it.
    const firstBinary = plain.received.findIndex((r) => r.kind === 'binary');
    expect(plain.received.slice(0, firstBinary).some(isType('progress', id))).toBe(true);
    flagged.ws.close();
    plain.ws.close();
  });

  it('answers an identical rerun from the cache: every node cached, executed without executing', async () => {
    const name = await uploadPng();
    const s = await openSocket('cache');
    const first = await submit(workflow(name));
    await s.waitFor(isEnd(first));
    const second = await submit({ ...workflow(name) });
    await s.waitFor(isEnd(second));
    const msgs = s.json(second);
    expect(msgs.map((m) => m.type)).toEqual(['execution_start', 'execution_cached', 'executed', 'progress_state', 'execution_success', 'executing']);
    expect(msgs[1]!.data.nodes).toEqual(['1', '2', '3']);
    expect(msgs[2]!.data.output).toEqual({ images: [{ filename: 'out_00001_.png', subfolder: '', type: 'output' }] });
    expect((await status(second)).outputs).toEqual((await status(first)).outputs);
    // Another key has its own cache.
    const other = await submit(workflow(name), {}, OTHER);
    expect((await waitStatus(other, 'completed', OTHER)).outputs).toEqual({ '3': { images: [{ filename: 'out_00002_.png', subfolder: '', type: 'output' }] } });
    s.ws.close();
  });

  it('fails a node with each exception type of the spec', async () => {
    const name = await uploadPng();
    const s = await openSocket('errors');
    for (const type of EXCEPTION_TYPES) {
      const id = await submit(workflow(name, { fail_with: type }, type));
      const hit = await s.waitFor(isType('execution_error', id));
      const data = hit.kind === 'json' ? hit.msg.data : {};
      expect(data).toMatchObject({ prompt_id: id, node_id: '2', node_type: 'ImageInvert', exception_type: type, executed: ['1'] });
      expect(typeof data.exception_message).toBe('string');
      expect(Array.isArray(data.traceback)).toBe(true);
      await s.waitFor(isEnd(id));
      const st = await status(id);
      expect(st).toMatchObject({ status: 'failed', error: { exception_type: type, exception_message: data.exception_message } });
      const after = s.json(id).map((m) => m.type);
      expect(after.slice(-2)).toEqual(['execution_error', 'executing']);
      expect(after).not.toContain('execution_success');
    }
    // failNextWith: the next job fails at its first node, even an identical (cacheable) one.
    emu.cloud.failNextWith(KEY, 'OOMError', { message: 'boom' });
    const id = await submit(workflow(name, {}, 'fine'));
    const st = await waitStatus(id, 'failed');
    expect(st.error).toMatchObject({ exception_type: 'OOMError', exception_message: 'boom', node_id: '1' });
    expect(await waitStatus(await submit(workflow(name, {}, 'fine')), 'completed')).toMatchObject({ status: 'completed' });
    s.ws.close();
  });

  it('fails a partner node when the partner key lacks credits', async () => {
    const name = await uploadPng();
    emu.cloud.addKey('poor-key', { mode: 'insufficient_credits' });
    const id = await submit(
      {
        '1': { class_type: 'LoadImage', inputs: { image: name } },
        '2': { class_type: 'PartnerRelightNode', inputs: { image: ['1', 0], prompt: 'x' } },
        '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'p' } },
      },
      { extra_data: { api_key_platform_org: 'poor-key' } },
    );
    expect((await waitStatus(id, 'failed')).error).toMatchObject({ exception_type: 'InsufficientFundsError', node_id: '2' });
  });
});

describe('queue, cancel, interrupt', () => {
  it('runs up to the parallel limit, queues the rest FIFO, cancels only the key’s own jobs', async () => {
    const name = await uploadPng();
    emu.cloud.stepMs = 40;
    emu.cloud.setParallel(KEY, 1);
    const s = await openSocket('queue');
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await submit(workflow(name, {}, `q${i}`)));
    await waitStatus(ids[0]!, 'in_progress');
    expect(await status(ids[1]!)).toEqual({ status: 'pending' });

    const q = (await (await api('/api/queue')).json()) as { queue_running: unknown[][]; queue_pending: unknown[][] };
    expect(q.queue_running.map((e) => e[1])).toEqual([ids[0]]);
    expect(q.queue_pending.map((e) => e[1])).toEqual([ids[1], ids[2]]);
    expect(q.queue_running[0]).toHaveLength(5);
    expect(q.queue_running[0]![4]).toEqual(['3']);
    expect(await (await api('/api/queue', { key: OTHER })).json()).toEqual({ queue_running: [], queue_pending: [] });

    // Another key can neither see nor cancel them.
    expect((await api(`/api/job/${ids[0]}/status`, { key: OTHER })).status).toBe(404);
    expect(await (await postJson('/api/queue', { delete: ids }, OTHER)).json()).toEqual({ deleted: [] });

    // Cancel a pending job.
    expect(await (await postJson('/api/queue', { delete: [ids[2]] })).json()).toEqual({ deleted: [ids[2]] });
    expect(await status(ids[2]!)).toEqual({ status: 'cancelled' });
    await s.waitFor(isType('execution_interrupted', ids[2]));

    // Cancel the running job: interrupted, and the next one starts.
    await postJson('/api/queue', { delete: [ids[0]] });
    expect(await status(ids[0]!)).toEqual({ status: 'cancelled' });
    await s.waitFor(isType('execution_interrupted', ids[0]));
    await s.waitFor(isEnd(ids[0]!));
    await waitStatus(ids[1]!, 'in_progress');

    // Interrupt stops whatever runs.
    const res = await api('/api/interrupt', { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(await status(ids[1]!)).toEqual({ status: 'cancelled' });
    expect(s.json(ids[1]).some((m) => m.type === 'execution_success')).toBe(false);
    expect((await api('/api/job/unknown-id/status')).status).toBe(404);
    s.ws.close();
  });

  it('runs jobs of a key in parallel up to its limit', async () => {
    const name = await uploadPng();
    emu.cloud.stepMs = 40;
    const ids = [await submit(workflow(name, {}, 'p1')), await submit(workflow(name, {}, 'p2')), await submit(workflow(name, {}, 'p3'))];
    await waitStatus(ids[1]!, 'in_progress');
    expect((await status(ids[0]!)).status).toBe('in_progress');
    expect((await status(ids[2]!)).status).toBe('pending');
    await waitStatus(ids[2]!, 'completed');
  });
});

// --- downloads ------------------------------------------------------------------------

describe('/api/view and signed URLs', () => {
  async function producedFile(): Promise<{ filename: string; subfolder: string; type: string }> {
    const id = await submit(workflow(await uploadPng()));
    const st = await waitStatus(id, 'completed');
    return (st.outputs as Record<string, { images: Array<{ filename: string; subfolder: string; type: string }> }>)['3']!.images[0]!;
  }

  it('redirects to a signed URL that works without the key and refuses the key', async () => {
    const ref = await producedFile();
    const res = await api(`/api/view?filename=${ref.filename}&subfolder=&type=output`);
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    expect(location.startsWith(`${emu.url}/signed/`)).toBe(true);
    expect(location).toMatch(/[?&]expires=\d+/);
    expect(location).toMatch(/[?&]sig=/);

    const file = await fetch(location);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(file.headers.get('content-length')).toBe(String(bytes.length));
    expect(bytes.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');

    expect((await fetch(location, { headers: { 'X-API-Key': KEY } })).status).toBe(403);
    expect((await fetch(location, { headers: { Authorization: 'Bearer x' } })).status).toBe(403);
    expect((await fetch(location.replace(/sig=[^&]+/, 'sig=AAAA'))).status).toBe(403);
    expect((await fetch(location.replace(/expires=\d+/, (m) => `expires=${Number(m.slice(8)) + 1}`))).status).toBe(403);
    // fetch's default redirect mode forwards X-API-Key: exactly what the SDK must not do.
    expect((await fetch(`${emu.url}/api/view?filename=${ref.filename}&type=output`, { headers: { 'X-API-Key': KEY } })).status).toBe(403);
  });

  it('expires signed URLs (410) and 404s unknown files', async () => {
    const ref = await producedFile();
    emu.cloud.signedUrlTtlMs = 1000;
    const location = (await api(`/api/view?filename=${ref.filename}&type=output`)).headers.get('location')!;
    emu.cloud.now = () => Date.now() + 5000;
    expect((await fetch(location)).status).toBe(410);
    expect((await api('/api/view?filename=nope.png&type=output')).status).toBe(404);
    expect((await api(`/api/view?filename=${ref.filename}&type=temp`)).status).toBe(404);
  });

  it('answers 200 with the file in direct mode, like the local server', async () => {
    const ref = await producedFile();
    emu.cloud.viewMode = 'direct';
    const res = await api(`/api/view?filename=${ref.filename}&type=output`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await res.arrayBuffer()).subarray(1, 4).toString()).toBe('PNG');
  });

  it('serves a large synthetic output as a stream', async () => {
    const size = 48 * 1024 * 1024 + 123;
    const ref = emu.cloud.addSyntheticOutput('huge.bin', size);
    const location = (await api(`/api/view?filename=${ref.filename}&type=output`)).headers.get('location')!;
    const res = await fetch(location);
    expect(res.headers.get('content-length')).toBe(String(size));
    let n = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) n += chunk.byteLength;
    expect(n).toBe(size);
    expect(emu.cloud.files.stats.bytes).toBeLessThan(1024 * 1024);
  });
});

// --- socket faults ------------------------------------------------------------------

describe('socket faults', () => {
  it('drops sockets after N messages, all at once, and refuses upgrades', async () => {
    const name = await uploadPng();
    const s = await openSocket('drop');
    emu.cloud.dropSockets({ afterMessages: 3, times: 1 });
    const id = await submit(workflow(name));
    expect((await s.closed).code).toBe(1006); // abrupt, no close frame
    expect(s.json().length).toBe(1 + 3);
    await waitStatus(id, 'completed'); // the job does not care

    const a = await openSocket('a');
    const b = await openSocket('b');
    emu.cloud.dropAllSockets();
    expect((await a.closed).code).toBe(1006);
    expect((await b.closed).code).toBe(1006);

    emu.cloud.rejectSocketUpgrades(1, 503);
    expect(await upgradeStatus(`/ws?clientId=r&token=${KEY}`)).toBe(503);
    (await openSocket('after')).ws.close();
  });

  it('drops sockets at random with a seeded probability', async () => {
    const name = await uploadPng();
    const sockets = await Promise.all(Array.from({ length: 6 }, (_, i) => openSocket(`r${i}`)));
    emu.cloud.dropSockets({ probability: 0.5 });
    const id = await submit(workflow(name));
    await waitStatus(id, 'completed');
    await new Promise((r) => setTimeout(r, 20));
    const open = sockets.filter((s) => s.ws.readyState === WebSocket.OPEN);
    expect(open.length).toBeLessThan(sockets.length);
    emu.cloud.dropSockets(null);
    for (const s of open) s.ws.close();
  });

  it('goes silent for a while, discarding or holding messages', async () => {
    const name = await uploadPng();
    const s = await openSocket('silent');
    emu.cloud.silenceSockets(300);
    const lost = await submit(workflow(name, {}, 'lost'));
    await waitStatus(lost, 'completed');
    expect(s.json(lost)).toEqual([]);
    expect(s.ws.readyState).toBe(WebSocket.OPEN);

    emu.cloud.silenceSockets(150, { hold: true });
    const held = await submit(workflow(name, {}, 'held'));
    await waitStatus(held, 'completed');
    expect(s.json(held)).toEqual([]);
    await s.waitFor(isEnd(held), 2000);
    expect(s.json(held)[0]!.type).toBe('execution_start');
    s.ws.close();
  });
});

describe('lifecycle', () => {
  it('closes sockets with 1001 and stops jobs when the emulator closes', async () => {
    const own = await startEmulator({ personality: 'spec', cloud: { stepMs: 1000 } });
    const ws = new WebSocket(`${own.url.replace('http', 'ws')}/ws?clientId=z&token=${KEY}`);
    await new Promise((r) => ws.once('open', r));
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    own.cloud.addFile('in.png', PNG);
    const res = await fetch(`${own.url}/api/prompt`, {
      method: 'POST',
      headers: { 'X-API-Key': KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ prompt: workflow('in.png') }),
    });
    expect(res.status).toBe(200);
    await own.close();
    expect(await closed).toBe(1001);
  });

  it('keeps an HTTP/1.1 connection usable after a rejected upload', async () => {
    emu.cloud.maxUploadBytes = 10;
    const boundary = 'xyz';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\n${'x'.repeat(1000)}\r\n--${boundary}--\r\n`;
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${emu.url}/api/upload/image`, {
        method: 'POST',
        headers: { 'X-API-Key': KEY, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': Buffer.byteLength(body) },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(status).toBe(400);
  });
});

describe('socket resilience', () => {
  it('a client resetting its connection during a refused upgrade does not crash the emulator', async () => {
    const { connect } = await import('node:net');
    const { port } = new URL(emu.url);
    for (let i = 0; i < 20; i++) {
      const s = connect(Number(port), '127.0.0.1');
      await new Promise((r) => s.once('connect', r));
      s.write(`GET /ws?token=BAD HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
      s.resetAndDestroy();
    }
    await new Promise((r) => setTimeout(r, 100));
    expect((await api('/api/queue')).status).toBe(200);
  });
});
