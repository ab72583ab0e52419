// RegistryClient beyond the seed (issue 15), on the wire (msw): what each
// method sends and how it reads the live registry's looser answers.
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, NodeVersionUploadError, NotFoundError, PermissionDeniedError, RegistryClient } from '../../src/index.ts';
import { isRelease, isSemver, newestFirst } from '../../src/registry/semver.ts';
import { ACCELERATOR_VALUES, OS_VALUES, resembling } from '../../src/registry/filter-hint.ts';
import { recorder } from '../helpers/log-recorder.ts';
import { interceptHttp } from '../helpers/msw.ts';

const BASE = 'https://registry.test';
const TOKEN = 'reg_SECRET_token_77';
const PAT = 'pat_PLANTED_secret_9f';
const { server, seen } = interceptHttp();
const registry = (extra: Record<string, unknown> = {}) => new RegistryClient({ baseUrl: BASE, token: TOKEN, retry: { limit: 2, backoffLimit: 1 }, ...extra });
const node = (id: string, extra: Record<string, unknown> = {}) => ({ id, name: id, tags: null, supported_os: null, latest_version: { version: '1.0.0', dependencies: null, downloadUrl: '' }, ...extra });

describe('semver precedence', () => {
  it('orders newest first, pre-releases below their release, non-semver last', () => {
    const sorted = ['1.9.0', 'nightly', '1.10.0-beta.1', '2.0.0-rc.1', '1.10.0', '2.0.0-rc.2', '2.0.0-alpha', '1.10.0-beta.2', '1.10.0-beta'].sort(newestFirst);
    expect(sorted).toEqual(['2.0.0-rc.2', '2.0.0-rc.1', '2.0.0-alpha', '1.10.0', '1.10.0-beta.2', '1.10.0-beta.1', '1.10.0-beta', '1.9.0', 'nightly']);
    expect(isSemver('1.2.3+build.1')).toBe(true);
    expect(isSemver('v1.2.3')).toBe(false);
    expect(isRelease('1.2.3')).toBe(true);
    expect(isRelease('1.2.3-rc.1')).toBe(false);
  });
});

