/**
 * The registry service of the emulator (`registry-and-proxy.md`, endpoints
 * 1–5): in-memory state and its routes. Behaviour the spec leaves open is
 * decided here and documented on {@link registryRoutes}.
 *
 * @module
 */
import { HttpError } from './reply.ts';
import { createRandom } from './random.ts';
import { buildSeed, DOWNLOAD_BASE } from './seed.ts';
import type { Node as SchemaNode, NodePage as SchemaNodePage, NodeVersion, Publisher as SchemaPublisher } from '../schemas/registry.ts';
import type { NODE_STATUSES, PUBLISHER_STATUSES } from '../schemas/values.ts';

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

/**
 * A version as stored and served: the SDK's NodeVersion, looser as the live
 * wire is (`dependencies` may be `null`, `downloadUrl` may be `""`).
 * `status_reason` is stored always and served only with `include_status_reason=true`.
 */
export type StoredVersion = Omit<NodeVersion, 'dependencies'> & { dependencies?: string[] | null };

/** One recorded call of `GET /nodes/{id}/install`. */
export interface InstallRecord {
  nodeId: string;
  version: string;
  time: string;
}

/** A signed upload slot created by publishing a version. */
export interface UploadSlot {
  token: string;
  publisherId: string;
  nodeId: string;
  version: string;
  /** Main origin at publish time; the version's `downloadUrl` points there after the upload. */
  mainOrigin: string;
  /** Set once the archive arrived. */
  size?: number;
  sha256?: string;
  contentType?: string;
  bytes?: Buffer;
  uploadedAt?: string;
}

/** A personal access token valid for every publisher (publish route). */
export const EMULATOR_PAT = 'emulator-pat';

/** A semantic version, as the emulator's registry checks one (create and publish). */
export const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

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

/** One page of `all` for the query's `page` and `limit` (capped at {@link MAX_PAGE_SIZE}); 400 for a bad one. */
export function paginate(all: Node[], query: URLSearchParams): NodePage {
  const page = positiveInt(query, 'page', 1);
  const limit = Math.min(positiveInt(query, 'limit', 10), MAX_PAGE_SIZE);
  const start = (page - 1) * limit;
  return { limit, nodes: all.slice(start, start + limit), page, total: all.length, totalPages: Math.ceil(all.length / limit) };
}
