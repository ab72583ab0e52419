// The emulator's personalities over real loopback HTTP (plain fetch) and
// WebSockets (the `ws` client): the live cloud's raw states, job records and
// quirks, and a self-hosted local server's shapes (see
// fixtures/local-server/09_jobs_api_and_stopping.jsonl), one emulator each.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { decodeFrame, type PreviewFrame } from '../../src/cloud/frames.ts';
import { DEFAULT_API_KEYS, EMULATOR_API_KEY, PERSONALITIES, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { CloudState } from '../../src/emulator/cloud.ts';
import { CloudClient } from '../../src/cloud/client.ts';
import { NotFoundError } from '../../src/errors.ts';

const KEY = EMULATOR_API_KEY;
const OTHER = 'other-key';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Json = Record<string, any>;
type Msg = { type: string; data: Json };
type Received = { kind: 'json'; msg: Msg } | { kind: 'binary'; frame: PreviewFrame };

// --- helpers, bound to one emulator ---------------------------------------------------

/** REST and socket helpers for `emu`; `key: null` sends no X-API-Key. */
function clientOf(get: () => Emulator) {
  const api = (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const { key = KEY, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (key !== null) headers.set('X-API-Key', key);
    return fetch(get().url + path, { ...rest, headers, redirect: 'manual' });
  };
  const postJson = (path: string, body: unknown, key: string | null = KEY) =>
    api(path, { method: 'POST', key, headers: { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = async (path: string, key: string | null = KEY): Promise<Json> => {
    const res = await api(path, { key });
    expect(res.status, path).toBe(200);
    return (await res.json()) as Json;
  };
  const submit = async (prompt: unknown, extra: Json = {}, key: string | null = KEY, path = '/api/prompt'): Promise<string> => {
    const res = await postJson(path, { prompt, ...extra }, key);
    const body = (await res.json()) as Json;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toEqual({ prompt_id: expect.any(String), number: expect.any(Number), node_errors: {} });
    return body.prompt_id as string;
  };
  /** Polls `read` until `pred` holds. */
  const until = async <T>(read: () => Promise<T>, pred: (v: T) => boolean, what: string, timeoutMs = 5000): Promise<T> => {
    const end = Date.now() + timeoutMs;
    let last: T;
    do {
      last = await read();
      if (pred(last)) return last;
      await sleep(5);
    } while (Date.now() < end);
    throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
  };
  const openSocket = async (query: string) => {
    const ws = new WebSocket(`${get().url.replace('http', 'ws')}/ws?${query}`);
    const received: Received[] = [];
    ws.on('message', (data, isBinary) => {
      const buf = data as Buffer;
      received.push(isBinary ? { kind: 'binary', frame: decodeFrame(buf) } : { kind: 'json', msg: JSON.parse(buf.toString('utf8')) as Msg });
    });
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const jsonOf = (promptId?: string) => received.flatMap((r) => (r.kind === 'json' && (promptId === undefined || r.msg.data.prompt_id === promptId) ? [r.msg] : []));
    const s = {
      ws,
      received,
      closed,
      json: jsonOf,
      types: (promptId: string) => jsonOf(promptId).map((m) => m.type),
      frames: () => received.flatMap((r) => (r.kind === 'binary' ? [r.frame] : [])),
      waitFor: (pred: (m: Msg) => boolean, what: string) => until(async () => jsonOf().find(pred), (m) => m !== undefined, what),
    };
    await s.waitFor((m) => m.type === 'status', 'the greeting');
    return s;
  };
  return { api, postJson, json, submit, until, openSocket };
}

/** LoadImage → ImageInvert → SaveImage; distinct prefixes keep runs out of the cache. */
function workflow(prefix: string, invert: Json = {}) {
  return {
    '1': { class_type: 'LoadImage', inputs: { image: 'in.png' } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0], ...invert } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
  };
}

const isEnd = (id: string) => (m: Msg) => m.type === 'executing' && m.data.node === null && m.data.prompt_id === id;

// --- cloud (default), spec by name, and overrides ---------------------------------------

describe('personality selection', () => {
  it('defaults to cloud, takes a name or an overridden object, and knobs in CloudOptions', async () => {
    const byDefault = await startEmulator();
    const spec = await startEmulator({ personality: 'spec' });
    const oldLocal = await startEmulator({ personality: { ...PERSONALITIES.local, jobsApi: false }, cloud: { outputsDelayMs: 7 } });
    try {
      // The live service's shape, with the routes the README shows (listJobs, getJob).
      expect(byDefault.cloud.personality).toBe(PERSONALITIES.cloud);
      expect((await fetch(`${byDefault.url}/api/jobs`, { headers: { 'X-API-Key': KEY } })).status).toBe(200);

      expect(spec.cloud.personality).toBe(PERSONALITIES.spec);
      expect([spec.cloud.viewMode, spec.cloud.outputsDelayMs]).toEqual(['redirect', 0]);
      for (const path of ['/api/jobs', '/api/history/x', '/history/x', '/prompt']) {
        expect((await fetch(`${spec.url}${path}`, { headers: { 'X-API-Key': KEY } })).status, path).toBe(404);
      }
      expect((await fetch(`${spec.url}/api/queue`)).status).toBe(401);

      expect(oldLocal.cloud.personality).toMatchObject({ name: 'local', jobsApi: false, history: true, requireKey: false });
      expect(Object.isFrozen(oldLocal.cloud.personality)).toBe(true);
      expect([oldLocal.cloud.viewMode, oldLocal.cloud.outputsDelayMs]).toEqual(['direct', 7]);
      expect((await fetch(`${oldLocal.url}/api/jobs`)).status).toBe(404);
      expect((await fetch(`${oldLocal.url}/jobs/x`)).status).toBe(404);
      expect(await (await fetch(`${oldLocal.url}/history/x`)).json()).toEqual({});
    } finally {
      await Promise.all([byDefault.close(), spec.close(), oldLocal.close()]);
    }
    await expect(startEmulator({ personality: 'nope' as 'spec' })).rejects.toThrow(/Unknown personality/);
  });
});

describe('a route the personality lacks', () => {
  const emus: Emulator[] = [];
  afterAll(() => Promise.all(emus.map((e) => e.close())));
  const start = async (personality: Parameters<typeof startEmulator>[0]) => {
    const e = await startEmulator({ ...personality, cloud: { stepMs: 5, progressSteps: 1 } });
    emus.push(e);
    e.cloud.addFile('in.png', PNG);
    return e;
  };
  const get = async (e: Emulator, path: string) => {
    const res = await fetch(e.url + path, { headers: { 'X-API-Key': KEY } });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };
  const hint = (route: string, lacking: string, why: string, serving: string, first: string) =>
    `the '${lacking}' personality does not serve this route (${why}); ${serving}: startEmulator({ personality: '${first}' }) or platformui emulator --personality ${first}`;

  it("names the personalities that serve it, in the JSON ErrorResponse of every 404; a route no personality serves keeps 'No route'", async () => {
    const spec = await start({ personality: 'spec' });
    const cloud = await start({});
    expect(JSON.parse((await get(spec, '/api/jobs')).text)).toEqual({
      error: 'not_found',
      message: hint('GET /api/jobs', 'spec', 'the documents show none', "the 'cloud' and 'local' personalities do", 'cloud'),
    });
    expect(JSON.parse((await get(spec, '/queue')).text).message).toBe(hint('GET /queue', 'spec', 'the documents show none', "the 'local' personality does", 'local'));
    expect(JSON.parse((await get(cloud, '/history/x')).text).message).toBe(hint('GET /history/x', 'cloud', 'the live service has none', "the 'local' personality does", 'local'));
    for (const e of [spec, cloud]) expect(JSON.parse((await get(e, '/nope')).text)).toEqual({ error: 'not_found', message: 'No route for GET /nope' });
  });

  it('keeps what the SDK detects: spec answers a JSON 404 (an unknown job to getJob, the hint in its message), and the atomic cancel falls back', async () => {
    const spec = await start({ personality: 'spec' });
    const cloud = new CloudClient({ baseUrl: spec.url, apiKey: KEY, logLevel: 'off' });
    const jobs = await cloud.listJobs().catch((err: unknown) => err);
    expect(jobs).toBeInstanceOf(NotFoundError);
    expect((jobs as Error).message).toContain("the 'spec' personality does not serve this route (the documents show none); the 'cloud' and 'local' personalities do: startEmulator({ personality: 'cloud' })");
    spec.cloud.stepMs = 1000;
    const { prompt_id: id } = await cloud.submit(workflow('lacks'));
    const record = await cloud.getJob(id).catch((err: unknown) => err);
    expect(record).toBeInstanceOf(NotFoundError);
    expect((record as Error).message).toContain(`/api/jobs/${id} — not_found: the 'spec' personality does not serve this route`);
    // POST /api/jobs/{id}/cancel answers 404: the client stops the job with POST /api/queue { delete } instead.
    await cloud.stopJob(id);
    expect(spec.requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual(['/api/prompt', `/api/jobs/${id}/cancel`, '/api/queue']);
    expect((await cloud.getJobStatus(id)).status).toBe('cancelled');
  });

  it("answers as aiohttp does on a local server, byte for byte, so the SDK reads /history where /api/jobs is missing", async () => {
    const local = await start({ personality: 'local' });
    const oldLocal = await start({ personality: { ...PERSONALITIES.local, jobsApi: false } });
    for (const [e, path] of [[local, '/api/job/x/status'], [local, '/nope'], [oldLocal, '/api/jobs'], [oldLocal, '/api/jobs/x']] as const) {
      expect(await get(e, path), path).toEqual({ status: 404, type: 'text/plain; charset=utf-8', text: '404: Not Found' });
    }
    const client = new CloudClient({ baseUrl: oldLocal.url, logLevel: 'off' });
    const result = await client.run(workflow('old-local'));
    const record = await client.getJob(result.promptId);
    expect(record).toMatchObject({ id: result.promptId, status: 'completed' });
    expect(oldLocal.requests.map((r) => r.path)).toContain(`/api/history/${result.promptId}`);
  });
});

// --- the live cloud -----------------------------------------------------------------------------

describe('cloud personality', () => {
  let emu: Emulator;
  const c = clientOf(() => emu);
  const raw = (id: string, key = KEY) => c.json(`/api/job/${id}/status`, key);
  const waitRaw = (id: string, want: string) => c.until(() => raw(id), (s) => s.status === want, `${id} ${want}`);
  const record = (id: string, key = KEY) => c.json(`/api/jobs/${id}`, key);

  beforeAll(async () => {
    emu = await startEmulator({ personality: 'cloud', apiKeys: { ...DEFAULT_API_KEYS, [OTHER]: { parallel: 2 } }, cloud: { stepMs: 5, progressSteps: 2 } });
  });
  afterAll(() => emu.close());
  beforeEach(() => {
    emu.cloud.reset();
    emu.cloud.stepMs = 5;
    emu.cloud.outputsDelayMs = 0;
    emu.cloud.addFile('in.png', PNG);
  });

  it('has the live cloud defaults', () => {
    expect(emu.cloud.personality).toBe(PERSONALITIES.cloud);
    const fresh = new CloudState({ personality: 'cloud' });
    expect([fresh.outputsDelayMs, fresh.viewMode, fresh.personality.name]).toEqual([150, 'redirect', 'cloud']);
    fresh.close();
  });

  it('answers raw states: queued_limited while slots are full, executing, success, with ISO times and no outputs', async () => {
    emu.cloud.stepMs = 60;
    emu.cloud.setParallel(KEY, 1);
    const before = Date.now();
    const a = await c.submit(workflow('a'));
    const b = await c.submit(workflow('b'));
    const running = await waitRaw(a, 'executing');
    const after = Date.now();
    expect(Object.keys(running).sort()).toEqual(['created_at', 'id', 'last_state_update', 'status', 'updated_at']);
    expect(running.id).toBe(a);
    expect(running.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // Stamped by this submission: between its start and the answer read (an order, however long they took).
    expect(Date.parse(running.created_at)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(running.created_at)).toBeLessThanOrEqual(after);
    expect(Date.parse(running.updated_at)).toBeGreaterThanOrEqual(Date.parse(running.created_at));
    const waiting = await raw(b);
    expect(waiting).toEqual({ id: b, status: 'queued_limited', created_at: expect.any(String), updated_at: waiting.created_at });

    const done = await waitRaw(a, 'success');
    expect(done).not.toHaveProperty('outputs');
    expect(done).not.toHaveProperty('error_message');
    await waitRaw(b, 'success');
    expect((await c.api('/api/job/unknown/status')).status).toBe(404);
    const foreign = await c.api(`/api/job/${a}/status`, { key: OTHER });
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toMatchObject({ error: expect.any(String) });
  });

  it('ends failures as error, non_retryable_error, or lost without any socket event; cancels as cancelled', async () => {
    const s = await c.openSocket(`clientId=x&token=${KEY}`);
    emu.cloud.failNextWith(KEY, 'OOMError', { message: 'boom' });
    const failed = await c.submit(workflow('f1'));
    expect(await waitRaw(failed, 'error')).toMatchObject({ id: failed, error_message: 'boom', last_state_update: expect.any(String) });

    emu.cloud.failNextWith(KEY, 'ValidationError', { rawStatus: 'non_retryable_error' });
    await waitRaw(await c.submit(workflow('f2')), 'non_retryable_error');

    emu.cloud.failNextWith(KEY, 'OOMError', { rawStatus: 'lost' });
    const lost = await c.submit(workflow('f3'));
    const lostState = await waitRaw(lost, 'lost');
    expect(lostState).not.toHaveProperty('error_message');
    await sleep(50);
    expect(s.types(lost)).toContain('execution_start');
    expect(s.types(lost).filter((t) => ['execution_error', 'execution_success', 'execution_interrupted'].includes(t))).toEqual([]);
    expect(s.json(lost).some(isEnd(lost))).toBe(false);
    expect(s.json(lost).at(-1)).toMatchObject({ type: 'executing', data: { node: '1' } }); // the last word: its first node started
    const lostRecord = await record(lost);
    expect(lostRecord.status).toBe('failed');
    expect(lostRecord).not.toHaveProperty('execution_error');
    expect(lostRecord.execution_status).toMatchObject({ status_str: 'error', completed: false });

    emu.cloud.stepMs = 100;
    const cancelled = await c.submit(workflow('c1'));
    await waitRaw(cancelled, 'executing');
    expect(await (await c.postJson('/api/queue', { delete: [cancelled] })).json()).toEqual({ deleted: [cancelled] });
    expect((await raw(cancelled)).status).toBe('cancelled');
    expect((await record(cancelled)).status).toBe('cancelled');
    s.ws.close();
  });

  it('persists outputs in the job record only outputsDelayMs after execution_success', async () => {
    emu.cloud.outputsDelayMs = 400;
    const s = await c.openSocket(`clientId=x&token=${KEY}`);
    // The delay is read on a clock the test moves (Date only: the job's steps and the sockets stay real), standing
    // still from the submission: the record read just after the end is early however long the read took.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    let late: Json = {};
    const submittedAt = Date.now();
    let id = '';
    try {
      id = await c.submit(workflow('late'), { extra_data: { api_key_platform_org: KEY, workflow_id: 'wf-late' } });
      await s.waitFor((m) => m.type === 'execution_success' && m.data.prompt_id === id, 'execution_success');
      const early = await record(id);
      expect(early).toMatchObject({ id, status: 'completed', outputs: {}, outputs_count: 0 });
      expect(early).not.toHaveProperty('preview_output');
      vi.setSystemTime(Date.now() + 399);
      expect(await record(id)).toMatchObject({ outputs: {}, outputs_count: 0 });
      vi.setSystemTime(Date.now() + 1);
      late = await record(id);
    } finally {
      vi.useRealTimers();
    }
    const image = { filename: 'late_00001_.png', subfolder: '', type: 'output' };
    expect(late).toEqual({
      id,
      status: 'completed',
      create_time: expect.any(Number),
      update_time: expect.any(Number),
      workflow: { prompt: workflow('late'), extra_data: { workflow_id: 'wf-late', create_time: expect.any(Number) } },
      outputs: { '3': { images: [image] } },
      outputs_count: 1,
      preview_output: { ...image, nodeId: '3', mediaType: 'images' },
      execution_status: { status_str: 'success', completed: true, messages: expect.any(Array) },
      execution_meta: {},
      execution_start_time: expect.any(Number),
      execution_end_time: expect.any(Number),
    });
    expect(late.create_time).toBe(Math.floor(submittedAt / 1000));
    expect(late.update_time).toBeGreaterThanOrEqual(late.create_time);
    expect(late.execution_end_time).toBeGreaterThan(1e12); // ms
    expect(late.execution_end_time).toBeGreaterThanOrEqual(late.execution_start_time);
    expect(late.execution_status.messages.map((m: [string, Json]) => m[0])).toEqual(['execution_start', 'execution_cached', 'execution_success']);
    expect(JSON.stringify(late)).not.toContain(KEY);

    // A failed job's record carries the error's fields.
    emu.cloud.failNextWith(KEY, 'OOMError', { message: 'no memory' });
    const failed = await c.submit(workflow('oom'));
    await waitRaw(failed, 'error');
    const rec = await record(failed);
    expect(rec.status).toBe('failed');
    expect(Object.keys(rec.execution_error).sort()).toEqual(['current_inputs', 'current_outputs', 'exception_message', 'exception_type', 'node_id', 'node_type', 'traceback']);
    expect(rec.execution_error).toMatchObject({ exception_type: 'OOMError', exception_message: 'no memory', node_id: '1', node_type: 'LoadImage' });
    expect((await c.api('/api/jobs/unknown')).status).toBe(404);
    expect(await (await c.api(`/api/jobs/${id}`, { key: OTHER })).json()).toEqual({ error: 'Job not found' });
    s.ws.close();
  });

  it('sends no executed for a fully cached rerun', async () => {
    const s = await c.openSocket(`clientId=x&token=${KEY}`);
    const first = await c.submit(workflow('cached'));
    await s.waitFor(isEnd(first), 'first end');
    expect(s.types(first)).toContain('executed');
    const second = await c.submit(workflow('cached'));
    await s.waitFor(isEnd(second), 'second end');
    expect(s.types(second)).toEqual(['execution_start', 'execution_cached', 'execution_success', 'executing']);
    expect(s.json(second)[1]!.data.nodes).toEqual(['1', '2', '3']);
    expect((await record(second)).outputs).toEqual((await record(first)).outputs);
    expect((await record(second)).outputs_count).toBe(1);
    s.ws.close();
  });

  it('lists jobs with filters, sorting and pagination, and refuses invalid values with 400', async () => {
    const before = Date.now();
    const ids = [
      await c.submit(workflow('l0'), { extra_data: { extra_pnginfo: { workflow: { id: 'wf-a' } } } }),
      await c.submit(workflow('l1'), { extra_data: { workflow_id: 'wf-b' } }),
      await c.submit(workflow('l2')),
    ];
    for (const id of ids) await waitRaw(id, 'success');
    emu.cloud.failNextWith(KEY, 'OOMError');
    ids.push(await c.submit(workflow('l3')));
    await waitRaw(ids[3]!, 'error');
    emu.cloud.stepMs = 200;
    ids.push(await c.submit(workflow('l4')));
    await c.postJson('/api/queue', { delete: [ids[4]] });

    const list = async (query: string, key = KEY) => c.json(`/api/jobs${query}`, key);
    const all = await list('');
    const after = Date.now();
    expect(all.jobs.map((j: Json) => j.id)).toEqual([...ids].reverse());
    expect(all.pagination).toEqual({ offset: 0, limit: 100, total: 5, has_more: false });
    const item = all.jobs.find((j: Json) => j.id === ids[0]);
    expect(item).toEqual({
      id: ids[0],
      status: 'completed',
      create_time: expect.any(Number),
      preview_output: { filename: 'l0_00001_.png', subfolder: '', type: 'output', nodeId: '3', mediaType: 'images' },
      outputs_count: 1,
      workflow_id: 'wf-a',
      execution_start_time: expect.any(Number),
      execution_end_time: expect.any(Number),
    });
    // Unix seconds of its submission: between the test's first submission and this read.
    expect(item.create_time).toBeGreaterThanOrEqual(Math.floor(before / 1000));
    expect(item.create_time).toBeLessThanOrEqual(after / 1000);
    expect(all.jobs.find((j: Json) => j.id === ids[3]).execution_error).toMatchObject({ exception_type: 'OOMError' });

    expect((await list('?status=completed')).jobs.map((j: Json) => j.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect((await list('?status=failed,cancelled')).jobs.map((j: Json) => [j.id, j.status])).toEqual([
      [ids[4], 'cancelled'],
      [ids[3], 'failed'],
    ]);
    const page = await list('?limit=2&offset=1');
    expect(page.jobs.map((j: Json) => j.id)).toEqual([ids[3], ids[2]]);
    expect(page.pagination).toEqual({ offset: 1, limit: 2, total: 5, has_more: true });
    expect((await list('?limit=2&offset=4')).pagination).toEqual({ offset: 4, limit: 2, total: 5, has_more: false });
    expect((await list('?sort_order=asc')).jobs.map((j: Json) => j.id)).toEqual(ids);
    const durations = (await list('?sort_by=execution_time&sort_order=asc')).jobs.map((j: Json) => (j.execution_start_time === undefined ? 0 : j.execution_end_time - j.execution_start_time));
    expect(durations).toHaveLength(5);
    expect(durations).toEqual([...durations].sort((x, y) => x - y));
    expect(durations[4]).toBeGreaterThan(durations[0]);
    expect((await list('?workflow_id=wf-a')).jobs.map((j: Json) => j.id)).toEqual([ids[0]]);
    expect((await list('?workflow_id=wf-b')).jobs.map((j: Json) => j.id)).toEqual([ids[1]]);
    expect((await list('?output_type=image')).pagination.total).toBe(3);
    expect((await list('?output_type=video')).pagination.total).toBe(0);
    expect((await list('', OTHER)).pagination.total).toBe(0);

    for (const bad of ['status=bogus', 'status=completed,nope', 'sort_by=created_at', 'sort_order=up', 'limit=0', 'limit=1001', 'limit=abc', 'offset=-1', 'offset=1.5', 'output_type=gif']) {
      const res = await c.api(`/api/jobs?${bad}`);
      expect(res.status, bad).toBe(400);
      expect(await res.json(), bad).toEqual({ error: expect.any(String), message: expect.any(String) });
    }
  });

  it('lists the queue as [number, prompt_id, workflow, output_node_ids, { create_time }]', async () => {
    emu.cloud.stepMs = 100;
    emu.cloud.setParallel(KEY, 1);
    const before = Date.now();
    const a = await c.submit(workflow('qa'));
    const b = await c.submit(workflow('qb'));
    await waitRaw(a, 'executing');
    const q = await c.json('/api/queue');
    const after = Date.now();
    expect(q.queue_running).toEqual([[expect.any(Number), a, workflow('qa'), ['3'], { create_time: expect.any(Number) }]]);
    expect(q.queue_pending).toEqual([[expect.any(Number), b, workflow('qb'), ['3'], { create_time: expect.any(Number) }]]);
    expect(q.queue_running[0][4].create_time).toBeGreaterThanOrEqual(Math.floor(before / 1000));
    expect(q.queue_running[0][4].create_time).toBeLessThanOrEqual(after / 1000);
    expect(q.queue_pending[0][0]).toBeGreaterThan(q.queue_running[0][0]);
    await c.postJson('/api/queue', { delete: [a, b] });
  });

  it('interrupts every running job of the key, ignoring the body', async () => {
    emu.cloud.stepMs = 100;
    const ids = [await c.submit(workflow('i0')), await c.submit(workflow('i1')), await c.submit(workflow('i2'))];
    const foreign = await c.submit(workflow('i3'), {}, OTHER);
    await waitRaw(ids[1]!, 'executing');
    expect((await raw(ids[2]!)).status).toBe('queued_limited');
    const res = await c.postJson('/api/interrupt', { prompt_id: ids[0] });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect((await raw(ids[0]!)).status).toBe('cancelled');
    expect((await raw(ids[1]!)).status).toBe('cancelled');
    expect((await waitRaw(ids[2]!, 'executing')).status).toBe('executing');
    expect((await raw(foreign, OTHER)).status).toBe('executing');
    await c.api('/api/interrupt', { method: 'POST', body: 'not json', headers: { 'Content-Type': 'text/plain' } });
    expect((await raw(ids[2]!)).status).toBe('cancelled');
    await c.postJson('/api/queue', { delete: [foreign] }, OTHER);
  });
});

// --- a self-hosted local server ---------------------------------------------------------------

describe('local personality', () => {
  let emu: Emulator;
  const c = clientOf(() => emu);
  const record = (id: string) => c.json(`/api/jobs/${id}`, null);
  const waitJob = (id: string, status: string) => c.until(() => record(id), (r) => r.status === status, `${id} ${status}`);
  const history = (id: string, path = '/api/history/') => c.json(`${path}${id}`, null);

  beforeAll(async () => {
    emu = await startEmulator({ personality: 'local', cloud: { stepMs: 5, progressSteps: 2 } });
  });
  afterAll(() => emu.close());
  beforeEach(() => {
    emu.cloud.reset();
    emu.cloud.stepMs = 5;
    emu.cloud.addFile('in.png', PNG);
  });

  it('needs no API key on REST or the socket, and ignores a given one', async () => {
    expect(emu.cloud.personality).toBe(PERSONALITIES.local);
    emu.cloud.stepMs = 50; // both jobs still queued when the queue is read
    const s = await c.openSocket('clientId=anon');
    expect(s.json()[0]).toEqual({ type: 'status', data: { status: { exec_info: { queue_remaining: 0 } }, sid: 'anon' } });
    const other = await c.openSocket('clientId=other&token=not-a-key');
    const a = await c.submit(workflow('k1'), {}, null);
    const b = await c.submit(workflow('k2'), {}, 'not-a-key', '/prompt');
    // One shared queue whoever submits.
    const q = await c.json('/queue', 'another-bogus-key');
    expect([...q.queue_running, ...q.queue_pending].map((e: unknown[]) => e[1]).sort()).toEqual([a, b].sort());
    await waitJob(b, 'completed');
    expect((await c.api('/object_info', { key: null })).status).toBe(200);
    const form = new FormData();
    form.append('image', new Blob([PNG], { type: 'image/png' }), 'x.png');
    expect((await c.api('/upload/image', { method: 'POST', key: null, body: form })).status).toBe(200);
    // Both sockets, whatever their token, got the no-client_id jobs' events.
    expect(s.types(a)).toContain('execution_success');
    expect(other.types(b)).toContain('execution_success');
    emu.cloud.dropAllSockets();
    expect(await s.closed).toBe(1006);
    expect(await other.closed).toBe(1006);
  });

  it('has no status endpoint: 404 text/plain', async () => {
    const id = await c.submit(workflow('st'), {}, null);
    for (const path of [`/api/job/${id}/status`, `/job/${id}/status`]) {
      const res = await c.api(path, { key: null });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).toBe('404: Not Found');
    }
  });

  it('answers history {} until the job has finished, then its entry, also under /history', async () => {
    emu.cloud.stepMs = 60;
    const id = await c.submit(workflow('h'), { client_id: 'hc' }, null, '/prompt');
    await waitJob(id, 'in_progress');
    expect(await history(id)).toEqual({});
    expect(await history(id, '/history/')).toEqual({});
    expect(await history('00000000-0000-0000-0000-000000000000')).toEqual({});
    await waitJob(id, 'completed');
    const entry = await history(id);
    const image = { filename: 'h_00001_.png', subfolder: '', type: 'output' };
    expect(entry).toEqual({
      [id]: {
        prompt: [expect.any(Number), id, workflow('h'), { client_id: 'hc', create_time: expect.any(Number) }, ['3']],
        outputs: { '3': { images: [image] } },
        status: { status_str: 'success', completed: true, messages: expect.any(Array) },
        meta: { '3': { node_id: '3', display_node: '3', parent_node: null, real_node_id: '3' } },
      },
    });
    expect(entry[id].prompt[3].create_time).toBeGreaterThan(1e12); // ms
    expect(entry[id].status.messages.map((m: [string, Json]) => m[0])).toEqual(['execution_start', 'execution_cached', 'execution_success']);
    expect(entry[id].status.messages[0][1]).toEqual({ prompt_id: id, timestamp: expect.any(Number) });
    expect(await history(id, '/history/')).toEqual(entry);
  });

  it('answers job records in the local server’s shape, an interrupted job reading failed', async () => {
    emu.cloud.stepMs = 80;
    const a = await c.submit(workflow('ra'), { client_id: 'r' }, null);
    const b = await c.submit(workflow('rb'), { client_id: 'r', extra_data: { extra_pnginfo: { workflow: { id: 'wf-local' } } } }, null);
    await waitJob(a, 'in_progress');
    expect(await record(a)).toEqual({ id: a, status: 'in_progress', priority: expect.any(Number), create_time: expect.any(Number), outputs_count: 0 });
    const pending = await record(b);
    expect(pending).toEqual({ id: b, status: 'pending', priority: expect.any(Number), create_time: expect.any(Number), outputs_count: 0, workflow_id: 'wf-local' });
    expect(pending.create_time).toBeGreaterThan(1e12);
    expect(pending.priority).toBeGreaterThan((await record(a)).priority);

    expect((await c.postJson('/interrupt', { prompt_id: a }, null)).status).toBe(200);
    const interrupted = await waitJob(a, 'failed');
    expect(Object.keys(interrupted)).toEqual(['id', 'status', 'priority', 'create_time', 'execution_start_time', 'execution_end_time', 'outputs_count', 'outputs', 'execution_status', 'workflow']);
    expect(interrupted).toMatchObject({ outputs_count: 0, outputs: {}, workflow: { prompt: workflow('ra'), extra_data: { client_id: 'r', create_time: interrupted.create_time } } });
    expect(interrupted.execution_status).toMatchObject({ status_str: 'error', completed: false });
    const last = interrupted.execution_status.messages.at(-1);
    expect(last[0]).toBe('execution_interrupted');
    expect(last[1]).toMatchObject({ prompt_id: a, node_id: expect.any(String), node_type: expect.any(String), executed: expect.any(Array), timestamp: interrupted.execution_end_time });

    const done = await waitJob(b, 'completed');
    expect(done).toMatchObject({
      outputs_count: 1,
      preview_output: { filename: 'rb_00001_.png', subfolder: '', type: 'output', nodeId: '3', mediaType: 'images' },
      workflow_id: 'wf-local',
      execution_status: { status_str: 'success', completed: true },
    });
    expect(done.execution_end_time).toBeGreaterThanOrEqual(done.execution_start_time);

    emu.cloud.stepMs = 5;
    emu.cloud.failNextWith('any-key-is-the-shared-lane', 'OOMError', { message: 'oom' });
    const failed = await c.submit(workflow('rf'), {}, null);
    const rec = await waitJob(failed, 'failed');
    expect(rec.execution_error).toMatchObject({ prompt_id: failed, exception_type: 'OOMError', exception_message: 'oom', node_id: '1', executed: [], timestamp: rec.execution_end_time });

    const list = await c.json('/api/jobs?limit=2&offset=0', null);
    expect(list.jobs.map((j: Json) => j.id)).toEqual([failed, b]);
    expect(list.pagination).toEqual({ offset: 0, limit: 2, total: 3, has_more: true });
    expect(list.jobs[1]).not.toHaveProperty('outputs');
    expect(list.jobs[1]).not.toHaveProperty('workflow');
    expect(list.jobs[1]).toMatchObject({ id: b, status: 'completed', priority: expect.any(Number), outputs_count: 1, workflow_id: 'wf-local' });
    const unlimited = await c.json('/jobs?status=failed&offset=-3', null);
    expect(unlimited.jobs.map((j: Json) => j.id)).toEqual([failed, a]);
    expect(unlimited.pagination).toEqual({ offset: 0, limit: null, total: 2, has_more: false });
    for (const bad of ['status=cancelled', 'limit=0', 'limit=x', 'sort_by=create_time', 'offset=x']) {
      const res = await c.api(`/api/jobs?${bad}`, { key: null });
      expect(res.status, bad).toBe(400);
      const body = (await res.json()) as Json;
      expect(Object.keys(body), bad).toEqual(['error']);
    }
    const unknown = await c.api('/api/jobs/00000000-0000-0000-0000-000000000000', { key: null });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'Job not found' });
  });

  it('deletes only pending jobs, silently, and never stops a running one', async () => {
    emu.cloud.stepMs = 60;
    const s = await c.openSocket('clientId=del');
    const a = await c.submit(workflow('da'), { client_id: 'del' }, null);
    const b = await c.submit(workflow('db'), { client_id: 'del' }, null);
    await waitJob(a, 'in_progress');
    const res = await c.postJson('/queue', { delete: [a] }, null);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    await sleep(30);
    expect((await record(a)).status).toBe('in_progress');

    expect(await (await c.postJson('/api/queue', { delete: [b] }, null)).text()).toBe('');
    expect((await c.api(`/api/jobs/${b}`, { key: null })).status).toBe(404);
    expect(await history(b)).toEqual({});
    expect((await c.json('/queue', null)).queue_pending).toEqual([]);
    await waitJob(a, 'completed');
    expect(s.types(b)).toEqual([]);
    expect(s.types(a)).not.toContain('execution_interrupted');
  });

  it('interrupts by prompt_id only the running prompt; an empty body stops whatever runs', async () => {
    emu.cloud.stepMs = 60;
    const a = await c.submit(workflow('ia'), {}, null);
    const b = await c.submit(workflow('ib'), {}, null);
    await waitJob(a, 'in_progress');
    const noop = await c.postJson('/api/interrupt', { prompt_id: b }, null);
    expect(noop.status).toBe(200);
    expect(await noop.text()).toBe('');
    await sleep(30);
    expect((await record(a)).status).toBe('in_progress');
    expect((await record(b)).status).toBe('pending');

    await c.postJson('/interrupt', { prompt_id: a }, null);
    await waitJob(a, 'failed');
    await waitJob(b, 'in_progress');
    expect((await c.api('/interrupt', { method: 'POST', key: null })).status).toBe(200);
    const stopped = await waitJob(b, 'failed');
    expect(stopped.execution_status.messages.at(-1)[0]).toBe('execution_interrupted');
  });

  it("sends a job's events and previews only to the submitting client_id's socket, text frames and status to all", async () => {
    const alice = await c.openSocket('clientId=alice');
    const bob = await c.openSocket('clientId=bob');
    const id = await c.submit(workflow('ev'), { client_id: 'alice' }, null);
    await alice.waitFor(isEnd(id), 'alice end');
    await sleep(30);
    expect(alice.types(id)).toEqual(expect.arrayContaining(['execution_start', 'executing', 'progress', 'executed', 'execution_success']));
    expect(bob.json(id)).toEqual([]);
    const kinds = (s: typeof alice) => s.frames().map((f) => f.type);
    expect(new Set(kinds(alice))).toEqual(new Set(['preview_image', 'text']));
    expect(new Set(kinds(bob))).toEqual(new Set(['text']));
    expect(bob.frames().length).toBe(alice.frames().filter((f) => f.type === 'text').length);
    expect(bob.json().filter((m) => m.type === 'status').length).toBeGreaterThan(1);

    const open = await c.submit(workflow('ev2'), {}, null);
    await Promise.all([alice.waitFor(isEnd(open), 'alice'), bob.waitFor(isEnd(open), 'bob')]);
    expect(bob.types(open)).toContain('execution_success');
    alice.ws.close();
    bob.ws.close();
  });

  it('serves /view with 200 and the file', async () => {
    const id = await c.submit(workflow('view'), {}, null);
    const done = await waitJob(id, 'completed');
    const ref = done.outputs['3'].images[0];
    for (const path of ['/view', '/api/view']) {
      const res = await c.api(`${path}?filename=${ref.filename}&subfolder=&type=output`, { key: null });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await res.arrayBuffer()).subarray(1, 4).toString()).toBe('PNG');
    }
  });
});
