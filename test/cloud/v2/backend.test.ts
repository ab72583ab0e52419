// CloudClient with server: 'v2' against msw: submissions under an Idempotency-Key (lost answers, key reuse,
// queue_full, refused labels), job reads (the mapping, a false `expired`), cancel, downloads, errors, and the
// methods v2 has no equivalent for (refused before any request).
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { interceptHttp } from '../../helpers/msw.ts';
import { recorder } from '../../helpers/log-recorder.ts';
import {
  AuthenticationError,
  CloudClient,
  InvalidArgumentError,
  JobCancelledError,
  JobExistsError,
  JobExpiredError,
  NotFoundError,
  RateLimitError,
  SubmissionError,
  UnsupportedError,
} from '../../../src/index.ts';

const BASE = 'https://v2.test';
const KEY = 'comfyui-SECRET-key-0123456789';
const { server, seen } = interceptHttp();
const v2 = (o: Partial<ConstructorParameters<typeof CloudClient>[0]> = {}) => new CloudClient({ baseUrl: BASE, apiKey: KEY, server: 'v2', retry: { limit: 2, backoffLimit: 5 }, logLevel: 'off', ...o });
const workflow = { '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8 } }, '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'x' } } };
const job = (id: string, status: string, more: Record<string, unknown> = {}) => ({ id, status, created_at: '2026-11-28T00:00:00Z', outputs: [], error: null, urls: { self: `${BASE}/api/v2/jobs/${id}` }, ...more });
const output = (id: string) => ({ node_id: '2', name: 'x_00001_.png', type: 'image', content_type: 'image/png', size_bytes: 3, id: `asset-${id}`, hash: null, url: `${BASE}/api/v2/assets/asset-${id}/content`, job_id: id });
const posts = () => seen.filter((r) => r.method === 'POST' && new URL(r.url).pathname === '/api/v2/jobs');

