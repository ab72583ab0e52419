// The emulator's Comfy API v2 personality `v2` (the published spec, spec/cloud-v2.md §1–§5) over real
// loopback sockets with plain fetch: jobs, idempotency, errors, events, cancel, assets.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EMULATOR_API_KEY, makePng, startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { blake3Of } from '../../../src/emulator/v2/blake3.ts';

type Json = Record<string, any>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let emu: Emulator;
const v2 = () => emu.v2!;

function api(path: string, init: RequestInit & { key?: string | null } = {}): Promise<Response> {
  const { key = EMULATOR_API_KEY, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (key !== null) headers.set('Authorization', `Bearer ${key}`);
  return fetch(emu.url + path, { ...rest, headers, redirect: 'manual' });
}
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  api(path, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
async function json(res: Response, status: number): Promise<Json> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as Json;
}

function chain(image: unknown, prefix = 'v2test', extra: Json = {}): Json {
  return {
    '1': { class_type: 'LoadImage', inputs: { image } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0], ...extra } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
  };
}

async function upload(bytes: Uint8Array, filePath = 'in.png', fields: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<Response> {
  const form = new FormData();
  form.set('file_path', filePath);
  form.set('content_type', 'image/png');
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.set('file', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), filePath);
  return api('/api/v2/assets', { method: 'POST', body: form, headers });
}

async function until(job: string, done: (j: Json) => boolean, ms = 5000): Promise<Json> {
  const end = Date.now() + ms;
  for (;;) {
    const j = await json(await api(`/api/v2/jobs/${job}`), 200);
    if (done(j)) return j;
    if (Date.now() > end) throw new Error(`job ${job} still ${j.status}`);
    await sleep(10);
  }
}
const terminal = (j: Json) => ['succeeded', 'failed', 'canceled', 'expired'].includes(j.status);

/** Reads a whole event stream: frames and comments, in order. */
async function readStream(res: Response): Promise<Array<{ event: string; data: Json } | { comment: string }>> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      if (block.startsWith(':')) return { comment: block.slice(1).trim() };
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      return { event, data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as Json };
    });
}

let input: { id: string; hash: string };
const PNG = makePng(8, 8, 42);

beforeAll(async () => {
  emu = await startEmulator({ personality: 'v2', cloud: { stepMs: 5 } });
});
afterAll(() => emu.close());
beforeEach(async () => {
  v2().reset();
  emu.cloud.reset();
  const a = await json(await upload(PNG), 201);
  input = { id: a.id, hash: a.hash };
  v2().resetCounters();
});

