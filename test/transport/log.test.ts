// The SDK's log (issue 14), against msw and a stand-in WebSocket: levels, the
// PLATFORMUI_LOG switch, one line per event, what each line carries, and that
// no line carries a secret, a body or a user's text.
import { http, HttpResponse } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { interceptHttp } from '../helpers/msw.ts';
import { FakeSocket } from '../helpers/fake-socket.ts';
import {
  AuthenticationError,
  CloudClient,
  InvalidArgumentError,
  NotFoundError,
  ProxyClient,
  RegistryClient,
  ResponseValidationError,
  encodeFrame,
  type LogLevel,
} from '../../src/index.ts';
import { CloudSocket } from '../../src/cloud/socket.ts';
import { runJob } from '../../src/cloud/run.ts';
import type { JobBackend, JobRecord, JobStatusResult } from '../../src/index.ts';
import { createLog, LOG_LEVELS } from '../../src/transport/log.ts';
import { REDACTED, redactUrl } from '../../src/transport/redact.ts';
import { recorder, type Line } from '../helpers/log-recorder.ts';

const BASE = 'https://registry.test';
const CLOUD = 'https://cloud.test';
const TOKEN = 'tok_LOGSECRET_7f3a9c2e';
const API_KEY = 'sk_LOGSECRET_cloud_91b4';
const page = (nodes: unknown[] = []) => ({ limit: 10, nodes, page: 1, total: nodes.length, totalPages: 1 });

const { server, seen } = interceptHttp();

const fast = { limit: 2, backoffLimit: 5 };
const registry = (o: ConstructorParameters<typeof RegistryClient>[0] = {}) => new RegistryClient({ baseUrl: BASE, token: TOKEN, retry: fast, ...o });

let clouds: CloudClient[] = [];
const cloud = (o: ConstructorParameters<typeof CloudClient>[0] = {}) => {
  const c = new CloudClient({ baseUrl: CLOUD, apiKey: API_KEY, ...o });
  clouds.push(c);
  return c;
};

beforeEach(() => {
  // Whatever the shell running the tests has set, the tests start without it.
  vi.stubEnv('PLATFORMUI_LOG', '');
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  for (const c of clouds.splice(0)) c.close();
  FakeSocket.all = [];
});

/** Every line is `[platformui] …` with a plain JSON object as details. */
function expectWellFormed(lines: Line[]) {
  for (const l of lines) {
    expect(l.message.startsWith('[platformui] '), l.message).toBe(true);
    expect(l.details).toBeTypeOf('object');
    expect(JSON.parse(JSON.stringify(l.details))).toEqual(l.details);
  }
}

/** Spies on every console method; returns the spies. */
function spyConsole() {
  return (['error', 'warn', 'info', 'debug', 'log', 'trace'] as const).map((m) => vi.spyOn(console, m).mockImplementation(() => undefined));
}

