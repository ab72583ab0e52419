/**
 * The HTTP routes of the emulated cloud workflow service, one handler per
 * route. What differs between the emulated servers is read from
 * `state.personality` (`personality.ts`): which routes exist, which shapes
 * they answer in (`cloud-records.ts`, `cloud-jobs-list.ts`), and whether
 * they are also served without the `/api` prefix (aliases of the same
 * handlers).
 *
 * @module
 */
import { contentTypeFor, extensionOf, type StoredFile } from './cloud-files.ts';
import { JobsQueryError, listJobs } from './cloud-jobs-list.ts';
import { readUpload } from './cloud-multipart.ts';
import type { Job } from './cloud-jobs.ts';
import { PromptRejection } from './cloud-nodes.ts';
import { historyOf, jobRecord, queueEntry, rawStatus, specStatus, type RecordDialect } from './cloud-records.ts';
import type { CloudState } from './cloud.ts';
import { isObject } from '../schemas/rule.ts';
import { routeMatcher, routeTable, type RequestContext, type Route, type RouteRow } from './dispatch.ts';
import type { MissingRouteHint } from './http.ts';
import { HttpError, sendEmpty, sendJson, sendText } from './reply.ts';
import { PERSONALITIES, type Personality, type PersonalityName } from './personality.ts';

const MiB = 1024 * 1024;

/**
 * Checks `X-API-Key`: 401 when missing, unknown or switched to
 * `unauthorized`; 402 `InsufficientCredits`; 429 `SubscriptionInactive`.
 * Returns the caller's lane: the key, or the shared lane when the
 * personality requires no key (a given key is then ignored).
 */
function authorize(state: CloudState, ctx: RequestContext): string {
  const raw = ctx.headers['x-api-key'];
  const key = (Array.isArray(raw) ? raw[0] : raw)?.trim() ?? '';
  if (!state.personality.requireKey) return state.laneOf(key);
  const mode = key ? state.keyMode(key) : undefined;
  if (!key || mode === undefined || mode === 'unauthorized') throw new HttpError(401, key ? 'Invalid API key' : 'Missing X-API-Key header', 'unauthorized');
  if (mode === 'insufficient_credits') throw new HttpError(402, 'Insufficient credits to run workflows; top up the account balance', 'InsufficientCredits');
  if (mode === 'inactive') throw new HttpError(429, 'The subscription is not active', 'SubscriptionInactive');
  return key;
}

/** The answer of `POST /api/queue` and `POST /api/interrupt`: `json`, or an empty 200 (`controlReplies: 'empty'`). */
function reply(state: CloudState, ctx: RequestContext, json: unknown): void {
  if (state.personality.controlReplies === 'empty') sendEmpty(ctx.res, 200, { 'Content-Length': '0' });
  else sendJson(ctx.res, 200, json);
}

async function handleUpload(state: CloudState, ctx: RequestContext, mask: boolean): Promise<void> {
  authorize(state, ctx);
  const { fields, file } = await readUpload(ctx.req, ctx.res, {
    fileField: 'image',
    maxFileBytes: state.maxUploadBytes,
    retainBytes: state.retainUploadBytes,
  });
  const type = fields.type || 'input';
  if (type !== 'input' && type !== 'temp') throw new HttpError(400, `type must be 'input' or 'temp', got ${JSON.stringify(type)}`);
  if (fields.overwrite !== undefined && !/^(true|false|1|0)$/i.test(fields.overwrite)) {
    throw new HttpError(400, `overwrite must be 'true' or 'false', got ${JSON.stringify(fields.overwrite)}`);
  }
  if (mask) {
    const rawRef = fields.original_ref;
    if (rawRef === undefined) throw new HttpError(400, "Missing part 'original_ref'");
    let ref: unknown;
    try {
      ref = JSON.parse(rawRef);
    } catch {
      throw new HttpError(400, 'original_ref is not valid JSON');
    }
    if (!isObject(ref) || typeof ref.filename !== 'string' || ref.filename === '') throw new HttpError(400, 'original_ref must be an object with a filename');
    const refType = typeof ref.type === 'string' && ref.type ? ref.type : 'input';
    if (!state.files.has(ref.filename, refType)) throw new HttpError(400, `original_ref names an unknown file: ${ref.filename} (${refType})`);
  }
  // Content-addressed: identical bytes get the same name, whatever they were called.
  const name = file.sha256 + extensionOf(file.filename);
  const stored: StoredFile = {
    name,
    type,
    size: file.size,
    contentType: contentTypeFor(name, file.contentType ?? 'application/octet-stream'),
    sha256: file.sha256,
    created: Date.now(),
    ...(file.data ? { data: file.data } : {}),
  };
  state.files.put(stored);
  sendJson(ctx.res, 200, { name, subfolder: '', type });
}

