// RegistryClient's methods beyond the spec's five (issue 15) against the emulator over real
// loopback HTTP: what the client puts on the wire (recorded by the emulator) and what it makes
// of the emulator's seeded answers. Raw emulator routes are checked in test/emulator/registry.int.test.ts,
// the client's parsing against mocks in test/registry/client-reads.test.ts.
import { afterAll, beforeAll, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import {
  APIError,
  BadRequestError,
  CloudClient,
  InvalidArgumentError,
  NodeVersionUploadError,
  NotFoundError,
  PermissionDeniedError,
  RegistryClient,
  type BulkNodeVersionResult,
  type NodeVersion,
} from '../../src/index.ts';
import { EMULATOR_API_KEY, EMULATOR_PAT, EMULATOR_TOKEN, SEED_FACTS, startEmulator, type Emulator, type RecordedRequest } from '../../src/emulator/index.ts';

const MATH = SEED_FACTS.prereleaseNodeId; // nodesmith-math-expr
const PUBLISH_ROUTE = '/publishers/:publisherId/nodes/:nodeId/versions';

let emu: Emulator;
let registry: RegistryClient;
let objectInfo: Record<string, unknown>;

// Retries on, so that "never retried" can fail; a token configured, so that "no token on reads" can fail.
const newRegistry = (extra: ConstructorParameters<typeof RegistryClient>[0] = {}) =>
  new RegistryClient({ baseUrl: emu.url, token: EMULATOR_TOKEN, retry: { limit: 2, backoffLimit: 20 }, logLevel: 'error', ...extra });

beforeAll(async () => {
  emu = await startEmulator();
  objectInfo = (await new CloudClient({ baseUrl: emu.url, apiKey: EMULATOR_API_KEY }).getObjectInfo()) as Record<string, unknown>;
});
afterAll(() => emu.close());
beforeEach(() => {
  emu.registry.reset();
  emu.faults.reset();
  emu.proxy.reset();
  emu.requests.length = 0;
  registry = newRegistry();
});

/** Requests the emulator received whose raw path starts with `prefix` (optionally of one method). */
const sent = (prefix: string, method?: string): RecordedRequest[] => emu.requests.filter((r) => r.path.startsWith(prefix) && (!method || r.method === method));
/** The raw query string of a recorded request, parsed. */
const queryOf = (r: RecordedRequest) => new URLSearchParams(r.url.includes('?') ? r.url.slice(r.url.indexOf('?') + 1) : '');
/** The rejection of a promise (fails the test if it resolves). */
async function rejection(p: PromiseLike<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}
/** A seeded node as the emulator stores it (the ground truth, read without HTTP). */
const stored = (id: string) => {
  const n = emu.registry.getNode(id);
  if (!n) throw new Error(`no seeded node ${id}`);
  return n;
};

// getNode: one node by id, a case-insensitive id followed through the 302, banned and unknown
// ids mapped to their error classes, and never the client's token.
describe('getNode', () => {
  it('reads a node by id, without the configured token', async () => {
    const node = await registry.getNode(MATH);
    expect(node.id).toBe(MATH);
    expect(node.name).toBe(stored(MATH).name);
    expect(node.latest_version?.version).toBe('1.10.0');
    expect(node.publisher?.id).toBe('nodesmith');
    expect(sent('/nodes/').map((r) => r.path)).toEqual([`/nodes/${MATH}`]);
    expect(emu.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('follows the 302 of an id given in another case to the canonical node', async () => {
    const node = await registry.getNode(MATH.toUpperCase());
    expect(node.id).toBe(MATH);
    expect(emu.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /nodes/${MATH.toUpperCase()}`, `GET /nodes/${MATH}`]);
    for (const r of emu.requests) expect(r.headers.authorization).toBeUndefined();
  });

  it('a banned node rejects with PermissionDeniedError naming "Node Banned"; an unknown one with NotFoundError', async () => {
    const banned = await rejection(registry.getNode(SEED_FACTS.bannedNodeId));
    expect(banned).toBeInstanceOf(PermissionDeniedError);
    expect(banned.status).toBe(403);
    expect(banned.message).toContain('Node Banned');
    const unknown = await rejection(registry.getNode('nobody-no-such-node'));
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect(unknown.status).toBe(404);
    // Neither is a transient failure: each was asked once.
    expect(emu.requests).toHaveLength(2);
  });
});

// listNodeVersions: the registry answers in creation order; the client sorts by semver
// precedence, sends `statuses` as repeated keys, and regularizes the wire's nulls.
describe('listNodeVersions', () => {
  it('sorts every version newest first by semver, the non-semver one last', async () => {
    const wireOrder = emu.registry.versions.get(MATH)!.map((v) => v.version);
    const versions = await registry.listNodeVersions(MATH);
    const order = versions.map((v) => v.version);
    expect(order).toEqual(['2.0.0-rc.1', '1.10.0', '1.10.0-beta.1', '1.9.0', '1.8.2', 'nightly']);
    expect(order).not.toEqual(wireOrder); // the sorting is the client's, not the emulator's
    expect(versions.find((v) => v.version === '2.0.0-rc.1')?.status).toBe('NodeVersionStatusPending');
    const r = emu.requests[0]!;
    expect(r.path).toBe(`/nodes/${MATH}/versions`);
    expect(r.url).toBe(`/nodes/${MATH}/versions`); // no query when no option is given
    expect(r.headers.authorization).toBeUndefined();
  });

  it('sends statuses as repeated keys and include_status_reason; filters and reasons come back', async () => {
    const plain = await registry.listNodeVersions(MATH, { statuses: ['NodeVersionStatusActive', 'NodeVersionStatusDeprecated'] });
    const raw = emu.requests[0]!.url;
    expect(raw).toContain('statuses=NodeVersionStatusActive&statuses=NodeVersionStatusDeprecated');
    expect(raw).not.toMatch(/statuses=[^&]*(,|%2C)/i);
    expect(queryOf(emu.requests[0]!).getAll('statuses')).toEqual(['NodeVersionStatusActive', 'NodeVersionStatusDeprecated']);
    expect(queryOf(emu.requests[0]!).has('include_status_reason')).toBe(false);
    // The pending 2.0.0-rc.1 is filtered out by the server; the rest keeps semver order.
    expect(plain.map((v) => v.version)).toEqual(['1.10.0', '1.10.0-beta.1', '1.9.0', '1.8.2', 'nightly']);
    expect(plain.every((v) => v.status_reason === undefined)).toBe(true);

    const withReason = await registry.listNodeVersions(MATH, { includeStatusReason: true });
    expect(queryOf(emu.requests[1]!).get('include_status_reason')).toBe('true');
    expect(withReason.find((v) => v.version === '1.8.2')?.status_reason).toBe('Superseded by 1.9.0');
    expect(withReason.find((v) => v.version === '2.0.0-rc.1')?.status_reason).toBe('Awaiting security scan');
  });

  it('a null array reaches the user as []; an empty downloadUrl is kept as the wire gives it', async () => {
    // Ground truth: the emulator serves 1.8.2 with `dependencies: null` and nightly with `downloadUrl: ""`.
    const wire = (await (await fetch(`${emu.url}/nodes/${MATH}/versions`)).json()) as NodeVersion[];
    expect(wire.find((v) => v.version === '1.8.2')?.dependencies).toBeNull();
    expect(wire.find((v) => v.version === 'nightly')?.downloadUrl).toBe('');

    const versions = await registry.listNodeVersions(MATH);
    const old = versions.find((v) => v.version === '1.8.2')!;
    expect(old.dependencies).toEqual([]);
    expect(old.deprecated).toBe(true);
    // NodeVersion.downloadUrl is passed through (only MissingPack documents "" as undefined).
    expect(versions.find((v) => v.version === 'nightly')?.downloadUrl).toBe('');
    expect(versions.find((v) => v.version === '1.9.0')?.downloadUrl).toMatch(/^https:\/\/.+\/1\.9\.0\/node\.zip$/);
  });

  it('rejects an unknown node with NotFoundError', async () => {
    await expect(registry.listNodeVersions('nobody-no-such-node')).rejects.toBeInstanceOf(NotFoundError);
  });
});

// getNodeVersion: one version by its semver string; malformed versions never reach the wire.
describe('getNodeVersion', () => {
  it('reads one version, prerelease included', async () => {
    const v = await registry.getNodeVersion(MATH, '1.10.0-beta.1');
    const truth = emu.registry.versions.get(MATH)!.find((x) => x.version === '1.10.0-beta.1')!;
    expect(v.version).toBe('1.10.0-beta.1');
    expect(v.id).toBe(truth.id);
    expect(v.downloadUrl).toBe(truth.downloadUrl);
    expect(emu.requests.map((r) => r.path)).toEqual([`/nodes/${MATH}/versions/1.10.0-beta.1`]);
    expect(emu.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('an absent version rejects with NotFoundError', async () => {
    const err = await rejection(registry.getNodeVersion(MATH, '9.9.9'));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(emu.requests).toHaveLength(1);
  });

  it.each(['1.2', 'v1.2.3', 'latest'])('refuses the malformed version %j before any request', async (version) => {
    const err = await rejection(registry.getNodeVersion(MATH, version));
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.field).toBe('version');
    expect(emu.requests).toHaveLength(0);
  });
});

// getNodeForClass: class names carry spaces, parentheses, `+` and `|`; they must travel as one
// encoded path segment and resolve to the pack the registry ranks first.
describe('getNodeForClass', () => {
  const expected: Record<string, string> = {
    'Image Sharpen+': SEED_FACTS.classes.byRanking.winner,
    ...SEED_FACTS.classes.special,
    'SAMSegment (Points+Box)': SEED_FACTS.classes.workflow['SAMSegment (Points+Box)'],
  };

  it.each(Object.entries(expected))('encodes %j on the wire and resolves it to %s', async (className, packId) => {
    const pack = await registry.getNodeForClass(className);
    expect(pack?.id).toBe(packId);
    const [r] = emu.requests;
    expect(emu.requests).toHaveLength(1);
    const segment = /^\/platform-nodes\/([^/]+)\/node$/.exec(r!.path)?.[1];
    expect(segment, r!.path).toBeDefined();
    expect(segment).not.toMatch(/[ +|]/); // a raw '+' would read as a space in some stacks
    expect(decodeURIComponent(segment!)).toBe(className);
    expect(r!.headers.authorization).toBeUndefined();
  });

  it("keeps a '/' inside the class name in its one segment", async () => {
    emu.registry.classes.set('Load/Save Math (v2)', [MATH]); // no seeded class holds a '/'
    expect((await registry.getNodeForClass('Load/Save Math (v2)'))?.id).toBe(MATH);
    expect(emu.requests[0]!.path).toBe('/platform-nodes/Load%2FSave%20Math%20(v2)/node');
  });

  it('a class claimed by two packs resolves to the one that preempts it', async () => {
    const { className, winner, loser } = SEED_FACTS.classes.preempted;
    // The loser ranks better by search_ranking: only the preemption makes the winner win.
    expect(stored(loser).search_ranking!).toBeLessThan(stored(winner).search_ranking!);
    expect((await registry.getNodeForClass(className))?.id).toBe(winner);
  });

  it('is null for a class only a banned pack provides, and for a class nobody provides', async () => {
    expect(await registry.getNodeForClass(SEED_FACTS.classes.bannedOnly)).toBeNull();
    expect(await registry.getNodeForClass('NoSuchClassAnywhere')).toBeNull();
    expect(emu.requests).toHaveLength(2);
  });

  it('refuses "." and "..", which URL parsing would resolve into another path, before any request', async () => {
    for (const name of ['.', '..']) await expect(registry.getNodeForClass(name)).rejects.toMatchObject({ name: 'InvalidArgumentError', field: 'className' });
    expect(emu.requests).toEqual([]);
  });
});

// listNodes / getNodes: the registry's default limit of 10 applies to id filters, so the client
// sends limit itself, in batches of at most 50 ids.
describe('listNodes and getNodes', () => {
  it('listNodes with node_id sends repeated node_id keys and limit equal to their number', async () => {
    const ids = SEED_FACTS.activeNodeIds.slice(0, 12);
    const page = await registry.listNodes({ node_id: ids });
    const q = queryOf(emu.requests[0]!);
    expect(q.getAll('node_id')).toEqual(ids);
    expect(q.get('limit')).toBe('12');
    // More than the default 10: the limit is what lets every one come back.
    expect(page.nodes.map((n) => n.id).sort()).toEqual([...ids].sort());
    expect(emu.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('for await walks every page of listNodes', async () => {
    const first = await registry.listNodes({ limit: 7 });
    expect(first.nodes).toHaveLength(7);
    expect(first.total).toBe(SEED_FACTS.searchableCount);
    emu.requests.length = 0;
    const ids: string[] = [];
    for await (const n of registry.listNodes({ limit: 7 })) ids.push(n.id!);
    expect(ids).toHaveLength(SEED_FACTS.searchableCount);
    expect(new Set(ids)).toEqual(new Set(SEED_FACTS.activeNodeIds));
    const pages = sent('/nodes', 'GET').map((r) => queryOf(r).get('page'));
    expect(pages).toEqual(Array.from({ length: Math.ceil(SEED_FACTS.searchableCount / 7) }, (_, i) => String(i + 1)));
  });

  it('getNodes with 120 ids: batches of at most 50, the order asked, each once, unknown ones dropped', async () => {
    const known = [...SEED_FACTS.activeNodeIds].reverse(); // not the server's order
    const unknown = Array.from({ length: 30 }, (_, i) => `ghost-${i}`);
    const asked: string[] = [];
    for (let i = 0; asked.length < 120; i++) asked.push(i % 3 === 2 ? unknown[i % unknown.length]! : known[i % known.length]!);
    asked.splice(5, 0, SEED_FACTS.bannedNodeId); // banned: not listed by /nodes, so dropped too
    asked.length = 120;
    const distinct = [...new Set(asked)];
    expect(distinct.length).toBeGreaterThan(50); // so batching must happen

    const nodes = await registry.getNodes(asked);

    const listed = new Set(SEED_FACTS.activeNodeIds);
    expect(nodes.map((n) => n.id)).toEqual(distinct.filter((id) => listed.has(id)));
    const batches = sent('/nodes', 'GET');
    expect(batches).toHaveLength(Math.ceil(distinct.length / 50));
    const onWire: string[] = [];
    for (const r of batches) {
      const q = queryOf(r);
      const ids = q.getAll('node_id');
      expect(ids.length).toBeLessThanOrEqual(50);
      expect(q.get('limit')).toBe(String(ids.length));
      expect(r.headers.authorization).toBeUndefined();
      onWire.push(...ids);
    }
    expect(onWire).toEqual(distinct); // every id asked once, none twice
  });
});

// bulkNodeVersions: per-item answers, typed as a union discriminated on status.
describe('bulkNodeVersions', () => {
  it('answers success and not_found per item, in order', async () => {
    const results = await registry.bulkNodeVersions([
      { node_id: MATH, version: '1.9.0' },
      { node_id: MATH, version: '7.7.7' },
      { node_id: 'nobody-no-such-node', version: '1.0.0' },
      { node_id: MATH, version: '1.8.2' },
    ]);
    expectTypeOf(results).toEqualTypeOf<BulkNodeVersionResult[]>();
    expect(results.map((r) => [r.status, r.nodeId, r.version])).toEqual([
      ['success', MATH, '1.9.0'],
      ['not_found', MATH, '7.7.7'],
      ['not_found', 'nobody-no-such-node', '1.0.0'],
      ['success', MATH, '1.8.2'],
    ]);
    const [first, , , last] = results;
    if (first?.status !== 'success' || last?.status !== 'success') throw new Error('expected success');
    expectTypeOf(first.nodeVersion).toEqualTypeOf<NodeVersion>();
    expect(first.nodeVersion.id).toBe(emu.registry.versions.get(MATH)!.find((v) => v.version === '1.9.0')!.id);
    expect(last.nodeVersion.dependencies).toEqual([]); // null on the wire
    expect(emu.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /bulk/nodes/versions']);
    expect(emu.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('surfaces an error item with its message', async () => {
    // The client refuses empty ids itself, so an `error` item is planted in a real HTTP answer.
    emu.faults.next(200, {
      path: '/bulk/nodes/versions',
      body: { node_versions: [{ status: 'error', error_message: 'storage unavailable', identifier: { node_id: MATH, version: '1.9.0' } }] },
    });
    const [r] = await registry.bulkNodeVersions([{ node_id: MATH, version: '1.9.0' }]);
    expect(r).toEqual({ status: 'error', nodeId: MATH, version: '1.9.0', errorMessage: 'storage unavailable' });
  });
});

// recordInstall is the only caller of /install, which counts a download: never retried, and no
// read may ever reach it.
describe('recordInstall and /install', () => {
  it('counts one install of the version asked, or of the latest', async () => {
    const before = (await registry.getNode(MATH)).downloads!;
    const v = await registry.recordInstall(MATH, { version: '1.9.0' });
    expect(v.version).toBe('1.9.0');
    const install = sent(`/nodes/${MATH}/install`);
    expect(install).toHaveLength(1);
    expect(queryOf(install[0]!).get('version')).toBe('1.9.0');
    expect(install[0]!.headers.authorization).toBeUndefined();

    const latest = await registry.recordInstall(MATH);
    expect(latest.version).toBe('1.10.0');
    expect(queryOf(sent(`/nodes/${MATH}/install`)[1]!).has('version')).toBe(false);

    expect(emu.registry.installs.map((i) => [i.nodeId, i.version])).toEqual([
      [MATH, '1.9.0'],
      [MATH, '1.10.0'],
    ]);
    expect((await registry.getNode(MATH)).downloads).toBe(before + 2);
  });

  it('is never retried, although reads of the same client are', async () => {
    emu.faults.next(503, { path: '/nodes/:nodeId', retryAfter: 0 });
    await registry.getNode(MATH); // control: this client does retry a read
    expect(sent(`/nodes/${MATH}`)).toHaveLength(2);

    emu.faults.next(503, { path: '/nodes/:nodeId/install', retryAfter: 0 });
    const err = await rejection(registry.recordInstall(MATH, { version: '1.9.0' }));
    expect(err).toBeInstanceOf(APIError);
    expect(err.status).toBe(503);
    expect(sent(`/nodes/${MATH}/install`)).toHaveLength(1);
    expect(emu.registry.installs).toHaveLength(0);
  });

  it.each(['nightly', '1.0.0-beta', '1.2', 'v1.0.0'])('refuses version %j before any request', async (version) => {
    const err = await rejection(registry.recordInstall(MATH, { version }));
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(emu.requests).toHaveLength(0);
    expect(emu.registry.installs).toHaveLength(0);
  });

  it('no read method ever calls /install', async () => {
    const downloads = new Map(SEED_FACTS.activeNodeIds.map((id) => [id, stored(id).downloads]));
    await registry.getNode(MATH);
    await registry.getNode(MATH.toUpperCase());
    await registry.listNodeVersions(MATH, { statuses: ['NodeVersionStatusActive'], includeStatusReason: true });
    await registry.getNodeVersion(MATH, '1.10.0');
    await registry.getNodeForClass('MathExpression');
    await registry.listNodes({ node_id: [MATH] });
    await registry.getNodes([MATH, 'pixelforge-tiled-diffusion']);
    await registry.bulkNodeVersions([{ node_id: MATH, version: '1.10.0' }]);
    await registry.findMissingPacks({ 1: { class_type: 'Math Int (+1)', inputs: {} }, 2: { class_type: 'TiledKSampler', inputs: {} } }, { objectInfo });
    await registry.searchNodes({ search: 'math' });
    // Every read did reach the emulator (the sweep is not vacuous)...
    for (const p of ['/nodes/search', `/nodes/${MATH}/versions`, '/platform-nodes/', '/bulk/nodes/versions']) expect(sent(p).length, p).toBeGreaterThan(0);
    // ...and none of them counted an install.
    expect(emu.requests.filter((r) => r.path.endsWith('/install'))).toEqual([]);
    expect(emu.registry.installs).toHaveLength(0);
    for (const [id, d] of downloads) expect(stored(id).downloads, id).toBe(d);
  });
});

// publishNodeVersion: the personal token travels in the POST body only, the archive goes to the
// signed URL on another origin without credentials, the POST is never re-sent, the token never
// shows, and a failed upload can be retried alone.
describe('publishNodeVersion', () => {
  const PUBLISHER = 'nodesmith';
  const PAT = `pat-${PUBLISHER}`; // the seed's per-publisher personal access token
  const ARCHIVE = new Uint8Array([0x50, 0x4b, 0x03, 0x04, ...Array.from({ length: 300 }, (_, i) => i % 251)]);
  const params = (version: string, archive: Uint8Array | Blob | string = ARCHIVE, personalAccessToken = PAT) => ({
    publisherId: PUBLISHER,
    nodeId: MATH,
    personalAccessToken,
    node: { id: MATH, name: 'Math Expression' },
    nodeVersion: { version, changelog: `Release ${version}.` },
    archive,
  });
  const uploadsOf = (version: string) => [...emu.registry.uploads.values()].filter((u) => u.nodeId === MATH && u.version === version);
  const publishPosts = () => sent(`/publishers/${PUBLISHER}/nodes/${MATH}/versions`, 'POST');

  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'registry-beyond-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it.each([
    ['a Uint8Array', '3.0.0', async () => ARCHIVE],
    ['a Blob', '3.0.1', async () => new Blob([ARCHIVE])],
    [
      'a file path',
      '3.0.2',
      async () => {
        const file = join(dir, 'node.zip');
        await writeFile(file, ARCHIVE);
        return file;
      },
    ],
  ] as const)('publishes with the archive as %s, then the archive is downloadable', async (_kind, version, archive) => {
    const created = await registry.publishNodeVersion(params(version, await archive()));
    expect(created.version).toBe(version);
    expect(created.status).toBe('NodeVersionStatusPending');

    const [post] = publishPosts();
    expect(publishPosts()).toHaveLength(1);
    expect(post!.headers.authorization).toBeUndefined();
    expect(JSON.stringify(post)).not.toContain(PAT); // neither in the URL nor in a header

    const [put, ...more] = emu.proxy.resultRequests;
    expect(more).toEqual([]);
    expect(put!.method).toBe('PUT');
    expect(put!.path).toMatch(/^\/registry-uploads\/[\w-]+\/[\w.-]+\/node\.zip$/);
    expect(put!.headers['content-type']).toBe('application/zip');
    for (const h of ['authorization', 'cookie', 'x-api-key']) expect(put!.headers[h], h).toBeUndefined();
    expect(emu.resultsUrl).not.toBe(emu.url);
    expect(sent('/registry-uploads')).toEqual([]); // the PUT went to the other origin, not the main one

    const [slot, ...others] = uploadsOf(version);
    expect(others).toEqual([]);
    expect(slot!.size).toBe(ARCHIVE.length);
    expect(new Uint8Array(slot!.bytes!)).toEqual(ARCHIVE);
    // The registry now serves the archive from the version's downloadUrl.
    const v = await registry.getNodeVersion(MATH, version);
    expect(v.downloadUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/registry-downloads\//);
    expect(new Uint8Array(await (await fetch(v.downloadUrl!)).arrayBuffer())).toEqual(ARCHIVE);
  });

  it('sends the personal token in the body, and the emulator-wide PAT works too', async () => {
    const bodies: string[] = [];
    const capturing = newRegistry({
      fetch: (input, init) => {
        if (typeof init?.body === 'string') bodies.push(init.body);
        return globalThis.fetch(input, init);
      },
    });
    await capturing.publishNodeVersion(params('3.1.0', ARCHIVE, EMULATOR_PAT));
    expect(bodies).toHaveLength(1);
    expect(JSON.parse(bodies[0]!)).toMatchObject({ personal_access_token: EMULATOR_PAT, node: { id: MATH }, node_version: { version: '3.1.0' } });
    expect(publishPosts()[0]!.headers.authorization).toBeUndefined();
  });

  it('a duplicate version rejects with BadRequestError and uploads nothing', async () => {
    const err = await rejection(registry.publishNodeVersion(params('1.9.0')));
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.message).toContain('already exists');
    expect(publishPosts()).toHaveLength(1);
    expect(emu.proxy.resultRequests).toEqual([]);
  });

  describe('an invalid token never leaks', () => {
    const PLANTED = 'pat-LEAK-7f3a9';
    const lines: string[] = [];
    const leaky = () => {
      const rec = (m: string, d?: object) => void lines.push(`${m} ${JSON.stringify(d ?? {})}`);
      return newRegistry({ logLevel: 'debug', logger: { error: rec, warn: rec, info: rec, debug: rec } });
    };
    beforeEach(() => {
      lines.length = 0;
    });
    const expectNoLeak = (err: any) => {
      for (const shown of [err.message, String(err), JSON.stringify(err), err.stack, inspect(err), inspect(err, { depth: null, showHidden: true }), JSON.stringify(err.body ?? null)]) {
        expect(shown).not.toContain(PLANTED);
      }
      expect(lines.join('\n')).not.toContain(PLANTED);
    };

    it("the emulator's own 400", async () => {
      const err = await rejection(leaky().publishNodeVersion(params('3.2.0', ARCHIVE, PLANTED)));
      expect(err).toBeInstanceOf(BadRequestError);
      expect(err.message).toContain('Invalid personal access token'); // a { message } body surfaces
      expectNoLeak(err);
      expect(lines.length).toBeGreaterThan(0); // the debug log did run
      expect(publishPosts()).toHaveLength(1);
      expect(JSON.stringify(emu.requests)).not.toContain(PLANTED);
    });

    it('a 400 whose body echoes the token', async () => {
      emu.faults.next(400, { path: PUBLISH_ROUTE, body: { message: `Invalid personal access token ${PLANTED}` } });
      const err = await rejection(leaky().publishNodeVersion(params('3.2.0', ARCHIVE, PLANTED)));
      expect(err).toBeInstanceOf(BadRequestError);
      expect(err.message).toContain('Invalid personal access token');
      expectNoLeak(err);
      expect(publishPosts()).toHaveLength(1);
    });

    it('a text body that echoes the token, on a 5xx', async () => {
      emu.faults.next(502, { path: PUBLISH_ROUTE, body: `upstream rejected personal_access_token=${PLANTED}` });
      const err = await rejection(leaky().publishNodeVersion(params('3.2.0', ARCHIVE, PLANTED)));
      expect(err).toBeInstanceOf(APIError);
      expectNoLeak(err);
    });
  });

  it('never re-sends the POST after a 503; nothing is created', async () => {
    emu.faults.next(503, { path: PUBLISH_ROUTE, method: 'POST', retryAfter: 0 });
    const err = await rejection(registry.publishNodeVersion(params('3.3.0')));
    expect(err).toBeInstanceOf(APIError);
    expect(err.status).toBe(503);
    expect(publishPosts()).toHaveLength(1);
    expect(emu.registry.versions.get(MATH)!.some((v) => v.version === '3.3.0')).toBe(false);
    expect(emu.proxy.resultRequests).toEqual([]);
  });

  it('an upload failure after creation says the version was created; uploadNodeVersionArchive then succeeds', async () => {
    emu.proxy.resultFaults.next(503, { path: '/registry-uploads/:nodeId/:version/node.zip', retryAfter: 0 });
    const err = await rejection(registry.publishNodeVersion(params('3.4.0')));
    expect(err).toBeInstanceOf(NodeVersionUploadError);
    expect(err.message).toContain('3.4.0 was created');
    expect(err.message).toContain('uploadNodeVersionArchive');
    expect(err.nodeVersion.version).toBe('3.4.0');
    // The signed URL's signature is a capability: shown nowhere, though the error keeps it to retry with.
    const signature = new URL(err.signedUrl).searchParams.get('X-Goog-Signature')!;
    expect(signature.length).toBeGreaterThan(8);
    for (const shown of [err.message, String(err), JSON.stringify(err), inspect(err, { depth: 5 })]) expect(shown).not.toContain(signature);
    expect(emu.registry.versions.get(MATH)!.find((v) => v.version === '3.4.0')?.status).toBe('NodeVersionStatusPending');
    expect(uploadsOf('3.4.0')[0]!.bytes).toBeUndefined();
    expect(emu.proxy.resultRequests).toHaveLength(1); // the PUT is not retried either

    await registry.uploadNodeVersionArchive(err.signedUrl, ARCHIVE);
    expect(new Uint8Array(uploadsOf('3.4.0')[0]!.bytes!)).toEqual(ARCHIVE);
    expect(emu.proxy.resultRequests).toHaveLength(2);
    expect(publishPosts()).toHaveLength(1);
    // Publishing again instead would have been refused as a duplicate.
    await expect(registry.publishNodeVersion(params('3.4.0'))).rejects.toBeInstanceOf(BadRequestError);
  });
});

// findMissingPacks over the seed: only classes absent from objectInfo are looked up, each once,
// then the packs in one batch; answers are cached per client.
describe('findMissingPacks', () => {
  const platformLookups = () => sent('/platform-nodes/').map((r) => decodeURIComponent(/^\/platform-nodes\/([^/]+)\/node$/.exec(r.path)![1]!));
  const packBatches = () => sent('/nodes', 'GET').filter((r) => r.path === '/nodes');

  it('API format: two classes of one pack, one of another, one nobody provides, known classes untouched; cached on a second call', async () => {
    // FaceRestore is provided by a registry pack, but this server has it: it must not be looked up.
    const info = { ...objectInfo, FaceRestore: objectInfo.LoadImage };
    const known = ['LoadImage', 'ImageInvert', 'SaveImage', 'FaceRestore'];
    for (const k of known) expect(info, k).toHaveProperty([k]);
    const workflow = {
      1: { class_type: 'LoadImage', inputs: { image: 'a.png' } },
      2: { class_type: 'MathExpression', inputs: {} },
      3: { class_type: 'TiledKSampler', inputs: {} },
      4: { class_type: 'Math Int (+1)', inputs: {} },
      5: { class_type: 'NoSuchClassAnywhere', inputs: {} },
      6: { class_type: 'MathExpression', inputs: {} },
      7: { class_type: 'FaceRestore', inputs: {} },
      8: { class_type: 'ImageInvert', inputs: {} },
      9: { class_type: 'SaveImage', inputs: {} },
    };

    const missing = await registry.findMissingPacks(workflow, { objectInfo: info });

    const math = stored(MATH).latest_version!;
    const tiled = stored(SEED_FACTS.classes.preempted.winner).latest_version!;
    expect(missing.packs.map(({ id, classTypes, version, downloadUrl }) => ({ id, classTypes, version, downloadUrl }))).toEqual([
      { id: MATH, classTypes: ['MathExpression', 'Math Int (+1)'], version: '1.10.0', downloadUrl: math.downloadUrl },
      { id: SEED_FACTS.classes.preempted.winner, classTypes: ['TiledKSampler'], version: tiled.version, downloadUrl: tiled.downloadUrl },
    ]);
    expect(math.downloadUrl).toMatch(/^https:\/\//);
    expect(missing.packs[0]!.node.id).toBe(MATH);
    expect(missing.unknown).toEqual(['NoSuchClassAnywhere']);
    expect(missing.coreUpdate).toEqual([]);
    expect(missing.outsideRegistry).toEqual([]);

    // Each unknown class looked up exactly once; known classes never.
    expect(platformLookups().sort()).toEqual(['Math Int (+1)', 'MathExpression', 'NoSuchClassAnywhere', 'TiledKSampler']);
    const [batch, ...moreBatches] = packBatches();
    expect(moreBatches).toEqual([]);
    expect(queryOf(batch!).getAll('node_id')).toEqual([MATH, SEED_FACTS.classes.preempted.winner]);
    expect(queryOf(batch!).get('limit')).toBe('2');
    expect(emu.requests).toHaveLength(5);
    for (const r of emu.requests) expect(r.headers.authorization).toBeUndefined();

    // Second call on the same client: no class lookup (answers and 404s cached), the packs batch again.
    emu.requests.length = 0;
    const again = await registry.findMissingPacks(workflow, { objectInfo: info });
    expect(platformLookups()).toEqual([]);
    expect(packBatches()).toHaveLength(1);
    expect(emu.requests).toHaveLength(1);
    expect(again).toEqual(missing);

    // The cache is per client: a new client asks again.
    emu.requests.length = 0;
    await newRegistry().findMissingPacks(workflow, { objectInfo: info });
    expect(platformLookups()).toHaveLength(4);
  });

  it('runs at most 4 class lookups at a time', async () => {
    const LATENCY = 100;
    emu.faults.latencyMs = LATENCY; // applied after the emulator records a request's arrival
    const workflow = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [String(i), { class_type: `NoSuchClass${i}`, inputs: {} }]));
    const missing = await registry.findMissingPacks(workflow, { objectInfo });
    expect(missing.unknown).toHaveLength(10);
    const arrivals = sent('/platform-nodes/').map((r) => r.time).sort((a, b) => a - b);
    expect(arrivals).toHaveLength(10);
    // With at most 4 in flight, a 5th lookup starts only after one answered: any 5 arrivals span a full latency.
    for (let i = 0; i + 4 < arrivals.length; i++) expect(arrivals[i + 4]! - arrivals[i]!).toBeGreaterThanOrEqual(LATENCY - 10);
  });

  it('a latest version with an empty downloadUrl reads as undefined', async () => {
    emu.registry.nodes.get(MATH)!.node.latest_version!.downloadUrl = '';
    const missing = await registry.findMissingPacks({ 1: { class_type: 'MathExpression', inputs: {} } }, { objectInfo });
    expect(missing.packs).toHaveLength(1);
    expect(missing.packs[0]!.version).toBe('1.10.0');
    expect(missing.packs[0]!.downloadUrl).toBeUndefined();
  });

  it('UI format: cnr_id preferred over a lookup, core and aux_id classes apart, bypassed and editor-only nodes skipped', async () => {
    const workflow = {
      last_node_id: 9,
      last_link_id: 0,
      nodes: [
        { id: 1, type: 'LoadImage', mode: 0, properties: { cnr_id: 'comfy-core', ver: '0.3.10' } },
        { id: 2, type: 'MathExpression', mode: 0, properties: { cnr_id: MATH, ver: 'v1.9.0' } },
        { id: 3, type: 'BrandNewCoreNode', mode: 0, properties: { cnr_id: 'comfy-core', ver: 'v0.3.40' } },
        { id: 4, type: 'HashPinnedCoreNode', mode: 0, properties: { cnr_id: 'comfy-core', ver: '4a3b2c1d9e8f' } },
        { id: 5, type: 'MyGitNode', mode: 0, properties: { aux_id: 'someone/my-nodes', ver: 'abc1234' } },
        { id: 6, type: 'SAMSegment (Points+Box)', mode: 4, properties: {} },
        { id: 7, type: 'Note', mode: 0, properties: {} },
        { id: 8, type: 'Switch | Any (Logic)', mode: 0, properties: {} },
        { id: 9, type: 'GhostNode', mode: 0, properties: { cnr_id: 'ghost-pack-not-in-registry', ver: '1.0.0' } },
      ],
      links: [],
      groups: [],
      config: {},
      extra: {},
      version: 0.4,
    };

    const missing = await registry.findMissingPacks(workflow, { objectInfo });

    expect(missing.packs.map(({ id, classTypes, pinnedVersion, version }) => ({ id, classTypes, pinnedVersion, version }))).toEqual([
      { id: MATH, classTypes: ['MathExpression'], pinnedVersion: '1.9.0', version: '1.10.0' },
      { id: 'nodesmith-logic-switch', classTypes: ['Switch | Any (Logic)'], pinnedVersion: undefined, version: stored('nodesmith-logic-switch').latest_version!.version },
    ]);
    expect(missing.coreUpdate).toEqual([
      { classType: 'BrandNewCoreNode', version: '0.3.40' },
      { classType: 'HashPinnedCoreNode', version: '4a3b2c1d9e8f' },
    ]);
    expect(missing.outsideRegistry).toEqual([{ classType: 'MyGitNode', auxId: 'someone/my-nodes', repository: 'https://github.com/someone/my-nodes' }]);
    expect(missing.unknown).toEqual(['GhostNode']);

    // Only the class without a hint was looked up; the bypassed SAMSegment and the Note were not.
    expect(platformLookups()).toEqual(['Switch | Any (Logic)']);
    const [batch, ...more] = packBatches();
    expect(more).toEqual([]);
    expect(new Set(queryOf(batch!).getAll('node_id'))).toEqual(new Set([MATH, 'nodesmith-logic-switch', 'ghost-pack-not-in-registry']));
    expect(emu.requests.some((r) => r.path.includes('SAMSegment') || r.path.includes('Note') || r.path.endsWith('/install'))).toBe(false);
  });
});
