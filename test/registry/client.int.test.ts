// RegistryClient against the emulator over real loopback HTTP: every endpoint, success and error.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  InvalidArgumentError,
  MissingCredentialsError,
  NotFoundError,
  PermissionDeniedError,
  RegistryClient,
} from '../../src/index.ts';
import { EMULATOR_TOKEN, MAX_PAGE_SIZE, SEED_FACTS, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { recorder } from '../helpers/log-recorder.ts';

let emu: Emulator;
let registry: RegistryClient;
const options = () => ({ baseUrl: emu.url, token: EMULATOR_TOKEN, retry: { limit: 2, backoffLimit: 20 } });
beforeAll(async () => {
  emu = await startEmulator();
  registry = new RegistryClient(options());
});
afterAll(() => emu.close());
beforeEach(() => {
  emu.requests.length = 0;
  emu.faults.reset();
  emu.registry.reset();
});

describe('searchNodes', () => {
  it('pages through every searchable node, lazily', async () => {
    const first = await registry.searchNodes();
    expect(first.page).toBe(1);
    expect(first.limit).toBe(10);
    expect(first.total).toBe(SEED_FACTS.searchableCount);
    const ids: string[] = [];
    for await (const n of registry.searchNodes({ limit: 7 })) ids.push(n.id!);
    expect(ids).toHaveLength(SEED_FACTS.searchableCount);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).not.toContain(SEED_FACTS.bannedNodeId);
    expect(ids).not.toContain(SEED_FACTS.deletedNodeId);
    expect(emu.requests.filter((r) => r.path.startsWith('/nodes/search'))).toHaveLength(1 + Math.ceil(SEED_FACTS.searchableCount / 7));
  });

  it('filters with every parameter', async () => {
    const all = await registry.searchNodes({ limit: 100 });
    const linuxCuda = await registry.searchNodes({ supported_os: 'POSIX :: Linux', supported_accelerator: 'CUDA', limit: 100 });
    expect(linuxCuda.total).toBeGreaterThan(0);
    expect(linuxCuda.total).toBeLessThan(all.total);
    for (const n of linuxCuda.nodes) {
      expect(n.supported_os).toContain('POSIX :: Linux');
      expect(n.supported_accelerators).toContain('CUDA');
    }
    const banned = await registry.searchNodes({ include_banned: true, limit: 100 });
    expect(banned.total).toBe(SEED_FACTS.searchableWithBannedCount);
    expect(banned.nodes.map((n) => n.id)).toContain(SEED_FACTS.bannedNodeId);
    const some = all.nodes[3]!;
    const byName = await registry.searchNodes({ platform_node_search: some.name! });
    expect(byName.nodes.map((n) => n.id)).toContain(some.id);
    const byRepo = await registry.searchNodes({ repository_url_search: some.repository! });
    expect(byRepo.nodes.map((n) => n.id)).toContain(some.id);
    const byKeyword = await registry.searchNodes({ search: some.author! });
    expect(byKeyword.nodes.every((n) => JSON.stringify([n.id, n.name, n.description, n.author]).toLowerCase().includes(some.author!.toLowerCase()))).toBe(true);
  });

  it('sends no Authorization header even with a token configured', async () => {
    await registry.searchNodes();
    await registry.listPublishers();
    expect(emu.requests).toHaveLength(2);
    for (const r of emu.requests) expect(r.headers.authorization).toBeUndefined();
  });

  it('retries a 503 and succeeds', async () => {
    emu.faults.next(503, { retryAfter: 0 });
    const log = recorder();
    const page = await new RegistryClient({ ...options(), logger: log.logger }).searchNodes();
    expect(page.nodes.length).toBeGreaterThan(0);
    expect(emu.requests).toHaveLength(2);
    expect(log.lines.map((l) => `${l.level} ${l.message}`)).toEqual([expect.stringMatching(/^warn \[platformui\] GET .*\/nodes\/search\?page=1&limit=10: HTTP 503; retrying in 0 ms \(attempt 2 of 3\)$/)]);
  });

  it('maps a persistent 500 to InternalServerError with the ErrorResponse', async () => {
    emu.faults.next(500).next(500).next(500);
    const log = recorder();
    const err: any = await new RegistryClient({ ...options(), logger: log.logger }).searchNodes().catch((e) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect(typeof err.error).toBe('string');
    expect(log.lines.map((l) => `${l.level} ${l.message}`)).toEqual([2, 3].map((n) => expect.stringMatching(new RegExp(`^warn \\[platformui\\] GET .*: HTTP 500; retrying in \\d+ ms \\(attempt ${n} of 3\\)$`))));
  });

  it('gets pages capped at the server maximum', async () => {
    const page = await registry.searchNodes({ limit: 10_000 });
    expect(page.limit).toBe(MAX_PAGE_SIZE);
    expect(page.nodes).toHaveLength(Math.min(MAX_PAGE_SIZE, SEED_FACTS.searchableCount));
  });
});

describe('publishers and nodes', () => {
  it('creates a node, lists it, refuses a duplicate, deletes the publisher', async () => {
    const [pub] = await registry.listPublishers();
    const id = `${pub!.id}-it-node`;
    const created = await registry.createNode(pub!.id!, { id, name: 'IT node', tags: ['t'], latest_version: { version: '1.0.0' } });
    expect(created.id).toBe(id);
    expect(created.status).toBe('NodeStatusActive');
    expect(created.latest_version?.status).toBe('NodeVersionStatusActive');
    expect(created.publisher?.id).toBe(pub!.id);
    await expect(registry.createNode(pub!.id!, { id })).rejects.toBeInstanceOf(ConflictError);

    const ids: string[] = [];
    for await (const n of registry.listPublisherNodes(pub!.id!, { limit: 3 })) ids.push(n.id!);
    expect(ids).toContain(id);

    await registry.deletePublisher(pub!.id!);
    expect((await registry.listPublishers()).map((p) => p.id)).not.toContain(pub!.id);
    await expect(registry.deletePublisher(pub!.id!)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('maps the server-side validation of a node to BadRequestError', async () => {
    const err: any = await registry.createNode(SEED_FACTS.activePublisherIds[0]!, { id: 'not a valid id!' }).catch((e) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.body).toMatchObject({ error: expect.any(String), message: expect.any(String) });
  });

  it('answers 401 without a valid token and 403 for another publisher', async () => {
    const [a, b] = SEED_FACTS.activePublisherIds.slice(-2);
    const bad = new RegistryClient({ baseUrl: emu.url, token: 'wrong-token-value' });
    await expect(bad.listPublisherNodes(a!)).rejects.toBeInstanceOf(AuthenticationError);
    const scoped = new RegistryClient({ baseUrl: emu.url, token: `${b}-token` });
    await expect(scoped.createNode(a!, { id: 'x-forbidden' })).rejects.toBeInstanceOf(PermissionDeniedError);
    expect((await scoped.listPublisherNodes(b!)).nodes.length).toBeGreaterThan(0);
  });

  it('needs a token before sending anything', async () => {
    const anon = new RegistryClient({ baseUrl: emu.url });
    await expect(anon.deletePublisher('x')).rejects.toBeInstanceOf(MissingCredentialsError);
    expect(emu.requests).toHaveLength(0);
  });

  it('answers 404 for an unknown publisher, whatever its id contains', async () => {
    const err: any = await registry.listPublisherNodes('no/such?pub%').catch((e) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(emu.requests[0]!.path).toContain('/publishers/no%2Fsuch%3Fpub%25/nodes/v2');
  });
});

describe('unknown options (issue 32)', () => {
  it('a misspelt option of a method is refused, naming the closest, and nothing reaches the registry', async () => {
    const registry = new RegistryClient(options());
    const errs: any[] = [
      await registry.getNode('comfyui-impact-pack', { tiemout: 5 } as object).catch((e) => e),
      await registry.listNodeVersions('comfyui-impact-pack', { statuss: ['NodeVersionStatusActive'] } as object).catch((e) => e),
      await registry.searchNodes({ search: 'impact' }, { singal: undefined } as object).catch((e) => e),
    ];
    for (const err of errs) expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(errs.map((e) => e.message)).toEqual([
      'tiemout: unknown option of getNode() (did you mean "timeout"?)',
      'statuss: unknown option of listNodeVersions() (did you mean "statuses"?)',
      'singal: unknown option of searchNodes() (did you mean "signal"?)',
    ]);
    expect(emu.requests).toHaveLength(0);
  });
});