/** `POST /api/upload/image`: stores an input (or temp) file under the sha256 of its bytes. */
function postUploadImage(state: CloudState, ctx: RequestContext): Promise<void> {
  return handleUpload(state, ctx, false);
}

/** `POST /api/upload/mask`: as an image, with an `original_ref` naming a stored file. */
function postUploadMask(state: CloudState, ctx: RequestContext): Promise<void> {
  return handleUpload(state, ctx, true);
}

/** `GET /api/object_info`: the nodes the emulator runs. */
function getObjectInfo(state: CloudState, ctx: RequestContext): void {
  authorize(state, ctx);
  sendJson(ctx.res, 200, state.objectInfo());
}

/** `POST /api/prompt`: queues a workflow; a rejection in the local server's `{ error: { type, … }, node_errors }`. */
async function postPrompt(state: CloudState, ctx: RequestContext): Promise<void> {
  const key = authorize(state, ctx);
  try {
    let body: unknown;
    try {
      body = await ctx.readJson();
    } catch (err) {
      if (err instanceof HttpError && err.status !== 413) throw new PromptRejection('invalid_prompt', err.message);
      throw err;
    }
    if (body !== undefined && !isObject(body)) throw new PromptRejection('invalid_prompt', 'The request body must be a JSON object');
    const job = state.submit(key, body);
    sendJson(ctx.res, 200, { prompt_id: job.prompt_id, number: job.number, node_errors: {} });
  } catch (err) {
    if (!(err instanceof PromptRejection)) throw err;
    sendJson(ctx.res, 400, err.body);
  }
}

/** `GET /api/job/{id}/status`: `spec` or `raw` (the personality's `statusEndpoint`), or aiohttp's plain 404 where there is none. */
function getJobStatus(state: CloudState, ctx: RequestContext): void {
  const p = state.personality;
  // The local server has no such route: aiohttp's plain 404.
  if (p.statusEndpoint === false) return sendText(ctx.res, 404, '404: Not Found');
  const key = authorize(state, ctx);
  const job = state.engine.get(key, ctx.params.promptId ?? '');
  if (!job) throw new HttpError(404, 'Job not found');
  sendJson(ctx.res, 200, p.statusEndpoint === 'raw' ? rawStatus(job, state.engine.slotsFull(key)) : specStatus(job, state.recordClock()));
}

/** The record dialect of `/api/jobs` (the route exists only when the personality has one). */
function dialectOf(state: CloudState): RecordDialect {
  return state.personality.jobsApi as RecordDialect;
}

/** `GET /api/jobs`: the lane's records in the personality's dialect, listed per `cloud-jobs-list.ts`. */
function getJobs(state: CloudState, ctx: RequestContext): void {
  const key = authorize(state, ctx);
  try {
    sendJson(ctx.res, 200, listJobs(dialectOf(state), state.engine.jobsOf(key), ctx.query, state.recordClock()));
  } catch (err) {
    if (!(err instanceof JobsQueryError)) throw err;
    sendJson(ctx.res, 400, err.body);
  }
}

/** `GET /api/jobs/{id}`: one record; 404 `{ error: 'Job not found' }`. */
function getJob(state: CloudState, ctx: RequestContext): void {
  const key = authorize(state, ctx);
  const job = state.engine.get(key, ctx.params.promptId ?? '');
  if (!job) return sendJson(ctx.res, 404, { error: 'Job not found' });
  sendJson(ctx.res, 200, jobRecord(dialectOf(state), job, state.recordClock(), true));
}

/** `GET /api/history/{id}` and, as on the local server since long before `/api`, `GET /history/{id}`. */
function getHistory(state: CloudState, ctx: RequestContext): void {
  const key = authorize(state, ctx);
  sendJson(ctx.res, 200, historyOf(state.engine.get(key, ctx.params.promptId ?? ''), state.recordClock()));
}

/** `GET /api/queue`: the lane's running and pending jobs as `queueTuple` entries. */
function getQueue(state: CloudState, ctx: RequestContext): void {
  const key = authorize(state, ctx);
  const { running, pending } = state.engine.queued(key);
  const entry = (job: Job) => queueEntry(state.personality.queueTuple, job);
  sendJson(ctx.res, 200, { queue_running: running.map(entry), queue_pending: pending.map(entry) });
}

