/**
 * The v2 asset routes, one named handler per `METHOD /path`: upload
 * (BLAKE3 computed here, `expected_hash` checked, deduplicated by hash),
 * from-hash, HEAD by-hash, get, delete, content (302 to a signed URL on the
 * result host, or the bytes), and the signed route the result host serves.
 *
 * @module
 */
import { contentTypeFor } from '../cloud-files.ts';
import { isObject } from '../../schemas/rule.ts';
import { routeTable, type RequestContext, type Route, type RouteRow } from '../dispatch.ts';
import { sendEmpty, sendJson } from '../reply.ts';
import { enter } from './access.ts';
import type { AssetRecord } from './assets.ts';
import { serveContent } from './content.ts';
import { notFound, V2Error, v2Handler } from './errors.ts';
import { assetJson } from './render.ts';
import type { V2State } from './state.ts';
import { readV2Upload } from './upload.ts';

const HASH = /^blake3:[0-9a-f]{64}$/;
const MIN_EXPIRES_S = 60;
const MAX_EXPIRES_S = 604_800;

/** `expires_in` (seconds, 60–604800) of a field or body member, or undefined. */
function expiresIn(raw: unknown): number | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < MIN_EXPIRES_S || n > MAX_EXPIRES_S) throw new V2Error(422, 'invalid_request', `'expires_in' must be an integer between ${MIN_EXPIRES_S} and ${MAX_EXPIRES_S}.`);
  return n;
}

/** `POST /api/v2/assets`: 201 a new blob, 200 a known one (`created_new: false`); 409 `hash_mismatch` mints nothing. */
async function postAssets(state: V2State, ctx: RequestContext): Promise<void> {
  const lane = enter(state, ctx);
  state.counters.uploads++;
  const raw = ctx.headers['idempotency-key'];
  const key = state.behaviour.assetKeys === 'reject' ? (Array.isArray(raw) ? raw[0] : raw)?.trim() || undefined : undefined;
  if (key !== undefined) state.claimKey(lane, key, 'assets');
  try {
    const { fields, tags, file } = await readV2Upload(state, ctx);
    const filePath = fields.file_path || (state.behaviour.assetKeys === 'ignore' ? file.filename : '');
    if (!filePath) throw new V2Error(422, 'invalid_request', "'file_path' is required.");
    const expected = fields.expected_hash;
    if (expected && expected !== file.hash) {
      throw new V2Error(409, 'hash_mismatch', `The uploaded bytes hash to ${file.hash}, not ${expected}.`, { expected_hash: expected, computed_hash: file.hash });
    }
    const expires = expiresIn(fields.expires_in);
    const contentType = fields.content_type || file.contentType || contentTypeFor(filePath);
    const known = state.assets.blob(lane, file.hash);
    if (known) {
      const same = state.behaviour.fromHash === 'same' ? state.assets.recordOf(lane, file.hash) : undefined;
      const record = same ?? state.assets.mint(lane, known, filePath, tags, expires);
      return sendJson(ctx.res, 200, assetJson(state, record, ctx.origin, false));
    }
    const blob = state.assets.addBlob(lane, file.hash, file.data, file.size, contentType, filePath);
    sendJson(ctx.res, 201, assetJson(state, state.assets.mint(lane, blob, filePath, tags, expires), ctx.origin, true));
  } catch (err) {
    if (key !== undefined) state.releaseKey(lane, key, 'assets');
    throw err;
  }
}

/** `POST /api/v2/assets/from-hash`: a reference to bytes the server has; 404 `blob_not_found`. */
async function postFromHash(state: V2State, ctx: RequestContext): Promise<void> {
  const lane = enter(state, ctx);
  const body = await ctx.readJson();
  if (!isObject(body) || typeof body.hash !== 'string') throw new V2Error(422, 'invalid_request', "'hash' is required.");
  const tags = Array.isArray(body.tags) ? body.tags.filter((t): t is string => typeof t === 'string') : [];
  const expires = expiresIn(body.expires_in);
  const blob = state.assets.blob(lane, body.hash);
  if (!blob) throw new V2Error(404, 'blob_not_found', `No blob with hash ${body.hash}.`);
  const filePath = typeof body.file_path === 'string' && body.file_path ? body.file_path : blob.name;
  const existing = state.behaviour.fromHash === 'same'
    ? state.assets.recordOf(lane, blob.hash)
    : [...state.assets.records.values()].find((r) => r.lane === lane && r.blob.hash === blob.hash && r.filePath === filePath);
  if (existing) return sendJson(ctx.res, 200, assetJson(state, existing, ctx.origin, false));
  sendJson(ctx.res, 201, assetJson(state, state.assets.mint(lane, blob, filePath, tags, expires), ctx.origin, false));
}

