/**
 * The registry routes beyond the spec's five (issue 15): one node, its
 * versions, installs, the pack providing a node class, the `/nodes` list, bulk
 * version lookups, and publishing a version with an upload to a second origin.
 * Their state lives on {@link RegistryState}; the routes are added by
 * `registryRoutes`.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { isObject } from '../schemas/rule.ts';
import { routeTable, type RequestContext, type Route, type RouteRow } from './dispatch.ts';
import { booleanParam } from './http.ts';
import { HttpError, sendJson } from './reply.ts';
import { paginate, SEMVER, type Node, type RegistryState, type StoredNode, type StoredVersion } from './registry.ts';

// Where they were first defined; they live with the registry's state now.
export { EMULATOR_PAT, SEMVER, type InstallRecord, type StoredVersion, type UploadSlot } from './registry.ts';

/** Body `{"message": …}` as the live registry sends for some errors (banned node, invalid token). */
function sendMessageOnly(ctx: RequestContext, status: number, message: string): void {
  sendJson(ctx.res, status, { message });
}

function versionView(v: StoredVersion, withReason: boolean): StoredVersion {
  const copy = structuredClone(v);
  if (!withReason) delete copy.status_reason;
  else copy.status_reason ??= '';
  return copy;
}

/**
 * Resolves a node id for the node-scoped routes: exact id, else a seeded id
 * equal ignoring case (the caller decides to redirect). 404 otherwise.
 */
function findNode(state: RegistryState, id: string): { stored: StoredNode; exact: boolean } {
  const exact = state.nodes.get(id);
  if (exact) return { stored: exact, exact: true };
  const lower = id.toLowerCase();
  for (const stored of state.nodes.values()) if (stored.node.id.toLowerCase() === lower) return { stored, exact: false };
  throw new HttpError(404, `Node ${id} not found`);
}

function exactNode(state: RegistryState, id: string): StoredNode {
  const stored = state.nodes.get(id);
  if (!stored) throw new HttpError(404, `Node ${id} not found`);
  return stored;
}

/** Ranking of packs for one class: preempting first, then lower `search_ranking`, then more `downloads`, then id. */
export function rankPacks(className: string, nodes: Node[]): Node[] {
  const pre = (n: Node) => (n.preempted_platform_node_names?.includes(className) ? 0 : 1);
  return [...nodes].sort(
    (a, b) =>
      pre(a) - pre(b) ||
      (a.search_ranking ?? Number.MAX_SAFE_INTEGER) - (b.search_ranking ?? Number.MAX_SAFE_INTEGER) ||
      (b.downloads ?? 0) - (a.downloads ?? 0) ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

const SORTABLE = new Set(['downloads', 'search_ranking', 'created_at', 'github_stars', 'rating', 'name', 'id']);

/** `GET /nodes`: the search envelope of the listed nodes, filtered by `node_id`, platform and `sort`. */
function listNodes(state: RegistryState, ctx: RequestContext): void {
  const q = ctx.query;
  const ids = q.getAll('node_id').flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  const filter = {
    include_banned: booleanParam(q, 'include_banned'),
    ...(q.get('supported_os')?.trim() ? { supported_os: q.get('supported_os')!.trim() } : {}),
    ...(q.get('supported_accelerator')?.trim() ? { supported_accelerator: q.get('supported_accelerator')!.trim() } : {}),
  };
  let nodes = state.listNodes(filter);
  if (ids.length > 0) {
    const wanted = new Set(ids);
    nodes = nodes.filter((n) => wanted.has(n.id));
  }
  const sorts = q
    .getAll('sort')
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const [field = '', dir = ''] = s.split(';');
      return { field: field.trim(), desc: dir.trim().toLowerCase() === 'desc' };
    })
    .filter((s) => SORTABLE.has(s.field));
  if (sorts.length > 0) {
    nodes = [...nodes].sort((a, b) => {
      for (const { field, desc } of sorts) {
        const x = (a as unknown as Record<string, unknown>)[field] as string | number | undefined;
        const y = (b as unknown as Record<string, unknown>)[field] as string | number | undefined;
        if (x === y) continue;
        const c = x === undefined ? 1 : y === undefined ? -1 : x < y ? -1 : 1;
        return desc ? -c : c;
      }
      return 0;
    });
  }
  sendJson(ctx.res, 200, paginate(nodes, q));
}

