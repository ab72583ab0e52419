// The emulator's `v2-real` personality: Comfy API v2 as the real local server answers (comfy-api-proxy on
// ComfyUI 0.8.0, spec/cloud-v2.md §9.7), and the v2 faults a client must survive, over loopback with plain fetch.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makePng, startEmulator, type Emulator } from '../../../src/emulator/index.ts';

type Json = Record<string, any>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let emu: Emulator;
const v2 = () => emu.v2!;
const api = (path: string, init: RequestInit = {}) => fetch(emu.url + path, { ...init, redirect: 'manual' });
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  api(path, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
async function json(res: Response, status: number): Promise<Json> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as Json;
}
const chain = (image: unknown, prefix = 'real', extra: Json = {}): Json => ({
  '1': { class_type: 'LoadImage', inputs: { image } },
  '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0], ...extra } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
});
async function upload(bytes: Uint8Array, filePath = 'in.png', headers: Record<string, string> = {}): Promise<Response> {
  const form = new FormData();
  // The real server takes the file part first.
  form.set('file', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), filePath);
  form.set('file_path', filePath);
  return api('/api/v2/assets', { method: 'POST', body: form, headers });
}
async function until(job: string, done: (j: Json) => boolean, ms = 5000): Promise<Json> {
  const end = Date.now() + ms;
  for (;;) {
    const j = await json(await api(`/api/v2/jobs/${job}`), 200);
    if (done(j)) return j;
    if (Date.now() > end) throw new Error(`job ${job} still ${j.status}`);
    await sleep(5);
  }
}
const terminal = (j: Json) => ['succeeded', 'failed', 'canceled', 'expired'].includes(j.status);
async function frames(res: Response): Promise<Array<{ event: string; data: Json }>> {
  return (await res.text())
    .split('\n\n')
    .filter((b) => b.startsWith('event:'))
    .map((b) => ({ event: /^event: (.*)$/m.exec(b)![1]!, data: JSON.parse(/^data: (.*)$/m.exec(b)![1]!) as Json }));
}

const PNG = makePng(8, 8, 7);
let ref: Json;

beforeAll(async () => {
  emu = await startEmulator({ personality: 'v2-real', cloud: { stepMs: 5 } });
});
afterAll(() => emu.close());
beforeEach(async () => {
  v2().reset();
  emu.cloud.reset();
  emu.cloud.stepMs = 5;
  const a = await json(await upload(PNG), 201);
  ref = { __type: 'core/ASSET', info: { id: a.id } };
  v2().resetCounters();
});

