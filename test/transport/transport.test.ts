// Transport rules, exercised through RegistryClient against msw (no sockets).
import { inspect } from 'node:util';
import { http, HttpResponse, delay, passthrough } from 'msw';
import { afterEach, describe, expect, it } from 'vitest';
import { interceptHttp } from '../helpers/msw.ts';
import { recorder } from '../helpers/log-recorder.ts';
import { recordFiredTimers } from '../helpers/timers-fired.ts';
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  CloudClient,
  ConflictError,
  InsufficientCreditsError,
  InternalServerError,
  InvalidArgumentError,
  MissingCredentialsError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  RegistryClient,
  ResponseValidationError,
} from '../../src/index.ts';
import { redactUrl } from '../../src/transport/redact.ts';

const BASE = 'https://registry.test';
const TOKEN = 'tok_SECRET_1234567890';
const page = (nodes: unknown[] = [], extra: Record<string, unknown> = {}) => ({ limit: 10, nodes, page: 1, total: nodes.length, totalPages: 1, ...extra });

const { server, seen } = interceptHttp();

const fast = { limit: 2, backoffLimit: 5 };
// What the clients log (retry warnings, mostly) is kept here, not printed.
const log = recorder();
afterEach(() => void (log.lines.length = 0));
const client = (o: ConstructorParameters<typeof RegistryClient>[0] = {}) => new RegistryClient({ baseUrl: BASE, token: TOKEN, retry: fast, logger: log.logger, ...o });

describe('auth per endpoint', () => {
  it('sends no credentials to search and list publishers, even when configured in default headers', async () => {
    server.use(
      http.get(`${BASE}/nodes/search`, () => HttpResponse.json(page())),
      http.get(`${BASE}/publishers`, () => HttpResponse.json([])),
    );
    const c = client({ headers: { Authorization: 'Bearer leaked', 'X-API-Key': 'leaked', 'X-Trace': 't1' } });
    await c.searchNodes();
    await c.listPublishers();
    expect(seen).toHaveLength(2);
    for (const r of seen) {
      expect(r.headers.get('authorization')).toBeNull();
      expect(r.headers.get('x-api-key')).toBeNull();
      expect(r.headers.get('x-trace')).toBe('t1');
    }
  });

  it('sends the bearer token to the three authenticated endpoints', async () => {
    server.use(
      http.post(`${BASE}/publishers/acme/nodes`, () => HttpResponse.json({ id: 'n1' })),
      http.get(`${BASE}/publishers/acme/nodes/v2`, () => HttpResponse.json(page())),
      http.delete(`${BASE}/publishers/acme`, () => new HttpResponse(null, { status: 204 })),
    );
    const c = client();
    await c.createNode('acme', { id: 'n1' });
    await c.listPublisherNodes('acme');
    await c.deletePublisher('acme');
    expect(seen.map((r) => r.headers.get('authorization'))).toEqual(Array(3).fill(`Bearer ${TOKEN}`));
  });

  // Issue 23, item 3: a keyless client lost the caller's Authorization, so it could not authenticate to its own relay.
  it("keeps the caller's credential headers where the client sends none, and replaces only the one it sends", async () => {
    server.use(
      http.get('https://cloud.test/api/object_info', () => HttpResponse.json({})),
      http.get(`${BASE}/publishers/acme/nodes/v2`, () => HttpResponse.json(page())),
    );
    const headers = { Authorization: 'Bearer relay-token', 'X-API-Key': 'relay-key' };
    await new CloudClient({ baseUrl: 'https://cloud.test', server: 'cloud', keyless: true, headers }).getObjectInfo();
    await new CloudClient({ baseUrl: 'https://cloud.test', server: 'cloud', apiKey: 'the-key', headers }).getObjectInfo();
    await client({ headers }).listPublisherNodes('acme');
    expect(seen.map((r) => [r.headers.get('authorization'), r.headers.get('x-api-key')])).toEqual([
      ['Bearer relay-token', 'relay-key'],
      ['Bearer relay-token', 'the-key'],
      [`Bearer ${TOKEN}`, 'relay-key'],
    ]);
  });

  it('calls a token function per request, async included', async () => {
    server.use(http.get(`${BASE}/publishers/acme/nodes/v2`, () => HttpResponse.json(page())));
    let n = 0;
    const c = client({ token: async () => `t${++n}-abcdef` });
    await c.listPublisherNodes('acme');
    await c.listPublisherNodes('acme');
    expect(seen.map((r) => r.headers.get('authorization'))).toEqual(['Bearer t1-abcdef', 'Bearer t2-abcdef']);
  });

  it('throws MissingCredentialsError before any request when no token is configured', async () => {
    const c = new RegistryClient({ baseUrl: BASE });
    await expect(c.createNode('acme', { id: 'x' })).rejects.toBeInstanceOf(MissingCredentialsError);
    await expect(c.listPublisherNodes('acme')).rejects.toBeInstanceOf(MissingCredentialsError);
    await expect(c.deletePublisher('acme')).rejects.toBeInstanceOf(MissingCredentialsError);
    expect(seen).toHaveLength(0);
  });
});