/** `GET /nodes/{nodeId}`: the node; 302 to its exact id when only its case differs; 403 banned. */
function getNode(state: RegistryState, ctx: RequestContext): void {
  const id = ctx.params.nodeId ?? '';
  const { stored, exact } = findNode(state, id);
  if (!exact) {
    ctx.res.writeHead(302, { Location: `/nodes/${encodeURIComponent(stored.node.id)}`, 'Content-Length': '0' });
    ctx.res.end();
    return;
  }
  if (stored.node.status === 'NodeStatusBanned') return sendMessageOnly(ctx, 403, 'Node Banned');
  sendJson(ctx.res, 200, state.view(stored));
}

/** `GET /nodes/{nodeId}/versions`: its versions in stored order, filtered by `statuses`. */
function getNodeVersions(state: RegistryState, ctx: RequestContext): void {
  const stored = exactNode(state, ctx.params.nodeId ?? '');
  const statuses = ctx.query.getAll('statuses').flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  const withReason = booleanParam(ctx.query, 'include_status_reason');
  const all = state.versions.get(stored.node.id) ?? [];
  const out = all.filter((v) => statuses.length === 0 || statuses.includes(v.status ?? '')).map((v) => versionView(v, withReason));
  sendJson(ctx.res, 200, out);
}

/** `GET /nodes/{nodeId}/versions/{version}`: one version; 404. */
function getNodeVersion(state: RegistryState, ctx: RequestContext): void {
  const stored = exactNode(state, ctx.params.nodeId ?? '');
  const version = ctx.params.version ?? '';
  const found = state.versions.get(stored.node.id)?.find((v) => v.version === version);
  if (!found) throw new HttpError(404, `Version ${version} of node ${stored.node.id} not found`);
  sendJson(ctx.res, 200, versionView(found, booleanParam(ctx.query, 'include_status_reason')));
}

/** `GET /nodes/{nodeId}/install`: the version to install (default the latest), counted as a download. */
function getInstall(state: RegistryState, ctx: RequestContext): void {
  const stored = exactNode(state, ctx.params.nodeId ?? '');
  if (stored.node.status === 'NodeStatusBanned') return sendMessageOnly(ctx, 403, 'Node Banned');
  const wanted = ctx.query.get('version') ?? stored.node.latest_version?.version;
  const found = wanted === undefined ? undefined : state.versions.get(stored.node.id)?.find((v) => v.version === wanted);
  if (!found) throw new HttpError(404, `Version ${wanted ?? '(latest)'} of node ${stored.node.id} not found`);
  stored.node.downloads = (stored.node.downloads ?? 0) + 1;
  state.installs.push({ nodeId: stored.node.id, version: found.version ?? '', time: state.now().toISOString() });
  sendJson(ctx.res, 200, versionView(found, false));
}

/** `GET /platform-nodes/{className}/node`: the best-ranked active pack providing the class; 404. */
function getPlatformNodePack(state: RegistryState, ctx: RequestContext): void {
  const className = ctx.params.className ?? '';
  const candidates = (state.classes.get(className) ?? [])
    .map((id) => state.nodes.get(id))
    .filter((s): s is StoredNode => s !== undefined && s.node.status === 'NodeStatusActive')
    .map((s) => state.view(s));
  const [best] = rankPacks(className, candidates);
  if (!best) throw new HttpError(404, `No node pack provides ${className}`);
  sendJson(ctx.res, 200, best);
}

/** `POST /bulk/nodes/versions`: each asked version, `success`, `not_found` or `error`. */
async function postBulkVersions(state: RegistryState, ctx: RequestContext): Promise<void> {
  const body = await ctx.readJson();
  if (!isObject(body) || !Array.isArray(body.node_versions)) throw new HttpError(400, 'node_versions: must be an array of { node_id, version }', 'bad_request');
  const results = body.node_versions.map((item: unknown) => {
    const identifier = {
      node_id: isObject(item) && typeof item.node_id === 'string' ? item.node_id : '',
      version: isObject(item) && typeof item.version === 'string' ? item.version : '',
    };
    if (!isObject(item) || typeof item.node_id !== 'string' || item.node_id === '' || typeof item.version !== 'string' || item.version === '') {
      return { status: 'error', error_message: 'node_id and version are required strings', identifier };
    }
    const v = state.versions.get(item.node_id)?.find((x) => x.version === item.version);
    if (!v) return { status: 'not_found', identifier };
    return { status: 'success', node_version: versionView(v, false), identifier };
  });
  sendJson(ctx.res, 200, { node_versions: results });
}