/** `HEAD /api/v2/assets/by-hash/{hash}`: 200 when the caller may mint from it, else 404; no body either way. */
function headByHash(state: V2State, ctx: RequestContext): void {
  const lane = enter(state, ctx);
  const hash = ctx.params.hash ?? '';
  sendEmpty(ctx.res, HASH.test(hash) && state.assets.blob(lane, hash) ? 200 : 404, { 'Content-Length': '0' });
}

/** The record an id names: an asset record, or (real server) an output's signed token. */
function assetOf(state: V2State, ctx: RequestContext, lane: string): AssetRecord {
  const id = ctx.params.id ?? '';
  const record = state.assets.get(lane, id);
  if (record) return record;
  const token = state.behaviour.outputIds === 'token' ? state.readToken(id) : undefined;
  const job = token ? state.get(lane, token.jobId) : undefined;
  const file = token && job ? state.cloud.files.get(token.filename, token.type) : undefined;
  if (!token || !file) throw notFound('Asset');
  return { id, lane, blob: { hash: 'blake3:', size: file.size, contentType: file.contentType, name: file.name, type: file.type }, filePath: file.name, tags: [], created: file.created, expires: undefined, jobId: token.jobId };
}

/** `GET /api/v2/assets/{id}`: the Asset with a fresh `url`. */
function getAsset(state: V2State, ctx: RequestContext): void {
  sendJson(ctx.res, 200, assetJson(state, assetOf(state, ctx, enter(state, ctx)), ctx.origin));
}

/** `DELETE /api/v2/assets/{id}`: 204; the blob stays; again → 404. */
function deleteAsset(state: V2State, ctx: RequestContext): void {
  const lane = enter(state, ctx);
  if (!state.assets.delete(lane, ctx.params.id ?? '')) throw notFound('Asset');
  sendEmpty(ctx.res, 204);
}

/** `GET /api/v2/assets/{id}/content`: 302 to a signed URL on the result host (spec), or the bytes with Range (real). */
async function getContent(state: V2State, ctx: RequestContext): Promise<void> {
  const asset = assetOf(state, ctx, enter(state, ctx));
  const file = state.cloud.files.get(asset.blob.name, asset.blob.type);
  if (!file) throw new V2Error(404, 'output_unavailable', `The bytes of ${asset.filePath} are gone.`);
  if (state.behaviour.content === 'inline') return serveContent(state, ctx, file);
  const signed = state.cloud.signer.sign(file.name, file.type, state.cloud.now() + state.signedUrlTtlMs);
  ctx.res.writeHead(302, { Location: `${state.resultsOrigin ?? ctx.origin}/v2${signed}`, 'Content-Length': '0', 'Cache-Control': 'no-store' });
  ctx.res.end();
}

/** `GET /v2/signed/{token}` on the result host (which refuses credentials): the bytes, with Range; 403 forged, 410 expired. */
async function getSigned(state: V2State, ctx: RequestContext): Promise<void> {
  const target = state.cloud.signer.verify(ctx.params.token ?? '', ctx.query, state.cloud.now());
  if (target === 'forbidden') throw new V2Error(403, 'forbidden', 'Invalid signature.');
  if (target === 'expired') throw new V2Error(410, 'expired', 'Signed URL expired.');
  const file = state.cloud.files.get(target.filename, target.type);
  if (!file) throw notFound('File');
  await serveContent(state, ctx, file);
}

/** The asset table of the main server (`HEAD …/by-hash/{hash}` is served as the GET that HEAD is looked up as). */
export const ASSET_ROUTES: readonly RouteRow<V2State>[] = [
  ['POST /api/v2/assets', postAssets],
  ['POST /api/v2/assets/from-hash', postFromHash],
  ['GET /api/v2/assets/by-hash/:hash', headByHash],
  ['GET /api/v2/assets/:id', getAsset],
  ['DELETE /api/v2/assets/:id', deleteAsset],
  ['GET /api/v2/assets/:id/content', getContent],
];

/** The signed-content route of the result host. */
export function signedContentRoutes(state: V2State): Route[] {
  return routeTable(state, [['GET /v2/signed/:token', getSigned]], v2Handler);
}