describe('createLog', () => {
  it.each([
    ['RegistryClient', (o: object) => new RegistryClient({ baseUrl: BASE, ...o })],
    ['ProxyClient', (o: object) => new ProxyClient({ baseUrl: BASE, ...o })],
    ['CloudClient', (o: object) => new CloudClient({ baseUrl: CLOUD, ...o })],
  ])('%s: an invalid logLevel or logger throws InvalidArgumentError from the constructor, before any request', (_, make) => {
    const bad: object[] = [
      { logLevel: 'verbose' },
      { logLevel: 'DEBUG' },
      { logLevel: 3 },
      { logger: {} },
      { logger: null },
      { logger: { error() {}, warn() {}, info() {} } }, // no debug
      { logger: { error() {}, warn() {}, info() {}, debug: 'no' } },
    ];
    for (const o of bad) {
      let err: unknown;
      try {
        make(o);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(o)).toBeInstanceOf(InvalidArgumentError);
      expect((err as InvalidArgumentError).field).toBe('logLevel' in o ? 'logLevel' : 'logger');
    }
    expect(seen).toHaveLength(0);
  });

  it('the console gets a line\'s fields only when it has some (no trailing {}); another logger always gets the object (issue 32)', () => {
    const calls: unknown[][] = [];
    const original = console.warn;
    console.warn = (...args: unknown[]) => void calls.push(args);
    try {
      const log = createLog({ logLevel: 'warn' }, () => [], { env: false });
      log.warn?.('no fields', {});
      log.warn?.('some fields', { status: 503 });
    } finally {
      console.warn = original;
    }
    expect(calls).toEqual([['[platformui] no fields'], ['[platformui] some fields', { status: 503 }]]);
    const rec = recorder();
    createLog({ logLevel: 'warn', logger: rec.logger }, () => [], { env: false }).warn?.('no fields', {});
    expect(rec.lines).toEqual([{ level: 'warn', message: '[platformui] no fields', details: {} }]);
  });

  it('the message of an invalid level names the levels and quotes the value', () => {
    expect(() => new RegistryClient({ baseUrl: BASE, logLevel: 'loud' as LogLevel })).toThrow(/logLevel: must be one of 'off', 'error', 'warn', 'info' or 'debug', got "loud"/);
  });

  it('a logger that throws does not fail the request', async () => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json([{ id: 'acme' }])));
    const calls: string[] = [];
    const boom = (level: string) => () => {
      calls.push(level);
      throw new Error('logger down');
    };
    const c = registry({ logLevel: 'debug', logger: { error: boom('error'), warn: boom('warn'), info: boom('info'), debug: boom('debug') } });
    await expect(c.listPublishers()).resolves.toEqual([{ id: 'acme' }]);
    expect(calls).toEqual(['debug']);
    // A failure too: the caller gets the API error, not the logger's.
    server.use(http.get(`${BASE}/publishers/acme/nodes/v2`, () => HttpResponse.json({ message: 'no such publisher' }, { status: 404 })));
    await expect(c.listPublisherNodes('acme')).rejects.toBeInstanceOf(NotFoundError);
  });

  it.each(LOG_LEVELS.map((l) => [l]))('level %s enables exactly the levels up to it', (level) => {
    const rec = recorder();
    const log = createLog({ logLevel: level, logger: rec.logger });
    const expected = LOG_LEVELS.slice(1, LOG_LEVELS.indexOf(level) + 1);
    for (const m of ['error', 'warn', 'info', 'debug'] as const) {
      expect(typeof log[m], m).toBe(expected.includes(m) ? 'function' : 'undefined');
      log[m]?.(`a ${m} line`, { n: 1 });
    }
    expect(rec.lines.map((l) => l.level)).toEqual(expected);
    for (const l of rec.lines) expect(l).toEqual({ level: l.level, message: `[platformui] a ${l.level} line`, details: { n: 1 } });
  });

  it('scrubs the live secrets from the message and every member of the details', () => {
    const rec = recorder();
    let secrets = ['first-SECRET-1'];
    const log = createLog({ logLevel: 'debug', logger: rec.logger }, () => secrets);
    secrets = ['late-SECRET-2']; // read when the line is written
    log.debug!('saw late-SECRET-2 in a message', { url: 'https://h/?x=late-SECRET-2', nested: { list: ['late-SECRET-2'] } });
    expect(JSON.stringify(rec.lines)).not.toContain('late-SECRET-2');
    expect(rec.lines[0]!.message).toBe(`[platformui] saw ${REDACTED} in a message`);
    expect(rec.lines[0]!.details).toEqual({ url: `https://h/?x=${REDACTED}`, nested: { list: [REDACTED] } });
  });

  it("'off' logs nothing, even for failures, retries and off-spec responses", async () => {
    let n = 0;
    server.use(
      http.get(`${BASE}/publishers`, () => (++n === 1 ? HttpResponse.json({}, { status: 503, headers: { 'Retry-After': '0' } }) : HttpResponse.json('not a list'))),
      http.get(`${BASE}/publishers/acme/nodes/v2`, () => HttpResponse.json({ message: 'gone' }, { status: 404 })),
    );
    const rec = recorder();
    const c = registry({ logLevel: 'off', logger: rec.logger, validate: false });
    await c.listPublishers();
    await expect(c.listPublisherNodes('acme')).rejects.toBeInstanceOf(NotFoundError);
    expect(n).toBe(2);
    expect(rec.lines).toEqual([]);
  });
});

describe('PLATFORMUI_LOG', () => {
  beforeEach(() => server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json([]))));

  it('sets the level when the option is absent', async () => {
    vi.stubEnv('PLATFORMUI_LOG', 'debug');
    const rec = recorder();
    await registry({ logger: rec.logger }).listPublishers();
    expect(rec.of('debug')).toHaveLength(1);
  });

  it('is read case-insensitively and trimmed', async () => {
    vi.stubEnv('PLATFORMUI_LOG', ' DEBUG ');
    const rec = recorder();
    await registry({ logger: rec.logger }).listPublishers();
    expect(rec.of('debug')).toHaveLength(1);
  });

  it('loses to the option', async () => {
    vi.stubEnv('PLATFORMUI_LOG', 'debug');
    const rec = recorder();
    await registry({ logger: rec.logger, logLevel: 'warn' }).listPublishers();
    expect(rec.lines).toEqual([]);
  });

  it('an invalid value gives one warn line and level warn', async () => {
    vi.stubEnv('PLATFORMUI_LOG', 'verbose');
    const rec = recorder();
    const c = registry({ logger: rec.logger });
    expect(rec.lines).toHaveLength(1);
    expect(rec.lines[0]!.level).toBe('warn');
    expect(rec.lines[0]!.message).toContain('PLATFORMUI_LOG="verbose" is not a level');
    expectWellFormed(rec.lines);
    await c.listPublishers(); // warn: a good call adds nothing
    expect(rec.lines).toHaveLength(1);
    // warn is on: a retry shows
    let n = 0;
    server.use(http.get(`${BASE}/publishers`, () => (++n === 1 ? HttpResponse.json({}, { status: 503, headers: { 'Retry-After': '0' } }) : HttpResponse.json([]))));
    await c.listPublishers();
    expect(rec.of('warn')).toHaveLength(2);
  });
});

