/**
 * `RegistryClient`: the node registry (`registry-and-proxy.md`, endpoints 1–5).
 *
 * @module
 */
import { checkArgs, checkId } from '../args.ts';
import { InvalidArgumentError } from '../errors.ts';
import type { CreateNodeRequest, ListPublisherNodesParams, Node, Publisher, SearchNodesParams } from '../schemas/registry.ts';
import * as rules from '../schemas/rules.generated.ts';
import { type ClientOptions, type Credential, type RequestOptions } from '../transport/options.ts';
import { PagePromise } from '../transport/pages.ts';
import { APIPromise } from '../transport/promise.ts';
import { BEARER_SERVICE, Transport, path, type Query } from '../transport/transport.ts';
import { Page, type PageBody } from './pagination.ts';

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

  constructor(options: RegistryClientOptions = {}) {
    this.#transport = new Transport({ service: 'registry', options, credential: options.token, ...BEARER_SERVICE });
  }

  /**
   * `GET /nodes/search`: nodes across all publishers. No credentials are sent.
   * Defaults: page 1, limit 10.
   *
   * @example
   * ```ts
   * const page = await registry.searchNodes({ search: 'video', limit: 20 });
   * console.log(page.total, page.nodes.map((n) => n.name));
   * for await (const node of registry.searchNodes({ supported_accelerator: 'CUDA' })) {} // every page
   * ```
   */
  searchNodes(params: SearchNodesParams = {}, options?: RequestOptions): PagePromise<Page<Node>> {
    return this.#pages(() => {
      const p = checkArgs(rules.SearchNodesParams, params, 'params');
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
    return APIPromise.from(() => {
      checkId(publisherId, 'publisherId');
      const body = checkArgs(rules.CreateNodeRequest, node, 'node');
      return this.#transport.request<Node>({ method: 'POST', path: path`publishers/${publisherId}/nodes`, json: body, auth: true, schema: rules.Node, options });
    });
  }

  /**
   * `GET /publishers/{publisherId}/nodes/v2`: a publisher's nodes, paginated.
   * Needs the token. Parameters other than `page`, `limit` and
   * `include_banned` are passed through as query parameters.
   */
  listPublisherNodes(publisherId: string, params: ListPublisherNodesParams = {}, options?: RequestOptions): PagePromise<Page<Node>> {
    return this.#pages(() => {
      checkId(publisherId, 'publisherId');
      const p = checkArgs(rules.ListPublisherNodesParams, params, 'params');
      return { path: path`publishers/${publisherId}/nodes/v2`, query: { ...p, page: undefined }, first: p.page ?? 1, auth: true };
    }, options);
  }

  /** `DELETE /publishers/{publisherId}`. Needs the token. Resolves when the publisher is gone. */
  deletePublisher(publisherId: string, options?: RequestOptions): APIPromise<void> {
    return APIPromise.from(async () => {
      checkId(publisherId, 'publisherId');
      const { response } = await this.#transport.request({ method: 'DELETE', path: path`publishers/${publisherId}`, auth: true, options });
      return { data: undefined, response };
    });
  }

  /** `GET /publishers`: every publisher. No credentials are sent. */
  listPublishers(options?: RequestOptions): APIPromise<Publisher[]> {
    return APIPromise.from(() => this.#transport.request<Publisher[]>({ method: 'GET', path: 'publishers', auth: false, schema: rules.PublisherList, options }));
  }

  #pages(prepare: () => { path: string; query: Query; first: number; auth: boolean }, options?: RequestOptions): PagePromise<Page<Node>> {
    return new PagePromise(async () => {
      const { path: p, query, first, auth } = prepare();
      const fetchPage = (page: number) =>
        this.#transport.request<PageBody<Node>>({ method: 'GET', path: p, query: { ...query, page }, auth, schema: rules.NodePage, options });
      const r = await fetchPage(first);
      return { data: new Page(r, fetchPage, options?.signal), response: r.response };
    });
  }
}