/** `POST /publishers/{publisherId}/nodes/{nodeId}/versions`: publishes a pending version and its signed upload URL. */
async function postPublisherVersion(state: RegistryState, ctx: RequestContext): Promise<void> {
  const body = await ctx.readJson();
  if (!isObject(body)) throw new HttpError(400, 'body: must be { personal_access_token, node, node_version }', 'bad_request');
  const publisherId = ctx.params.publisherId ?? '';
  const nodeId = ctx.params.nodeId ?? '';
  const token = body.personal_access_token;
  const scope = typeof token === 'string' ? state.personalAccessTokens.get(token) : undefined;
  if (!scope) return sendMessageOnly(ctx, 400, 'Invalid personal access token');
  if (!scope.has('*') && !scope.has(publisherId)) throw new HttpError(403, `Personal access token may not act on publisher ${publisherId}`);
  const publisher = state.publishers.get(publisherId);
  if (!publisher) throw new HttpError(404, `Publisher ${publisherId} not found`);
  if (publisher.status === 'PublisherStatusBanned') throw new HttpError(403, `Publisher ${publisherId} is banned`);
  const stored = state.nodes.get(nodeId);
  if (!stored || stored.publisherId !== publisherId) throw new HttpError(404, `Node ${nodeId} not found under publisher ${publisherId}`);
  const nv = body.node_version;
  if (!isObject(nv) || typeof nv.version !== 'string' || !SEMVER.test(nv.version)) {
    throw new HttpError(400, 'node_version.version: is required and must be a semantic version', 'bad_request');
  }
  const list = state.versions.get(nodeId) ?? [];
  if (list.some((v) => v.version === nv.version)) throw new HttpError(400, `Version ${nv.version} of node ${nodeId} already exists`, 'bad_request');
  const { status: _s, id: _i, downloadUrl: _d, node_id: _n, createdAt: _c, ...fields } = nv as Record<string, unknown>;
  const created: StoredVersion = {
    ...(fields as Partial<StoredVersion>),
    id: state.uuid(),
    node_id: nodeId,
    version: nv.version,
    createdAt: state.now().toISOString(),
    deprecated: typeof nv.deprecated === 'boolean' ? nv.deprecated : false,
    downloadUrl: '',
    status: 'NodeVersionStatusPending',
    status_reason: 'Awaiting upload',
  };
  list.push(created);
  state.versions.set(nodeId, list);
  const uploadToken = state.uuid().replace(/-/g, '');
  state.uploads.set(uploadToken, { token: uploadToken, publisherId, nodeId, version: nv.version, mainOrigin: ctx.origin });
  const origin = state.uploadOrigin ?? ctx.origin;
  // Signed in the query, as live storage does (`X-Goog-Signature`): redaction hides it in errors and logs.
  const signedUrl = `${origin}/registry-uploads/${encodeURIComponent(nodeId)}/${encodeURIComponent(nv.version)}/node.zip?X-Goog-Signature=${uploadToken}`;
  sendJson(ctx.res, 201, { signedUrl, node_version: versionView(created, false) });
}

/** `GET /registry-downloads/{nodeId}/{version}/node.zip`: an uploaded archive; 404 before. */
function getDownload(state: RegistryState, ctx: RequestContext): void {
  const { nodeId = '', version = '' } = ctx.params;
  const slot = [...state.uploads.values()].reverse().find((u) => u.nodeId === nodeId && u.version === version && u.bytes);
  if (!slot?.bytes) throw new HttpError(404, `No archive for ${nodeId}@${version}`);
  ctx.res.writeHead(200, { 'Content-Type': 'application/zip', 'Content-Length': String(slot.bytes.length) });
  ctx.res.end(ctx.method === 'HEAD' ? undefined : slot.bytes);
}