/** `POST /api/queue`: `{ delete: [ids] }` and/or `{ clear: true }`. */
async function postQueue(state: CloudState, ctx: RequestContext): Promise<void> {
  const p = state.personality;
  const key = authorize(state, ctx);
  const body = (await ctx.readJson()) ?? {};
  if (!isObject(body)) throw new HttpError(400, 'Body must be a JSON object');
  const del = body.delete;
  if (del !== undefined && (!Array.isArray(del) || del.some((id) => typeof id !== 'string'))) {
    throw new HttpError(400, 'delete must be an array of prompt_id strings');
  }
  if (body.clear !== undefined && typeof body.clear !== 'boolean') throw new HttpError(400, 'clear must be a boolean');
  if (del && state.lateDeletes) await state.untilNotPending(key, del as string[]);
  const drop = (ids: readonly string[]) => (p.deleteRunning ? state.engine.cancel(key, ids) : state.engine.remove(key, ids));
  const deleted = [...(del ? drop(del as string[]) : []), ...(body.clear ? drop(state.engine.pendingIds(key)) : [])];
  reply(state, ctx, { deleted });
}

/**
 * `POST /api/jobs/{id}/cancel` (the atomic cancel of newer servers): stops the
 * job wherever it is, pending or running (`execution_interrupted`); 200
 * `{ cancelled: true }`, or `{ cancelled: false }` for a finished or unknown
 * job ("nothing to do").
 */
async function postJobCancel(state: CloudState, ctx: RequestContext): Promise<void> {
  const key = authorize(state, ctx);
  await ctx.readBody();
  const cancelled = state.engine.cancel(key, [ctx.params.promptId ?? '']);
  sendJson(ctx.res, 200, { cancelled: cancelled.length > 0 });
}

/** `POST /api/jobs/cancel { job_ids }`: a batch; 200 `{ cancelled: [ids] }`, or 404 with nothing cancelled when any id is unknown. */
async function postJobsCancel(state: CloudState, ctx: RequestContext): Promise<void> {
  const key = authorize(state, ctx);
  const body = await ctx.readJson();
  const ids = isObject(body) ? body.job_ids : undefined;
  if (!Array.isArray(ids) || ids.length === 0 || ids.some((id) => typeof id !== 'string')) throw new HttpError(400, 'job_ids must be a non-empty array of prompt_id strings');
  const unknown = (ids as string[]).filter((id) => !state.engine.get(key, id));
  if (unknown.length) throw new HttpError(404, `Unknown job ${unknown[0]}${unknown.length > 1 ? ` (+${unknown.length - 1} more)` : ''}; nothing cancelled`);
  sendJson(ctx.res, 200, { cancelled: state.engine.cancel(key, ids as string[]) });
}

/** `POST /api/interrupt`: stops the lane's running jobs (`by-prompt`: only an optional `{ prompt_id }`). */
async function postInterrupt(state: CloudState, ctx: RequestContext): Promise<void> {
  const key = authorize(state, ctx);
  let only: string | undefined;
  if (state.personality.interrupt === 'all') {
    await ctx.readBody(); // read and ignored
  } else {
    const body = await ctx.readJson();
    only = isObject(body) && typeof body.prompt_id === 'string' && body.prompt_id !== '' ? body.prompt_id : undefined;
  }
  if (!state.ignoreInterrupts) state.engine.interrupt(key, only);
  reply(state, ctx, {});
}

/** `GET /api/view`: 302 to a signed URL, or the file itself in `direct` mode. */
async function getView(state: CloudState, ctx: RequestContext): Promise<void> {
  authorize(state, ctx);
  const filename = ctx.query.get('filename');
  if (!filename) throw new HttpError(400, 'filename is required');
  const type = ctx.query.get('type') || 'output';
  const file = state.files.get(filename, type);
  if (!file) throw new HttpError(404, `No ${type} file named ${filename}`);
  if (state.viewMode === 'direct') {
    await state.files.serve(ctx.req, ctx.res, file);
    return;
  }
  const location = ctx.origin + state.signer.sign(filename, type, state.now() + state.signedUrlTtlMs);
  ctx.res.writeHead(302, { Location: location, 'Content-Length': '0', 'Cache-Control': 'no-store' });
  ctx.res.end();
}