describe('a successful call', () => {
  it('at debug: exactly one debug line with requestId, method, url, status, durationMs, attempt 1', async () => {
    server.use(http.get(`${BASE}/publishers/acme/nodes/v2`, () => HttpResponse.json(page())));
    const rec = recorder();
    await registry({ logLevel: 'debug', logger: rec.logger }).listPublisherNodes('acme', { page: 2 });
    expect(rec.lines).toHaveLength(1);
    const [line] = rec.lines;
    expect(line!.level).toBe('debug');
    expect(line!.details).toEqual({
      requestId: expect.stringMatching(/^req_[0-9a-z]+$/),
      method: 'GET',
      url: `${BASE}/publishers/acme/nodes/v2?page=2`,
      status: 200,
      durationMs: expect.any(Number),
      attempt: 1,
    });
    expect(line!.message).toMatch(/^\[platformui\] GET https:\/\/registry\.test\/publishers\/acme\/nodes\/v2\?page=2 → 200 in \d+ ms \(req_[0-9a-z]+\)$/);
    expectWellFormed(rec.lines);
    expect(JSON.stringify(rec.lines)).not.toContain(TOKEN);
  });

  it('each call gets its own requestId', async () => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json([])));
    const rec = recorder();
    const c = registry({ logLevel: 'debug', logger: rec.logger });
    await c.listPublishers();
    await c.listPublishers();
    const ids = rec.lines.map((l) => l.details!.requestId);
    expect(ids).toHaveLength(2);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it.each(['info', 'warn', 'error'] as const)('at %s: no line', async (level) => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json([])));
    const rec = recorder();
    await registry({ logLevel: level, logger: rec.logger }).listPublishers();
    expect(rec.lines).toEqual([]);
  });

  it('at the default level with a logger: no line', async () => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json([])));
    const rec = recorder();
    await registry({ logger: rec.logger }).listPublishers();
    expect(rec.lines).toEqual([]);
  });

  it('a good day with default options prints nothing on the console', async () => {
    const spies = spyConsole();
    server.use(
      http.get(`${BASE}/publishers`, () => HttpResponse.json([])),
      http.get(`${BASE}/nodes/search`, () => HttpResponse.json(page())),
      http.get(`${CLOUD}/api/queue`, () => HttpResponse.json({ queue_running: [], queue_pending: [] })),
    );
    const c = new RegistryClient({ baseUrl: BASE, token: TOKEN });
    await c.listPublishers();
    await c.searchNodes({ search: 'upscale' });
    await new CloudClient({ baseUrl: CLOUD, apiKey: API_KEY }).getQueue();
    expect(seen).toHaveLength(3);
    for (const s of spies) expect(s).not.toHaveBeenCalled();
  });
});

describe('a retried call', () => {
  it('503 with Retry-After: 0, then 200: one warn line, two debug attempt lines of one requestId', async () => {
    let n = 0;
    server.use(http.get(`${BASE}/publishers`, () => (++n === 1 ? HttpResponse.json({ message: 'busy' }, { status: 503, headers: { 'Retry-After': '0' } }) : HttpResponse.json([]))));
    const rec = recorder();
    await registry({ logLevel: 'debug', logger: rec.logger }).listPublishers();
    expect(n).toBe(2);
    expect(rec.lines.map((l) => l.level)).toEqual(['debug', 'warn', 'debug']);
    const [first, warn, second] = rec.lines;
    expect(warn!.details).toEqual({ requestId: first!.details!.requestId, method: 'GET', url: `${BASE}/publishers`, attempt: 1, reason: 'HTTP 503', status: 503, retryAfter: '0', delayMs: 0 });
    expect(warn!.message).toBe(`[platformui] GET ${BASE}/publishers: HTTP 503; retrying in 0 ms (attempt 2 of 3)`);
    expect(first!.details).toMatchObject({ status: 503, attempt: 1 });
    expect(second!.details).toMatchObject({ status: 200, attempt: 2, requestId: first!.details!.requestId });
    expect(second!.message).toContain(', attempt 2)');
    expectWellFormed(rec.lines);
  });

  it('a network error, then 200: one warn line with the reason and the delay, no status', async () => {
    let n = 0;
    server.use(http.get(`${BASE}/publishers`, () => (++n === 1 ? HttpResponse.error() : HttpResponse.json([]))));
    const rec = recorder();
    await registry({ logLevel: 'debug', logger: rec.logger }).listPublishers();
    expect(n).toBe(2);
    expect(rec.lines.map((l) => l.level)).toEqual(['debug', 'warn', 'debug']);
    const [first, warn, second] = rec.lines;
    expect(warn!.details).toEqual({ requestId: first!.details!.requestId, method: 'GET', url: `${BASE}/publishers`, attempt: 1, reason: expect.stringMatching(/^Connection failed/), delayMs: expect.any(Number) });
    expect(warn!.details!.delayMs as number).toBeLessThanOrEqual(5);
    expect(first!.details).toMatchObject({ attempt: 1, error: expect.stringMatching(/^Connection failed/) });
    expect(first!.details).not.toHaveProperty('status');
    expect(second!.details).toMatchObject({ status: 200, attempt: 2, requestId: first!.details!.requestId });
  });

  it('at the default level: the warn line only', async () => {
    let n = 0;
    server.use(http.get(`${BASE}/publishers`, () => (++n === 1 ? HttpResponse.json({}, { status: 502, headers: { 'Retry-After': '0' } }) : HttpResponse.json([]))));
    const rec = recorder();
    await registry({ logger: rec.logger }).listPublishers();
    expect(rec.lines.map((l) => l.level)).toEqual(['warn']);
  });
});