describe('reads', () => {
  it('getNode: no token, nulls made []: a 403 banned body of { message } surfaces in the error', async () => {
    server.use(
      http.get(`${BASE}/nodes/a`, () => HttpResponse.json(node('a'))),
      http.get(`${BASE}/nodes/banned`, () => HttpResponse.json({ message: 'Node Banned' }, { status: 403 })),
    );
    const a = await registry().getNode('a');
    expect(a.tags).toEqual([]);
    expect(a.latest_version?.dependencies).toEqual([]);
    expect(a.latest_version?.downloadUrl).toBe('');
    expect(seen[0]!.headers.get('authorization')).toBeNull();
    const err = await registry().getNode('banned').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermissionDeniedError);
    expect(String((err as Error).message)).toContain('Node Banned');
  });

  it('listNodeVersions: statuses as repeated keys, sorted newest first', async () => {
    server.use(http.get(`${BASE}/nodes/a/versions`, () => HttpResponse.json([{ version: '1.9.0' }, { version: 'nightly' }, { version: '2.0.0-rc.1' }, { version: '1.10.0' }, { version: '1.10.0-beta.1' }])));
    const versions = await registry().listNodeVersions('a', { statuses: ['NodeVersionStatusActive', 'NodeVersionStatusPending'], includeStatusReason: true });
    expect(versions.map((v) => v.version)).toEqual(['2.0.0-rc.1', '1.10.0', '1.10.0-beta.1', '1.9.0', 'nightly']);
    const url = new URL(seen[0]!.url);
    expect(url.searchParams.getAll('statuses')).toEqual(['NodeVersionStatusActive', 'NodeVersionStatusPending']);
    expect(url.search).toContain('statuses=NodeVersionStatusActive&statuses=NodeVersionStatusPending');
    expect(url.searchParams.get('include_status_reason')).toBe('true');
  });

  it('getNodeVersion: a malformed version is refused before any request', async () => {
    await expect(registry().getNodeVersion('a', '1.2')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(registry().getNodeVersion('a', 'v1.2.3')).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(seen).toHaveLength(0);
    server.use(http.get(`${BASE}/nodes/a/versions/2.0.0-rc.1`, () => HttpResponse.json({ version: '2.0.0-rc.1' })));
    expect((await registry().getNodeVersion('a', '2.0.0-rc.1')).version).toBe('2.0.0-rc.1');
  });

  it('getNodeForClass: the class name encoded as one segment; 404 is null', async () => {
    const name = 'Ultra Sharp (4x) + Tile|Mode/2';
    server.use(
      http.get(`${BASE}/platform-nodes/:name/node`, ({ params }) => (params.name === name ? HttpResponse.json(node('pack')) : HttpResponse.json({ error: 'not_found', message: 'none' }, { status: 404 }))),
    );
    expect((await registry().getNodeForClass(name))?.id).toBe('pack');
    expect(new URL(seen[0]!.url).pathname).toBe(`/platform-nodes/${encodeURIComponent(name)}/node`);
    expect(await registry().getNodeForClass('Nobody')).toBeNull();
  });

  it('getNodes: batches of 50 with limit sent, the order asked, each once, unknown left out', async () => {
    server.use(
      http.get(`${BASE}/nodes`, ({ request }) => {
        const ids = new URL(request.url).searchParams.getAll('node_id');
        const known = ids.filter((id) => !id.startsWith('gone'));
        return HttpResponse.json({ nodes: known.reverse().map((id) => node(id)), page: 1, limit: ids.length, total: known.length, totalPages: 1 });
      }),
    );
    const ids = [...Array.from({ length: 60 }, (_, i) => `n${i}`), 'gone-1', 'n3'];
    const nodes = await registry().getNodes(ids);
    expect(nodes.map((n) => n.id)).toEqual(Array.from({ length: 60 }, (_, i) => `n${i}`));
    expect(seen).toHaveLength(2);
    const first = new URL(seen[0]!.url).searchParams;
    expect(first.getAll('node_id')).toHaveLength(50);
    expect(first.get('limit')).toBe('50');
    expect(new URL(seen[1]!.url).searchParams.get('limit')).toBe('11');
  });

  it('bulkNodeVersions: per-item results, discriminated on status', async () => {
    server.use(
      http.post(`${BASE}/bulk/nodes/versions`, () =>
        HttpResponse.json({
          node_versions: [
            { status: 'success', node_version: { version: '1.0.0', dependencies: null }, identifier: { node_id: 'a', version: '1.0.0' } },
            { status: 'not_found', identifier: { node_id: 'b', version: '9.9.9' } },
            { status: 'error', error_message: 'bad version' },
          ],
        }),
      ),
    );
    const r = await registry().bulkNodeVersions([
      { node_id: 'a', version: '1.0.0' },
      { node_id: 'b', version: '9.9.9' },
      { node_id: 'c', version: 'x' },
    ]);
    expect(r.map((x) => x.status)).toEqual(['success', 'not_found', 'error']);
    expect(r[0]!.status === 'success' && r[0]!.nodeVersion.dependencies).toEqual([]);
    expect(r[2]).toEqual({ status: 'error', nodeId: 'c', version: 'x', errorMessage: 'bad version' });
    expect(await seen[0]!.json()).toEqual({ node_versions: [{ node_id: 'a', version: '1.0.0' }, { node_id: 'b', version: '9.9.9' }, { node_id: 'c', version: 'x' }] });
  });
});