describe('requests', () => {
  it('merges client and per-call headers; per-call wins', async () => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json([])));
    await client({ headers: { 'X-A': 'client', 'X-B': 'client' } }).listPublishers({ headers: { 'x-b': 'call' } });
    expect(seen[0]!.headers.get('x-a')).toBe('client');
    expect(seen[0]!.headers.get('x-b')).toBe('call');
  });

  it('encodes path parameters as one segment', async () => {
    server.use(http.delete(`${BASE}/publishers/:id`, () => new HttpResponse(null, { status: 204 })));
    await client().deletePublisher('a/b?c=%d#e');
    expect(new URL(seen[0]!.url).pathname).toBe('/publishers/a%2Fb%3Fc%3D%25d%23e');
  });

  it('keeps a base URL path prefix', async () => {
    server.use(http.get(`${BASE}/v1/publishers`, () => HttpResponse.json([])));
    await client({ baseUrl: `${BASE}/v1/` }).listPublishers();
    expect(new URL(seen[0]!.url).pathname).toBe('/v1/publishers');
  });

  it('sends all eight search parameters and the defaults', async () => {
    server.use(http.get(`${BASE}/nodes/search`, () => HttpResponse.json(page())));
    await client().searchNodes();
    expect(Object.fromEntries(new URL(seen[0]!.url).searchParams)).toEqual({ page: '1', limit: '10' });
    const all = {
      page: 2,
      limit: 5,
      search: 's',
      repository_url_search: 'github.com/x',
      platform_node_search: 'n',
      supported_os: 'POSIX :: Linux',
      supported_accelerator: 'CUDA',
      include_banned: true,
    };
    await client().searchNodes(all);
    expect(Object.fromEntries(new URL(seen[1]!.url).searchParams)).toEqual(Object.fromEntries(Object.entries(all).map(([k, v]) => [k, String(v)])));
  });

  it('rejects invalid arguments before any request', async () => {
    const c = client();
    const bad: Array<() => Promise<unknown>> = [
      () => c.searchNodes({ page: 0 }),
      () => c.searchNodes({ limit: 1.5 }),
      () => c.searchNodes({ search: 3 as unknown as string }),
      () => c.searchNodes({ nope: 1 } as never),
      () => c.createNode('', { id: 'x' }),
      () => c.createNode('acme', { id: 'x', status: 'Bogus' as never }),
      () => c.createNode('acme', { id: 'x', latest_version: { version: '1.0.0', status: 'NodeVersionStatusActive' } as never }),
      () => c.createNode('acme', { id: 'x', downloads: '3' as never }),
      () => c.listPublisherNodes('acme', { page: -1 }),
      () => c.deletePublisher(undefined as never),
      () => c.listPublishers({ timeout: -5 }),
    ];
    for (const f of bad) await expect(f()).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(seen).toHaveLength(0);
  });

  it('names the offending field', async () => {
    const err = await client().createNode('acme', { id: 'x', publisher: { id: 'p', status: 'PublisherStatusActive' } as never }).catch((e: any) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.field).toBe('node.publisher.status');
  });

  it('times out with APITimeoutError (client-level and per call)', async () => {
    server.use(http.get(`${BASE}/publishers`, async () => {
      await delay(500);
      return HttpResponse.json([]);
    }));
    await expect(client({ timeout: 50 }).listPublishers()).rejects.toBeInstanceOf(APITimeoutError);
    await expect(client().listPublishers({ timeout: 50 })).rejects.toBeInstanceOf(APITimeoutError);
  });

  it('aborts with APIUserAbortError', async () => {
    server.use(http.get(`${BASE}/publishers`, async () => {
      await delay(500);
      return HttpResponse.json([]);
    }));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    await expect(client().listPublishers({ signal: ac.signal })).rejects.toBeInstanceOf(APIUserAbortError);
    await expect(client().listPublishers({ signal: AbortSignal.abort() })).rejects.toBeInstanceOf(APIUserAbortError);
  });

  it('uses a custom fetch', async () => {
    const calls: string[] = [];
    const c = client({ fetch: async (input) => (calls.push(String(input instanceof Request ? input.url : input)), Response.json([])) });
    expect(await c.listPublishers()).toEqual([]);
    expect(calls).toEqual([`${BASE}/publishers`]);
  });

  it('gives the raw response with withResponse()', async () => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json([{ id: 'p' }], { headers: { 'x-req': '42' } })));
    const { data, response } = await client().listPublishers().withResponse();
    expect(data).toEqual([{ id: 'p' }]);
    expect(response.headers.get('x-req')).toBe('42');
  });
});