describe('a failed call', () => {
  it('404 handled by the caller: the attempt line and one "failed" line at debug, nothing above', async () => {
    server.use(http.get(`${BASE}/publishers/acme/nodes/v2`, () => HttpResponse.json({ message: 'no such publisher' }, { status: 404 })));
    const rec = recorder();
    const err = await registry({ logLevel: 'debug', logger: rec.logger })
      .listPublisherNodes('acme')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(rec.lines.map((l) => l.level)).toEqual(['debug', 'debug']);
    const [attempt, failed] = rec.lines;
    expect(attempt!.details).toMatchObject({ status: 404, attempt: 1 });
    expect(failed!.message).toBe(`[platformui] GET ${BASE}/publishers/acme/nodes/v2?page=1 failed: NotFoundError 404`);
    expect(failed!.details).toMatchObject({ requestId: attempt!.details!.requestId, method: 'GET', error: 'NotFoundError', status: 404 });
    expectWellFormed(rec.lines);
  });

  it('at warn and error: no line; by default nothing on the console', async () => {
    server.use(http.get(`${BASE}/publishers/acme/nodes/v2`, () => HttpResponse.json({ message: 'no such publisher' }, { status: 404 })));
    for (const level of ['warn', 'error'] as const) {
      const rec = recorder();
      await expect(registry({ logLevel: level, logger: rec.logger }).listPublisherNodes('acme')).rejects.toBeInstanceOf(NotFoundError);
      expect(rec.lines).toEqual([]);
    }
    const spies = spyConsole();
    await expect(new RegistryClient({ baseUrl: BASE, token: TOKEN }).listPublisherNodes('acme')).rejects.toBeInstanceOf(NotFoundError);
    for (const s of spies) expect(s).not.toHaveBeenCalled();
  });

  it('an error body that echoes the token stays out of the failed line (an SDK error message is not logged)', async () => {
    server.use(http.get(`${BASE}/publishers/acme/nodes/v2`, () => HttpResponse.json({ message: `token ${TOKEN} is not valid` }, { status: 401 })));
    const rec = recorder();
    const err = await registry({ logLevel: 'debug', logger: rec.logger, retry: false })
      .listPublisherNodes('acme')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    const failed = rec.lines.find((l) => l.message.includes('failed'));
    expect(failed?.details).toMatchObject({ error: 'AuthenticationError', status: 401 });
    expect(failed?.details?.message).toBeUndefined();
    expect(JSON.stringify(rec.lines)).not.toContain('is not valid');
    expect(JSON.stringify(rec.lines)).not.toContain(TOKEN);
  });

  it('a credential function that resolves late is still scrubbed from an echo', async () => {
    const late = 'tok_LATE_SECRET_55aa';
    server.use(http.get(`${BASE}/publishers/acme/nodes/v2`, () => HttpResponse.json({ message: `bad ${late}` }, { status: 403 })));
    const rec = recorder();
    await registry({ token: async () => late, logLevel: 'debug', logger: rec.logger, retry: false })
      .listPublisherNodes('acme')
      .catch(() => undefined);
    expect(rec.lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(rec.lines)).not.toContain(late);
  });
});

