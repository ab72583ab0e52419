// The emulator's registry over real loopback HTTP, with plain fetch: the
// emulator is the ground truth for SDK integration tests, so it is checked on
// its own first.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request as httpRequest, Agent } from 'node:http';
import { recordFiredTimers } from '../helpers/timers-fired.ts';
import {
  ACCELERATOR_VALUES,
  EMULATOR_TOKEN,
  MAX_PAGE_SIZE,
  OS_VALUES,
  SEED_FACTS,
  startEmulator,
  type Emulator,
} from '../../src/emulator/index.ts';
// The emulator's own wire types (not exported from the package).
import type { Node, NodePage, Publisher } from '../../src/emulator/registry.ts';

let emu: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(() => {
  emu.registry.reset();
  emu.faults.reset();
  emu.requests.length = 0;
});

const auth = (token = EMULATOR_TOKEN) => ({ Authorization: `Bearer ${token}` });

async function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(emu.url + path, { headers });
}

async function json<T>(res: Response): Promise<T> {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return (await res.json()) as T;
}

async function expectError(res: Response, status: number, messagePart?: string | RegExp): Promise<void> {
  expect(res.status).toBe(status);
  const body = await json<{ error: unknown; message: unknown }>(res);
  expect(typeof body.error).toBe('string');
  expect(typeof body.message).toBe('string');
  if (messagePart) expect(body.message).toMatch(messagePart);
}

function createNode(publisherId: string, body: unknown, headers: Record<string, string> = auth()): Promise<Response> {
  return fetch(`${emu.url}/publishers/${encodeURIComponent(publisherId)}/nodes`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function allSearchIds(query = ''): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const res = await get(`/nodes/search?limit=7&page=${page}${query}`);
    const body = await json<NodePage>(res);
    ids.push(...body.nodes.map((n) => n.id));
    if (page >= body.totalPages) return ids;
  }
}

describe('seed', () => {
  it('is large, varied and deterministic', async () => {
    expect(SEED_FACTS.nodeCount).toBeGreaterThanOrEqual(60);
    expect(SEED_FACTS.publisherIds.length).toBeGreaterThanOrEqual(6);
    expect(SEED_FACTS.bannedNodeIds).toContain(SEED_FACTS.bannedNodeId);
    expect(SEED_FACTS.deletedNodeIds).toContain(SEED_FACTS.deletedNodeId);

    const nodes = [...emu.registry.nodes.values()].map((s) => s.node);
    for (const os of OS_VALUES) expect(nodes.some((n) => n.supported_os?.includes(os)), os).toBe(true);
    for (const a of ACCELERATOR_VALUES) expect(nodes.some((n) => n.supported_accelerators?.includes(a)), a).toBe(true);
    for (const n of nodes) {
      expect(n.latest_version?.version).toMatch(/^\d+\.\d+\.\d+$/);
      expect(n.latest_version?.node_id).toBe(n.id);
      expect(n.repository).toMatch(/^https:\/\/github\.com\/[^/]+\/[^/]+$/);
      expect(Number.isNaN(Date.parse(n.created_at ?? ''))).toBe(false);
    }

    const other = await startEmulator();
    try {
      expect(await (await fetch(`${other.url}/nodes/search?limit=100`)).json()).toEqual(
        await (await get('/nodes/search?limit=100')).json(),
      );
    } finally {
      await other.close();
    }
  });

  it('can start empty', async () => {
    const empty = await startEmulator({ seed: false });
    try {
      expect(await (await fetch(`${empty.url}/publishers`)).json()).toEqual([]);
      expect(await (await fetch(`${empty.url}/nodes/search`)).json()).toEqual({ limit: 10, nodes: [], page: 1, total: 0, totalPages: 0 });
    } finally {
      await empty.close();
    }
  });
});

