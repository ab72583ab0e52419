/**
 * The registry's route table: the spec's five routes (search, create a node,
 * a publisher's nodes, delete a publisher, the publishers) with one named
 * handler each, then the routes beyond them (`registry-versions.ts`).
 *
 * @module
 */
import { routeTable, type RequestContext, type Route, type RouteRow } from './dispatch.ts';
import { booleanParam } from './http.ts';
import { HttpError, sendEmpty, sendJson } from './reply.ts';
import { paginate, type NodeFilter, type Publisher, type RegistryState } from './registry.ts';
import { validateCreateNode } from './registry-validate.ts';
import { VERSION_ROUTES } from './registry-versions.ts';

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

/** `GET /nodes/search`: the search envelope of the nodes matching `search` and the other filters. */
function searchNodes(state: RegistryState, ctx: RequestContext): void {
  const q = ctx.query;
  const filter: NodeFilter = { include_banned: booleanParam(q, 'include_banned') };
  for (const key of ['search', 'repository_url_search', 'platform_node_search', 'supported_os', 'supported_accelerator'] as const) {
    const v = q.get(key);
    if (v !== null && v.trim() !== '') filter[key] = v.trim();
  }
  sendJson(ctx.res, 200, paginate(state.listNodes(filter), q));
}

/** `POST /publishers/{publisherId}/nodes`: creates a node (Bearer). */
async function postPublisherNode(state: RegistryState, ctx: RequestContext): Promise<void> {
  const publisher = authorize(state, ctx);
  const body = validateCreateNode(await ctx.readJson(), publisher.id);
  if (publisher.status === 'PublisherStatusBanned') throw new HttpError(403, `Publisher ${publisher.id} is banned`);
  sendJson(ctx.res, 200, state.createNode(publisher.id, body));
}

/** `GET /publishers/{publisherId}/nodes/v2`: a publisher's nodes, paged (Bearer). */
function getPublisherNodes(state: RegistryState, ctx: RequestContext): void {
  const publisher = authorize(state, ctx);
  const nodes = state.listNodes({ publisherId: publisher.id, include_banned: booleanParam(ctx.query, 'include_banned') });
  sendJson(ctx.res, 200, paginate(nodes, ctx.query));
}

/** `DELETE /publishers/{publisherId}`: 204; its nodes become deleted (Bearer). */
function deletePublisher(state: RegistryState, ctx: RequestContext): void {
  const publisher = authorize(state, ctx);
  state.deletePublisher(publisher.id);
  sendEmpty(ctx.res, 204);
}

/** `GET /publishers`: every publisher, sorted by id, whatever the credentials. */
function getPublishers(state: RegistryState, ctx: RequestContext): void {
  const all = [...state.publishers.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  sendJson(ctx.res, 200, structuredClone(all));
}

/** The registry's table. */
const REGISTRY_ROUTES: readonly RouteRow<RegistryState>[] = [
  ['GET /nodes/search', searchNodes],
  ['POST /publishers/:publisherId/nodes', postPublisherNode],
  ['GET /publishers/:publisherId/nodes/v2', getPublisherNodes],
  ['DELETE /publishers/:publisherId', deletePublisher],
  ['GET /publishers', getPublishers],
  // After `/nodes/search`, which the first-registered rule lets win over `/nodes/:nodeId`.
  ...VERSION_ROUTES,
];

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
  return routeTable(state, REGISTRY_ROUTES);
}