describe('validate: false', () => {
  const PLANTED = 'PLANTED_WRONG_VALUE_4c1d';
  // `id` must be a string, `name` too: both wrong, one with the planted value.
  const offSpec = [{ id: 12345, name: { text: PLANTED } }, { id: PLANTED.length, name: [PLANTED] }];

  it('a response off the schema passes through with one warn line: paths and what was expected, never the value', async () => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json(offSpec)));
    const rec = recorder();
    const data = await registry({ logLevel: 'debug', logger: rec.logger, validate: false }).listPublishers();
    expect(data).toEqual(offSpec);
    const warns = rec.of('warn');
    expect(warns).toHaveLength(1);
    const issues = warns[0]!.details!.issues as Array<{ path: string; expected: string }>;
    expect(issues.map((i) => i.path)).toEqual(expect.arrayContaining(['0.id', '0.name', '1.id', '1.name']));
    for (const i of issues) expect(i.expected).toMatch(/^must be /);
    expect(issues.find((i) => i.path === '0.id')?.expected).toBe('must be a string');
    expect(warns[0]!.details).toMatchObject({ method: 'GET', url: `${BASE}/publishers`, issueCount: issues.length, requestId: expect.stringMatching(/^req_/) });
    expect(warns[0]!.message).toContain('does not match the schema; passed through (validate: false)');
    expect(JSON.stringify(rec.lines)).not.toContain(PLANTED);
    expect(JSON.stringify(rec.lines)).not.toContain('12345');
    expect(rec.lines.filter((l) => l.level === 'error')).toEqual([]);
    expectWellFormed(rec.lines);
  });

  it('with validate on: no warn; the error is thrown and logged once, at debug', async () => {
    server.use(http.get(`${BASE}/publishers`, () => HttpResponse.json(offSpec)));
    const rec = recorder();
    await expect(registry({ logLevel: 'debug', logger: rec.logger }).listPublishers()).rejects.toBeInstanceOf(ResponseValidationError);
    expect(rec.of('warn')).toEqual([]);
    expect(rec.of('error')).toEqual([]);
    const failed = rec.lines.filter((l) => l.details?.error === 'ResponseValidationError');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.level).toBe('debug');
  });

  it('the proxy task read warns the same way', async () => {
    const id = '3f1c3c5e-7d5a-4b8e-9a51-1f0c2d3e4f5a';
    server.use(http.get(`${BASE}/proxy/vendor/v1/ai/image-relight/${id}`, () => HttpResponse.json({ data: { task_id: id, status: 'COMPLETED', generated: [{ url: PLANTED }] } })));
    const rec = recorder();
    const proxy = new ProxyClient({ baseUrl: BASE, token: TOKEN, logLevel: 'warn', logger: rec.logger, validate: false });
    await proxy.getTask('image-relight', id);
    expect(rec.of('warn')).toHaveLength(1);
    expect((rec.lines[0]!.details!.issues as Array<{ path: string }>).map((i) => i.path)).toContain('generated.0');
    expect(JSON.stringify(rec.lines)).not.toContain(PLANTED);
  });
});

describe('redactUrl', () => {
  it('redacts the user name, the password and the fragment', () => {
    const shown = redactUrl('https://alice:hunter2pw@host.test/p?q=1#access_token=frag-secret');
    expect(shown).toBe(`https://${REDACTED}:${REDACTED}@host.test/p?q=1#${REDACTED}`);
    expect(redactUrl('https://bob@host.test/')).toBe(`https://${REDACTED}@host.test/`);
  });

  it.each(['token', 'api_key', 'X-Amz-Signature', 'Signature', 'client_secret', 'password', 'access_token_v2', 'sessionId', 'apiKey', 'X-Amz-Security-Token', 'sig', 'refresh_token', 'session_id', 'passwd'])('redacts the value of %s', (name) => {
    const shown = redactUrl(`https://host.test/p?${encodeURIComponent(name)}=S3CRET_value&limit=5`);
    expect(shown).not.toContain('S3CRET_value');
    expect(new URL(shown).searchParams.get(name)).toBe(REDACTED);
    expect(new URL(shown).searchParams.get('limit')).toBe('5');
  });

  it.each(['search', 'keyword', 'limit', 'page', 'clientId', 'filename'])('keeps %s', (name) => {
    const shown = redactUrl(`https://host.test/p?${name}=visible_value`);
    expect(new URL(shown).searchParams.get(name)).toBe('visible_value');
  });

  it('an unparsable URL is redacted whole', () => {
    expect(redactUrl('not a url with secret')).toBe(REDACTED);
  });
});

