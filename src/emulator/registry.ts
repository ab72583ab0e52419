/**
 * The registry service of the emulator (`registry-and-proxy.md`, endpoints
 * 1–5): in-memory state and its routes. Behaviour the spec leaves open is
 * decided here and documented on {@link registryRoutes}.
 *
 * @module
 */
import { booleanParam, HttpError, sendEmpty, sendJson, type RequestContext, type Route } from './http.ts';
import { buildSeed, createRandom, DOWNLOAD_BASE } from './seed.ts';
import { EMULATOR_PAT, SEMVER, versionRoutes, type InstallRecord, type StoredVersion, type UploadSlot } from './registry-versions.ts';
import type { Node as SchemaNode, NodePage as SchemaNodePage, NodeVersion, Publisher as SchemaPublisher } from '../schemas/registry.ts';
import { NODE_STATUSES, PUBLISHER_STATUSES } from '../schemas/values.ts';

/** `NodeStatus`: the spec's closed list (the emulator stores only these). */
export type NodeStatus = (typeof NODE_STATUSES)[number];
/** `PublisherStatus`: the spec's closed list. */
export type PublisherStatus = (typeof PUBLISHER_STATUSES)[number];

// The wire models are the SDK's own (one definition each); the emulator only adds that
// what it stores always has an `id`.
export type { PublisherUser, PublisherMember, NodeVersion } from '../schemas/registry.ts';
/** `Publisher` as stored; `id` is always present in the emulator. */
export type Publisher = SchemaPublisher & { id: string };
/** `Node` as the wire carries it; `id` is always present in the emulator. */
export type Node = Omit<SchemaNode, 'publisher'> & { id: string; publisher?: Publisher };
/** A node in the store: the node without `publisher`, which is filled in on output from the live publisher. */
export interface StoredNode {
  publisherId: string;
  node: Node;
}

/** Page envelope of the two list endpoints: the SDK's, with the emulator's nodes. */
export type NodePage = Omit<SchemaNodePage, 'nodes'> & { nodes: Node[] };

/** The default bearer token that may act on every publisher. */
export const EMULATOR_TOKEN = 'emulator-token';

/**
 * Default bearer tokens: `emulator-token` may act on every publisher, and
 * `<publisherId>-token` on that publisher only (e.g. `pixelforge-token`),
 * for each seeded publisher. Passing `tokens` replaces all of them.
 */
export const DEFAULT_TOKENS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  [EMULATOR_TOKEN]: ['*'],
  ...Object.fromEntries(buildSeed().publishers.map((p) => [`${p.id}-token`, [p.id]])),
});

/** Largest `limit` the list endpoints honour; larger values are capped, not rejected. */
export const MAX_PAGE_SIZE = 100;

/** Options of {@link RegistryState}. */
export interface RegistryStateOptions {
  /** Bearer token → publisher ids it may act on (`'*'` = all). Default {@link DEFAULT_TOKENS}. */
  tokens?: Record<string, readonly string[]>;
  /** Load the seed data (default true). */
  seed?: boolean;
  /** Clock, replaceable in tests. */
  now?: () => Date;
}

/** Filters of {@link RegistryState.listNodes}. */
export interface NodeFilter {
  publisherId?: string;
  search?: string;
  repository_url_search?: string;
  platform_node_search?: string;
  supported_os?: string;
  supported_accelerator?: string;
  include_banned?: boolean;
}

/**
 * The registry's in-memory state. Exposed as `emulator.registry` so tests can
 * inspect it or arrange unusual data (`addPublisher`, `addNode`).
 */
export class RegistryState {
  readonly publishers = new Map<string, Publisher>();
  readonly nodes = new Map<string, StoredNode>();
  /** Token → publisher ids; mutable. */
  readonly tokens = new Map<string, Set<string>>();
  /** Node id → versions in stored (creation) order; the one equal to `latest_version` shares its id. */
  readonly versions = new Map<string, StoredVersion[]>();
  /** Node class name → ids of the packs providing it (from the seed's `platformNodes`). */
  readonly classes = new Map<string, string[]>();
  /** Every `GET /nodes/{id}/install` call, oldest first. */
  readonly installs: InstallRecord[] = [];
  /** Personal access token (publish route, in the body) → publisher ids (`'*'` = all). */
  readonly personalAccessTokens = new Map<string, Set<string>>();
  /** Signed upload slots by token, with size and sha256 once uploaded. */
  readonly uploads = new Map<string, UploadSlot>();
  /** Origin of the signed upload URLs (the emulator sets its result server); unset: the request's origin. */
  uploadOrigin: string | undefined;
  now: () => Date;
  readonly #seed: boolean;
  readonly #initialTokens: Record<string, readonly string[]>;
  #random = createRandom(1);