describe('v2 personality: jobs', () => {
  it('runs a job with a core/ASSET input: 201 queued, then succeeded with outputs as assets', async () => {
    const res = await post('/api/v2/jobs', { workflow: chain({ __type: 'core/ASSET', info: { id: input.id } }) }, { 'Idempotency-Key': 'k-1' });
    const created = await json(res, 201);
    expect(created).toMatchObject({ status: 'queued', outputs: [], error: null, queue_position: 1, progress: null });
    expect(created.urls).toEqual({ self: `${emu.url}/api/v2/jobs/${created.id}`, events: `${emu.url}/api/v2/jobs/${created.id}/events`, cancel: `${emu.url}/api/v2/jobs/${created.id}/cancel`, logs: `${emu.url}/api/v2/jobs/${created.id}/logs` });
    const done = await until(created.id, terminal);
    expect(done.status).toBe('succeeded');
    expect(done.started_at).toEqual(expect.any(String));
    expect(done.completed_at).toEqual(expect.any(String));
    expect(done.metrics).toEqual({ queue_ms: expect.any(Number), execution_ms: expect.any(Number) });
    expect(done.progress).toMatchObject({ value: 1, nodes_done: 3, nodes_total: 3 });
    expect(done.outputs).toHaveLength(1);
    const out = done.outputs[0];
    expect(out).toMatchObject({ node_id: '3', type: 'image', content_type: 'image/png', job_id: created.id, name: expect.stringMatching(/^v2test_\d{5}_\.png$/) });
    expect(out.size_bytes).toBeGreaterThan(0);
    expect(out.hash).toMatch(/^blake3:[0-9a-f]{64}$/);
    // The output is an asset: its record, and its content through a signed URL on the result host.
    const asset = await json(await api(`/api/v2/assets/${out.id}`), 200);
    expect(asset).toMatchObject({ id: out.id, hash: out.hash, size_bytes: out.size_bytes });
    const redirect = await api(`/api/v2/assets/${out.id}/content`);
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location')!;
    expect(new URL(location).origin).toBe(emu.resultsUrl);
    const bytes = new Uint8Array(await (await fetch(location)).arrayBuffer());
    expect(bytes.length).toBe(out.size_bytes);
    expect(await blake3Of(bytes)).toBe(out.hash);
    // Credentials never reach the result host.
    expect((await fetch(location, { headers: { Authorization: `Bearer ${EMULATOR_API_KEY}` } })).status).toBe(401);
    // The workflow as submitted; logs of the run.
    const wf = await json(await api(`/api/v2/jobs/${created.id}/workflow`), 200);
    expect(wf).toEqual({ workflow: chain({ __type: 'core/ASSET', info: { id: input.id } }), format: 'api' });
    const logs = await json(await api(`/api/v2/jobs/${created.id}/logs`), 200);
    expect(logs).toMatchObject({ truncated: false, complete: true, text: expect.stringContaining('Executing node 3 (SaveImage)') });
    expect(v2().counters).toMatchObject({ jobPosts: 1, jobsCreated: 1 });
  });

  it('Idempotency-Key: reject-on-duplicate, released after a validation failure and a 429', async () => {
    const wf = chain({ __type: 'core/ASSET', info: { id: input.id } });
    await json(await post('/api/v2/jobs', { workflow: wf }, { 'Idempotency-Key': 'dup' }), 201);
    const again = await json(await post('/api/v2/jobs', { workflow: wf }, { 'Idempotency-Key': 'dup' }), 422);
    expect(again.error).toMatchObject({ code: 'idempotency_key_reuse', details: null });
    // A validation failure frees the key.
    await json(await post('/api/v2/jobs', { workflow: { '2': { class_type: 'ImageInvert', inputs: {} }, '3': { class_type: 'SaveImage', inputs: { images: ['2', 0] } } } }, { 'Idempotency-Key': 'bad-1' }), 422);
    await json(await post('/api/v2/jobs', { workflow: wf }, { 'Idempotency-Key': 'bad-1' }), 201);
    // So does queue_full (429 + Retry-After).
    v2().faults.queueFull = 1;
    v2().faults.retryAfter = 3;
    const full = await post('/api/v2/jobs', { workflow: wf }, { 'Idempotency-Key': 'q-1' });
    expect(full.headers.get('retry-after')).toBe('3');
    expect((await json(full, 429)).error.code).toBe('queue_full');
    await json(await post('/api/v2/jobs', { workflow: wf }, { 'Idempotency-Key': 'q-1' }), 201);
    expect(v2().counters).toMatchObject({ jobPosts: 6, jobsCreated: 3 });
  });

  it('errors in the v2 envelope: invalid_workflow with ComfyUI node_errors, workflow_format_ui, missing_asset, 401, 402, 404', async () => {
    const bad = await json(await post('/api/v2/jobs', { workflow: { '2': { class_type: 'ImageInvert', inputs: {} }, '3': { class_type: 'SaveImage', inputs: { images: ['2', 0] } } } }), 422);
    expect(bad.error.code).toBe('invalid_workflow');
    expect(bad.error.message).toBe('Prompt outputs failed validation');
    expect(bad.error.details.node_errors['2']).toEqual({
      errors: [{ type: 'required_input_missing', message: 'Required input is missing', details: 'image', extra_info: { input_name: 'image' } }],
      dependent_outputs: ['3'],
      class_type: 'ImageInvert',
    });
    const noClass = await json(await post('/api/v2/jobs', { workflow: { '1': { class_type: 'NoSuchNode', inputs: {} } } }), 422);
    expect(noClass.error).toMatchObject({ code: 'invalid_workflow', message: 'Cannot execute because node NoSuchNode does not exist.', details: { node_errors: {} } });
    const ui = await json(await post('/api/v2/jobs', { workflow: { nodes: [], links: [], version: 0.4 } }), 422);
    expect(ui.error).toEqual({ code: 'workflow_format_ui', message: 'This is a UI-export graph. Export the workflow in API format instead.', details: null });
    const missing = await json(await post('/api/v2/jobs', { workflow: chain({ __type: 'core/ASSET', info: { id: '0000' } }) }), 422);
    expect(missing.error).toMatchObject({ code: 'missing_asset', details: { missing_ids: ['0000'] } });
    expect((await json(await post('/api/v2/jobs', { workflow: chain('x.png'), webhook_url: 'http://x' }), 422)).error.code).toBe('invalid_request');
    expect((await json(await post('/api/v2/jobs', { workflow: chain('x.png'), extra_data: { nope: 1 } }), 422)).error.code).toBe('invalid_request');
    expect((await json(await api('/api/v2/jobs', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '"nope"' }), 400)).error.code).toBe('invalid_request');
    expect((await json(await api('/api/v2/jobs/nope', { key: null }), 401)).error.code).toBe('unauthorized');
    expect((await json(await api('/api/v2/jobs/nope'), 404)).error).toEqual({ code: 'not_found', message: 'Job not found.', details: null });
    emu.cloud.setKeyMode(EMULATOR_API_KEY, 'insufficient_credits');
    expect((await json(await post('/api/v2/jobs', { workflow: chain({ __type: 'core/ASSET', info: { id: input.id } }) }), 402)).error.code).toBe('insufficient_credits');
    emu.cloud.setKeyMode(EMULATOR_API_KEY, 'ok');
    v2().faults.rateLimited = 1;
    const limited = await api('/api/v2/jobs/any');
    expect(limited.headers.get('retry-after')).toBe('1');
    expect((await json(limited, 429)).error.code).toBe('rate_limited');
    expect(v2().counters.jobsCreated).toBe(0);
  });

  it('lists jobs with cursors and metadata filters; items carry no outputs or urls', async () => {
    const wf = chain({ __type: 'core/ASSET', info: { id: input.id } });
    const ids: string[] = [];
    for (const run of ['a', 'b', 'a']) ids.push((await json(await post('/api/v2/jobs', { workflow: wf, metadata: { run } }), 201)).id);
    expect((await json(await post('/api/v2/jobs', { workflow: wf, metadata: 'opaque' }), 422)).error.code).toBe('invalid_request');
    const first = await json(await api('/api/v2/jobs?limit=2'), 200);
    expect(first.jobs.map((j: Json) => j.id)).toEqual([ids[2], ids[1]]);
    expect(first.jobs[0]).not.toHaveProperty('outputs');
    expect(first.jobs[0]).not.toHaveProperty('urls');
    expect(first.jobs[0].metadata).toEqual({ run: 'a' });
    const second = await json(await api(`/api/v2/jobs?limit=2&cursor=${first.next_cursor}`), 200);
    expect(second.jobs.map((j: Json) => j.id)).toEqual([ids[0]]);
    expect(second).not.toHaveProperty('next_cursor');
    const filtered = await json(await api('/api/v2/jobs?metadata[run]=a'), 200);
    expect(filtered.jobs.map((j: Json) => j.id)).toEqual([ids[2], ids[0]]);
    expect((await json(await api('/api/v2/jobs?metadata[a]=1&metadata[b]=1&metadata[c]=1&metadata[d]=1'), 400)).error.code).toBe('invalid_metadata_filter');
  });
});

