/**
 * `RegistryClient`: the node registry (`registry-and-proxy.md`, endpoints
 * 1–5) and the live registry's reads beyond them (issue 15: one node, its
 * versions, the pack of a node class, batches, installs, publishing).
 *
 * @module
 */
import { checkArgsLater, checkId, checkOptions, joinKeys, type OptionKeys } from '../args.ts';
import { InvalidArgumentError, NotFoundError } from '../errors.ts';
import type { NodeVersionUploadError } from './errors.ts';
import type { CreateNodeRequest, ListNodesParams, ListPublisherNodesParams, Node, NodeVersion, Publisher, SearchNodesParams } from '../schemas/registry.ts';
import * as rules from '../schemas/rules.generated.ts';
import { checkRequestOptions, CLIENT_OPTIONS, REQUEST_OPTIONS, type ClientOptions, type Credential, type RequestOptions } from '../transport/options.ts';
import { PagePromise } from '../transport/pages.ts';
import { APIPromise, type WithResponse } from '../transport/promise.ts';
import type { Typed } from '../schemas/rule.ts';
import { BEARER_SERVICE, Transport, path, type Query } from '../transport/transport.ts';
import { Page, type PageBody } from './pagination.ts';
import { FIND_MISSING_PACKS_OPTIONS, type FindMissingPacksOptions, type MissingPacks } from './missing-packs.ts';
import { isRelease, isSemver, newestFirst } from './semver.ts';
import type { PublishNodeVersionParams } from './publish.ts';
import { nullArraysToEmpty } from './wire.ts';
import { onFirstUse } from '../on-first-use.ts';

export type { PublishNodeVersionParams } from './publish.ts';

/** Options of {@link RegistryClient.listNodeVersions}. */
export interface ListNodeVersionsOptions extends RequestOptions {
  /** Only versions in these states (sent as repeated `statuses` keys). */
  statuses?: readonly string[];
  /** Ask for each version's `status_reason`. */
  includeStatusReason?: boolean;
}

const LIST_NODE_VERSIONS_OPTIONS = /* @__PURE__ */ joinKeys(REQUEST_OPTIONS, { statuses: 1, includeStatusReason: 1 } as const) satisfies OptionKeys<ListNodeVersionsOptions>;
/** The keys of `recordInstall()`'s options. */
const RECORD_INSTALL_OPTIONS = /* @__PURE__ */ joinKeys(REQUEST_OPTIONS, { version: 1 } as const) satisfies OptionKeys<RequestOptions & { version?: string }>;

/** One answer of {@link RegistryClient.bulkNodeVersions}, discriminated on `status`. */
export type BulkNodeVersionResult =
  | { status: 'success'; nodeId: string; version: string; nodeVersion: NodeVersion }
  | { status: 'not_found'; nodeId: string; version: string }
  | { status: 'error'; nodeId: string; version: string; errorMessage: string | undefined };

/** Ids per `GET /nodes?node_id=…` request: the registry pages at most this many at once. */
const ID_BATCH = 50;

/** Options of {@link RegistryClient}. */
export interface RegistryClientOptions extends ClientOptions {
  /** Registry base URL. In Node, defaults to `PLATFORMUI_BASE_URL`. */
  baseUrl?: string;
  /**
   * Bearer token for creating nodes, listing a publisher's nodes and deleting
   * publishers: a string or a function called per request. In Node, defaults
   * to `PLATFORMUI_TOKEN`. Never sent to search or list publishers.
   */
  token?: Credential;
}

const REGISTRY_CLIENT_OPTIONS = /* @__PURE__ */ joinKeys(CLIENT_OPTIONS, { token: 1 } as const) satisfies OptionKeys<RegistryClientOptions>;

/**
 * Client of the node registry.
 *
 * @example
 * ```ts
 * import { RegistryClient } from '@platformui/sdk';
 * const registry = new RegistryClient({ baseUrl: 'http://127.0.0.1:8787', token: process.env.TOKEN });
 * for await (const node of registry.searchNodes({ search: 'upscale', supported_os: 'MacOS' })) console.log(node.id);
 * ```
 */
export class RegistryClient {
  readonly #transport: Transport;
  /** `getNodeForClass` answers (nulls included) for {@link findMissingPacks}: a class's pack does not change within a session. */
  readonly #packOfClass = new Map<string, Promise<Node | null>>();

