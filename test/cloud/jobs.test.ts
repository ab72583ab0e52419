// Job states, job records, queue tuples and the cloud/local differences, against msw:
// the live cloud's raw states, the real local server's recorded bodies
// (test/fixtures/local-server-jobs.json), the status-endpoint fallback, listJobs
// pagination, stopJob per server kind, the API-key rule, waitForJob's endings
// and the bounded output recovery.
import { readFileSync } from 'node:fs';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { interceptHttp } from '../helpers/msw.ts';
import { recorder } from '../helpers/log-recorder.ts';
import { recordFiredTimers } from '../helpers/timers-fired.ts';
import {
  CloudClient,
  ExecutionError,
  InternalServerError,
  InvalidArgumentError,
  JobCancelledError,
  MissingCredentialsError,
  NotFoundError,
  jobPhase,
} from '../../src/index.ts';
import { toQueueItem } from '../../src/cloud/jobs.ts';
import { CLOUD_JOB_STATES } from '../../src/schemas/index.ts';

const fx = JSON.parse(readFileSync(new URL('../fixtures/local-server-jobs.json', import.meta.url), 'utf8')) as Record<string, { path: string; status: number; body: any }>;
const CLOUD = 'https://cloud.test';
const LOCAL = 'http://127.0.0.1:8188';
const KEY = 'ck_live_SECRET_0123456789';
const { server, seen } = interceptHttp();

// logLevel 'off': the failures these tests provoke are what they check, not printed.
const cloud = (o: Partial<ConstructorParameters<typeof CloudClient>[0]> = {}) => new CloudClient({ baseUrl: CLOUD, apiKey: KEY, retry: { limit: 1, backoffLimit: 5 }, logLevel: 'off', ...o });
const local = (o: Partial<ConstructorParameters<typeof CloudClient>[0]> = {}) => new CloudClient({ baseUrl: LOCAL, retry: { limit: 1, backoffLimit: 5 }, logLevel: 'off', ...o });
const paths = () => seen.map((r) => `${r.method} ${new URL(r.url).pathname}${new URL(r.url).search}`);
const text404 = () => new HttpResponse('404: Not Found', { status: 404, headers: { 'content-type': 'text/plain' } });

describe('jobPhase', () => {
  it('maps every raw cloud state, the seed values and unknown ones', () => {
    const expected: Record<string, string> = {
      submitted: 'pending',
      queued_limited: 'pending',
      queued_waiting: 'pending',
      success: 'completed',
      error: 'failed',
      non_retryable_error: 'failed',
      lost: 'failed',
      cancelled: 'cancelled',
    };
    for (const s of CLOUD_JOB_STATES) expect([s, jobPhase(s)]).toEqual([s, expected[s] ?? 'running']);
    expect(['pending', 'in_progress', 'completed', 'failed', 'cancelled'].map(jobPhase)).toEqual(['pending', 'running', 'completed', 'failed', 'cancelled']);
    expect(jobPhase('some_future_state')).toBe('running');
    expect(jobPhase('toString')).toBe('running');
    expect(jobPhase(undefined)).toBe('running');
  });
});