describe('v2 personality: events and cancel', () => {
  it('streams status, progress, previews (base64), outputs, then the terminal status', async () => {
    const created = await json(await post('/api/v2/jobs', { workflow: chain({ __type: 'core/ASSET', info: { id: input.id } }) }), 201);
    const res = await api(`/api/v2/jobs/${created.id}/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const frames = (await readStream(res)) as Array<{ event: string; data: Json }>;
    const kinds = frames.map((f) => f.event);
    expect(kinds[0]).toBe('status');
    expect(kinds[kinds.length - 1]).toBe('status');
    expect(frames[frames.length - 1]!.data).toEqual({ status: 'succeeded', queue_position: null });
    expect(kinds).toContain('progress');
    const preview = frames.find((f) => f.event === 'preview')!;
    expect(preview.data).toMatchObject({ content_type: 'image/png' });
    expect(Buffer.from(preview.data.data_base64, 'base64').subarray(1, 4).toString()).toBe('PNG');
    const output = frames.find((f) => f.event === 'output')!;
    expect(kinds.indexOf('output')).toBeLessThan(kinds.length - 1);
    expect(output.data).toMatchObject({ node_id: '3', type: 'image', job_id: created.id });
    const values = frames.filter((f) => f.event === 'progress').map((f) => f.data.value as number);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(v2().counters).toMatchObject({ streamsOpened: 1, streamsOpen: 0 });
    // A finished job's stream replays its outputs and ends with the terminal status.
    const replay = (await readStream(await api(`/api/v2/jobs/${created.id}/events`))) as Array<{ event: string; data: Json }>;
    expect(replay.map((f) => f.event).slice(-2)).toEqual(['output', 'status']);
  });

  it('sends `: keepalive` comments while a job is silent', async () => {
    v2().keepaliveMs = 20;
    emu.cloud.stepMs = 60;
    const created = await json(await post('/api/v2/jobs', { workflow: chain({ __type: 'core/ASSET', info: { id: input.id } }) }), 201);
    const all = await readStream(await api(`/api/v2/jobs/${created.id}/events`));
    expect(all).toContainEqual({ comment: 'keepalive' });
    v2().keepaliveMs = 15_000;
    emu.cloud.stepMs = 5;
  });

  it('caps concurrent streams (429 too_many_streams, Retry-After 5) and answers 501 when switched off', async () => {
    emu.cloud.stepMs = 200;
    v2().streamLimit = 2;
    const created = await json(await post('/api/v2/jobs', { workflow: chain({ __type: 'core/ASSET', info: { id: input.id } }) }), 201);
    const controller = new AbortController();
    const open = [0, 1].map(() => api(`/api/v2/jobs/${created.id}/events`, { signal: controller.signal }));
    expect((await Promise.all(open)).map((r) => r.status)).toEqual([200, 200]);
    const third = await api(`/api/v2/jobs/${created.id}/events`);
    expect(third.headers.get('retry-after')).toBe('5');
    expect((await json(third, 429)).error.code).toBe('too_many_streams');
    controller.abort();
    await sleep(50);
    expect(v2().counters.streamsOpen).toBe(0);
    v2().faults.eventsNotImplemented = true;
    expect((await json(await api(`/api/v2/jobs/${created.id}/events`), 501)).error.code).toBe('not_implemented');
    v2().streamLimit = 8;
    emu.cloud.stepMs = 5;
  });

  it('cancel: running → canceling → canceled at the next boundary; queued → canceled; idempotent; 404 unknown', async () => {
    emu.cloud.stepMs = 400; // the running node ends within a step of the cancel: the reads after it must come first
    emu.cloud.setParallel(EMULATOR_API_KEY, 1);
    const wf = (p: string) => chain({ __type: 'core/ASSET', info: { id: input.id } }, p);
    const running = await json(await post('/api/v2/jobs', { workflow: wf('a') }), 201);
    const queued = await json(await post('/api/v2/jobs', { workflow: wf('b') }), 201);
    await until(running.id, (j) => j.status === 'running');
    // The queued one first (it would start once the running one ends).
    const q = await json(await api(`/api/v2/jobs/${queued.id}/cancel`, { method: 'POST' }), 200);
    expect(q.status).toBe('canceled');
    expect((await json(await api(`/api/v2/jobs/${queued.id}/cancel`, { method: 'POST' }), 200)).status).toBe('canceled');
    const stream = api(`/api/v2/jobs/${running.id}/events`).then(readStream);
    const canceling = await json(await api(`/api/v2/jobs/${running.id}/cancel`, { method: 'POST' }), 200);
    expect(canceling.status).toBe('canceling');
    expect((await json(await api(`/api/v2/jobs/${running.id}`), 200)).status).toBe('canceling');
    expect((await until(running.id, terminal)).status).toBe('canceled');
    expect(((await stream).at(-1) as { data: Json }).data.status).toBe('canceled');
    const done = await json(await api(`/api/v2/jobs/${running.id}`), 200);
    expect(done.outputs).toEqual([]);
    expect((await json(await api('/api/v2/jobs/nope/cancel', { method: 'POST' }), 404)).error.code).toBe('not_found');
    expect(v2().counters.cancels).toBe(4);
    emu.cloud.setParallel(EMULATOR_API_KEY, 2);
    emu.cloud.stepMs = 5;
  });
});

describe('v2 personality: assets', () => {
  it('hashes uploads with BLAKE3, dedups, checks expected_hash, and mints from a hash', async () => {
    expect(input.hash).toBe(await blake3Of(PNG));
    expect(v2().counters).toMatchObject({ uploads: 0, uploadBytes: 0 });
    const again = await json(await upload(PNG, 'copy.png'), 200);
    expect(again).toMatchObject({ created_new: false, hash: input.hash, file_path: 'copy.png' });
    expect(v2().counters).toMatchObject({ uploads: 1, uploadBytes: PNG.length });
    const wrong = await json(await upload(makePng(4, 4, 1), 'w.png', { expected_hash: `blake3:${'0'.repeat(64)}` }), 409);
    expect(wrong.error.code).toBe('hash_mismatch');
    expect((await api(`/api/v2/assets/by-hash/${await blake3Of(makePng(4, 4, 1))}`, { method: 'HEAD' })).status).toBe(404);
    const head = await api(`/api/v2/assets/by-hash/${input.hash}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const minted = await json(await post('/api/v2/assets/from-hash', { hash: input.hash, file_path: 'again.png', tags: ['t1'] }), 201);
    expect(minted).toMatchObject({ hash: input.hash, file_path: 'again.png', tags: ['t1'], created_new: false });
    expect((await json(await post('/api/v2/assets/from-hash', { hash: input.hash, file_path: 'again.png' }), 200)).id).toBe(minted.id);
    expect((await json(await post('/api/v2/assets/from-hash', { hash: `blake3:${'1'.repeat(64)}` }), 404)).error.code).toBe('blob_not_found');
    // Idempotency-Key on uploads: reject-on-duplicate in the spec.
    await json(await upload(makePng(5, 5, 5), 'k.png', {}, { 'Idempotency-Key': 'up-1' }), 201);
    expect((await json(await upload(makePng(5, 5, 5), 'k.png', {}, { 'Idempotency-Key': 'up-1' }), 422)).error.code).toBe('idempotency_key_reuse');
  });

  it('gets, deletes (204, then 404; the blob survives) and serves ranges (206; 416 past the end)', async () => {
    const got = await json(await api(`/api/v2/assets/${input.id}`), 200);
    expect(got).toMatchObject({ id: input.id, size_bytes: PNG.length, content_type: 'image/png', file_path: 'in.png', url: `${emu.url}/api/v2/assets/${input.id}/content` });
    const location = (await api(`/api/v2/assets/${input.id}/content`)).headers.get('location')!;
    const part = await fetch(location, { headers: { Range: 'bytes=0-9' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-9/${PNG.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(PNG.subarray(0, 10));
    const past = await fetch(location, { headers: { Range: 'bytes=5000-' } });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${PNG.length}`);
    expect((await api(`/api/v2/assets/${input.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await json(await api(`/api/v2/assets/${input.id}`, { method: 'DELETE' }), 404)).error.code).toBe('not_found');
    expect((await api(`/api/v2/assets/by-hash/${input.hash}`, { method: 'HEAD' })).status).toBe(200);
    expect((await json(await post('/api/v2/jobs', { workflow: chain({ __type: 'core/ASSET', info: { id: input.id } }) }), 422)).error.details).toEqual({ missing_ids: [input.id] });
  });

  it('serves object_info without a key (for clients that validate or convert editor files)', async () => {
    const info = await json(await api('/api/object_info', { key: null }), 200);
    expect(info.LoadImage.input.required.image[0]).toContain('in.png');
    // No v1 routes on a v2 server.
    expect((await post('/api/prompt', { prompt: {} })).status).toBe(404);
  });
});