describe('retries', () => {
  const failing = (statuses: number[], then: () => Response, headers?: Record<string, string>) => {
    let i = 0;
    return () => (i < statuses.length ? HttpResponse.json({ error: 'E', message: 'm' }, { status: statuses[i++]!, headers: headers ?? {} }) : then());
  };

  it.each([408, 429, 500, 502, 503, 504])('retries GET on %i', async (status) => {
    server.use(http.get(`${BASE}/publishers`, failing([status, status], () => HttpResponse.json([]))));
    await expect(client().listPublishers()).resolves.toEqual([]);
    expect(seen).toHaveLength(3);
  });

  it('retries DELETE on 503', async () => {
    server.use(http.delete(`${BASE}/publishers/p`, failing([503], () => new HttpResponse(null, { status: 204 }))));
    await client().deletePublisher('p');
    expect(seen).toHaveLength(2);
  });

  it('gives up after the limit with the mapped error', async () => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json({ error: 'E', message: 'down' }, { status: 503 })));
    await expect(client().listPublishers()).rejects.toBeInstanceOf(InternalServerError);
    expect(seen).toHaveLength(3);
  });

  it('does not retry 4xx other than 408/429', async () => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json({ error: 'E', message: 'm' }, { status: 400 })));
    await expect(client().listPublishers()).rejects.toBeInstanceOf(BadRequestError);
    expect(seen).toHaveLength(1);
  });

  it('never re-sends a POST unless the caller opts in', async () => {
    server.use(http.post(`${BASE}/bulk/nodes/versions`, () => HttpResponse.json({ error: 'E', message: 'm' }, { status: 503 })));
    await expect(client().bulkNodeVersions([{ node_id: 'n', version: '1.0.0' }])).rejects.toBeInstanceOf(InternalServerError);
    expect(seen).toHaveLength(1);
    seen.length = 0;
    await expect(client().bulkNodeVersions([{ node_id: 'n', version: '1.0.0' }], { retry: { limit: 1, allowPost: true, backoffLimit: 5 } })).rejects.toBeInstanceOf(InternalServerError);
    expect(seen).toHaveLength(2);
  });

  it('never re-sends a create or a publication, even when the caller opts in', async () => {
    server.use(
      http.post(`${BASE}/publishers/acme/nodes`, () => HttpResponse.json({ error: 'E', message: 'm' }, { status: 503 })),
      http.post(`${BASE}/publishers/acme/nodes/n/versions`, () => HttpResponse.error()),
    );
    const retry = { limit: 3, allowPost: true, backoffLimit: 5 };
    await expect(client({ retry }).createNode('acme', { id: 'n' })).rejects.toBeInstanceOf(InternalServerError);
    const publish = { publisherId: 'acme', nodeId: 'n', personalAccessToken: 'pat_SECRET', node: { id: 'n' }, nodeVersion: { version: '1.0.0' }, archive: new Uint8Array([80, 75]) };
    await expect(client({ retry }).publishNodeVersion(publish, { retry })).rejects.toBeInstanceOf(APIConnectionError);
    expect(seen.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual(['POST /publishers/acme/nodes', 'POST /publishers/acme/nodes/n/versions']);
  });

  it('retries connection errors for GET', async () => {
    let i = 0;
    server.use(http.get(`${BASE}/publishers`, () => (i++ === 0 ? HttpResponse.error() : HttpResponse.json([]))));
    await expect(client().listPublishers()).resolves.toEqual([]);
    expect(seen).toHaveLength(2);
  });

  it('maps a persistent connection failure to APIConnectionError', async () => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.error()));
    await expect(client().listPublishers()).rejects.toBeInstanceOf(APIConnectionError);
  });

  it('can be disabled per client and per call', async () => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json({ error: 'E', message: 'm' }, { status: 503 })));
    await expect(client({ retry: false }).listPublishers()).rejects.toBeInstanceOf(InternalServerError);
    await expect(client().listPublishers({ retry: 0 })).rejects.toBeInstanceOf(InternalServerError);
    expect(seen).toHaveLength(2);
  });

  it('honours Retry-After in seconds', async () => {
    server.use(http.get(`${BASE}/publishers`, failing([429], () => HttpResponse.json([]), { 'Retry-After': '1' })));
    const timers = recordFiredTimers('transport/');
    await client().listPublishers().finally(timers.restore);
    // Its wait, by the delay asked for rather than a clock's reading.
    expect(timers.fired).toEqual([1000]);
    expect(seen).toHaveLength(2);
  });

  it('honours a fractional Retry-After', async () => {
    server.use(http.get(`${BASE}/publishers`, failing([503], () => HttpResponse.json([]), { 'Retry-After': '0.4' })));
    const timers = recordFiredTimers('transport/');
    await client().listPublishers().finally(timers.restore);
    expect(timers.fired).toEqual([400]);
  });

  it('does not collect listeners on a signal shared by many calls', async () => {
    const { getEventListeners } = (await import('node:events')).default;
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json([])));
    const shared = new AbortController();
    const c = client();
    for (let i = 0; i < 30; i++) await c.listPublishers({ signal: shared.signal });
    expect(getEventListeners(shared.signal, 'abort').length).toBeLessThanOrEqual(1);
  });

  it('times out even when a custom fetch ignores the signal', async () => {
    const deaf: typeof fetch = () => new Promise(() => undefined);
    const c = client({ fetch: deaf });
    await expect(c.listPublishers({ timeout: 100 })).rejects.toBeInstanceOf(APITimeoutError);
  });

  it('honours Retry-After as an HTTP date, capped by maxRetryAfter', async () => {
    const date = new Date(Date.now() + 3600_000).toUTCString();
    server.use(http.get(`${BASE}/publishers`, failing([503], () => HttpResponse.json([]), { 'Retry-After': date })));
    const timers = recordFiredTimers('transport/');
    await client({ retry: { limit: 1, maxRetryAfter: 300 } }).listPublishers().finally(timers.restore);
    // An hour away, cut to maxRetryAfter: the wait asked for, not a clock's reading.
    expect(timers.fired).toEqual([300]);
  });
});