describe('socket lines', () => {
  const PROMPT = 'PLANTED_PROMPT_a_red_fox_9e1';

  async function open(level: LogLevel = 'debug', extra: { errorListener?: boolean } = {}) {
    const rec = recorder();
    const c = cloud({ logLevel: level, logger: rec.logger });
    const socket = c.connect({ WebSocket: FakeSocket as never });
    if (extra.errorListener) socket.on('error', () => undefined);
    await socket.ready();
    const ws = FakeSocket.all.at(-1)!;
    return { socket, ws, rec, socketLines: () => rec.lines.filter((l) => l.message.startsWith('[platformui] socket: ')) };
  }

  it('connecting and open at debug, the token redacted', async () => {
    const { socket, rec } = await open();
    expect(rec.lines.map((l) => l.message)).toEqual([`[platformui] socket connecting to ${socket.url}`, `[platformui] socket open: ${socket.url}`]);
    expect(socket.url).toContain(`token=${REDACTED}`);
    expect(JSON.stringify(rec.lines)).not.toContain(API_KEY);
    expect(rec.lines.every((l) => l.level === 'debug')).toBe(true);
  });

  it('a known message at debug, with its type and job', async () => {
    const { ws, socketLines } = await open();
    ws.push({ type: 'progress', data: { value: 1, max: 10, prompt_id: 'A', node: '3' } });
    expect(socketLines()).toEqual([{ level: 'debug', message: '[platformui] socket: progress for A', details: { type: 'progress', known: true, promptId: 'A', bytes: expect.any(Number) } }]);
  });

  it('an unknown message type: debug, not warn', async () => {
    const { ws, socketLines } = await open();
    ws.push({ type: 'brand_new_event', data: { prompt_id: 'A', text: PROMPT } });
    const lines = socketLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]!.level).toBe('debug');
    expect(lines[0]!.details).toMatchObject({ type: 'brand_new_event', known: false, promptId: 'A' });
    expect(JSON.stringify(lines)).not.toContain(PROMPT);
  });

  it('malformed text: warn with the byte count and the reason, never the text', async () => {
    const { ws, socketLines } = await open();
    // Cut off inside a string (a dropped frame): the parser's reason quotes nothing.
    const text = `{"type":"executed","data":{"prompt_id":"A","prompt":"${PROMPT}`;
    ws.push(text);
    const lines = socketLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]!.level).toBe('warn');
    expect(lines[0]!.details).toMatchObject({ type: 'malformed', bytes: text.length, reason: expect.any(String) });
    expect(lines[0]!.message).toContain(`(${text.length} bytes)`);
    expect(JSON.stringify(lines)).not.toContain(PROMPT);
  });

  it('a message that is JSON but not an object: warn, never the text', async () => {
    const { ws, socketLines } = await open();
    ws.push(JSON.stringify(PROMPT));
    const lines = socketLines();
    expect(lines.map((l) => l.level)).toEqual(['warn']);
    expect(lines[0]!.details).toMatchObject({ type: 'malformed', reason: 'Message is not a JSON object' });
    expect(JSON.stringify(lines)).not.toContain(PROMPT);
  });

  // BUG (src/cloud/messages.ts:98 → src/cloud/socket.ts #receive): the 'malformed' reason is
  // JSON.parse's own message, which V8 builds from the input: `Unexpected token 'P',
  // "PLANTED_PROMPT_x" is not valid JSON` quotes a short text whole, a long one 10 characters
  // either side of the error. The warn line (on by default, to the console) carries it.
  // Flip to `it` once fixed.
  it('malformed text that is not JSON at all: the warn line does not quote it (V8 would: the reason is a fixed one)', async () => {
    const { ws, socketLines } = await open();
    ws.push(`${PROMPT} is not json`);
    ws.push(`{"type":"executed","data":{"prompt_id":"A","prompt":${PROMPT}}}`);
    const lines = socketLines();
    // The second of a kind is debug: a server that sends it on every step must not flood the console.
    expect(lines.map((l) => l.level)).toEqual(['warn', 'debug']);
    expect(lines.map((l) => l.details?.reason)).toEqual(['Message is not valid JSON', 'Message is not valid JSON']);
    expect(JSON.stringify(lines)).not.toContain(PROMPT.slice(0, 10));
  });

  it('a known message that does not match its schema: warn, with where and what, not the value', async () => {
    const { ws, socketLines } = await open();
    const text = JSON.stringify({ type: 'progress', data: { value: PROMPT, max: 10, prompt_id: 'A', node: '3' } });
    ws.push(text);
    const lines = socketLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]!.level).toBe('warn');
    expect(lines[0]!.details).toEqual({ type: 'invalid', rawType: 'progress', promptId: 'A', bytes: text.length, reason: 'value: must be a number' });
    expect(JSON.stringify(lines)).not.toContain(PROMPT);
  });

  it('a binary frame of an unknown type (9): debug', async () => {
    const { ws, socketLines } = await open();
    ws.push(new Uint8Array([0, 0, 0, 9, 1, 2, 3]).buffer);
    const lines = socketLines();
    expect(lines).toEqual([{ level: 'debug', message: '[platformui] socket: binary frame unknown (type 9, 7 bytes)', details: { type: 'unknown', eventType: 9, bytes: 7 } }]);
  });

  it('a known binary frame: debug, attributed to its job', async () => {
    const { ws, socketLines } = await open();
    ws.push(encodeFrame({ type: 'preview_image_with_metadata', metadata: { prompt_id: 'B', node_id: '3' }, image: new Uint8Array([0xff, 0xd8, 0xff]) }).buffer);
    expect(socketLines()).toEqual([{ level: 'debug', message: expect.stringContaining('binary frame preview_image_with_metadata (type 4'), details: expect.objectContaining({ eventType: 4, promptId: 'B' }) }]);
  });

  it('a truncated binary frame: warn', async () => {
    const { ws, socketLines } = await open('warn');
    ws.push(new Uint8Array([0, 0, 0, 4, 0, 0, 0, 99]).buffer); // type 4, metadata length past the end
    ws.push(new Uint8Array([0, 0]).buffer); // shorter than its type
    const lines = socketLines();
    expect(lines.map((l) => l.level)).toEqual(['warn', 'warn']);
    expect(lines[0]!.details).toMatchObject({ bytes: 8, error: 'FrameDecodeError' });
    expect(lines[1]!.details).toMatchObject({ bytes: 2, error: 'FrameDecodeError' });
    expect(lines[0]!.message).toContain('malformed binary frame (8 bytes) was skipped');
  });

  it('at the default level, a normal stream of messages and frames logs nothing', async () => {
    const { ws, rec } = await open('warn');
    ws.push({ type: 'status', data: { status: { exec_info: { queue_remaining: 0 } } } });
    ws.push({ type: 'progress', data: { value: 1, max: 10, prompt_id: 'A', node: '3' } });
    ws.push({ type: 'brand_new_event', data: {} });
    ws.push(new Uint8Array([0, 0, 0, 9]).buffer);
    expect(rec.lines).toEqual([]);
  });

  it("a listener that throws with no 'error' listener: one error line", async () => {
    const { socket, ws, rec } = await open('warn');
    socket.on('progress', () => {
      throw new TypeError(`listener bug`);
    });
    ws.push({ type: 'progress', data: { value: 1, max: 10, prompt_id: 'A', node: '3' } });
    await Promise.resolve();
    expect(rec.lines).toEqual([{ level: 'error', message: '[platformui] socket: a listener threw: TypeError: listener bug', details: { error: 'TypeError', message: 'listener bug' } }]);
  });

  it("a listener that throws with an 'error' listener: no error line (the listener hears it)", async () => {
    const { socket, ws, rec } = await open('debug', { errorListener: true });
    const heard: unknown[] = [];
    socket.on('error', (e) => void heard.push(e.error));
    socket.on('progress', () => {
      throw new Error('listener bug');
    });
    ws.push({ type: 'progress', data: { value: 1, max: 10, prompt_id: 'A', node: '3' } });
    await new Promise((r) => setTimeout(r, 0));
    expect(heard).toHaveLength(1);
    expect(rec.of('error')).toEqual([]);
  });

  it('a drop and a reconnect: debug lines only (no warn)', async () => {
    const rec = recorder();
    const c = cloud({ logLevel: 'debug', logger: rec.logger });
    const socket = c.connect({ WebSocket: FakeSocket as never, reconnect: { baseDelay: 1, maxDelay: 2 } });
    await socket.ready();
    FakeSocket.all.at(-1)!.drop(1006);
    await socket.once('reconnected');
    const messages = rec.lines.map((l) => l.message.replace(/ in \d+ ms/, ' in N ms'));
    expect(messages).toEqual(expect.arrayContaining(['[platformui] socket closed: code 1006', '[platformui] socket reconnecting in N ms (attempt 1)', `[platformui] socket open again: ${socket.url}`]));
    expect(rec.lines.filter((l) => l.level !== 'debug')).toEqual([]);
  });

  it("gave up reconnecting with no job and no 'error' listener: one error line, saying why the last attempt failed (no 'retrying' warning: none followed)", async () => {
    const rec = recorder();
    const c = cloud({ logLevel: 'warn', logger: rec.logger });
    // Opens once, then every reconnect is refused.
    let made = 0;
    const Flaky = function (this: unknown, url: string) {
      if (made++ > 0) throw new Error(`connect ECONNREFUSED ${url}`);
      return new FakeSocket(url);
    };
    const socket = c.connect({ WebSocket: Flaky as never, reconnect: { baseDelay: 1, maxDelay: 1, maxAttempts: 1 } });
    await socket.ready();
    FakeSocket.all.at(-1)!.drop(1006);
    await new Promise((r) => setTimeout(r, 30));
    expect(socket.state).toBe('closed');
    expect(rec.lines.map((l) => l.level)).toEqual(['error']);
    expect(rec.lines[0]).toEqual({
      level: 'error',
      message: `[platformui] socket ${socket.url}: Gave up reconnecting after 1 attempts (the last: WebSocket connection failed: connect ECONNREFUSED ${socket.url})`,
      details: { url: socket.url, attempts: 1, jobs: 0 },
    });
    expect(JSON.stringify(rec.lines)).not.toContain(API_KEY);
  });

  it('maxAttempts: 0 asked for no reconnect: closing after a drop is no news above debug', async () => {
    const rec = recorder();
    const c = cloud({ logLevel: 'debug', logger: rec.logger });
    const socket = c.connect({ WebSocket: FakeSocket as never, reconnect: { baseDelay: 1, maxDelay: 1, maxAttempts: 0 } });
    await socket.ready();
    FakeSocket.all.at(-1)!.drop(1006);
    expect(socket.state).toBe('closed');
    expect(rec.lines.some((l) => l.message.includes('Gave up reconnecting after 0 attempts'))).toBe(true);
    expect(rec.lines.filter((l) => l.level !== 'debug')).toEqual([]);
  });
});