describe('submit', () => {
  it('sends the workflow with an Idempotency-Key, a label naming it, and the key as a Bearer token', async () => {
    server.use(http.post(`${BASE}/api/v2/jobs`, () => HttpResponse.json(job('j1', 'queued'), { status: 201 })));
    const r = await v2().submit(workflow, { promptId: 'key-1' });
    expect(r.prompt_id).toBe('j1');
    const [post] = posts();
    expect(post!.headers.get('idempotency-key')).toBe('key-1');
    expect(post!.headers.get('authorization')).toBe(`Bearer ${KEY}`);
    expect(post!.headers.get('x-api-key')).toBeNull();
    expect(await post!.json()).toEqual({ workflow, metadata: { 'platformui-idempotency-key': 'key-1' } });
  });

  it('labels with a string on a server that takes no map (comfy-api-proxy), sending again under the same key', async () => {
    server.use(
      http.post(`${BASE}/api/v2/jobs`, async ({ request }) => {
        const body = (await request.json()) as { metadata?: unknown };
        if (typeof body.metadata !== 'string') return HttpResponse.json({ error: { code: 'invalid_request', message: "'metadata' must be a string (opaque label).", details: null } }, { status: 422 });
        return HttpResponse.json(job('j2', 'queued', { metadata: body.metadata }), { status: 201 });
      }),
    );
    const client = v2();
    expect((await client.submit(workflow, { promptId: 'key-2' })).prompt_id).toBe('j2');
    expect(posts().map((p) => p.headers.get('idempotency-key'))).toEqual(['key-2', 'key-2']);
    // Learnt once per client: the next submission goes as a string at once.
    await client.submit(workflow, { promptId: 'key-3' });
    expect(posts()).toHaveLength(3);
  });

  it('a lost answer is sent again under the same key; idempotency_key_reuse finds the one job by its label', async () => {
    let sends = 0;
    server.use(
      http.post(`${BASE}/api/v2/jobs`, () => (++sends === 1 ? HttpResponse.error() : HttpResponse.json({ error: { code: 'idempotency_key_reuse', message: 'used', details: null } }, { status: 422 }))),
      http.get(`${BASE}/api/v2/jobs`, ({ request }) => {
        const wanted = new URL(request.url).searchParams.get('metadata[platformui-idempotency-key]');
        return HttpResponse.json({ jobs: wanted === 'key-4' ? [job('j4', 'running', { metadata: { 'platformui-idempotency-key': 'key-4' } })] : [] });
      }),
    );
    const log = recorder();
    const r = await v2({ logger: log.logger, logLevel: 'info' }).submit(workflow, { promptId: 'key-4' });
    expect(r.prompt_id).toBe('j4');
    // Every send carried the key: never a POST without it, whatever the retry settings.
    expect(posts().map((p) => p.headers.get('idempotency-key'))).toEqual(['key-4', 'key-4']);
    expect(log.index(/found under its Idempotency-Key after a lost answer/)).toBeGreaterThanOrEqual(0);
  });

  it('idempotency_key_reuse with no job carrying the label: JobExistsError naming the key, nothing sent again', async () => {
    server.use(
      http.post(`${BASE}/api/v2/jobs`, () => HttpResponse.json({ error: { code: 'idempotency_key_reuse', message: 'used', details: null } }, { status: 422 })),
      http.get(`${BASE}/api/v2/jobs`, () => HttpResponse.json({ jobs: [] })),
    );
    const err = await v2().submit(workflow, { promptId: 'key-5' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobExistsError);
    expect((err as JobExistsError).idempotencyKey).toBe('key-5');
    expect(posts()).toHaveLength(1);
  });

  it('queue_full is waited out (Retry-After) and sent again under the same key', async () => {
    let sends = 0;
    server.use(
      http.post(`${BASE}/api/v2/jobs`, () =>
        ++sends === 1 ? HttpResponse.json({ error: { code: 'queue_full', message: 'full', details: null } }, { status: 429, headers: { 'retry-after': '1' } }) : HttpResponse.json(job('j6', 'queued'), { status: 201 }),
      ),
    );
    expect((await v2().submit(workflow, { promptId: 'key-6' })).prompt_id).toBe('j6');
    expect(posts().map((p) => p.headers.get('idempotency-key'))).toEqual(['key-6', 'key-6']);
  });

  it('rate_limited on a submission is not retried: RateLimitError with its code and Retry-After', async () => {
    server.use(http.post(`${BASE}/api/v2/jobs`, () => HttpResponse.json({ error: { code: 'rate_limited', message: 'slow down', details: null } }, { status: 429, headers: { 'retry-after': '7' } })));
    const err = (await v2().submit(workflow).catch((e: unknown) => e)) as RateLimitError;
    expect(err).toBeInstanceOf(RateLimitError);
    expect([err.code, err.retryAfter]).toEqual(['rate_limited', '7']);
    expect(posts()).toHaveLength(1);
  });

  it('invalid_workflow is a SubmissionError whose node_errors read as on v1', async () => {
    const nodeErrors = { '2': { errors: [{ type: 'required_input_missing', message: 'Required input is missing', details: 'images', extra_info: { input_name: 'images' } }], dependent_outputs: ['2'], class_type: 'SaveImage' } };
    server.use(http.post(`${BASE}/api/v2/jobs`, () => HttpResponse.json({ error: { code: 'invalid_workflow', message: 'Prompt outputs failed validation', details: { node_errors: nodeErrors } } }, { status: 422 })));
    const err = (await v2().submit(workflow).catch((e: unknown) => e)) as SubmissionError;
    expect(err).toBeInstanceOf(SubmissionError);
    expect(err.code).toBe('invalid_workflow');
    expect(err.nodeErrors).toEqual(nodeErrors);
    expect(err.message).toBe('Submission rejected (422): Prompt outputs failed validation — SaveImage #2: images: Required input is missing');
  });

  it('missing_asset keeps its ids', async () => {
    server.use(http.post(`${BASE}/api/v2/jobs`, () => HttpResponse.json({ error: { code: 'missing_asset', message: 'unknown asset', details: { missing_ids: ['a-1'] } } }, { status: 422 })));
    const err = (await v2().submit(workflow).catch((e: unknown) => e)) as SubmissionError;
    expect([err.code, (err.error as { details: { missing_ids: string[] } }).details.missing_ids]).toEqual(['missing_asset', ['a-1']]);
  });

  it('names the partner key api_key_comfy_org, and keeps it out of errors', async () => {
    server.use(http.post(`${BASE}/api/v2/jobs`, () => HttpResponse.json({ error: { code: 'insufficient_credits', message: 'no credits', details: null } }, { status: 402 })));
    const err = await v2().submit(workflow, { partnerApiKey: 'partner-SECRET-9' }).catch((e: unknown) => e);
    expect((await posts()[0]!.json()) as Record<string, unknown>).toMatchObject({ extra_data: { api_key_comfy_org: 'partner-SECRET-9' } });
    expect(JSON.stringify(err)).not.toContain('partner-SECRET-9');
    expect(String(err)).not.toContain(KEY);
  });
});

describe('jobs', () => {
  it('getJob maps a v2 job: phase, outputs by node as file references, the error as execution_error', async () => {
    server.use(http.get(`${BASE}/api/v2/jobs/j7`, () => HttpResponse.json(job('j7', 'succeeded', { outputs: [output('j7')], metrics: { queue_ms: 5, execution_ms: null } }))));
    const r = await v2().getJob('j7');
    expect(r.phase).toBe('completed');
    expect(r.outputs).toEqual({ '2': { images: [expect.objectContaining({ filename: 'x_00001_.png', subfolder: '', type: 'output', output_type: 'image', id: 'asset-j7' })] } });
    expect((r as unknown as { metrics: unknown }).metrics).toEqual({ queue_ms: 5, execution_ms: null });
  });

  it('an `expired` is read again before it is believed (a proxy reports a just-finished job expired for one poll)', async () => {
    let reads = 0;
    server.use(http.get(`${BASE}/api/v2/jobs/j8`, () => HttpResponse.json(++reads === 1 ? job('j8', 'expired') : job('j8', 'succeeded', { outputs: [output('j8')] }))));
    const r = await v2().waitForJob('j8', { pollInterval: 10 });
    expect([r.phase, reads]).toEqual(['completed', 2]);
  });

  it('a job that stays expired ends with JobExpiredError', async () => {
    server.use(http.get(`${BASE}/api/v2/jobs/j9`, () => HttpResponse.json(job('j9', 'expired'))));
    await expect(v2().waitForJob('j9', { pollInterval: 10 })).rejects.toBeInstanceOf(JobExpiredError);
  });

  it('canceling is not final; canceled is JobCancelledError; a failure carries the JobError', async () => {
    const states = ['canceling', 'canceled'];
    server.use(
      http.get(`${BASE}/api/v2/jobs/c1`, () => HttpResponse.json(job('c1', states.shift() ?? 'canceled'))),
      http.get(`${BASE}/api/v2/jobs/f1`, () => HttpResponse.json(job('f1', 'failed', { error: { code: 'node_execution_error', message: 'cannot identify image file', node_id: '1', class_type: 'LoadImage', traceback: null } }))),
    );
    await expect(v2().waitForJob('c1', { pollInterval: 10 })).rejects.toBeInstanceOf(JobCancelledError);
    await expect(v2().waitForJob('f1', { pollInterval: 10 })).rejects.toThrow('Job f1 failed in LoadImage #1: node_execution_error: cannot identify image file');
  });

  it('stopJob cancels that job and looks until it is final', async () => {
    const reads = ['running', 'canceled'];
    server.use(
      http.post(`${BASE}/api/v2/jobs/s1/cancel`, () => HttpResponse.json(job('s1', 'canceling'))),
      http.get(`${BASE}/api/v2/jobs/s1`, () => HttpResponse.json(job('s1', reads.shift() ?? 'canceled'))),
    );
    await v2().stopJob('s1');
    expect(seen.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual(['POST /api/v2/jobs/s1/cancel', 'GET /api/v2/jobs/s1', 'GET /api/v2/jobs/s1']);
  });

  it('a job unknown by id is looked up once by the key it was submitted under', async () => {
    server.use(
      http.get(`${BASE}/api/v2/jobs/key-10`, () => HttpResponse.json({ error: { code: 'not_found', message: 'no such job', details: null } }, { status: 404 })),
      http.get(`${BASE}/api/v2/jobs`, () => HttpResponse.json({ jobs: [job('j10', 'running', { metadata: { 'platformui-idempotency-key': 'key-10' } })] })),
      http.get(`${BASE}/api/v2/jobs/j10`, () => HttpResponse.json(job('j10', 'running'))),
    );
    const client = v2();
    expect((await client.getJobStatus('key-10')).id).toBe('j10');
    expect((await client.getJobStatus('key-10')).id).toBe('j10');
    expect(seen.map((r) => new URL(r.url).pathname)).toEqual(['/api/v2/jobs/key-10', '/api/v2/jobs', '/api/v2/jobs/j10']);
  });

  it('logs: a plain-text 404 (no such route) and a 204 both mean none', async () => {
    server.use(
      http.get(`${BASE}/api/v2/jobs/a/logs`, () => new HttpResponse('404: Not Found', { status: 404, headers: { 'content-type': 'text/plain' } })),
      http.get(`${BASE}/api/v2/jobs/b/logs`, () => new HttpResponse(null, { status: 204 })),
      http.get(`${BASE}/api/v2/jobs/c/logs`, () => HttpResponse.json({ text: 'line', truncated: false, complete: true })),
      http.get(`${BASE}/api/v2/jobs/d/logs`, () => HttpResponse.json({ error: { code: 'not_found', message: 'no job', details: null } }, { status: 404 })),
    );
    const client = v2();
    expect(await client.getJobLogs('a')).toBeUndefined();
    expect(await client.getJobLogs('b')).toBeUndefined();
    expect((await client.getJobLogs('c'))?.text).toBe('line');
    await expect(client.getJobLogs('d')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('downloads', () => {
  it("reads an output by its asset id and follows the redirect to a signed URL without the key", async () => {
    server.use(
      http.get(`${BASE}/api/v2/assets/asset-d1/content`, () => new HttpResponse(null, { status: 302, headers: { location: 'https://storage.test/signed?sig=abc' } })),
      http.get('https://storage.test/signed', () => new HttpResponse(new Uint8Array([1, 2, 3]))),
    );
    const res = await v2().download({ filename: 'x.png', subfolder: '', type: 'output', id: 'asset-d1' } as never);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array([1, 2, 3]));
    const signed = seen.find((q) => q.url.startsWith('https://storage.test/'))!;
    expect([signed.headers.get('authorization'), signed.headers.get('x-api-key')]).toEqual([null, null]);
    expect(seen.find((q) => q.url.includes('/content'))!.headers.get('authorization')).toBe(`Bearer ${KEY}`);
  });
});

describe('what v2 has no equivalent for', () => {
  it.each([
    ['getQueue()', (c: CloudClient) => c.getQueue()],
    ['cancel()', (c: CloudClient) => c.cancel('j1')],
    ['interrupt()', (c: CloudClient) => c.interrupt()],
    ['uploadMask()', (c: CloudClient) => c.uploadMask(new Blob([]), { originalRef: { filename: 'a.png' } })],
    ['getObjectInfo()', (c: CloudClient) => c.getObjectInfo()],
    ['connect()', async (c: CloudClient) => c.connect()],
  ])('%s: UnsupportedError naming v2 and what to use instead, before any request', async (method, call) => {
    const err = (await Promise.resolve()
      .then(() => call(v2()))
      .catch((e: unknown) => e)) as UnsupportedError;
    expect(err).toBeInstanceOf(UnsupportedError);
    expect(err.message).toContain(`${method} has no equivalent on a Comfy API v2 server`);
    expect(err.instead.length).toBeGreaterThan(10);
    expect(seen).toHaveLength(0);
  });

  it.each([
    ['uploadAsset()', (c: CloudClient) => c.uploadAsset(new Blob([]))],
    ['getAsset()', (c: CloudClient) => c.getAsset('a1')],
    ['deleteAsset()', (c: CloudClient) => c.deleteAsset('a1')],
    ['getJobWorkflow()', (c: CloudClient) => c.getJobWorkflow('j1')],
    ['getJobLogs()', (c: CloudClient) => c.getJobLogs('j1')],
  ])("%s on the cloud and a local server: UnsupportedError naming the kind and v2, before any request", async (method, call) => {
    for (const server of ['cloud', 'local'] as const) {
      const client = new CloudClient({ baseUrl: 'http://127.0.0.1:8190', apiKey: KEY, server, logLevel: 'off' });
      const err = (await Promise.resolve()
        .then((): PromiseLike<unknown> => call(client))
        .catch((e: unknown) => e)) as UnsupportedError;
      expect(err).toBeInstanceOf(UnsupportedError);
      expect([err.server, err.method, err.instead]).toEqual([server, method, "it is Comfy API v2's (server: 'v2')"]);
    }
    expect(seen).toHaveLength(0);
  });

  it('validate and editor files without an objectInfo source: refused with what to pass, before any request', async () => {
    const err = (await v2().submit(workflow, { validate: true }).catch((e: unknown) => e)) as InvalidArgumentError;
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.message).toContain('objectInfo');
    const editorFile = { nodes: [], links: [] };
    await expect(v2().run(editorFile)).rejects.toThrow(/objectInfo/);
    expect(seen).toHaveLength(0);
  });

  it('validates with the objectInfo option (an object): no request to the v2 server for it', async () => {
    const objectInfo = { SaveImage: { input: { required: { images: ['IMAGE'], filename_prefix: ['STRING', {}] } }, output: [], output_node: true, name: 'SaveImage' } };
    const issues = await v2({ objectInfo: objectInfo as never }).validateWorkflow({ '2': { class_type: 'SaveImage', inputs: { filename_prefix: 'x' } } });
    expect(issues.map((i) => i.code)).toContain('required_input_missing');
    expect(seen).toHaveLength(0);
  });

  it("'auto' never picks v2, and v2 needs no key on a loopback host", async () => {
    expect(new CloudClient({ baseUrl: 'http://127.0.0.1:8189' }).server).toBe('local');
    const local = new CloudClient({ baseUrl: 'http://127.0.0.1:8189', server: 'v2', logLevel: 'off', retry: { limit: 0 } });
    expect(local.server).toBe('v2');
    server.use(http.get('http://127.0.0.1:8189/api/v2/jobs/x', ({ request }) => HttpResponse.json({ error: { code: 'unauthorized', message: String(request.headers.get('authorization')) } }, { status: 401 })));
    const err = await local.getJob('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect((err as AuthenticationError).message).toContain('null');
  });
});