describe('hooks', () => {
  it('run around every attempt: beforeRequest may change the request, afterResponse the response, beforeRetry sees the failure', async () => {
    let n = 0;
    server.use(http.get(`${BASE}/publishers`, () => (n++ === 0 ? HttpResponse.json({ error: 'E', message: 'm' }, { status: 503 }) : HttpResponse.json([{ id: 'p1' }]))));
    const calls: string[] = [];
    const c = client({
      hooks: {
        beforeRequest: [
          ({ request, retryCount }) => {
            calls.push(`before ${retryCount}`);
            const headers = new Headers(request.headers);
            headers.set('x-attempt', String(retryCount));
            return new Request(request, { headers });
          },
        ],
        afterResponse: [
          ({ response, retryCount }) => {
            calls.push(`after ${retryCount} ${response.status}`);
            return response.ok ? Response.json([{ id: 'p1', name: 'from hook' }]) : undefined;
          },
        ],
        beforeRetry: [({ error, retryCount }) => void calls.push(`retry ${retryCount} ${error.name}`)],
      },
    });
    await expect(c.listPublishers()).resolves.toEqual([{ id: 'p1', name: 'from hook' }]);
    expect(calls).toEqual(['before 0', 'after 0 503', 'retry 1 InternalServerError', 'before 1', 'after 1 200']);
    expect(seen.map((r) => r.headers.get('x-attempt'))).toEqual(['0', '1']);
  });

  it('afterResponse gets a clone: a hook that reads the body leaves it for the SDK', async () => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json([{ id: 'p1' }])));
    const logged: string[] = [];
    const c = client({ hooks: { afterResponse: [async ({ response }) => void logged.push(await response.text())] } });
    await expect(c.listPublishers()).resolves.toEqual([{ id: 'p1' }]);
    expect(logged).toEqual(['[{"id":"p1"}]']);
  });

  it("a hook's own error propagates unchanged and is not retried", async () => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json([])));
    const mine = new TypeError('my hook broke');
    const c = client({ hooks: { beforeRequest: [() => { throw mine; }] } });
    await expect(c.listPublishers()).rejects.toBe(mine);
    expect(seen).toHaveLength(0);
  });

  it('a Response from beforeRequest answers without the network', async () => {
    const c = client({ hooks: { beforeRequest: [() => Response.json([])] } });
    await expect(c.listPublishers()).resolves.toEqual([]);
    expect(seen).toHaveLength(0);
  });
});