describe('GET /nodes/search', () => {
  it('defaults to page 1, limit 10, active nodes only, ranking order', async () => {
    const res = await get('/nodes/search');
    expect(res.status).toBe(200);
    const body = await json<NodePage>(res);
    expect(body).toMatchObject({ page: 1, limit: 10, total: SEED_FACTS.searchableCount });
    expect(body.totalPages).toBe(Math.ceil(SEED_FACTS.searchableCount / 10));
    expect(body.nodes).toHaveLength(10);
    const ranks = body.nodes.map((n) => n.search_ranking ?? 0);
    expect([...ranks].sort((a, b) => b - a)).toEqual(ranks);
    for (const n of body.nodes) {
      expect(n.status).toBe('NodeStatusActive');
      expect(n.publisher?.id).toBeTruthy();
      expect(n.publisher?.status).toBeTruthy();
    }
  });

  it('pages through every searchable node exactly once', async () => {
    const ids = await allSearchIds();
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual([...SEED_FACTS.activeNodeIds].sort());
  });

  it('include_banned adds banned nodes; deleted nodes never appear', async () => {
    const ids = await allSearchIds('&include_banned=true');
    expect(ids).toHaveLength(SEED_FACTS.searchableWithBannedCount);
    expect(ids).toContain(SEED_FACTS.bannedNodeId);
    expect(ids).not.toContain(SEED_FACTS.deletedNodeId);
    expect(await allSearchIds('&include_banned=false')).not.toContain(SEED_FACTS.bannedNodeId);
  });

  it('caps limit at 100 and answers an empty page past the end', async () => {
    const capped = await json<NodePage>(await get('/nodes/search?limit=1000'));
    expect(capped.limit).toBe(MAX_PAGE_SIZE);
    expect(capped.nodes).toHaveLength(SEED_FACTS.searchableCount);
    const past = await json<NodePage>(await get('/nodes/search?page=99'));
    expect(past).toMatchObject({ page: 99, nodes: [], total: SEED_FACTS.searchableCount });
  });

  it.each(['page=0', 'page=-1', 'page=1.5', 'page=abc', 'limit=0', 'limit=x', 'include_banned=yes'])('400 on %s', async (q) => {
    await expectError(await get(`/nodes/search?${q}`), 400, q.split('=')[0]);
  });

  it('search is a case-insensitive keyword match over id, name, description, author', async () => {
    const byName = await json<NodePage>(await get('/nodes/search?search=ULTRASHARP'));
    expect(byName.nodes.map((n) => n.id)).toEqual(['pixelforge-ultrasharp-upscale']);
    const byDescription = await json<NodePage>(await get('/nodes/search?search=codeformer'));
    expect(byDescription.nodes.map((n) => n.id)).toEqual(['pixelforge-face-restore']);
    const byAuthor = await json<NodePage>(await get(`/nodes/search?search=${encodeURIComponent('marta kowalska')}&limit=100`));
    expect(byAuthor.total).toBe(7); // nodesmith's 8 nodes minus the deleted one
  });

  it('repository_url_search and platform_node_search', async () => {
    const repo = await json<NodePage>(await get('/nodes/search?repository_url_search=github.com/lumen-labs&limit=100'));
    expect(repo.total).toBe(8);
    expect(repo.nodes.every((n) => n.repository?.startsWith('https://github.com/lumen-labs/'))).toBe(true);
    const name = await json<NodePage>(await get('/nodes/search?platform_node_search=Relight'));
    expect(name.nodes.map((n) => n.id)).toEqual(['lumen-labs-relight']);
  });

  it('supported_os matches a whole element, case-insensitively', async () => {
    const all = [...emu.registry.nodes.values()].map((s) => s.node).filter((n) => n.status === 'NodeStatusActive');
    for (const os of OS_VALUES) {
      const page = await json<NodePage>(await get(`/nodes/search?limit=100&supported_os=${encodeURIComponent(os.toLowerCase())}`));
      expect(page.total, os).toBe(all.filter((n) => n.supported_os?.includes(os)).length);
      expect(page.nodes.every((n) => n.supported_os?.includes(os))).toBe(true);
    }
    const partial = await json<NodePage>(await get(`/nodes/search?supported_os=${encodeURIComponent('POSIX')}`));
    expect(partial.total).toBe(0);
  });

  it('supported_accelerator filters', async () => {
    const page = await json<NodePage>(await get('/nodes/search?limit=100&supported_accelerator=rocm'));
    expect(page.total).toBeGreaterThan(0);
    expect(page.nodes.every((n) => n.supported_accelerators?.includes('ROCm'))).toBe(true);
  });

  it('is recorded without credentials when none are sent', async () => {
    await get('/nodes/search?search=x');
    const [entry] = emu.requests;
    expect(entry).toMatchObject({ method: 'GET', path: '/nodes/search', url: '/nodes/search?search=x' });
    expect(entry?.headers.authorization).toBeUndefined();
  });
});