describe('getJobStatus', () => {
  it('keeps the raw cloud state and adds the phase', async () => {
    const body = { id: 'j1', status: 'queued_limited', created_at: '2026-11-23T05:00:00Z', updated_at: '2026-11-23T05:00:01Z', assigned_inference: null };
    server.use(http.get(`${CLOUD}/api/job/:id/status`, () => HttpResponse.json(body)));
    expect(await cloud().getJobStatus('j1')).toEqual({ ...body, phase: 'pending' });
  });

  it('falls back to the job record where the status endpoint does not exist, and then skips it', async () => {
    server.use(
      http.get(`${CLOUD}/api/job/:id/status`, text404),
      http.get(`${CLOUD}/api/jobs/:id`, () => HttpResponse.json(fx.recordRunning!.body)),
    );
    const c = cloud();
    const id = fx.recordRunning!.body.id;
    expect(await c.getJobStatus(id)).toMatchObject({ status: 'in_progress', phase: 'running', id });
    expect(await c.getJobStatus(id)).toMatchObject({ phase: 'running' });
    expect(paths()).toEqual([`GET /api/job/${id}/status`, `GET /api/jobs/${id}`, `GET /api/jobs/${id}`]);
  });

  it('a 404 of a status endpoint that answered before is an unknown job', async () => {
    server.use(http.get(`${CLOUD}/api/job/:id/status`, ({ params }) => (params.id === 'known' ? HttpResponse.json({ status: 'executing' }) : HttpResponse.json({ error: 'not found' }, { status: 404 }))));
    const c = cloud();
    expect((await c.getJobStatus('known')).phase).toBe('running');
    await expect(c.getJobStatus('gone')).rejects.toBeInstanceOf(NotFoundError);
    expect(paths()).toEqual(['GET /api/job/known/status', 'GET /api/job/gone/status']);
  });

  it('on a local server reads the record and never asks for the status endpoint', async () => {
    server.use(http.get(`${LOCAL}/api/jobs/:id`, () => HttpResponse.json(fx.recordInterrupted!.body)));
    const s = await local().getJobStatus(fx.recordInterrupted!.body.id);
    // The real server maps an interrupted job to `failed`; its messages say it was interrupted.
    expect(s.status).toBe('failed');
    expect(s.phase).toBe('cancelled');
    expect(paths().every((p) => p.startsWith('GET /api/jobs/'))).toBe(true);
  });
});

describe('getJob', () => {
  it('types the real local record, outputs included', async () => {
    server.use(http.get(`${LOCAL}/api/jobs/:id`, () => HttpResponse.json(fx.recordCompleted!.body)));
    const job = await local().getJob(fx.recordCompleted!.body.id);
    expect(job.phase).toBe('completed');
    expect(job.outputs).toEqual({ '9': { images: [{ filename: 'fx_done_00001_.png', subfolder: '', type: 'output' }] } });
    expect(job.execution_start_time).toBe(fx.recordCompleted!.body.execution_start_time);
  });

  it('keeps the cloud record fields and its execution_error', async () => {
    const body = {
      id: 'j2',
      status: 'failed',
      create_time: 1795393303,
      update_time: 1795393309,
      outputs: {},
      execution_error: { node_id: '3', node_type: 'KSampler', exception_message: 'CUDA out of memory', exception_type: 'OOMError', traceback: ['x'], current_inputs: {}, current_outputs: [] },
      workflow: { prompt: {} },
      execution_status: { status_str: 'error' },
      execution_meta: { gpu: 'a100' },
    };
    server.use(http.get(`${CLOUD}/api/jobs/:id`, () => HttpResponse.json(body)));
    expect(await cloud().getJob('j2')).toEqual({ ...body, phase: 'failed' });
  });

  it('rejects a record of the wrong types', async () => {
    server.use(http.get(`${CLOUD}/api/jobs/:id`, () => HttpResponse.json({ id: 'j', status: 'completed', outputs: { '9': { images: 'not-a-list' } } })));
    await expect(cloud().getJob('j')).rejects.toMatchObject({ name: 'ResponseValidationError' });
  });

  it('builds the record from /history and /queue on a local server without the jobs API', async () => {
    const done = fx.historyCompleted!.body;
    const id = Object.keys(done)[0]!;
    const running = fx.queue!.body.queue_running[0][1];
    const pending = fx.queue!.body.queue_pending[0][1];
    server.use(
      http.get(`${LOCAL}/api/jobs/:id`, text404),
      http.get(`${LOCAL}/api/history/:id`, ({ params }) => HttpResponse.json(params.id === id ? done : {})),
      http.get(`${LOCAL}/api/queue`, () => HttpResponse.json(fx.queue!.body)),
    );
    const c = local();
    const rec = await c.getJob(id);
    expect(rec).toMatchObject({ id, status: 'completed', phase: 'completed', outputs: done[id].outputs, execution_status: done[id].status });
    expect((rec.workflow as { prompt: unknown }).prompt).toEqual(done[id].prompt[2]);
    expect(await c.getJob(running)).toMatchObject({ id: running, status: 'in_progress', phase: 'running' });
    expect(await c.getJob(pending)).toMatchObject({ id: pending, status: 'pending', phase: 'pending' });
    await expect(c.getJob('00000000-0000-0000-0000-000000000000')).rejects.toBeInstanceOf(NotFoundError);
    // The jobs API was asked once: its absence is remembered.
    expect(paths().filter((p) => p.startsWith('GET /api/jobs/'))).toHaveLength(1);
  });

  it('a failing /history on a server without the jobs API is that failure, never a NotFoundError', async () => {
    server.use(
      http.get(`${LOCAL}/api/jobs/:id`, text404),
      http.get(`${LOCAL}/api/history/:id`, () => HttpResponse.json({ error: 'busy' }, { status: 503 })),
    );
    await expect(local({ retry: false }).getJobStatus('p1')).rejects.toBeInstanceOf(InternalServerError);
  });

  it('reads an interrupted job from the history as cancelled, with no execution_error', async () => {
    const h = fx.historyInterrupted!.body;
    const id = Object.keys(h)[0]!;
    server.use(http.get(`${LOCAL}/api/jobs/:id`, text404), http.get(`${LOCAL}/api/history/:id`, () => HttpResponse.json(h)));
    const rec = await local().getJob(id);
    expect(rec).toMatchObject({ status: 'failed', phase: 'cancelled' });
    expect(rec.execution_error).toBeUndefined();
  });

  it('an unknown id on the real local server is a NotFoundError', async () => {
    server.use(
      http.get(`${LOCAL}/api/jobs/:id`, () => HttpResponse.json(fx.recordUnknown!.body, { status: 404 })),
      http.get(`${LOCAL}/api/history/:id`, () => HttpResponse.json(fx.historyUnknown!.body)),
      http.get(`${LOCAL}/api/queue`, () => HttpResponse.json({ queue_running: [], queue_pending: [] })),
    );
    const err: any = await local().getJob('00000000-0000-0000-0000-000000000000').catch((e) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.body).toEqual({ error: 'Job not found' });
  });
});