describe('v2-real personality (§9.7)', () => {
  it('jobs: no key, null timings, {0,0,0} progress on polls, token output ids, inline content with Range, 502 past the end', async () => {
    emu.cloud.stepMs = 30;
    const created = await json(await post('/api/v2/jobs', { workflow: chain(ref), metadata: 'run-1' }), 201);
    expect(created).toMatchObject({ status: 'queued', queue_position: null, started_at: null, completed_at: null, progress: null, outputs_reused: false, metadata: 'run-1' });
    expect(created).not.toHaveProperty('metrics');
    expect(created.urls).not.toHaveProperty('logs');
    const running = await until(created.id, (j) => j.status === 'running');
    expect(running.progress).toEqual({ value: 0, nodes_done: 0, nodes_total: 0 });
    const done = await until(created.id, terminal);
    expect(done).toMatchObject({ status: 'succeeded', started_at: null, completed_at: null, progress: null });
    const out = done.outputs[0];
    expect(out).toMatchObject({ node_id: '3', type: 'image', size_bytes: 0, hash: null, job_id: created.id });
    expect(out.id).toMatch(/^eyJqIjog[\w-]+\.[\w-]+$/);
    const asset = await json(await api(`/api/v2/assets/${out.id}`), 200);
    expect(asset.file_path).toBe(out.name);
    const content = await api(`/api/v2/assets/${out.id}/content`);
    expect(content.status).toBe(200);
    const bytes = Buffer.from(await content.arrayBuffer());
    expect(bytes.subarray(1, 4).toString()).toBe('PNG');
    const part = await api(`/api/v2/assets/${out.id}/content`, { headers: { Range: 'bytes=0-9' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-9/${bytes.length}`);
    expect((await json(await api(`/api/v2/assets/${out.id}/content`, { headers: { Range: 'bytes=5000-' } }), 502)).error.code).toBe('upstream_error');
    expect((await json(await api(`/api/v2/assets/${out.id.slice(0, -2)}xx`), 404)).error.code).toBe('not_found');
    // The workflow comes back with the asset resolved to its file name.
    expect((await json(await api(`/api/v2/jobs/${created.id}/workflow`), 200)).workflow['1'].inputs.image).toBe('in.png');
    // /logs: no such route.
    const logs = await api(`/api/v2/jobs/${created.id}/logs`);
    expect(logs.status).toBe(404);
    expect(logs.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await logs.text()).toBe('404: Not Found');
    // The list: {jobs, truncated}, full jobs.
    const list = await json(await api('/api/v2/jobs?limit=1'), 200);
    expect(Object.keys(list).sort()).toEqual(['jobs', 'truncated']);
    expect(list.jobs[0]).toMatchObject({ id: created.id, outputs: [expect.objectContaining({ id: out.id })], metadata: 'run-1' });
  });

  it('bodies: metadata map → 422, unknown extra_data → 400, not JSON → 400; assets ignore Idempotency-Key; from-hash is the same record', async () => {
    const map = await json(await post('/api/v2/jobs', { workflow: chain(ref), metadata: { run: 'a' } }), 422);
    expect(map.error).toMatchObject({ code: 'invalid_request', message: "'metadata' must be a string (opaque label)." });
    const extra = await json(await post('/api/v2/jobs', { workflow: chain(ref), extra_data: { extra_pnginfo: {} } }), 400);
    expect(extra.error).toMatchObject({ code: 'invalid_request', message: "'extra_data' accepts only the 'api_key_comfy_org' field." });
    expect((await json(await api('/api/v2/jobs', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: 'nope' }), 400)).error.code).toBe('invalid_request');
    const first = await json(await upload(makePng(3, 3, 3), 'x.png', { 'Idempotency-Key': 'up-1' }), 201);
    const second = await json(await upload(makePng(3, 3, 3), 'x-copy.png', { 'Idempotency-Key': 'up-1' }), 200);
    expect(second).toMatchObject({ id: first.id, file_path: 'x.png', created_new: false });
    expect(first).not.toHaveProperty('expires_at');
    const fromHash = await json(await post('/api/v2/assets/from-hash', { hash: first.hash, file_path: 'again.png' }), 200);
    expect(fromHash).toMatchObject({ id: first.id, file_path: 'x.png', created_new: false });
  });

  it('SSE: {status} frames, progress with nodes started so far, output frames AFTER the terminal status', async () => {
    const created = await json(await post('/api/v2/jobs', { workflow: chain(ref) }), 201);
    const all = await frames(await api(`/api/v2/jobs/${created.id}/events`));
    const kinds = all.map((f) => f.event);
    const end = kinds.lastIndexOf('status');
    expect(all[end]!.data).toEqual({ status: 'succeeded' });
    expect(kinds.slice(end + 1)).toEqual(['output']);
    const progress = all.filter((f) => f.event === 'progress').map((f) => f.data);
    expect(progress.at(-1)).toMatchObject({ value: 1, nodes_done: 3, nodes_total: 3 });
    expect(progress.find((p) => p.nodes_done === 1)).toMatchObject({ value: 1, nodes_total: 1 });
  });

  it('cancel: a queued job ends expired; a running one reads running on polls, then canceled', async () => {
    emu.cloud.stepMs = 400; // the running node ends within a step of the cancel: the read after it must come first
    const a = await json(await post('/api/v2/jobs', { workflow: chain(ref, 'a') }), 201);
    const b = await json(await post('/api/v2/jobs', { workflow: chain(ref, 'b') }), 201);
    await until(a.id, (j) => j.status === 'running');
    expect((await json(await api(`/api/v2/jobs/${b.id}`), 200)).queue_position).toBe(1);
    expect((await json(await api(`/api/v2/jobs/${b.id}/cancel`, { method: 'POST' }), 200)).status).toBe('expired');
    expect((await json(await api(`/api/v2/jobs/${a.id}/cancel`, { method: 'POST' }), 200)).status).toBe('canceling');
    expect((await json(await api(`/api/v2/jobs/${a.id}`), 200)).status).toBe('running');
    expect((await until(a.id, terminal)).status).toBe('canceled');
  });
});

describe('v2 faults', () => {
  it('loseSubmitAnswers: the job is created, the answer never arrives, the key stays claimed', async () => {
    v2().faults.loseSubmitAnswers = 1;
    await expect(post('/api/v2/jobs', { workflow: chain(ref) }, { 'Idempotency-Key': 'lost-1' })).rejects.toThrow();
    expect(v2().counters).toMatchObject({ jobPosts: 1, jobsCreated: 1 });
    expect((await json(await post('/api/v2/jobs', { workflow: chain(ref) }, { 'Idempotency-Key': 'lost-1' }), 422)).error.code).toBe('idempotency_key_reuse');
    const { jobs } = await json(await api('/api/v2/jobs'), 200);
    expect(jobs).toHaveLength(1);
  });

  it('falseExpired: a just-finished job reads expired with no outputs once, then succeeded', async () => {
    v2().faults.falseExpired = 1;
    const created = await json(await post('/api/v2/jobs', { workflow: chain(ref) }), 201);
    // Wait without polling: the first poll after the end is the false one.
    while (emu.cloud.engine.get('local', created.id)?.status !== 'completed') await sleep(5);
    const first = await json(await api(`/api/v2/jobs/${created.id}`), 200);
    expect(first).toMatchObject({ status: 'expired', outputs: [] });
    expect((await json(await api(`/api/v2/jobs/${created.id}`), 200)).status).toBe('succeeded');
  });
});