describe('errors', () => {
  it.each([
    [400, BadRequestError],
    [401, AuthenticationError],
    [402, InsufficientCreditsError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [409, ConflictError],
    [429, RateLimitError],
    [500, InternalServerError],
    [503, InternalServerError],
    [418, APIError],
  ] as const)('maps %i to its class', async (status, Cls) => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json({ error: 'Code', message: 'Human text' }, { status })));
    const err = await client({ retry: false }).listPublishers().catch((e: any) => e);
    expect(err).toBeInstanceOf(Cls);
    expect(err).toBeInstanceOf(APIError);
    expect(err.status).toBe(status);
    expect(err.error).toBe('Code');
    expect(err.body).toEqual({ error: 'Code', message: 'Human text' });
    expect(err.method).toBe('GET');
    expect(err.url).toBe(`${BASE}/publishers`);
    expect(err.message).toContain('Human text');
  });

  it('keeps non-JSON and empty bodies as raw text', async () => {
    server.use(http.get(`${BASE}/publishers`, () => new HttpResponse('<html>bad gateway</html>', { status: 404, headers: { 'content-type': 'text/html' } })));
    expect((await client().listPublishers().catch((e: any) => e)).body).toBe('<html>bad gateway</html>');
    server.use(http.get(`${BASE}/publishers`, () => new HttpResponse(null, { status: 404 })));
    const err = await client().listPublishers().catch((e: any) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.body).toBe('');
  });

  it('never shows the token, even when the server echoes it', async () => {
    server.use(
      http.get(`${BASE}/publishers/acme/nodes/v2`, ({ request }) =>
        HttpResponse.json({ error: 'Unauthorized', message: `bad token ${request.headers.get('authorization')}` }, { status: 401 }),
      ),
    );
    const err = await client().listPublisherNodes('acme').catch((e: any) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    for (const text of [err.message, err.stack, String(err), JSON.stringify(err), inspect(err, { depth: 10, showHidden: true })]) {
      expect(text).not.toContain(TOKEN);
    }
    expect(JSON.stringify(err)).toContain('[REDACTED]');
  });

  it('never shows the token in connection and timeout errors', async () => {
    server.use(http.get(`${BASE}/publishers/acme/nodes/v2`, () => HttpResponse.error()));
    const err = await client({ retry: false }).listPublisherNodes('acme').catch((e: any) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
    for (const text of [err.message, err.stack, JSON.stringify(err), inspect(err, { depth: 10, showHidden: true })]) expect(text).not.toContain(TOKEN);
  });
});