describe('listJobs', () => {
  const jobs = Array.from({ length: 5 }, (_, i) => ({ id: `j${i}`, status: i % 2 ? 'failed' : 'completed', create_time: 1795393300 + i }));
  const serve = () =>
    server.use(
      http.get(`${CLOUD}/api/jobs`, ({ request }) => {
        const q = new URL(request.url).searchParams;
        const offset = Number(q.get('offset') ?? 0);
        const limit = Number(q.get('limit') ?? 100);
        const page = jobs.slice(offset, offset + limit);
        return HttpResponse.json({ jobs: page, pagination: { offset, limit, total: jobs.length, has_more: offset + page.length < jobs.length } });
      }),
    );

  it('awaits one page and iterates every job by offset', async () => {
    serve();
    const page = await cloud().listJobs({ limit: 2 });
    expect(page.jobs.map((j) => j.id)).toEqual(['j0', 'j1']);
    expect(page.pagination).toEqual({ offset: 0, limit: 2, total: 5, has_more: true });
    expect((await page.getNextPage()).jobs.map((j) => j.id)).toEqual(['j2', 'j3']);
    seen.length = 0;
    const all: string[] = [];
    for await (const j of cloud().listJobs({ limit: 2, offset: 1 })) all.push(j.id);
    expect(all).toEqual(['j1', 'j2', 'j3', 'j4']);
    expect(paths()).toEqual(['GET /api/jobs?limit=2&offset=1', 'GET /api/jobs?limit=2&offset=3']);
  });

  it('sends the filters, a status list comma-separated', async () => {
    serve();
    await cloud().listJobs({ status: ['failed', 'cancelled'], output_type: 'video', sort_by: 'execution_time', sort_order: 'asc', workflow_id: 'wf-1' });
    const q = new URL(seen[0]!.url).searchParams;
    expect(Object.fromEntries(q)).toEqual({ status: 'failed,cancelled', output_type: 'video', sort_by: 'execution_time', sort_order: 'asc', workflow_id: 'wf-1' });
  });

  it('reads the real local list', async () => {
    server.use(http.get(`${LOCAL}/api/jobs`, () => HttpResponse.json(fx.listPage!.body)));
    const page = await local().listJobs({ limit: 2, offset: 0 });
    expect(page.jobs).toHaveLength(2);
    expect(page.pagination.has_more).toBe(true);
  });

  it('reads a local list asked for without a limit (limit: null)', async () => {
    server.use(http.get(`${LOCAL}/api/jobs`, () => HttpResponse.json({ jobs: jobs.slice(0, 2), pagination: { offset: 0, limit: null, total: 2, has_more: false } })));
    const all: string[] = [];
    for await (const j of local().listJobs()) all.push(j.id);
    expect(all).toEqual(['j0', 'j1']);
    expect((await local().listJobs()).pagination.limit).toBeNull();
  });

  it('stops when a server repeats an offset', async () => {
    server.use(http.get(`${CLOUD}/api/jobs`, () => HttpResponse.json({ jobs: [jobs[0]], pagination: { offset: 0, limit: 1, total: 5, has_more: true } })));
    const all: string[] = [];
    for await (const j of cloud().listJobs({ limit: 1 })) all.push(j.id);
    expect(all).toEqual(['j0']);
  });

  it.each([
    [{ limit: 0 }, 'params.limit'],
    [{ limit: 1001 }, 'params.limit'],
    [{ offset: -1 }, 'params.offset'],
    [{ offset: 1.5 }, 'params.offset'],
    [{ sort_by: 'name' }, 'params.sort_by'],
    [{ sort_order: 'up' }, 'params.sort_order'],
    [{ output_type: 'text' }, 'params.output_type'],
    [{ status: [] }, 'params.status'],
    [{ colour: 'red' }, 'params.colour'],
  ])('rejects %o before any request', async (params, field) => {
    const err: any = await cloud().listJobs(params as never).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.field).toBe(field);
    expect(seen).toHaveLength(0);
  });

  it.each([
    ['the cloud', { status: 'done' }, 'params.status: must be an array, "pending", "in_progress", "completed", "failed" or "cancelled", got "done"'],
    ['the cloud', { status: ['failed', 'canceled'] }, 'params.status.1: must be one of "pending", "in_progress", "completed", "failed", "cancelled", got "canceled" (did you mean "cancelled"?)'],
    ['the cloud', { sort_by: 'created_at' }, 'params.sort_by: must be one of "create_time", "execution_time", got "created_at" (did you mean "create_time"?)'],
    ['a local server', { status: 'cancelled' }, 'params.status: must be an array, "pending", "in_progress", "completed" or "failed", got "cancelled"'],
    ['a local server', { sort_by: 'create_time' }, 'params.sort_by: must be one of "created_at", "execution_duration", got "create_time"'],
    ['a local server', { output_type: 'video' }, 'params.output_type: unknown key; known keys: status, workflow_id, sort_by, sort_order, offset, limit'],
  ])('%s: rejects %o, naming what it takes, before any request', async (kind, params, message) => {
    const err: any = await (kind === 'the cloud' ? cloud() : local()).listJobs(params as never).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.message).toBe(message);
    expect(seen).toHaveLength(0);
  });
});