/** Starts a run, aborts it once under way, and waits for the background stop to have been tried. */
async function runThenAbort(jobs: JobBackend, socket: CloudSocket): Promise<void> {
  const ac = new AbortController();
  const run = runJob(jobs, socket, { '1': { inputs: {} } }, { pollInterval: 1000, signal: ac.signal }).catch((e: unknown) => e);
  await new Promise((r) => setTimeout(r, 5));
  ac.abort();
  await run;
  await new Promise((r) => setTimeout(r, 5));
}

describe('run() lines (a scripted backend)', () => {
  const file = (name: string) => ({ images: [{ filename: name, subfolder: '', type: 'output' }] });
  const sockets: CloudSocket[] = [];
  afterEach(() => void sockets.splice(0).forEach((s) => s.close()));

  async function setup(level: LogLevel, script: { status?: () => Partial<JobStatusResult>; stop?: () => Promise<void> } = {}) {
    const rec = recorder();
    const socket = new CloudSocket({ baseUrl: CLOUD, credential: async () => API_KEY, hasCredential: true }, { WebSocket: FakeSocket as never, reconnect: { baseDelay: 1, maxDelay: 1 } });
    sockets.push(socket);
    await socket.ready();
    const calls: string[] = [];
    const jobs: JobBackend = {
      log: createLog({ logLevel: level, logger: rec.logger }),
      submit: async () => (calls.push('submit'), { prompt_id: 'p1' }),
      getJobStatus: async () => (calls.push('status'), { phase: 'running', status: 'executing', ...script.status?.() }) as JobStatusResult,
      getJob: async () => (calls.push('record'), { id: 'p1', status: 'completed', phase: 'completed', outputs: { '9': file('a.png') } }) as JobRecord,
      stopJob: async () => (calls.push('stop'), script.stop ? script.stop() : undefined),
    };
    return { rec, socket, ws: FakeSocket.all.at(-1)!, jobs, calls };
  }
  const heardWholeJob = (ws: FakeSocket) => {
    ws.push({ type: 'execution_start', data: { prompt_id: 'p1' } });
    ws.push({ type: 'executed', data: { prompt_id: 'p1', node: '9', output: file('a.png') } });
    ws.push({ type: 'execution_success', data: { prompt_id: 'p1' } });
  };

  it('info: submitted, then completed with durationMs, outputs and files', async () => {
    const { rec, socket, ws, jobs } = await setup('info');
    const run = runJob(jobs, socket, { '1': { inputs: {} }, '9': { inputs: {} } }, { pollInterval: 1000 });
    await new Promise((r) => setTimeout(r, 5));
    heardWholeJob(ws);
    await run;
    await Promise.resolve();
    expect(rec.lines).toEqual([
      { level: 'info', message: '[platformui] job p1 submitted (2 nodes)', details: { promptId: 'p1', nodes: 2, clientId: socket.clientId, socket: 'open' } },
      { level: 'info', message: expect.stringMatching(/^\[platformui\] job p1 completed in \d+ ms: 1 file from 1 node$/), details: { promptId: 'p1', status: 'completed', durationMs: expect.any(Number), outputs: 1, files: 1 } },
    ]);
  });

  it('at the default level: nothing for a good run', async () => {
    const { rec, socket, ws, jobs } = await setup('warn');
    const run = runJob(jobs, socket, { '1': { inputs: {} } }, { pollInterval: 1000 });
    await new Promise((r) => setTimeout(r, 5));
    heardWholeJob(ws);
    await run;
    expect(rec.lines).toEqual([]);
  });

  it('debug: polling while the socket is down, back, and a status change', async () => {
    let done = false;
    const { rec, socket, ws, jobs } = await setup('debug', { status: () => (done ? { status: 'success', phase: 'completed' } : {}) });
    const run = runJob(jobs, socket, { '1': { inputs: {} } }, { pollInterval: 5 });
    await new Promise((r) => setTimeout(r, 5));
    ws.drop();
    await socket.ready();
    await new Promise((r) => setTimeout(r, 15));
    done = true;
    await run;
    const messages = rec.lines.map((l) => l.message);
    const polling = messages.findIndex((m) => /^\[platformui\] job p1: the socket is \w+; polling the status every 5 ms$/.test(m));
    const back = messages.indexOf('[platformui] job p1: the socket is back; confirming the status once');
    const status = messages.indexOf('[platformui] job p1: status success (completed)');
    expect([polling, back, status].every((i) => i >= 0), messages.join('\n')).toBe(true);
    expect(polling).toBeLessThan(back);
    expect(rec.lines[polling]!.details).toMatchObject({ promptId: 'p1', intervalMs: 5 });
    expect(messages.some((m) => m.startsWith('[platformui] job p1: outputs reconciled with the job record'))).toBe(true);
    expect(rec.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
  });

  it('an abort stops the job (debug); a stop that fails is an error line, since the caller has had its answer', async () => {
    const { rec, socket, jobs, calls } = await setup('warn', { stop: async () => Promise.reject(new Error('stop refused')) });
    await runThenAbort(jobs, socket);
    expect(calls).toContain('stop');
    expect(rec.lines).toEqual([{ level: 'error', message: '[platformui] job p1 could not be stopped (aborted); it may still run: Error: stop refused', details: { promptId: 'p1', error: 'Error', message: 'stop refused' } }]);
  });

  it('an abort whose stop works: the stop at debug, no error line', async () => {
    const { rec, socket, jobs } = await setup('debug');
    await runThenAbort(jobs, socket);
    expect(rec.lines.find((l) => l.message === '[platformui] job p1: stopping it on the server (aborted)')?.level).toBe('debug');
    expect(rec.of('info').map((l) => l.details?.status)).toEqual([undefined, 'aborted']); // submitted, then ended without a result
    expect(rec.of('error')).toEqual([]);
  });
});