/**
 * The routes beyond the spec's five, as rows of the registry's table (all
 * without auth unless said):
 *
 * - `GET /nodes/:nodeId`: the node; `302` with a relative `Location` when the
 *   id matches a stored id only ignoring case; `403 {"message":"Node Banned"}`
 *   for a banned node; a deleted node is served with its status; `404`.
 * - `GET /nodes/:nodeId/versions`: bare array in stored (creation, shuffled)
 *   order; `statuses` repeated keys filter; `include_status_reason=true`.
 * - `GET /nodes/:nodeId/versions/:version`: one version by version string; 404.
 * - `GET /nodes/:nodeId/install[?version=]`: the version (default: latest);
 *   increments `downloads` and records `state.installs`. 403 (message-only)
 *   for a banned node.
 * - `GET /platform-nodes/:className/node`: the first-ranked active pack
 *   (see {@link rankPacks}); banned/deleted packs never; 404.
 * - `GET /nodes`: like search's envelope; `node_id` repeated, `supported_os`,
 *   `supported_accelerator`, `include_banned`, `sort` (`field` or
 *   `field;desc`, repeated; unknown fields ignored); `timestamp`, `latest`,
 *   `platformui_version`, `form_factor` accepted and ignored.
 * - `POST /bulk/nodes/versions`: per-item `success` / `not_found` / `error`.
 * - `POST /publishers/:publisherId/nodes/:nodeId/versions`: publish (token in
 *   the body): 400 `{"message":"Invalid personal access token"}`, 403 for a
 *   token of another publisher or a banned publisher, 404 unknown
 *   publisher/node (or node of another publisher), 400 malformed or duplicate
 *   version; `201 { signedUrl, node_version }` with a pending version whose
 *   `downloadUrl` is `""` until the archive is uploaded.
 * - `GET /registry-downloads/:nodeId/:version/node.zip`: an uploaded archive.
 */
export const VERSION_ROUTES: readonly RouteRow<RegistryState>[] = [
  ['GET /nodes', listNodes],
  ['GET /nodes/:nodeId', getNode],
  ['GET /nodes/:nodeId/versions', getNodeVersions],
  ['GET /nodes/:nodeId/versions/:version', getNodeVersion],
  ['GET /nodes/:nodeId/install', getInstall],
  ['GET /platform-nodes/:className/node', getPlatformNodePack],
  ['POST /bulk/nodes/versions', postBulkVersions],
  ['POST /publishers/:publisherId/nodes/:nodeId/versions', postPublisherVersion],
  ['GET /registry-downloads/:nodeId/:version/node.zip', getDownload],
];

/** Largest archive the upload route accepts. */
export const UPLOAD_LIMIT = 64 * 1024 * 1024;

/** `PUT /registry-uploads/{nodeId}/{version}/node.zip` (second origin): stores the archive of a signed slot. */
async function putUpload(state: RegistryState, ctx: RequestContext): Promise<void> {
  const slot = state.uploads.get(ctx.query.get('X-Goog-Signature') ?? '');
  if (!slot || slot.nodeId !== ctx.params.nodeId || slot.version !== ctx.params.version) throw new HttpError(403, 'Invalid or expired signature', 'forbidden');
  const type = (ctx.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/zip') throw new HttpError(400, `Content-Type must be application/zip, got ${type || 'none'}`, 'bad_request');
  const bytes = await ctx.readBody();
  slot.bytes = bytes;
  slot.size = bytes.length;
  slot.sha256 = createHash('sha256').update(bytes).digest('hex');
  slot.contentType = type;
  slot.uploadedAt = state.now().toISOString();
  const version = state.versions.get(slot.nodeId)?.find((v) => v.version === slot.version);
  if (version) version.downloadUrl = `${slot.mainOrigin}/registry-downloads/${encodeURIComponent(slot.nodeId)}/${encodeURIComponent(slot.version)}/node.zip`;
  ctx.res.writeHead(200, { 'Content-Length': '0' });
  ctx.res.end();
}

/** The table of the second origin's upload route. */
const UPLOAD_ROUTES: readonly RouteRow<RegistryState>[] = [
  ['PUT /registry-uploads/:nodeId/:version/node.zip', putUpload, { bodyLimit: UPLOAD_LIMIT }],
];

/**
 * The signed-upload route, served on the second origin (the proxy's result
 * server, which refuses any request carrying credentials before routing):
 * `PUT /registry-uploads/:nodeId/:version/node.zip?X-Goog-Signature=…` with
 * `Content-Type: application/zip` stores
 * the bytes (size and sha256 on `state.uploads`) and sets the version's
 * `downloadUrl` to `/registry-downloads/...` on the main origin; `200` with an
 * empty body. An unknown signature, or one for another node or version,
 * `403` (as storage answers a bad signature); other
 * content types `400`.
 */
export function uploadRoutes(state: RegistryState): Route[] {
  return routeTable(state, UPLOAD_ROUTES);
}