  constructor(options: RegistryClientOptions = {}) {
    checkOptions(options, REGISTRY_CLIENT_OPTIONS, 'RegistryClient');
    this.#transport = new Transport({ service: 'registry', options, credential: options.token, ...BEARER_SERVICE });
  }

  /**
   * `GET /nodes/search`: nodes across all publishers. No credentials are sent.
   * Defaults: page 1, limit 10. When no node matches and `supported_os` or
   * `supported_accelerator` is none of the registry's values but looks like
   * one, the client's log warns: `no node matches supported_os 'Linux';
   * registry values look like 'POSIX :: Linux' (did you mean it?)`.
   *
   * @example
   * ```ts
   * const page = await registry.searchNodes({ search: 'video', limit: 20 });
   * console.log(page.total, page.nodes.map((n) => n.name));
   * for await (const node of registry.searchNodes({ supported_accelerator: 'CUDA' })) {} // every page
   * ```
   */
  searchNodes(params: SearchNodesParams = {}, options?: RequestOptions): PagePromise<Page<Node>> {
    return this.#pages(async () => {
      const p = await checkArgsLater(rules.SearchNodesParams, params, 'params');
      checkRequestOptions(options, 'searchNodes()');
      return { path: 'nodes/search', query: { ...p, page: undefined, limit: p.limit ?? 10 }, first: p.page ?? 1, auth: false };
    }, options);
  }

  /**
   * `POST /publishers/{publisherId}/nodes`: creates a node. Needs the token.
   * The body is checked first: nested `latest_version` and `publisher` carry
   * no `status`, and the node's `status` must be a known `NodeStatus`.
   *
   * @example
   * ```ts
   * const node = await registry.createNode('acme', { id: 'acme-upscaler', name: 'Upscaler', tags: ['image'] });
   * ```
   */
  createNode(publisherId: string, node: CreateNodeRequest, options?: RequestOptions): APIPromise<Node> {
    return APIPromise.from(async () => {
      checkId(publisherId, 'publisherId');
      const body = await checkArgsLater(rules.CreateNodeRequest, node, 'node');
      checkRequestOptions(options, 'createNode()');
      // Never re-sent: a repeat of a create that went through fails as a conflict.
      return this.#transport.request<Node>({ method: 'POST', path: path`publishers/${publisherId}/nodes`, json: body, auth: true, schema: rules.Node, options, paid: true });
    });
  }

  /**
   * `GET /publishers/{publisherId}/nodes/v2`: a publisher's nodes, paginated.
   * Needs the token. Parameters other than `page`, `limit` and
   * `include_banned` are passed through as query parameters.
   */
  listPublisherNodes(publisherId: string, params: ListPublisherNodesParams = {}, options?: RequestOptions): PagePromise<Page<Node>> {
    return this.#pages(async () => {
      checkId(publisherId, 'publisherId');
      const p = await checkArgsLater(rules.ListPublisherNodesParams, params, 'params');
      checkRequestOptions(options, 'listPublisherNodes()');
      return { path: path`publishers/${publisherId}/nodes/v2`, query: { ...p, page: undefined }, first: p.page ?? 1, auth: true };
    }, options);
  }

  /** `DELETE /publishers/{publisherId}`. Needs the token. Resolves when the publisher is gone. */
  deletePublisher(publisherId: string, options?: RequestOptions): APIPromise<void> {
    return APIPromise.from(async () => {
      checkId(publisherId, 'publisherId');
      checkRequestOptions(options, 'deletePublisher()');
      const { response } = await this.#transport.request({ method: 'DELETE', path: path`publishers/${publisherId}`, auth: true, options });
      return { data: undefined, response };
    });
  }

  /** `GET /publishers`: every publisher. No credentials are sent. */
  listPublishers(options?: RequestOptions): APIPromise<Publisher[]> {
    return APIPromise.from(() => (checkRequestOptions(options, 'listPublishers()'), this.#transport.request<Publisher[]>({ method: 'GET', path: 'publishers', auth: false, schema: rules.PublisherList, options })));
  }

  /**
   * `GET /nodes/{nodeId}`: one node. No credentials are sent. A node moved to
   * a normalized id is followed (`302`); a banned node rejects with
   * `PermissionDeniedError`, an unknown one with `NotFoundError`.
   *
   * @example
   * ```ts
   * const node = await registry.getNode('pixelforge-ultrasharp-upscale');
   * console.log(node.latest_version?.version, node.downloads);
   * ```
   */
  getNode(nodeId: string, options?: RequestOptions): APIPromise<Node> {
    return APIPromise.from(() => (checkRequestOptions(options, 'getNode()'), this.#read<Node>(path`nodes/${checkId(nodeId, 'nodeId')}`, rules.Node, options)));
  }

  /**
   * `GET /nodes/{nodeId}/versions`: every version, newest first by semver
   * precedence (the registry's own order is not); a version string that is
   * not semver comes last. No credentials are sent.
   *
   * @example
   * ```ts
   * const [newest] = await registry.listNodeVersions('pixelforge-ultrasharp-upscale', { statuses: ['NodeVersionStatusActive'] });
   * console.log(newest?.version, newest?.downloadUrl);
   * ```
   */
  listNodeVersions(nodeId: string, options: ListNodeVersionsOptions = {}): APIPromise<NodeVersion[]> {
    return APIPromise.from(async () => {
      const id = checkId(nodeId, 'nodeId');
      checkOptions(options, LIST_NODE_VERSIONS_OPTIONS, 'listNodeVersions()');
      const { statuses, includeStatusReason, ...rest } = options;
      if (statuses !== undefined && !(Array.isArray(statuses) && statuses.every((x) => typeof x === 'string' && x !== ''))) {
        throw new InvalidArgumentError('must be an array of version statuses', 'statuses');
      }
      const query = { ...(statuses?.length ? { statuses } : {}), ...(includeStatusReason ? { include_status_reason: true } : {}) };
      const r = await this.#read<NodeVersion[]>(path`nodes/${id}/versions`, rules.NodeVersionList, rest, query);
      return { data: [...r.data].sort((a, b) => newestFirst(a.version ?? '', b.version ?? '')), response: r.response };
    });
  }

  /**
   * `GET /nodes/{nodeId}/versions/{version}`: one version by its semver
   * string (not its id). A malformed version is refused before any request.
   *
   * @example
   * ```ts
   * const v = await registry.getNodeVersion('pixelforge-ultrasharp-upscale', '1.2.0');
   * ```
   */
  getNodeVersion(nodeId: string, version: string, options?: RequestOptions): APIPromise<NodeVersion> {
    return APIPromise.from(() => {
      const id = checkId(nodeId, 'nodeId');
      if (typeof version !== 'string' || !isSemver(version)) throw new InvalidArgumentError(`must be a semantic version like 1.2.3, got ${JSON.stringify(String(version)).slice(0, 40)}`, 'version');
      checkRequestOptions(options, 'getNodeVersion()');
      return this.#read<NodeVersion>(path`nodes/${id}/versions/${version}`, rules.NodeVersion, options);
    });
  }

  /**
   * `GET /platform-nodes/{className}/node`: the pack the registry ranks first
   * for a node class (one that preempts the name, then lower
   * `search_ranking`, then more installs), or `null` when none provides it.
   * For a `null`, `withResponse()` gives a body-less `Response` with status
   * 404 (the real one's body was read to tell a 404 from other errors).
   *
   * @example
   * ```ts
   * const pack = await registry.getNodeForClass('Image Upscale (Tiled+)'); // the name is encoded as one path segment
   * ```
   */
  getNodeForClass(className: string, options?: RequestOptions): APIPromise<Node | null> {
    return APIPromise.from(async () => {
      const name = checkId(className, 'className');
      checkRequestOptions(options, 'getNodeForClass()');
      try {
        return await this.#read<Node>(path`platform-nodes/${name}/node`, rules.Node, options);
      } catch (err) {
        if (err instanceof NotFoundError) return { data: null, response: new Response(null, { status: 404 }) };
        throw err;
      }
    });
  }

  /**
   * `GET /nodes`: nodes, paginated like {@link searchNodes} (awaitable for
   * one page, `for await` over all). Filtering by `node_id` sends `limit`
   * equal to the number of ids (the registry's default of 10 would cut the
   * answer short).
   */
  listNodes(params: ListNodesParams = {}, options?: RequestOptions): PagePromise<Page<Node>> {
    return this.#pages(async () => {
      const p = await checkArgsLater(rules.ListNodesParams, params, 'params');
      checkRequestOptions(options, 'listNodes()');
      return { path: 'nodes', query: { ...p, page: undefined, limit: p.limit ?? (p.node_id?.length ? p.node_id.length : 10) }, first: p.page ?? 1, auth: false };
    }, options);
  }

  /**
   * Nodes by id, in the order asked, each once; ids the registry does not
   * know are left out. Batches of at most 50 ids per `GET /nodes`.
   *
   * @example
   * ```ts
   * const nodes = await registry.getNodes(['pixelforge-face-restore', 'lumen-labs-relight']);
   * ```
   */
  async getNodes(nodeIds: readonly string[], options?: RequestOptions): Promise<Node[]> {
    if (!Array.isArray(nodeIds)) throw new InvalidArgumentError('must be an array of node ids', 'nodeIds');
    const ids = [...new Set(nodeIds.map((id, i) => checkId(id, `nodeIds.${i}`)))];
    checkRequestOptions(options, 'getNodes()');
    const found = new Map<string, Node>();
    for (let i = 0; i < ids.length; i += ID_BATCH) {
      const batch = ids.slice(i, i + ID_BATCH);
      const page = await this.listNodes({ node_id: batch, limit: batch.length }, options);
      for (const node of page.nodes) if (node.id !== undefined) found.set(node.id, node);
    }
    return ids.flatMap((id) => found.get(id) ?? []);
  }

  /**
   * `POST /bulk/nodes/versions`: many `{ node_id, version }` at once, each
   * answered on its own (`success` with the version, `not_found`, `error`).
   *
   * @example
   * ```ts
   * for (const r of await registry.bulkNodeVersions([{ node_id: 'a', version: '1.0.0' }])) if (r.status === 'success') console.log(r.nodeVersion.downloadUrl);
   * ```
   */
  bulkNodeVersions(pairs: ReadonlyArray<{ node_id: string; version: string }>, options?: RequestOptions): APIPromise<BulkNodeVersionResult[]> {
    return APIPromise.from(async () => {
      if (!Array.isArray(pairs)) throw new InvalidArgumentError('must be an array of { node_id, version }', 'pairs');
      const asked = pairs.map((p, i) => ({ node_id: checkId(p?.node_id, `pairs.${i}.node_id`), version: checkId(p?.version, `pairs.${i}.version`) }));
      checkRequestOptions(options, 'bulkNodeVersions()');
      const r = await this.#transport.request<{ node_versions: Array<{ status: string; node_version?: NodeVersion; error_message?: string; identifier?: { node_id?: string; version?: string } }> }>({
        method: 'POST',
        path: 'bulk/nodes/versions',
        json: { node_versions: asked },
        auth: false,
        normalize: nullArraysToEmpty,
        schema: rules.BulkNodeVersionsResponse,
        options,
      });
      const data = r.data.node_versions.map((item, i): BulkNodeVersionResult => {
        const nodeId = item.identifier?.node_id ?? asked[i]?.node_id ?? '';
        const version = item.identifier?.version ?? asked[i]?.version ?? '';
        if (item.status === 'success' && item.node_version) return { status: 'success', nodeId, version, nodeVersion: item.node_version };
        if (item.status === 'not_found') return { status: 'not_found', nodeId, version };
        return { status: 'error', nodeId, version, errorMessage: item.error_message };
      });
      return { data, response: r.response };
    });
  }

  /**
   * `GET /nodes/{nodeId}/install`: **counts an install** (the node's
   * `downloads` goes up and the registry records it) and returns the
   * version to install. The only method that calls this endpoint; never
   * retried, since each attempt would count once more. `version` must be a
   * release `x.y.z`; without it, the latest.
   */
  recordInstall(nodeId: string, options: RequestOptions & { version?: string } = {}): APIPromise<NodeVersion> {
    return APIPromise.from(() => {
      const id = checkId(nodeId, 'nodeId');
      checkOptions(options, RECORD_INSTALL_OPTIONS, 'recordInstall()');
      const { version, ...rest } = options;
      if (version !== undefined && !(typeof version === 'string' && isRelease(version))) throw new InvalidArgumentError(`must be a release version x.y.z, got ${JSON.stringify(String(version)).slice(0, 40)}`, 'version');
      return this.#read<NodeVersion>(path`nodes/${id}/install`, rules.NodeVersion, { ...rest, retry: false }, version ? { version } : undefined);
    });
  }

  /**
   * Publishes a version: `POST /publishers/{publisherId}/nodes/{nodeId}/versions`
   * with the personal access token in the body (the client's own token is not
   * sent; the POST is never re-sent), then the archive `PUT` to the signed URL
   * with `Content-Type: application/zip` and no credential. Resolves with the
   * version created. When the version was created but the upload failed,
   * rejects with {@link NodeVersionUploadError}: retry the upload alone.
   */
  publishNodeVersion(params: PublishNodeVersionParams, options?: RequestOptions): APIPromise<NodeVersion> {
    return APIPromise.from(async () => (await publishing()).publishNodeVersion(this.#transport, params, options, (url, blob) => this.uploadNodeVersionArchive(url, blob, options)));
  }

  /** `PUT`s a version's archive to its signed URL, with no credential: the second half of {@link publishNodeVersion}, to retry alone. */
  async uploadNodeVersionArchive(signedUrl: string, archive: PublishNodeVersionParams['archive'], options?: RequestOptions): Promise<void> {
    return (await publishing()).uploadNodeVersionArchive(this.#transport, signedUrl, archive, options);
  }

  /**
   * The packs a workflow needs that `objectInfo` (a server's `GET
   * /api/object_info`) lacks: each missing `class_type` looked up once
   * (`getNodeForClass`, at most 4 at a time, answers cached per client), the
   * packs fetched in one batch (`getNodes`). Takes the API format and the
   * UI's saved format; in the latter a node's `properties.cnr_id`/`ver` is
   * used instead of a lookup, core classes are reported as `coreUpdate`
   * (update the server), `aux_id` packs as `outsideRegistry`, and
   * editor-only and bypassed nodes are skipped. Never calls `/install`.
   *
   * @example
   * ```ts
   * const missing = await registry.findMissingPacks(workflow, { objectInfo: await cloud.getObjectInfo() });
   * for (const p of missing.packs) console.log(p.id, p.version, p.classTypes.join(', '));
   * console.log('no pack provides', missing.unknown);
   * ```
   */
  findMissingPacks(workflow: unknown, options: FindMissingPacksOptions): Promise<MissingPacks> {
    try {
      checkOptions(options, FIND_MISSING_PACKS_OPTIONS, 'findMissingPacks()');
    } catch (err) {
      return Promise.reject(err);
    }
    const signal = options?.signal;
    const lookup = {
      nodeForClass: (className: string) => this.getNodeForClass(className, signal ? { signal } : undefined),
      nodes: (ids: string[]) => this.getNodes(ids, signal ? { signal } : undefined),
    };
    return packFinder().then((m) => m.findMissingPacks(workflow, options, lookup, this.#packOfClass));
  }

  /** A GET of the registry without credentials, the wire's nulls made regular. */
  #read<T>(p: string, schema: Typed<T>, options?: RequestOptions, query?: Query): Promise<WithResponse<T>> {
    return this.#transport.request<T>({ method: 'GET', path: p, query, auth: false, normalize: nullArraysToEmpty, schema, options });
  }

  /**
   * Pages of nodes from `prepare()`'s list. When the list has no node at all
   * (the first page's `total` is 0), a filter value that only resembles the
   * registry's (`Linux` for `POSIX :: Linux`) is warned about.
   */
  #pages(prepare: () => Promise<{ path: string; query: Query; first: number; auth: boolean }>, options?: RequestOptions): PagePromise<Page<Node>> {
    return new PagePromise(async () => {
      const { path: p, query, first, auth } = await prepare();
      const fetchPage = (page: number) =>
        this.#transport.request<PageBody<Node>>({ method: 'GET', path: p, query: { ...query, page }, auth, normalize: nullArraysToEmpty, schema: rules.NodePage, options });
      const r = await fetchPage(first);
      // Only a search that found nothing loads the hint (a file of its own in the browser build).
      if (r.data.total === 0 && r.data.nodes.length === 0) (await import('./filter-hint.ts')).warnUnmatchedFilters(this.#transport.log, query);
      return { data: new Page(r, fetchPage, options?.signal), response: r.response };
    });
  }
}


// What only some apps use loads on first use: `findMissingPacks`'s logic, and publishing (in the browser build each is
// a file of its own, with its own copy of the error classes it throws: `instanceof` holds by name, see `errors.ts`).
const packFinder = /* @__PURE__ */ onFirstUse(() => import('./missing-packs.ts'));
const publishing = /* @__PURE__ */ onFirstUse(() => import('./publish.ts'));