describe('recordInstall: the only caller of /install, never retried', () => {
  it('a 503 is not retried (each attempt would count an install); version must be x.y.z', async () => {
    server.use(http.get(`${BASE}/nodes/a/install`, () => HttpResponse.json({ error: 'unavailable', message: 'x' }, { status: 503 })));
    await expect(registry().recordInstall('a', { version: '1.0.0' })).rejects.toThrow();
    expect(seen).toHaveLength(1);
    await expect(registry().recordInstall('a', { version: '1.0.0-rc.1' })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(seen).toHaveLength(1);
  });

  it('no read calls /install', async () => {
    server.use(
      http.get(`${BASE}/nodes/a`, () => HttpResponse.json(node('a'))),
      http.get(`${BASE}/nodes/a/versions`, () => HttpResponse.json([])),
      http.get(`${BASE}/nodes/a/versions/1.0.0`, () => HttpResponse.json({ version: '1.0.0' })),
      http.get(`${BASE}/platform-nodes/:c/node`, () => HttpResponse.json(node('a'))),
      http.get(`${BASE}/nodes`, () => HttpResponse.json({ nodes: [node('a')], page: 1, limit: 1, total: 1, totalPages: 1 })),
    );
    const r = registry();
    await Promise.all([r.getNode('a'), r.listNodeVersions('a'), r.getNodeVersion('a', '1.0.0'), r.getNodeForClass('X'), r.getNodes(['a'])]);
    expect(seen.map((q) => new URL(q.url).pathname).filter((p) => p.endsWith('/install'))).toEqual([]);
  });
});

describe('publishNodeVersion', () => {
  const params = { publisherId: 'acme', nodeId: 'acme-up', personalAccessToken: PAT, node: { id: 'acme-up', name: 'Up' }, nodeVersion: { version: '1.2.0' }, archive: new Uint8Array([80, 75, 3, 4]) };

  it('posts the token in the body only, then PUTs the archive with no credential', async () => {
    const puts: Request[] = [];
    server.use(
      http.post(`${BASE}/publishers/acme/nodes/acme-up/versions`, () => HttpResponse.json({ signedUrl: 'https://uploads.test/put?X-Amz-Signature=abc', node_version: { version: '1.2.0', status: 'NodeVersionStatusPending' } }, { status: 201 })),
      http.put('https://uploads.test/put', ({ request }) => (puts.push(request.clone()), new HttpResponse(null, { status: 200 }))),
    );
    const v = await registry().publishNodeVersion(params);
    expect(v.version).toBe('1.2.0');
    const post = seen[0]!;
    expect(post.headers.get('authorization')).toBeNull();
    expect(await post.json()).toMatchObject({ personal_access_token: PAT, node_version: { version: '1.2.0' } });
    expect(puts[0]!.headers.get('content-type')).toBe('application/zip');
    expect(puts[0]!.headers.get('authorization')).toBeNull();
    expect(new Uint8Array(await puts[0]!.arrayBuffer())).toEqual(params.archive);
  });

  it('a 400 that echoes the token never shows it; the POST is not re-sent', async () => {
    server.use(http.post(`${BASE}/publishers/acme/nodes/acme-up/versions`, () => HttpResponse.json({ message: `invalid token ${PAT}` }, { status: 400 })));
    const lines: string[] = [];
    const rec = (m: string, d?: object) => void lines.push(m + JSON.stringify(d ?? {}));
    const err = await registry({ logLevel: 'debug', logger: { error: rec, warn: rec, info: rec, debug: rec } })
      .publishNodeVersion(params)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(`${String(err)} ${JSON.stringify(err)} ${(err as Error).stack}`).not.toContain(PAT);
    expect(lines.join('\n')).not.toContain(PAT);
    expect(seen).toHaveLength(1);
  });

  it('created but the upload failed: NodeVersionUploadError, and the upload alone can be retried', async () => {
    let fail = true;
    server.use(
      http.post(`${BASE}/publishers/acme/nodes/acme-up/versions`, () => HttpResponse.json({ signedUrl: 'https://uploads.test/put?sig=abc', node_version: { version: '1.2.0' } }, { status: 201 })),
      http.put('https://uploads.test/put', () => new HttpResponse(null, { status: fail ? 500 : 200 })),
    );
    const r = registry();
    const err = (await r.publishNodeVersion(params).catch((e: unknown) => e)) as NodeVersionUploadError;
    expect(err).toBeInstanceOf(NodeVersionUploadError);
    expect(err.nodeVersion.version).toBe('1.2.0');
    expect(err.message).toContain('retry the upload alone');
    expect(err.message).not.toContain('sig=abc');
    expect(Object.keys(err)).not.toContain('signedUrl');
    fail = false;
    await r.uploadNodeVersionArchive(err.signedUrl, params.archive);
    expect(seen.filter((q) => q.method === 'POST')).toHaveLength(1);
  });

  it('bad arguments are refused before any request', async () => {
    await expect(registry().publishNodeVersion({ ...params, personalAccessToken: '' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(registry().publishNodeVersion({ ...params, nodeVersion: { version: 'one' } })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(registry().publishNodeVersion({ ...params, archive: 42 as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(seen).toHaveLength(0);
  });
});

it('NotFoundError for an unknown node', async () => {
  server.use(http.get(`${BASE}/nodes/nope`, () => HttpResponse.json({}, { status: 404 })));
  await expect(registry().getNode('nope')).rejects.toBeInstanceOf(NotFoundError);
});

describe('a filter value that matches nothing but resembles a registry value', () => {
  const page = (nodes: unknown[], total = nodes.length) => HttpResponse.json({ nodes, total, page: 1, limit: 10, totalPages: total ? 1 : 0 });

  it('searchNodes, its page walk and listNodes warn once each, naming the value it resembles', async () => {
    server.use(http.get(`${BASE}/nodes/search`, () => page([])), http.get(`${BASE}/nodes`, () => page([])));
    const log = recorder();
    const client = registry({ logger: log.logger });
    expect((await client.searchNodes({ search: 'upscale', supported_os: 'Linux', limit: 20 })).total).toBe(0);
    for await (const _ of client.searchNodes({ supported_accelerator: 'cuda' })) expect.unreachable();
    await client.listNodes({ supported_os: 'windows 10' });
    expect(log.lines).toEqual([
      { level: 'warn', message: "[platformui] no node matches supported_os 'Linux'; registry values look like 'POSIX :: Linux' (did you mean it?)", details: {} },
      { level: 'warn', message: "[platformui] no node matches supported_accelerator 'cuda'; registry values look like 'CUDA' (did you mean it?)", details: {} },
      { level: 'warn', message: "[platformui] no node matches supported_os 'windows 10'; registry values look like 'Microsoft :: Windows :: Windows 10' (did you mean it?)", details: {} },
    ]);
  });

  it('says nothing when nodes match, the value is a registry value, resembles none, or the page is past the end', async () => {
    server.use(
      http.get(`${BASE}/nodes/search`, ({ request }) => {
        const q = new URL(request.url).searchParams;
        if (q.get('search') === 'found') return page([node('a')]);
        return q.get('page') === '9' ? HttpResponse.json({ nodes: [], total: 3, page: 9, limit: 10, totalPages: 1 }) : page([]);
      }),
    );
    const log = recorder();
    const client = registry({ logger: log.logger });
    await client.searchNodes({ search: 'found', supported_os: 'Linux' });
    await client.searchNodes({ supported_os: 'POSIX :: Linux', supported_accelerator: 'DirectML' });
    await client.searchNodes({ supported_os: 'Plan 9', supported_accelerator: 'TPU' });
    await client.searchNodes({ supported_os: 'Linux', page: 9 });
    expect(log.lines).toEqual([]);
  });

  it('finds the value by case, by containing the given one, or by a small edit', () => {
    expect(resembling('Linux', OS_VALUES)).toBe('POSIX :: Linux');
    expect(resembling('ubuntu', OS_VALUES)).toBe('POSIX :: Linux :: Ubuntu');
    expect(resembling('macos', OS_VALUES)).toBe('MacOS');
    expect(resembling('Linx', OS_VALUES)).toBe('POSIX :: Linux');
    expect(resembling('rocm', ACCELERATOR_VALUES)).toBe('ROCm');
    expect(resembling('Direct ML', ACCELERATOR_VALUES)).toBe('DirectML');
    expect(resembling('OS', OS_VALUES)).toBeUndefined(); // too short to stand for one
    expect(resembling('TPU', ACCELERATOR_VALUES)).toBeUndefined(); // one letter from CPU, but another device
    expect(resembling('MacOS', OS_VALUES)).toBeUndefined();
    expect(resembling('FreeBSD', OS_VALUES)).toBeUndefined();
  });
});