describe('getQueue', () => {
  it('normalizes the real local tuples', async () => {
    server.use(http.get(`${LOCAL}/api/queue`, () => HttpResponse.json(fx.queue!.body)));
    const q = await local().getQueue();
    const raw = fx.queue!.body.queue_running[0];
    expect(q.queue_running[0]).toEqual({ number: raw[0], promptId: raw[1], workflow: raw[2], outputNodeIds: ['9'], createTime: raw[3].create_time, extraData: raw[3], raw });
    expect(q.queue_pending.map((i) => i.promptId)).toEqual([fx.queue!.body.queue_pending[0][1]]);
  });

  it('normalizes cloud tuples and keeps anything else as raw', () => {
    const wf = { '1': { class_type: 'X', inputs: {} } };
    expect(toQueueItem([7, 'p', wf, ['9', '10'], { create_time: 1795393303 }])).toEqual({
      number: 7,
      promptId: 'p',
      workflow: wf,
      outputNodeIds: ['9', '10'],
      createTime: 1795393303,
      extraData: undefined,
      raw: [7, 'p', wf, ['9', '10'], { create_time: 1795393303 }],
    });
    expect(toQueueItem({ odd: true })).toMatchObject({ number: undefined, promptId: undefined, raw: { odd: true } });
    expect(toQueueItem(['x', 5])).toMatchObject({ number: undefined, promptId: undefined });
  });
});