  constructor(options: RegistryStateOptions = {}) {
    this.now = options.now ?? (() => new Date());
    this.#seed = options.seed ?? true;
    this.#initialTokens = options.tokens ?? DEFAULT_TOKENS;
    this.reset();
  }

  /** Restores the initial state (seed and tokens), dropping every change. */
  reset(): void {
    this.publishers.clear();
    this.nodes.clear();
    this.tokens.clear();
    this.versions.clear();
    this.classes.clear();
    this.installs.length = 0;
    this.personalAccessTokens.clear();
    this.uploads.clear();
    this.#random = createRandom(1);
    for (const [token, ids] of Object.entries(this.#initialTokens)) this.tokens.set(token, new Set(ids));
    this.personalAccessTokens.set(EMULATOR_PAT, new Set(['*']));
    if (!this.#seed) return;
    const seed = buildSeed();
    for (const p of seed.publishers) {
      this.publishers.set(p.id, p);
      this.personalAccessTokens.set(`pat-${p.id}`, new Set([p.id]));
    }
    for (const n of seed.nodes) this.nodes.set(n.node.id, n);
    for (const [id, list] of Object.entries(seed.versions)) this.versions.set(id, list);
    for (const [id, names] of Object.entries(seed.platformNodes)) {
      for (const name of names) this.classes.set(name, [...(this.classes.get(name) ?? []), id]);
    }
  }

  /** Adds (or replaces) a publisher; ids may contain any character, which tests use for path-encoding cases. */
  addPublisher(publisher: Publisher): Publisher {
    const stored: Publisher = { status: 'PublisherStatusActive', createdAt: this.now().toISOString(), members: [], ...structuredClone(publisher) };
    this.publishers.set(stored.id, stored);
    return stored;
  }

  /** Stores a node under a publisher without validation; returns its wire view. */
  addNode(publisherId: string, node: Node): Node {
    const copy = structuredClone(node);
    delete copy.publisher;
    this.nodes.set(copy.id, { publisherId, node: copy });
    if (copy.latest_version && !this.versions.has(copy.id)) this.versions.set(copy.id, [structuredClone(copy.latest_version)]);
    return this.view({ publisherId, node: copy });
  }

  /** The wire view of a node (with its publisher), or undefined. */
  getNode(id: string): Node | undefined {
    const stored = this.nodes.get(id);
    return stored && this.view(stored);
  }

  /** Whether `token` may act on `publisherId`; `undefined` when the token is unknown. */
  tokenAllows(token: string, publisherId: string): boolean | undefined {
    const ids = this.tokens.get(token);
    if (!ids) return undefined;
    return ids.has('*') || ids.has(publisherId);
  }

  /**
   * Nodes matching `filter`, deleted ones never included, banned ones only
   * with `include_banned`. Sorted by `search_ranking` descending (absent
   * counts as 0), then `id` ascending, so pages are stable.
   */
  listNodes(filter: NodeFilter = {}): Node[] {
    const terms = (filter.search ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const repo = filter.repository_url_search?.toLowerCase();
    const platformName = filter.platform_node_search?.toLowerCase();
    const os = filter.supported_os?.toLowerCase();
    const accel = filter.supported_accelerator?.toLowerCase();
    const out: StoredNode[] = [];
    for (const stored of this.nodes.values()) {
      const n = stored.node;
      if (filter.publisherId !== undefined && stored.publisherId !== filter.publisherId) continue;
      if (n.status === 'NodeStatusDeleted') continue;
      if (n.status === 'NodeStatusBanned' && !filter.include_banned) continue;
      if (terms.length > 0) {
        const hay = [n.id, n.name, n.description, n.author].filter(Boolean).join('\n').toLowerCase();
        if (!terms.every((t) => hay.includes(t))) continue;
      }
      if (repo && !(n.repository ?? '').toLowerCase().includes(repo)) continue;
      if (platformName && ![n.id, n.name ?? ''].some((s) => s.toLowerCase().includes(platformName))) continue;
      if (os && !nodeList(n, 'supported_os').some((v) => v.toLowerCase() === os)) continue;
      if (accel && !nodeList(n, 'supported_accelerators').some((v) => v.toLowerCase() === accel)) continue;
      out.push(stored);
    }
    out.sort((a, b) => (b.node.search_ranking ?? 0) - (a.node.search_ranking ?? 0) || (a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0));
    return out.map((s) => this.view(s));
  }

  /** Creates a node from a validated request body (see {@link validateCreateNode}). */
  createNode(publisherId: string, body: Node): Node {
    if (this.nodes.has(body.id)) throw new HttpError(409, `Node ${body.id} already exists`, 'conflict');
    const now = this.now().toISOString();
    const { publisher: _ignored, latest_version: requested, ...fields } = body;
    const version = requested?.version ?? '1.0.0';
    const node: Node = {
      ...fields,
      status: body.status ?? 'NodeStatusActive',
      created_at: now,
      latest_version: {
        ...requested,
        id: this.#uuid(),
        node_id: body.id,
        version,
        createdAt: now,
        downloadUrl: `${DOWNLOAD_BASE}/${encodeURIComponent(publisherId)}/${body.id}/${version}/node.zip`,
        status: 'NodeVersionStatusActive',
      },
    };
    this.nodes.set(node.id, { publisherId, node });
    if (node.latest_version) this.versions.set(node.id, [structuredClone(node.latest_version)]);
    return this.view({ publisherId, node });
  }

  /** Removes a publisher and marks its nodes deleted. Returns false when absent. */
  deletePublisher(publisherId: string): boolean {
    const publisher = this.publishers.get(publisherId);
    if (!publisher) return false;
    this.publishers.delete(publisherId);
    for (const stored of this.nodes.values()) {
      if (stored.publisherId !== publisherId) continue;
      stored.node.status = 'NodeStatusDeleted';
      // Keep a snapshot so the node still renders a publisher after deletion.
      stored.node.publisher = structuredClone(publisher);
    }
    return true;
  }

  /** Wire view: a deep copy with `publisher` filled from the live publisher. */
  view(stored: StoredNode): Node {
    const node = structuredClone(stored.node);
    const publisher = this.publishers.get(stored.publisherId);
    node.publisher = publisher ? structuredClone(publisher) : (node.publisher ?? { id: stored.publisherId });
    return node;
  }

  /** A UUID-shaped id from the state's seeded PRNG. */
  uuid(): string {
    return this.#uuid();
  }

  #uuid(): string {
    const r = this.#random;
    const hex = Array.from({ length: 32 }, () => Math.floor(r() * 16).toString(16)).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${'89ab'[Math.floor(r() * 4)]}${hex.slice(17, 20)}-${hex.slice(20)}`;
  }
}

function nodeList(n: Node, key: 'supported_os' | 'supported_accelerators'): string[] {
  // A node without its own list is described by its latest version.
  return n[key] ?? n.latest_version?.[key] ?? [];
}

// ---------------------------------------------------------------------------
// Request parsing

function positiveInt(query: URLSearchParams, name: string, fallback: number): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
    throw new HttpError(400, `${name}: must be an integer >= 1, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

function paginate(all: Node[], query: URLSearchParams): NodePage {
  const page = positiveInt(query, 'page', 1);
  const limit = Math.min(positiveInt(query, 'limit', 10), MAX_PAGE_SIZE);
  const start = (page - 1) * limit;
  return { limit, nodes: all.slice(start, start + limit), page, total: all.length, totalPages: Math.ceil(all.length / limit) };
}

/**
 * Checks the bearer token and the publisher: 401 without a known token, 403
 * when the token may not act on the publisher (checked before existence, so a
 * limited token learns nothing about other publishers), 404 when absent.
 */
function authorize(state: RegistryState, ctx: RequestContext): Publisher {
  const header = ctx.headers.authorization ?? '';
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const challenge = { 'WWW-Authenticate': 'Bearer realm="platformui-emulator"' };
  if (!match?.[1]) throw new HttpError(401, 'Missing bearer token', 'unauthorized', challenge);
  const publisherId = ctx.params.publisherId ?? '';
  const allowed = state.tokenAllows(match[1], publisherId);
  if (allowed === undefined) throw new HttpError(401, 'Invalid bearer token', 'unauthorized', challenge);
  if (!allowed) throw new HttpError(403, `Token may not act on publisher ${publisherId}`);
  const publisher = state.publishers.get(publisherId);
  if (!publisher) throw new HttpError(404, `Publisher ${publisherId} not found`);
  return publisher;
}

type FieldKind = 'string' | 'int' | 'number' | 'boolean' | 'strings' | 'object';

// Field kinds a Node and a NodeVersion both carry.
const COMPATIBILITY_FIELDS: Record<string, FieldKind> = {
  supported_accelerators: 'strings',
  supported_platformui_frontend_version: 'string',
  supported_platformui_version: 'string',
  supported_os: 'strings',
  tags: 'strings',
  tags_admin: 'strings',
};

const NODE_FIELDS: Record<string, FieldKind> = {
  name: 'string',
  author: 'string',
  description: 'string',
  banner_url: 'string',
  icon: 'string',
  category: 'string',
  created_at: 'string',
  downloads: 'int',
  github_stars: 'int',
  license: 'string',
  preempted_platform_node_names: 'strings',
  rating: 'number',
  repository: 'string',
  search_ranking: 'int',
  status_detail: 'string',
  ...COMPATIBILITY_FIELDS,
  translations: 'object',
};

const VERSION_FIELDS: Record<string, FieldKind> = {
  id: 'string',
  node_id: 'string',
  version: 'string',
  changelog: 'string',
  platform_node_extract_status: 'string',
  createdAt: 'string',
  dependencies: 'strings',
  deprecated: 'boolean',
  downloadUrl: 'string',
  status_reason: 'string',
  ...COMPATIBILITY_FIELDS,
};

const PUBLISHER_FIELDS: Record<string, FieldKind> = {
  id: 'string',
  name: 'string',
  description: 'string',
  logo: 'string',
  source_code_repo: 'string',
  support: 'string',
  website: 'string',
  createdAt: 'string',
};

const NODE_ID = /^[a-z0-9][a-z0-9_-]*$/i;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bad(field: string, message: string): HttpError {
  return new HttpError(400, `${field}: ${message}`, 'bad_request');
}

function checkFields(obj: Record<string, unknown>, spec: Record<string, FieldKind>, prefix: string): void {
  for (const [key, kind] of Object.entries(spec)) {
    if (!(key in obj)) continue;
    const v = obj[key];
    const field = prefix + key;
    const ok =
      kind === 'string' ? typeof v === 'string'
      : kind === 'int' ? Number.isSafeInteger(v)
      : kind === 'number' ? typeof v === 'number' && Number.isFinite(v)
      : kind === 'boolean' ? typeof v === 'boolean'
      : kind === 'strings' ? Array.isArray(v) && v.every((x) => typeof x === 'string')
      : isObject(v);
    const names: Record<FieldKind, string> = {
      string: 'a string',
      int: 'an integer',
      number: 'a number',
      boolean: 'a boolean',
      strings: 'an array of strings',
      object: 'an object',
    };
    if (!ok) throw bad(field, `must be ${names[kind]}`);
  }
}

/**
 * Validates a create-node body against the spec (endpoint 2) and returns it
 * typed. Unknown members are kept, as a forward-compatible server would.
 */
export function validateCreateNode(body: unknown, publisherId: string): Node {
  if (!isObject(body)) throw bad('body', 'must be a JSON object (a Node)');
  if (typeof body.id !== 'string') throw bad('id', 'is required and must be a string');
  if (body.id.length > 100 || !NODE_ID.test(body.id)) throw bad('id', `must match ${NODE_ID.source} (at most 100 characters)`);
  checkFields(body, NODE_FIELDS, '');
  if ('status' in body && !(NODE_STATUSES as readonly unknown[]).includes(body.status)) {
    throw bad('status', `must be one of ${NODE_STATUSES.join(', ')}`);
  }
  if (isObject(body.translations)) {
    for (const [lang, value] of Object.entries(body.translations)) {
      if (!isObject(value)) throw bad(`translations.${lang}`, 'must be an object');
    }
  }
  if ('latest_version' in body) {
    const v = body.latest_version;
    if (!isObject(v)) throw bad('latest_version', 'must be an object');
    if ('status' in v) throw bad('latest_version.status', 'must not be set in a request');
    checkFields(v, VERSION_FIELDS, 'latest_version.');
    if (typeof v.version === 'string' && !SEMVER.test(v.version)) throw bad('latest_version.version', 'must be a semantic version');
    if (typeof v.node_id === 'string' && v.node_id !== body.id) throw bad('latest_version.node_id', 'must equal id');
  }
  if ('publisher' in body) {
    const p = body.publisher;
    if (!isObject(p)) throw bad('publisher', 'must be an object');
    if ('status' in p) throw bad('publisher.status', 'must not be set in a request');
    checkFields(p, PUBLISHER_FIELDS, 'publisher.');
    if (typeof p.id === 'string' && p.id !== publisherId) throw bad('publisher.id', 'must equal the publisherId of the path');
    if ('members' in p && !Array.isArray(p.members)) throw bad('publisher.members', 'must be an array');
  }
  return body as unknown as Node;
}

// ---------------------------------------------------------------------------
// Routes

/**
 * The registry routes. Decisions where the spec is silent:
 *
 * - `limit` above {@link MAX_PAGE_SIZE} is capped (the envelope reports the
 *   cap); a non-integer or < 1 `page`/`limit` is a 400. A page past the end is
 *   200 with no nodes. `include_banned` accepts `true`/`false` only.
 * - Create node answers 200 with the created node; a duplicate id (across all
 *   publishers) is 409; creating under a banned publisher is 403.
 * - Publisher node list: `page`, `limit`, `include_banned`; other query
 *   parameters are ignored; same order as search.
 * - Delete publisher answers 204; its nodes become NodeStatusDeleted.
 * - `GET /publishers` ignores any credentials and lists every publisher
 *   (banned ones included), sorted by id.
 */
export function registryRoutes(state: RegistryState): Route[] {
  return [
    {
      method: 'GET',
      path: '/nodes/search',
      handler: (ctx) => {
        const q = ctx.query;
        const filter: NodeFilter = { include_banned: booleanParam(q, 'include_banned') };
        for (const key of ['search', 'repository_url_search', 'platform_node_search', 'supported_os', 'supported_accelerator'] as const) {
          const v = q.get(key);
          if (v !== null && v.trim() !== '') filter[key] = v.trim();
        }
        sendJson(ctx.res, 200, paginate(state.listNodes(filter), q));
      },
    },
    {
      method: 'POST',
      path: '/publishers/:publisherId/nodes',
      handler: async (ctx) => {
        const publisher = authorize(state, ctx);
        const body = validateCreateNode(await ctx.readJson(), publisher.id);
        if (publisher.status === 'PublisherStatusBanned') throw new HttpError(403, `Publisher ${publisher.id} is banned`);
        sendJson(ctx.res, 200, state.createNode(publisher.id, body));
      },
    },
    {
      method: 'GET',
      path: '/publishers/:publisherId/nodes/v2',
      handler: (ctx) => {
        const publisher = authorize(state, ctx);
        const nodes = state.listNodes({ publisherId: publisher.id, include_banned: booleanParam(ctx.query, 'include_banned') });
        sendJson(ctx.res, 200, paginate(nodes, ctx.query));
      },
    },
    {
      method: 'DELETE',
      path: '/publishers/:publisherId',
      handler: (ctx) => {
        const publisher = authorize(state, ctx);
        state.deletePublisher(publisher.id);
        sendEmpty(ctx.res, 204);
      },
    },
    {
      method: 'GET',
      path: '/publishers',
      handler: (ctx) => {
        const all = [...state.publishers.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        sendJson(ctx.res, 200, structuredClone(all));
      },
    },
    // After `/nodes/search`, which the first-registered rule lets win over `/nodes/:nodeId`.
    ...versionRoutes(state, paginate),
  ];
}