describe('POST /publishers/:publisherId/nodes', () => {
  const body = {
    id: 'my-new-node',
    name: 'My New Node',
    description: 'Created in a test',
    tags: ['test'],
    supported_os: ['OS Independent'],
    latest_version: { version: '0.1.0', dependencies: ['numpy'] },
    publisher: { id: 'pixelforge' },
  };

  it('creates the node: 200, active, with version and stored publisher', async () => {
    const before = Date.now();
    const res = await createNode('pixelforge', body);
    const after = Date.now();
    expect(res.status).toBe(200);
    const node = await json<Node>(res);
    expect(node).toMatchObject({ id: 'my-new-node', name: 'My New Node', status: 'NodeStatusActive' });
    // Created by this request: stamped between its start and its answer (an order, however long it took).
    expect(Date.parse(node.created_at ?? '')).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(Date.parse(node.created_at ?? '')).toBeLessThanOrEqual(after);
    expect(node.latest_version).toMatchObject({ version: '0.1.0', node_id: 'my-new-node', status: 'NodeVersionStatusActive', dependencies: ['numpy'] });
    expect(node.latest_version?.downloadUrl).toMatch(/^https:\/\//);
    expect(node.publisher).toMatchObject({ id: 'pixelforge', name: 'PixelForge Studio', status: 'PublisherStatusActive' });

    const found = await json<NodePage>(await get('/nodes/search?search=my-new-node'));
    expect(found.nodes.map((n) => n.id)).toEqual(['my-new-node']);
  });

  it('keeps a given node status', async () => {
    const node = await json<Node>(await createNode('pixelforge', { id: 'banned-on-arrival', status: 'NodeStatusBanned' }));
    expect(node.status).toBe('NodeStatusBanned');
    expect(node.latest_version?.status).toBe('NodeVersionStatusActive');
  });

  it('401 without or with an unknown token', async () => {
    await expectError(await createNode('pixelforge', body, {}), 401);
    const res = await createNode('pixelforge', body, auth('nope'));
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    await expectError(res, 401);
    await expectError(await createNode('pixelforge', body, { Authorization: EMULATOR_TOKEN }), 401);
  });

  it('403 for a token of another publisher, 404 for an absent publisher', async () => {
    await expectError(await createNode('pixelforge', body, auth('nodesmith-token')), 403);
    expect((await createNode('pixelforge', body, auth('pixelforge-token'))).status).toBe(200);
    await expectError(await createNode('no-such-publisher', { id: 'x' }), 404);
  });

  it('403 under a banned publisher', async () => {
    await expectError(await createNode(SEED_FACTS.bannedPublisherId, { id: 'fresh-node' }), 403, /banned/);
  });

  it('409 on a duplicate id', async () => {
    await expectError(await createNode('nodesmith', { id: 'pixelforge-face-restore' }), 409);
  });

  it.each<[string, unknown]>([
    ['body', []],
    ['body', 'text'],
    ['id', { name: 'no id' }],
    ['id', { id: 42 }],
    ['id', { id: 'has space' }],
    ['id', { id: '-leading' }],
    ['name', { id: 'ok', name: 1 }],
    ['downloads', { id: 'ok', downloads: 1.5 }],
    ['rating', { id: 'ok', rating: '5' }],
    ['tags', { id: 'ok', tags: ['a', 1] }],
    ['status', { id: 'ok', status: 'Active' }],
    ['latest_version.status', { id: 'ok', latest_version: { version: '1.0.0', status: 'NodeVersionStatusActive' } }],
    ['latest_version.version', { id: 'ok', latest_version: { version: 'one' } }],
    ['latest_version.deprecated', { id: 'ok', latest_version: { deprecated: 'no' } }],
    ['publisher.status', { id: 'ok', publisher: { status: 'PublisherStatusActive' } }],
    ['publisher.id', { id: 'ok', publisher: { id: 'nodesmith' } }],
  ])('400 naming %s', async (field, payload) => {
    await expectError(await createNode('pixelforge', payload), 400, field);
  });

  it('400 on malformed JSON, 415 on a non-JSON body, 413 beyond 1 MiB', async () => {
    const post = (b: string, type: string) =>
      fetch(`${emu.url}/publishers/pixelforge/nodes`, { method: 'POST', headers: { ...auth(), 'Content-Type': type }, body: b });
    await expectError(await post('{"id":', 'application/json'), 400);
    await expectError(await post('id=x', 'application/x-www-form-urlencoded'), 415);
    await expectError(await post(JSON.stringify({ id: 'big', description: 'x'.repeat(1_100_000) }), 'application/json'), 413);
  });
});

describe('GET /publishers/:publisherId/nodes/v2', () => {
  it('lists the publisher nodes, paginated, ignoring unknown parameters', async () => {
    const res = await get('/publishers/pixelforge/nodes/v2?page=2&limit=3&unknown=1', auth());
    const body = await json<NodePage>(res);
    expect(body).toMatchObject({ page: 2, limit: 3, total: 7, totalPages: 3 });
    expect(body.nodes).toHaveLength(3);
    expect(body.nodes.every((n) => n.publisher?.id === 'pixelforge')).toBe(true);
  });

  it('include_banned', async () => {
    const without = await json<NodePage>(await get('/publishers/kinetic-ai/nodes/v2', auth()));
    const withBanned = await json<NodePage>(await get('/publishers/kinetic-ai/nodes/v2?include_banned=true', auth()));
    expect(withBanned.total).toBe(without.total + 1);
    expect(withBanned.nodes.map((n) => n.id)).toContain('kinetic-lip-sync');
  });

  it('401 / 403 / 404 / 400', async () => {
    await expectError(await get('/publishers/pixelforge/nodes/v2'), 401);
    await expectError(await get('/publishers/pixelforge/nodes/v2', auth('lumen-labs-token')), 403);
    await expectError(await get('/publishers/ghost/nodes/v2', auth()), 404);
    await expectError(await get('/publishers/pixelforge/nodes/v2?limit=0', auth()), 400, 'limit');
  });
});

describe('DELETE /publishers/:publisherId and GET /publishers', () => {
  it('lists publishers without credentials, members included', async () => {
    const list = await json<Publisher[]>(await get('/publishers'));
    expect(list.map((p) => p.id)).toEqual([...SEED_FACTS.publisherIds].sort());
    const banned = list.find((p) => p.id === SEED_FACTS.bannedPublisherId);
    expect(banned?.status).toBe('PublisherStatusBanned');
    expect(list[0]?.members?.[0]).toMatchObject({ id: expect.any(String), role: expect.any(String), user: { id: expect.any(String), name: expect.any(String), email: expect.stringContaining('@') } });
    // Any Authorization header is ignored, even a bogus one.
    expect((await get('/publishers', auth('bogus'))).status).toBe(200);
  });

  it('204, then the publisher is gone and its nodes are deleted', async () => {
    const del = () => fetch(`${emu.url}/publishers/lumen-labs`, { method: 'DELETE', headers: auth() });
    const res = await del();
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    const list = await json<Publisher[]>(await get('/publishers'));
    expect(list.map((p) => p.id)).not.toContain('lumen-labs');
    expect((await json<NodePage>(await get('/nodes/search?repository_url_search=lumen-labs'))).total).toBe(0);
    expect(emu.registry.getNode('lumen-labs-relight')?.status).toBe('NodeStatusDeleted');
    await expectError(await del(), 404);
  });

  it('401 / 403', async () => {
    await expectError(await fetch(`${emu.url}/publishers/pixelforge`, { method: 'DELETE' }), 401);
    await expectError(await fetch(`${emu.url}/publishers/pixelforge`, { method: 'DELETE', headers: auth('deepgrain-token') }), 403);
  });
});

describe('path parameters', () => {
  it('decodes an encoded publisher id once, as a single segment', async () => {
    const id = 'we/ird?id%25';
    emu.registry.addPublisher({ id, name: 'Weird' });
    const encoded = encodeURIComponent(id);
    expect(encoded).toBe('we%2Fird%3Fid%2525');
    expect((await createNode(id, { id: 'weird-node' })).status).toBe(200);
    const page = await json<NodePage>(await get(`/publishers/${encoded}/nodes/v2`, auth()));
    expect(page.nodes.map((n) => n.id)).toEqual(['weird-node']);
    expect(page.nodes[0]?.publisher?.id).toBe(id);
    // Unencoded, the same characters change the path: no such route or publisher.
    await expectError(await get(`/publishers/we/ird/nodes/v2`, auth()), 404);
    await expectError(await get('/publishers/%ZZ/nodes/v2', auth()), 400);
  });
});

describe('router', () => {
  it('404 for an unknown route, 405 with Allow for a wrong method', async () => {
    await expectError(await get('/nope'), 404);
    const res = await fetch(`${emu.url}/nodes/search`, { method: 'PUT' });
    expect(res.headers.get('allow')).toContain('GET');
    await expectError(res, 405);
  });

  it('CORS on responses and preflight', async () => {
    const res = await get('/nodes/search', { Origin: 'http://localhost:5173' });
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(res.headers.get('access-control-expose-headers')).toMatch(/Retry-After/);
    const pre = await fetch(`${emu.url}/publishers/pixelforge/nodes`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost:5173', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type,x-trace' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/x-trace/);
    const err = await get('/nope');
    expect(err.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('bounds the request log at 1000', async () => {
    await Promise.all(Array.from({ length: 1005 }, (_, i) => get(`/publishers?i=${i}`).then((r) => r.arrayBuffer())));
    expect(emu.requests).toHaveLength(1000);
  });
});

describe('faults', () => {
  it('next() answers the next matching request once, per route', async () => {
    emu.faults.next(500, { path: '/publishers/:publisherId/nodes/v2' }).next(429, { retryAfter: 7, body: { error: 'slow_down', message: 'later' } });
    const first = await get('/nodes/search');
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('7');
    expect(await first.json()).toEqual({ error: 'slow_down', message: 'later' });
    expect((await get('/nodes/search')).status).toBe(200);
    await expectError(await get('/publishers/nodesmith/nodes/v2', auth()), 500);
    expect((await get('/publishers/nodesmith/nodes/v2', auth())).status).toBe(200);
  });

  it('next() can send a non-JSON body', async () => {
    emu.faults.next(502, { body: '<html>Bad gateway</html>', contentType: 'text/html' });
    const res = await get('/publishers');
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toBe('text/html');
    expect(await res.text()).toContain('Bad gateway');
  });

  it('status5xx with a count answers 503 + Retry-After that many times', async () => {
    emu.faults.status5xx = { count: 2 };
    for (let i = 0; i < 2; i++) {
      const res = await get('/nodes/search');
      expect(res.headers.get('retry-after')).toBe('1');
      await expectError(res, 503);
    }
    expect((await get('/nodes/search')).status).toBe(200);
    expect(emu.faults.status5xx).toBeNull();
  });

  it('status5xx with a probability is seeded and partial', async () => {
    emu.faults.status5xx = { probability: 0.5, path: '/publishers' };
    const statuses = await Promise.all(Array.from({ length: 40 }, () => get('/publishers').then((r) => r.status)));
    const failed = statuses.filter((s) => s === 503).length;
    expect(failed).toBeGreaterThan(5);
    expect(failed).toBeLessThan(35);
    expect((await get('/nodes/search')).status).toBe(200);
  });

  it('latencyMs delays responses', async () => {
    emu.faults.latencyMs = 150;
    const timers = recordFiredTimers('emulator/');
    await get('/publishers').finally(timers.restore);
    // The delay the emulator waited before answering, not a clock's reading.
    expect(timers.fired).toEqual([150]);
  });

  it('dropNext() closes the connection without a response', async () => {
    emu.faults.dropNext({ path: '/publishers' });
    await expect(get('/publishers')).rejects.toThrow();
    expect((await get('/publishers')).status).toBe(200);
  });

  it('preflights are never faulted', async () => {
    emu.faults.next(500);
    expect((await fetch(`${emu.url}/nodes/search`, { method: 'OPTIONS' })).status).toBe(204);
    expect((await get('/nodes/search')).status).toBe(500);
  });
});

describe('lifecycle', () => {
  it('close() resolves while a client holds a keep-alive connection', async () => {
    const other = await startEmulator({ latencyMs: 0 });
    // The connection would stay open for an hour: a close() that waited for it would not resolve in this test.
    other.server.keepAliveTimeout = 3_600_000;
    const agent = new Agent({ keepAlive: true });
    await new Promise<void>((resolve, reject) => {
      httpRequest(`${other.url}/publishers`, { agent }, (res) => {
        res.resume();
        res.on('end', resolve);
      })
        .on('error', reject)
        .end();
    });
    await other.close();
    expect(other.server.listening).toBe(false);
    agent.destroy();
  });
});

// ---------------------------------------------------------------------------
// Issue 15: node, versions, install, node classes, /nodes, bulk, publish.

type Version = { id?: string; version?: string; status?: string; status_reason?: string; deprecated?: boolean; dependencies?: string[] | null; downloadUrl?: string; node_id?: string };

const MATH = SEED_FACTS.prereleaseNodeId;

describe('GET /nodes/:nodeId', () => {
  it('answers the node without credentials and without side effects', async () => {
    const before = emu.registry.getNode(MATH)!.downloads;
    const res = await get(`/nodes/${MATH}`);
    expect(res.status).toBe(200);
    const node = await json<Node>(res);
    expect(node.id).toBe(MATH);
    expect(node.latest_version?.version).toBe('1.10.0');
    expect(node.publisher?.id).toBe('nodesmith');
    expect(node.downloads).toBe(before);
    expect(emu.registry.getNode(MATH)!.downloads).toBe(before);
    expect(emu.registry.installs).toEqual([]);
  });

  it('302 to the stored id when the case differs', async () => {
    const res = await fetch(`${emu.url}/nodes/${MATH.toUpperCase()}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`/nodes/${MATH}`);
    const followed = await fetch(`${emu.url}/nodes/${MATH.toUpperCase()}`);
    expect(followed.status).toBe(200);
    expect((await followed.json()).id).toBe(MATH);
  });

  it('403 {"message":"Node Banned"} for a banned node, ErrorResponse 404 for an unknown one', async () => {
    const res = await get(`/nodes/${SEED_FACTS.bannedNodeId}`);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ message: 'Node Banned' });
    await expectError(await get('/nodes/no-such-node'), 404);
  });

  it('does not shadow /nodes/search', async () => {
    expect((await json<NodePage>(await get('/nodes/search'))).page).toBe(1);
  });
});

describe('GET /nodes/:nodeId/versions', () => {
  it('a bare array, not in semver order, latest_version among them', async () => {
    const res = await get(`/nodes/${MATH}/versions`);
    expect(res.status).toBe(200);
    const list = await json<Version[]>(res);
    expect(Array.isArray(list)).toBe(true);
    expect(list.map((v) => v.version)).toEqual(['1.8.2', '1.10.0-beta.1', '1.9.0', 'nightly', '1.10.0', '2.0.0-rc.1']);
    const latest = emu.registry.getNode(MATH)!.latest_version!;
    expect(list.find((v) => v.version === '1.10.0')?.id).toBe(latest.id);
    expect(list.find((v) => v.version === '1.8.2')).toMatchObject({ deprecated: true, dependencies: null });
    expect(list.find((v) => v.version === 'nightly')?.downloadUrl).toBe('');
    expect(list.find((v) => v.version === '2.0.0-rc.1')?.status).toBe('NodeVersionStatusPending');
    for (const v of list) expect(v).not.toHaveProperty('status_reason');
  });

  it('every seeded node has several versions, one equal to latest_version', async () => {
    for (const stored of emu.registry.nodes.values()) {
      const list = emu.registry.versions.get(stored.node.id)!;
      expect(list.length, stored.node.id).toBeGreaterThanOrEqual(2);
      expect(list.filter((v) => v.id === stored.node.latest_version?.id && v.version === stored.node.latest_version?.version)).toHaveLength(1);
    }
  });

  it('filters by repeated statuses keys; include_status_reason adds status_reason', async () => {
    const pending = await json<Version[]>(await get(`/nodes/${MATH}/versions?statuses=NodeVersionStatusPending`));
    expect(pending.map((v) => v.version)).toEqual(['2.0.0-rc.1']);
    const both = await json<Version[]>(await get(`/nodes/${MATH}/versions?statuses=NodeVersionStatusActive&statuses=NodeVersionStatusPending&include_status_reason=true`));
    expect(both).toHaveLength(6);
    for (const v of both) expect(typeof v.status_reason).toBe('string');
    expect(both.find((v) => v.version === '2.0.0-rc.1')?.status_reason).toBe('Awaiting security scan');
    expect(await json<Version[]>(await get(`/nodes/${MATH}/versions?statuses=NodeVersionStatusFlagged`))).toEqual([]);
    await expectError(await get('/nodes/no-such-node/versions'), 404);
  });

  it('GET one version by its version string; 404 when absent', async () => {
    const v = await json<Version>(await get(`/nodes/${MATH}/versions/1.10.0-beta.1`));
    expect(v).toMatchObject({ version: '1.10.0-beta.1', node_id: MATH });
    expect((await json<Version>(await get(`/nodes/${MATH}/versions/nightly`))).version).toBe('nightly');
    await expectError(await get(`/nodes/${MATH}/versions/9.9.9`), 404);
    const uuid = emu.registry.getNode(MATH)!.latest_version!.id!;
    await expectError(await get(`/nodes/${MATH}/versions/${uuid}`), 404);
  });
});

describe('GET /nodes/:nodeId/install', () => {
  it('returns the version and counts one download per call; reads never do', async () => {
    const before = emu.registry.getNode(MATH)!.downloads!;
    await get(`/nodes/${MATH}`);
    await get(`/nodes/${MATH}/versions`);
    await get(`/nodes/${MATH}/versions/1.9.0`);
    await get(`/nodes?node_id=${MATH}`);
    await get('/platform-nodes/MathExpression/node');
    expect(emu.registry.getNode(MATH)!.downloads).toBe(before);

    const latest = await json<Version>(await get(`/nodes/${MATH}/install`));
    expect(latest.version).toBe('1.10.0');
    const pinned = await json<Version>(await get(`/nodes/${MATH}/install?version=1.9.0`));
    expect(pinned.version).toBe('1.9.0');
    expect(emu.registry.getNode(MATH)!.downloads).toBe(before + 2);
    expect((await json<Node>(await get(`/nodes/${MATH}`))).downloads).toBe(before + 2);
    expect(emu.registry.installs.map((i) => [i.nodeId, i.version])).toEqual([[MATH, '1.10.0'], [MATH, '1.9.0']]);

    await expectError(await get(`/nodes/${MATH}/install?version=9.9.9`), 404);
    expect(emu.registry.installs).toHaveLength(2);
  });
});

describe('GET /platform-nodes/:className/node', () => {
  const pack = (className: string) => get(`/platform-nodes/${encodeURIComponent(className)}/node`);

  it('a preempting pack wins over a better search_ranking', async () => {
    const { className, winner, loser } = SEED_FACTS.classes.preempted;
    const w = emu.registry.getNode(winner)!;
    const l = emu.registry.getNode(loser)!;
    expect(w.preempted_platform_node_names).toContain(className);
    expect(w.search_ranking!).toBeGreaterThan(l.search_ranking!);
    expect(emu.registry.classes.get(className)?.sort()).toEqual([winner, loser].sort());
    expect((await json<Node>(await pack(className))).id).toBe(winner);
  });

  it('without preemption, the lower search_ranking wins', async () => {
    const { className, winner } = SEED_FACTS.classes.byRanking;
    expect((await json<Node>(await pack(className))).id).toBe(winner);
  });

  it('decodes class names with spaces, parentheses, + and |', async () => {
    for (const [className, id] of Object.entries({ ...SEED_FACTS.classes.special, ...SEED_FACTS.classes.workflow })) {
      const res = await pack(className);
      expect(res.status, className).toBe(200);
      expect((await json<Node>(res)).id, className).toBe(id);
    }
    // '+' in a path is a literal plus, never a space.
    expect(emu.requests.some((r) => r.path.includes('%2B'))).toBe(true);
  });

  it('404 for an unknown class and for a class only a banned pack provides', async () => {
    await expectError(await pack('NoSuchClass'), 404);
    await expectError(await pack(SEED_FACTS.classes.bannedOnly), 404);
  });
});

describe('GET /nodes', () => {
  it('paginates like search, limit 10 by default', async () => {
    const body = await json<NodePage>(await get('/nodes'));
    expect(body).toMatchObject({ page: 1, limit: 10, total: SEED_FACTS.searchableCount });
    expect(body.nodes).toHaveLength(10);
  });

  it('node_id as repeated keys; the default limit applies to id filters too', async () => {
    const ids = SEED_FACTS.activeNodeIds.slice(0, 12);
    const qs = ids.map((id) => `node_id=${encodeURIComponent(id)}`).join('&');
    const first = await json<NodePage>(await get(`/nodes?${qs}`));
    expect(first).toMatchObject({ total: 12, limit: 10, totalPages: 2 });
    expect(first.nodes).toHaveLength(10);
    const all = await json<NodePage>(await get(`/nodes?${qs}&limit=12&latest=true&timestamp=2024-01-01T00:00:00Z&platformui_version=0.3.0&form_factor=desktop`));
    expect(all.nodes.map((n) => n.id).sort()).toEqual([...ids].sort());
    const withBanned = await json<NodePage>(await get(`/nodes?node_id=${SEED_FACTS.bannedNodeId}&node_id=no-such-node`));
    expect(withBanned.total).toBe(0);
    expect((await json<NodePage>(await get(`/nodes?node_id=${SEED_FACTS.bannedNodeId}&include_banned=true`))).total).toBe(1);
  });

  it('sort field;desc, repeated', async () => {
    const body = await json<NodePage>(await get('/nodes?sort=downloads;desc&sort=id&limit=20'));
    const downloads = body.nodes.map((n) => n.downloads ?? 0);
    expect([...downloads].sort((a, b) => b - a)).toEqual(downloads);
    const os = await json<NodePage>(await get(`/nodes?supported_os=${encodeURIComponent('MacOS')}&limit=100`));
    expect(os.nodes.length).toBeGreaterThan(0);
    for (const n of os.nodes) expect(n.supported_os?.map((s) => s.toLowerCase())).toContain('macos');
  });
});

describe('POST /bulk/nodes/versions', () => {
  it('answers per item, in order', async () => {
    const res = await fetch(`${emu.url}/bulk/nodes/versions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        node_versions: [
          { node_id: MATH, version: '1.9.0' },
          { node_id: MATH, version: '9.9.9' },
          { node_id: 'no-such-node', version: '1.0.0' },
          { node_id: MATH },
        ],
      }),
    });
    expect(res.status).toBe(200);
    const body = await json<{ node_versions: Array<Record<string, unknown>> }>(res);
    expect(body.node_versions.map((r) => r.status)).toEqual(['success', 'not_found', 'not_found', 'error']);
    expect(body.node_versions[0]).toMatchObject({ node_version: { version: '1.9.0', node_id: MATH }, identifier: { node_id: MATH, version: '1.9.0' } });
    expect(body.node_versions[1]?.identifier).toEqual({ node_id: MATH, version: '9.9.9' });
    expect(typeof body.node_versions[3]?.error_message).toBe('string');
    const bad = await fetch(`${emu.url}/bulk/nodes/versions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    await expectError(bad, 400);
  });
});

describe('POST /publishers/:publisherId/nodes/:nodeId/versions and the signed upload', () => {
  const publish = (publisherId: string, nodeId: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${emu.url}/publishers/${encodeURIComponent(publisherId)}/nodes/${encodeURIComponent(nodeId)}/versions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const body = (version: string, token = 'pat-nodesmith') => ({ personal_access_token: token, node: { id: MATH }, node_version: { version, changelog: 'New', dependencies: ['numpy'] } });

  it('creates a pending version, signs an upload on a second origin that refuses credentials', async () => {
    const res = await publish('nodesmith', MATH, body('2.0.0'));
    expect(res.status).toBe(201);
    const created = await json<{ signedUrl: string; node_version: Version }>(res);
    expect(created.node_version).toMatchObject({ version: '2.0.0', status: 'NodeVersionStatusPending', node_id: MATH });
    expect(created.signedUrl.startsWith(emu.resultsUrl + '/registry-uploads/')).toBe(true);
    expect(new URL(created.signedUrl).origin).not.toBe(new URL(emu.url).origin);
    // The latest release does not move to a pending version.
    expect(emu.registry.getNode(MATH)!.latest_version?.version).toBe('1.10.0');

    const archive = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 1, 2, 3, 4]);
    const credentials: Record<string, string>[] = [{ Authorization: `Bearer ${EMULATOR_TOKEN}` }, { 'X-API-Key': 'k' }, { Cookie: 'a=b' }];
    for (const headers of credentials) {
      const refused = await fetch(created.signedUrl, { method: 'PUT', headers: { 'Content-Type': 'application/zip', ...headers }, body: archive });
      expect([401, 403]).toContain(refused.status);
    }
    const slot = [...emu.registry.uploads.values()][0]!;
    expect(slot.size).toBeUndefined();

    const put = await fetch(created.signedUrl, { method: 'PUT', headers: { 'Content-Type': 'application/zip' }, body: archive });
    expect(put.status).toBe(200);
    const { createHash } = await import('node:crypto');
    expect(slot.size).toBe(archive.length);
    expect(slot.sha256).toBe(createHash('sha256').update(archive).digest('hex'));

    const v = await json<Version>(await get(`/nodes/${MATH}/versions/2.0.0`));
    expect(v.downloadUrl?.startsWith(emu.url + '/')).toBe(true);
    const dl = await fetch(v.downloadUrl!);
    expect(dl.status).toBe(200);
    expect(new Uint8Array(await dl.arrayBuffer())).toEqual(archive);
  });

  it('refuses an upload that is not application/zip, and an unknown signature', async () => {
    const created = await json<{ signedUrl: string }>(await publish('nodesmith', MATH, body('2.0.1', 'emulator-pat')));
    expect((await fetch(created.signedUrl, { method: 'PUT', headers: { 'Content-Type': 'application/octet-stream' }, body: 'x' })).status).toBe(400);
    expect((await fetch(`${emu.resultsUrl}/registry-uploads/${MATH}/2.0.1/node.zip?X-Goog-Signature=nope`, { method: 'PUT', headers: { 'Content-Type': 'application/zip' }, body: 'x' })).status).toBe(403);
    // A signature is good for its own node and version only.
    const elsewhere = created.signedUrl.replace('/2.0.1/', '/2.0.2/');
    expect((await fetch(elsewhere, { method: 'PUT', headers: { 'Content-Type': 'application/zip' }, body: 'x' })).status).toBe(403);
  });

  it('400 {"message"} for an unknown token, 400 duplicate, 403 banned / other publisher, 404 unknown', async () => {
    const invalid = await publish('nodesmith', MATH, body('3.0.0', 'pat-wrong'));
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({ message: 'Invalid personal access token' });
    // A Bearer header is no substitute for the token in the body.
    const bearerOnly = await publish('nodesmith', MATH, { node_version: { version: '3.0.0' } }, auth());
    expect(bearerOnly.status).toBe(400);
    await expectError(await publish('nodesmith', MATH, body('1.10.0')), 400, /exists/);
    await expectError(await publish('nodesmith', MATH, body('not-semver')), 400);
    await expectError(await publish('nodesmith', MATH, body('3.0.0', 'pat-pixelforge')), 403);
    await expectError(await publish('shadowbyte', 'shadowbyte-turbo-sampler', body('9.0.0', 'pat-shadowbyte')), 403, /banned/);
    await expectError(await publish('nodesmith', 'no-such-node', body('3.0.0')), 404);
    await expectError(await publish('nobody', MATH, body('3.0.0', 'emulator-pat')), 404);
    expect(emu.registry.versions.get(MATH)?.some((v) => v.version === '3.0.0')).toBe(false);
  });
});