/** `GET /signed/{token}`: the file a signed URL names; 403 with credentials or a bad signature, 410 expired. */
async function getSigned(state: CloudState, ctx: RequestContext): Promise<void> {
  // The signed URL is fetched without credentials; one that arrives with them means the client leaked its key.
  if (ctx.headers['x-api-key'] !== undefined || ctx.headers.authorization !== undefined) {
    throw new HttpError(403, 'Signed URLs must be fetched without X-API-Key or Authorization', 'forbidden');
  }
  const target = state.signer.verify(ctx.params.token ?? '', ctx.query, state.now());
  if (target === 'forbidden') throw new HttpError(403, 'Invalid signature', 'forbidden');
  if (target === 'expired') throw new HttpError(410, 'Signed URL expired', 'expired');
  const file = state.files.get(target.filename, target.type);
  if (!file) throw new HttpError(404, `No ${target.type} file named ${target.filename}`);
  await state.files.serve(ctx.req, ctx.res, file);
}

const jobsApi = { when: (s: CloudState) => s.personality.jobsApi !== false };
const history = { when: (s: CloudState) => s.personality.history };
const atomicCancel = { when: (s: CloudState) => s.personality.atomicCancel };

/** The cloud's table; rows with `when` exist only for the personalities that serve them. */
const CLOUD_ROUTES: readonly RouteRow<CloudState>[] = [
  ['GET /api/object_info', getObjectInfo],
  ['POST /api/upload/image', postUploadImage],
  ['POST /api/upload/mask', postUploadMask],
  ['POST /api/prompt', postPrompt, { bodyLimit: 16 * MiB }],
  ['GET /api/job/:promptId/status', getJobStatus],
  ['GET /api/jobs', getJobs, jobsApi],
  ['GET /api/jobs/:promptId', getJob, jobsApi],
  ['GET /api/history/:promptId', getHistory, history],
  ['GET /history/:promptId', getHistory, history],
  ['GET /api/queue', getQueue],
  ['POST /api/queue', postQueue],
  ['POST /api/jobs/:promptId/cancel', postJobCancel, atomicCancel],
  ['POST /api/jobs/cancel', postJobsCancel, atomicCancel],
  ['POST /api/interrupt', postInterrupt],
  ['GET /api/view', getView],
  ['GET /signed/:token', getSigned],
];

/** Adds `/x` aliases (the same handlers) of every `/api/x` route not already served bare. */
function withBareAliases(routes: readonly Route[]): Route[] {
  const taken = new Set(routes.map((r) => `${r.method} ${r.path}`));
  const aliases = routes
    .filter((r) => r.path.startsWith('/api/'))
    .map((r) => ({ ...r, path: r.path.slice('/api'.length) }))
    .filter((r) => !taken.has(`${r.method} ${r.path}`));
  return [...routes, ...aliases];
}

/**
 * The cloud routes, for `state.personality`. Decisions where the spec is silent:
 *
 * - Every `/api` route checks the key and its mode (401/402/429); error bodies
 *   are `{ error, message }`, except `POST /api/prompt` rejections, which use
 *   the local server's `{ error: { type, message, details, extra_info }, node_errors }`.
 *   Without `requireKey` (local) no key is checked and everyone shares one lane.
 * - Uploads: name = sha256 of the bytes + the original extension; `subfolder`
 *   ignored (`''`); above `maxUploadBytes` → 400 `file_too_large`.
 * - `GET /api/job/{id}/status` (`statusEndpoint`): `spec` → `{ status }`, plus
 *   `outputs` when completed and `error` when failed; `raw` → the live cloud's
 *   `{ id, status, created_at, updated_at, last_state_update?, error_message? }`
 *   with raw states (`submitted`/`queued_limited` pending, `preparing`/`executing`
 *   running, `success`, `error`/`non_retryable_error`/`lost`, `cancelled`);
 *   404 for unknown ids and other keys' jobs. `false` → 404 `text/plain` `404: Not Found`.
 * - `GET /api/jobs[/{id}]` (`jobsApi`): records in the cloud's or the local
 *   server's shape (`cloud-records.ts`); list parameters per `cloud-jobs-list.ts`;
 *   unknown id → 404 `{ error: 'Job not found' }`.
 * - `GET /api/history/{id}` and `/history/{id}` (`history`): `{}` until finished.
 * - Outputs show in status, records and history `outputsDelayMs` after the job's end.
 * - `GET /api/queue`: the lane's jobs as `queueTuple` entries (`cloud-records.ts`).
 * - `POST /api/queue`: `{ delete: [ids] }` and/or `{ clear: true }`; ids of
 *   other keys and finished jobs are ignored. With `deleteRunning` pending and
 *   running jobs are cancelled (`execution_interrupted`, running ones also
 *   `executing` null); without, pending ones are removed silently and running
 *   ones untouched. Answers `{ deleted }`, or an empty 200 (`controlReplies`).
 *   With `lateDeletes` a delete is held until the pending jobs it names have
 *   left the queue (it comes too late for them).
 * - `POST /api/jobs/{id}/cancel` and `POST /api/jobs/cancel { job_ids }`
 *   (`atomicCancel`): see {@link postJobCancel} and {@link postJobsCancel}.
 * - `POST /api/prompt` takes the client's `prompt_id` with `chosenIds`.
 * - `POST /api/interrupt`: `by-prompt` honours an optional `{ prompt_id }` (a
 *   prompt that is not running is a no-op; no id stops every running job of
 *   the lane); `all` ignores the body. Answers `{}`, or an empty 200. With
 *   `ignoreInterrupts` it stops nothing.
 * - `GET /api/view`: 302 to `/signed/<token>?expires&sig` (or 200 with the
 *   file in `direct` mode); the signed route refuses any `X-API-Key`/`Authorization`
 *   with 403, a bad signature with 403, an expired one with 410.
 * - With `bareRoutes` every `/api/x` route is also served as `/x`.
 */