describe('response validation', () => {
  it('keeps unknown fields and unknown enum values', async () => {
    const node = { id: 'n', status: 'NodeStatusFuture', brand_new: { x: 1 }, latest_version: { status: 'NodeVersionStatusX', extra: true } };
    server.use(http.get(`${BASE}/nodes/search`, () => HttpResponse.json(page([node], { cursor: 'c1' }))));
    const p = await client().searchNodes();
    expect(p.nodes[0]).toEqual(node);
    expect(p.body).toHaveProperty('cursor', 'c1');
  });

  it('raises ResponseValidationError on wrong types, with issues and the raw body', async () => {
    const body = page([{ id: 'n', downloads: 'many' }]);
    server.use(http.get(`${BASE}/nodes/search`, () => HttpResponse.json(body)));
    const err = await client().searchNodes().catch((e: any) => e);
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect(err.issues[0].path).toEqual(['nodes', 0, 'downloads']);
    expect(err.body).toEqual(body);
  });

  it('says what is wrong in one line, and never quotes a credential the server echoed', async () => {
    server.use(http.get(`${BASE}/publishers/acme/nodes/v2`, () => HttpResponse.json(page([{ id: 'n', downloads: 'many', rating: `Bearer ${TOKEN}` }]))));
    const err = await client().listPublisherNodes('acme').catch((e: any) => e);
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect(err.message).toContain('at nodes.0.downloads: must be an integer, got "many" (+1 more)');
    expect(err.issues[1].message).toContain('[REDACTED]');
    expect(JSON.stringify(err.issues) + err.message + inspect(err)).not.toContain(TOKEN);
  });

  it('raises ResponseValidationError on a non-JSON 2xx body', async () => {
    server.use(http.get(`${BASE}/publishers`, () => new HttpResponse('oops', { status: 200 })));
    await expect(client().listPublishers()).rejects.toBeInstanceOf(ResponseValidationError);
  });

  it('passes wrong types through with validate: false', async () => {
    server.use(http.get(`${BASE}/nodes/search`, () => HttpResponse.json(page([{ id: 'n', downloads: 'many' }]))));
    const p = await client({ validate: false }).searchNodes();
    expect(p.nodes[0]!.downloads).toBe('many');
  });
});