describe('stopping a job', () => {
  /**
   * Records the control POSTs; `atomic` is how the server answers `POST /api/jobs/{id}/cancel`. The job
   * runs until an interrupt reaches it: what a local server's ordered stop looks at between its requests.
   */
  const capture = (base: string, atomic: 200 | 404 | 405) => {
    const posted: Array<[string, unknown]> = [];
    server.use(
      http.post(`${base}/api/jobs/:id/cancel`, ({ params }) => {
        posted.push(['cancel', params.id]);
        return atomic === 200 ? HttpResponse.json({}) : new HttpResponse(atomic === 404 ? '404: Not Found' : '405: Method Not Allowed', { status: atomic });
      }),
      http.post(`${base}/api/queue`, async ({ request }) => (posted.push(['queue', await request.json()]), new HttpResponse('', { status: 200 }))),
      http.post(`${base}/api/interrupt`, async ({ request }) => (posted.push(['interrupt', await request.text()]), new HttpResponse('', { status: 200 }))),
      http.get(`${base}/api/jobs/:id`, ({ params }) => HttpResponse.json({ id: params.id, status: posted.at(-1)?.[0] === 'interrupt' ? 'failed' : 'in_progress' })),
    );
    return posted;
  };

  it.each([
    ['the cloud with the atomic cancel', () => cloud(), CLOUD, 200, [['cancel', 'p1']]],
    ['the cloud without it: a queue delete, never an interrupt', () => cloud(), CLOUD, 404, [['cancel', 'p1'], ['queue', { delete: ['p1'] }]]],
    ['a local server with it', () => local(), LOCAL, 200, [['cancel', 'p1']]],
    ['a local server without it (0.8.0): the delete, then an interrupt naming the prompt', () => local(), LOCAL, 405, [['cancel', 'p1'], ['queue', { delete: ['p1'] }], ['interrupt', '{"prompt_id":"p1"}']]],
  ] as const)('%s', async (_name, make, base, atomic, expected) => {
    const posted = capture(base, atomic);
    const c = make();
    await c.stopJob('p1');
    expect(posted).toEqual(expected);
    // A missing route is remembered: the next stop goes straight to the fallback.
    posted.length = 0;
    await c.stopJob('p1');
    expect(posted).toEqual(atomic === 200 ? expected : expected.slice(1));
    if (base === LOCAL) expect(seen.every((r) => r.headers.get('x-api-key') === null)).toBe(true);
  });

  it('on a local server still interrupts when the delete fails, then reports the failure', async () => {
    const interrupts: string[] = [];
    server.use(
      http.post(`${LOCAL}/api/jobs/:id/cancel`, () => new HttpResponse('404: Not Found', { status: 404 })),
      http.post(`${LOCAL}/api/queue`, () => HttpResponse.json({ error: 'boom' }, { status: 500 })),
      http.post(`${LOCAL}/api/interrupt`, async ({ request }) => (interrupts.push(await request.text()), new HttpResponse('', { status: 200 }))),
    );
    await expect(local({ retry: false }).stopJob('p1')).rejects.toBeInstanceOf(InternalServerError);
    expect(interrupts).toEqual(['{"prompt_id":"p1"}']);
  });

  it('interrupt() sends no body on the cloud; with promptId it stops that job alone (the cloud), or names it (a local server)', async () => {
    const posted = capture(CLOUD, 200);
    await cloud().interrupt();
    await cloud().interrupt({ promptId: 'p2' });
    expect(posted).toEqual([
      ['interrupt', ''],
      ['cancel', 'p2'],
    ]);
    const local_ = capture(LOCAL, 404);
    await local().interrupt({ promptId: 'p3' });
    expect(local_).toEqual([['interrupt', '{"prompt_id":"p3"}']]);
    await expect(cloud().interrupt({ promptId: '' })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('the API key rule', () => {
  it('a loopback server without a key is local; with a key, the cloud', () => {
    expect(local().server).toBe('local');
    expect(new CloudClient({ baseUrl: 'http://localhost:8188' }).server).toBe('local');
    expect(new CloudClient({ baseUrl: 'http://127.0.0.2:8188' }).server).toBe('local');
    expect(local({ apiKey: KEY }).server).toBe('cloud');
    expect(new CloudClient({ baseUrl: 'http://192.168.1.20:8188', server: 'local' }).server).toBe('local');
    expect(() => new CloudClient({ baseUrl: LOCAL, server: 'remote' as never })).toThrow(InvalidArgumentError);
  });

  it('a key in the environment neither makes a given loopback server the cloud nor is sent to it', async () => {
    const saved = { key: process.env.PLATFORMUI_API_KEY, url: process.env.PLATFORMUI_CLOUD_URL };
    process.env.PLATFORMUI_API_KEY = 'env_SECRET_key';
    try {
      server.use(http.get(`${LOCAL}/api/queue`, () => HttpResponse.json({ queue_running: [], queue_pending: [] })));
      const c = local();
      expect(c.server).toBe('local');
      await c.getQueue();
      expect(seen[0]!.headers.get('x-api-key')).toBeNull();
      // The environment's key goes with the environment's URL, and with any cloud URL.
      process.env.PLATFORMUI_CLOUD_URL = LOCAL;
      expect(new CloudClient().server).toBe('cloud');
      server.use(http.get(`${CLOUD}/api/queue`, () => HttpResponse.json({ queue_running: [], queue_pending: [] })));
      await new CloudClient({ baseUrl: CLOUD }).getQueue();
      expect(seen.at(-1)!.headers.get('x-api-key')).toBe('env_SECRET_key');
    } finally {
      for (const [k, v] of [['PLATFORMUI_API_KEY', saved.key], ['PLATFORMUI_CLOUD_URL', saved.url]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('the cloud without a key fails before any request, naming the key', async () => {
    const err: any = await new CloudClient({ baseUrl: CLOUD }).getQueue().catch((e) => e);
    expect(err).toBeInstanceOf(MissingCredentialsError);
    expect(err.field).toBe('apiKey');
    expect(err.message).toMatch(/apiKey.*server: 'local'/);
    await expect(new CloudClient({ baseUrl: 'http://127.0.0.1:8188', server: 'cloud' }).getQueue()).rejects.toBeInstanceOf(MissingCredentialsError);
    expect(seen).toHaveLength(0);
  });

  it('run() without a key fails at once, before any request or socket wait', async () => {
    const c = new CloudClient({ baseUrl: CLOUD });
    // The follower's timers: its wait for a first connection among them (the socket's own retry is not the run's wait).
    const timers = recordFiredTimers('cloud/follow/');
    await expect(c.run({ '1': { inputs: {} } }).finally(timers.restore)).rejects.toBeInstanceOf(MissingCredentialsError);
    // It used to wait up to 3 s for a socket that could never open: none fired before it failed.
    expect(timers.fired).toEqual([]);
    expect(seen).toHaveLength(0);
  });

  it('a local server gets no key header, and the given key when there is one', async () => {
    server.use(http.get(`http://192.168.1.20:8188/api/queue`, () => HttpResponse.json({ queue_running: [], queue_pending: [] })));
    await new CloudClient({ baseUrl: 'http://192.168.1.20:8188', server: 'local' }).getQueue();
    await new CloudClient({ baseUrl: 'http://192.168.1.20:8188', server: 'local', apiKey: 'k' }).getQueue();
    expect(seen.map((r) => r.headers.get('x-api-key'))).toEqual([null, 'k']);
  });

  it('the socket of a local client carries no token', async () => {
    const urls: string[] = [];
    class Capture {
      constructor(url: string) {
        urls.push(url);
        throw new Error('no network in this test');
      }
    }
    const s = local().connect({ WebSocket: Capture as never, reconnect: { maxAttempts: 0 } });
    const s2 = cloud().connect({ WebSocket: Capture as never, reconnect: { maxAttempts: 0 } });
    await new Promise((r) => setTimeout(r, 20));
    expect(urls).toHaveLength(2);
    expect(new URL(urls[0]!).searchParams.has('token')).toBe(false);
    expect(s.url).not.toContain('token');
    expect(new URL(urls[1]!).searchParams.get('token')).toBe(KEY);
    expect(s2.url).toContain('token=[REDACTED]');
    s.close();
    s2.close();
  });
});

describe('waitForJob', () => {
  const statuses = (list: string[], extra: Record<string, unknown> = {}) => {
    let i = 0;
    server.use(http.get(`${CLOUD}/api/job/:id/status`, () => HttpResponse.json({ id: 'j', status: list[Math.min(i++, list.length - 1)], ...extra })));
  };

  it('ends on success with the record, reading it again while its outputs are not persisted', async () => {
    statuses(['submitted', 'executing', 'success']);
    let reads = 0;
    const out = { '9': { images: [{ filename: 'o.png', subfolder: '', type: 'output' }] } };
    server.use(http.get(`${CLOUD}/api/jobs/:id`, () => HttpResponse.json({ id: 'j', status: 'completed', outputs: ++reads < 3 ? {} : out })));
    const job = await cloud().waitForJob('j', { pollInterval: 1 });
    expect(job.outputs).toEqual(out);
    expect(job.phase).toBe('completed');
    expect(reads).toBe(3);
  });

  it.each(['error', 'non_retryable_error', 'lost'])('rejects %s with ExecutionError carrying the record error', async (state) => {
    statuses(['executing', state], { error_message: 'worker went away' });
    server.use(http.get(`${CLOUD}/api/jobs/:id`, () => HttpResponse.json({ id: 'j', status: 'failed', execution_error: { exception_type: 'OOMError', exception_message: 'out of memory', node_id: '3' } })));
    const err: any = await cloud().waitForJob('j', { pollInterval: 1 }).catch((e) => e);
    expect(err).toBeInstanceOf(ExecutionError);
    expect(err).toMatchObject({ promptId: 'j', exceptionType: 'OOMError', nodeId: '3' });
  });

  it('falls back to error_message when the record has no execution_error', async () => {
    statuses(['lost'], { error_message: 'worker went away' });
    server.use(http.get(`${CLOUD}/api/jobs/:id`, () => HttpResponse.json({ id: 'j', status: 'failed' })));
    const err: any = await cloud().waitForJob('j', { pollInterval: 1 }).catch((e) => e);
    expect(err).toBeInstanceOf(ExecutionError);
    expect(err.exceptionMessage).toBe('worker went away');
  });

  it('rejects cancelled with JobCancelledError', async () => {
    statuses(['cancel_requested', 'cancelling_preparing', 'cancelled']);
    await expect(cloud().waitForJob('j', { pollInterval: 1 })).rejects.toBeInstanceOf(JobCancelledError);
  });

  it('keeps waiting through unknown in-flight states', async () => {
    statuses(['allocated', 'warming_up_new_state', 'erroring', 'success'], { outputs: { '1': { images: [{ filename: 'x.png' }] } } });
    const job = await cloud().waitForJob('j', { pollInterval: 1 });
    expect(job.outputs).toEqual({ '1': { images: [{ filename: 'x.png' }] } });
  });

  it('gives up recovering outputs after a bounded number of reads', async () => {
    statuses(['success']);
    let reads = 0;
    server.use(http.get(`${CLOUD}/api/jobs/:id`, () => (reads++, HttpResponse.json({ id: 'j', status: 'completed', outputs: {} }))));
    const log = recorder();
    const job = await cloud({ logger: log.logger, logLevel: 'debug' }).waitForJob('j', { pollInterval: 1 });
    expect(job.outputs).toEqual({});
    expect(reads).toBe(6);
    // Bounded in time too, by the waits it chose rather than a clock: 250 ms doubling to 2 s between the reads, about 6 s in all.
    const waits = log.of('debug').filter((l) => /its record lists no outputs yet/.test(l.message)).map((l) => l.details!.delayMs as number);
    expect(waits).toHaveLength(5);
    expect(waits.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(6000);
  }, 15_000);
});