export function cloudRoutes(state: CloudState): Route[] {
  const routes = routeTable(state, CLOUD_ROUTES);
  return state.personality.bareRoutes ? withBareAliases(routes) : routes;
}

/** Why each built-in personality lacks a route another one serves. */
const LACKS: Record<PersonalityName, string> = {
  spec: 'the documents show none',
  cloud: 'the live service has none',
  local: 'a local server has none',
  v2: 'Comfy API v2 has none: it serves /api/v2/*',
  'v2-real': 'Comfy API v2 has none: it serves /api/v2/*',
};

/** The order a hint suggests personalities in: the default first. */
const SUGGESTED: readonly PersonalityName[] = ['cloud', 'local', 'spec'];

let builtInTables: Array<[PersonalityName, ReturnType<typeof routeMatcher>]> | undefined;

/**
 * The 404 of a path `personality` does not serve but another built-in one
 * does, naming which and how to start it (the route itself is in the SDK's
 * error already), e.g. `the 'spec'
 * personality does not serve this route (the documents show none); the
 * 'cloud' and 'local' personalities do: startEmulator({ personality:
 * 'cloud' }) or platformui emulator --personality cloud`. A path no
 * personality serves keeps the router's default. The body stays the JSON
 * ErrorResponse of every other 404, so a client reads it as before (a JSON
 * 404 is no missing route to it; the atomic cancel falls back on any 404).
 *
 * A local server (and a variant of it, e.g. one older than `/api/jobs`)
 * answers what aiohttp does instead, `text/plain` `404: Not Found`, byte for
 * byte: that bare 404 is how clients tell a missing route from an unknown job.
 */
export function missingRouteHint(personality: Personality): MissingRouteHint {
  return (method, path, segments) => {
    if (personality.name === 'local') return { text: '404: Not Found' };
    // A v2 server's missing route: aiohttp's plain 404 on the real one, the usual JSON 404 on the spec's.
    if (personality.v2) return personality.v2.logs ? undefined : { text: '404: Not Found' };
    // Only the route tables are read: no handler runs, so no state is needed.
    builtInTables ??= SUGGESTED.map((name) => [name, routeMatcher(cloudRoutes({ personality: PERSONALITIES[name] } as CloudState))]);
    const builtIn = PERSONALITIES[personality.name] === personality;
    const serving = builtInTables.filter(([name, serves]) => (!builtIn || name !== personality.name) && serves(method, segments)).map(([name]) => name);
    const first = serving[0];
    if (first === undefined) return undefined;
    const who = builtIn ? `the '${personality.name}' personality does not serve this route (${LACKS[personality.name]})` : `this emulator's personality (a variant of '${personality.name}') does not serve this route`;
    const names = serving.map((n) => `'${n}'`);
    const them = names.length === 1 ? `the ${names[0]} personality does` : `the ${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} personalities do`;
    return `${who}; ${them}: startEmulator({ personality: '${first}' }) or platformui emulator --personality ${first}`;
  };
}