describe('pagination', () => {
  const nodes = Array.from({ length: 25 }, (_, i) => ({ id: `n${i}` }));
  const paged = (repeat = false) =>
    http.get(`${BASE}/nodes/search`, ({ request }) => {
      const q = new URL(request.url).searchParams;
      const limit = Number(q.get('limit'));
      const p = repeat ? 1 : Number(q.get('page'));
      return HttpResponse.json({ limit, page: p, total: 25, totalPages: 3, nodes: nodes.slice((p - 1) * limit, p * limit) });
    });

  it('awaits one page with hasNextPage/getNextPage', async () => {
    server.use(paged());
    const first = await client().searchNodes();
    expect(first.nodes).toHaveLength(10);
    expect(first.hasNextPage()).toBe(true);
    const second = await first.getNextPage();
    expect(second.page).toBe(2);
    expect(second.nodes[0]).toEqual({ id: 'n10' });
    const third = await second.getNextPage();
    expect(third.hasNextPage()).toBe(false);
  });

  it('iterates every node lazily, stopping at totalPages', async () => {
    server.use(paged());
    const ids: string[] = [];
    for await (const n of client().searchNodes()) {
      ids.push(n.id!);
      if (ids.length === 5) expect(seen).toHaveLength(1); // the next page is not fetched early
    }
    expect(ids).toEqual(nodes.map((n) => n.id));
    expect(seen).toHaveLength(3);
  });

  it('stops when the server repeats a page', async () => {
    server.use(paged(true));
    const ids: string[] = [];
    for await (const n of client().searchNodes()) ids.push(n.id!);
    expect(ids).toHaveLength(10);
    expect(seen).toHaveLength(2);
  });

  it('yields each node once when nodes arrive while paging, and stops when two pages in a row bring nothing new', async () => {
    // Page 2 repeats the end of page 1 (one node arrived at the front), then the server ignores the cursor.
    const answers = [nodes.slice(0, 10), nodes.slice(9, 19), nodes.slice(9, 19), nodes.slice(9, 19), nodes.slice(19)];
    server.use(
      http.get(`${BASE}/nodes/search`, ({ request }) => {
        const p = Number(new URL(request.url).searchParams.get('page'));
        return HttpResponse.json({ limit: 10, page: p, total: 25, totalPages: 5, nodes: answers[p - 1] });
      }),
    );
    const ids: string[] = [];
    for await (const n of client().searchNodes()) ids.push(n.id!);
    expect(ids).toEqual(nodes.slice(0, 19).map((n) => n.id));
    expect(seen).toHaveLength(4);
  });

  it('walks every page of items that have no id (an id-less item cannot be a repeat, so it is progress)', async () => {
    server.use(
      http.get(`${BASE}/nodes/search`, ({ request }) => {
        const p = Number(new URL(request.url).searchParams.get('page'));
        return HttpResponse.json({ limit: 2, page: p, total: 8, totalPages: 4, nodes: [{ name: `n${p}a` }, { name: `n${p}b` }] });
      }),
    );
    const names: unknown[] = [];
    for await (const n of client().searchNodes()) names.push(n.name);
    expect(names).toEqual(['n1a', 'n1b', 'n2a', 'n2b', 'n3a', 'n3b', 'n4a', 'n4b']);
  });

  it('stops on an empty page', async () => {
    server.use(http.get(`${BASE}/nodes/search`, () => HttpResponse.json({ limit: 10, page: 1, total: 99, totalPages: 10, nodes: [] })));
    const ids: unknown[] = [];
    for await (const n of client().searchNodes()) ids.push(n);
    expect(ids).toEqual([]);
    expect(seen).toHaveLength(1);
  });

  it('stops when the signal aborts', async () => {
    server.use(paged());
    const ac = new AbortController();
    const ids: string[] = [];
    const run = async () => {
      for await (const n of client().searchNodes({}, { signal: ac.signal })) {
        ids.push(n.id!);
        if (ids.length === 12) ac.abort();
      }
    };
    await expect(run()).rejects.toBeInstanceOf(APIUserAbortError);
    expect(ids).toHaveLength(20);
  });
});

describe('review regressions', () => {
  it('never follows a redirect with the credential', async () => {
    server.use(
      http.get(`${BASE}/publishers/acme/nodes/v2`, () => new HttpResponse(null, { status: 307, headers: { location: 'https://elsewhere.test/steal' } })),
      http.get('https://elsewhere.test/steal', () => HttpResponse.json({ stolen: true })),
    );
    const err: any = await client().listPublisherNodes('acme').catch((e) => e);
    expect(err).toBeInstanceOf(APIError);
    expect(err.status).toBe(307);
    expect(seen.map((r) => new URL(r.url).host)).toEqual(['registry.test']);
  });

  it('times out a body that stalls after the headers (a real socket: msw\'s mock socket trips an undici assertion on abort)', async () => {
    const { createServer } = await import('node:http');
    const sockets = new Set<import('node:net').Socket>();
    const stalling = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
    });
    stalling.on('connection', (s) => sockets.add(s));
    await new Promise<void>((r) => stalling.listen(0, '127.0.0.1', r));
    try {
      const { port } = stalling.address() as import('node:net').AddressInfo;
      server.use(http.all(`http://127.0.0.1:${port}/*`, () => passthrough()));
      const timers = recordFiredTimers('transport/');
      await expect(client({ baseUrl: `http://127.0.0.1:${port}` }).listPublishers({ timeout: 100 }).finally(timers.restore)).rejects.toBeInstanceOf(APITimeoutError);
      // Ended by its own 100 ms timeout (nothing longer fired first), told by the timers rather than a clock.
      expect(timers.fired).toEqual([100]);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => stalling.close(r));
    }
  });

  it('redacts credentials and signed-URL capabilities from shown URLs', () => {
    const shown = redactUrl('https://s.test/o?X-Amz-Credential=v1cred&X-Amz-Security-Token=v2sess&X-Amz-Signature=v3sig&X-Goog-Signature=v4sig&sig=v5&token=v6&api_key=v7&expires=9');
    for (let i = 1; i <= 7; i++) expect(shown).not.toContain(`=v${i}`);
    expect(shown).toContain('expires=9');
  });
});
