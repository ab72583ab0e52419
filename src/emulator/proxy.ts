/**
 * The partner-proxy service of the emulator (`registry-and-proxy.md`,
 * endpoints 6–7): AI image jobs that start as `CREATED`, move on a timer and
 * notify `webhook_url` on every status, and can be read back by id. Nothing
 * is computed; results are a small fixed PNG served by a second, credential-free
 * origin ({@link resultsListener}), as the live proxy's result host is.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SILENT, type Log } from '../transport/log.ts';
import { requireBearer } from './auth.ts';
import { routeTable, type RequestContext, type Route, type RouteRow } from './dispatch.ts';
import { REQUEST_LOG_LIMIT, Router } from './http.ts';
import { HttpError, sendError, sendJson } from './reply.ts';
import { CREDENTIAL_HEADERS, PROXY_BODY_LIMIT, RESULT_PNG, type ProxyOperation, type ProxyState } from './proxy-state.ts';
import { validateJob } from './proxy-validate.ts';

// The proxy's state and checks, importable from here as they always were.
export {
  CREDENTIAL_HEADERS,
  DEFAULT_STEP_MS,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  FAIL_IMAGE_PREFIX,
  isLoopback,
  PROXY_BODY_LIMIT,
  ProxyState,
  RELIGHT_STYLES,
  type ProxyOperation,
  type ProxyShape,
  type ProxyStateOptions,
  type ProxyTask,
  type TaskStatus,
  type WebhookAttempt,
} from './proxy-state.ts';
export { validateJob } from './proxy-validate.ts';

/** Starts a task of `operation` (Bearer): `{ data: task }`, then the `CREATED` notification. */
async function startTask(state: ProxyState, ctx: RequestContext, operation: ProxyOperation): Promise<void> {
  requireBearer(ctx, (token) => state.tokens.has(token));
  const body = validateJob(operation, await ctx.readJson());
  const task = state.start(operation, ctx.params.vendor ?? 'vendor', body, ctx.origin);
  sendJson(ctx.res, 200, state.view(task));
  state.notify(task);
}

/** `POST /proxy/{vendor}/v1/ai/image-relight`. */
function postImageRelight(state: ProxyState, ctx: RequestContext): Promise<void> {
  return startTask(state, ctx, 'image-relight');
}

/** `POST /proxy/{vendor}/v1/ai/skin-enhancer/creative`. */
function postSkinEnhancer(state: ProxyState, ctx: RequestContext): Promise<void> {
  return startTask(state, ctx, 'skin-enhancer/creative');
}

/** A task's record in `state.shape` (Bearer); 404 `not_found` for an unknown id, another operation's, or a hidden one. */
function taskStatus(state: ProxyState, ctx: RequestContext, operation: 'image-relight' | 'skin-enhancer'): void {
  requireBearer(ctx, (token) => state.tokens.has(token));
  const id = ctx.params.task_id ?? '';
  const task = state.lookup(operation, id);
  if (!task) throw new HttpError(404, `No ${operation} task ${id}`, 'not_found');
  sendJson(ctx.res, 200, state.statusView(task));
}

/** `GET /proxy/{vendor}/v1/ai/image-relight/{task_id}`. */
function getImageRelight(state: ProxyState, ctx: RequestContext): void {
  taskStatus(state, ctx, 'image-relight');
}

/** `GET /proxy/{vendor}/v1/ai/skin-enhancer/{task_id}`, whatever the mode. */
function getSkinEnhancer(state: ProxyState, ctx: RequestContext): void {
  taskStatus(state, ctx, 'skin-enhancer');
}

/** `GET /proxy/results/{taskId}/{file}`: a completed task's PNG, without auth; 404 until then. */
function getResult(state: ProxyState, ctx: RequestContext): void {
  const { taskId = '', file = '' } = ctx.params;
  if (!state.hasResult(taskId, file)) throw new HttpError(404, `No result ${file} for task ${taskId}`);
  ctx.res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': String(RESULT_PNG.length) });
  ctx.res.end(ctx.method === 'HEAD' ? undefined : RESULT_PNG);
}

/** `GET /redirect/{taskId}/{file}` (result host): 302 with an absolute `Location` to the result. */
function getRedirect(state: ProxyState, ctx: RequestContext): void {
  const { taskId = '', file = '' } = ctx.params;
  if (!state.hasResult(taskId, file)) throw new HttpError(404, `No result ${file} for task ${taskId}`);
  const location = `${state.resultsOrigin ?? ctx.origin}/proxy/results/${encodeURIComponent(taskId)}/${encodeURIComponent(file)}`;
  ctx.res.writeHead(302, { Location: location, 'Content-Length': '0' });
  ctx.res.end();
}

/** The proxy's table on the main origin. */
const PROXY_ROUTES: readonly RouteRow<ProxyState>[] = [
  ['POST /proxy/:vendor/v1/ai/image-relight', postImageRelight, { bodyLimit: PROXY_BODY_LIMIT }],
  ['POST /proxy/:vendor/v1/ai/skin-enhancer/creative', postSkinEnhancer, { bodyLimit: PROXY_BODY_LIMIT }],
  ['GET /proxy/:vendor/v1/ai/image-relight/:task_id', getImageRelight],
  ['GET /proxy/:vendor/v1/ai/skin-enhancer/:task_id', getSkinEnhancer],
  ['GET /proxy/results/:taskId/:file', getResult],
];

/** The result host's own table (after any extra routes it is given). */
const RESULT_ROUTES: readonly RouteRow<ProxyState>[] = [
  ['GET /proxy/results/:taskId/:file', getResult],
  ['GET /redirect/:taskId/:file', getRedirect],
];

/**
 * The proxy routes. Decisions where the spec is silent:
 *
 * - Any `:vendor` is accepted and recorded on the task.
 * - `image` is required; unknown members are 400.
 * - Statuses: `CREATED` → `IN_PROGRESS` → `COMPLETED` (or `FAILED`), one step
 *   every `stepMs`. The webhook receives `{ data: task }` for each of them,
 *   `CREATED` included, in order, but only on loopback; other hosts are
 *   accepted and never called (`webhook_skipped: 'non-loopback'`).
 * - `GET /proxy/:vendor/v1/ai/image-relight/:task_id` and
 *   `GET /proxy/:vendor/v1/ai/skin-enhancer/:task_id` (Bearer) answer the
 *   task's current record in `state.shape`; `404 not_found` for an unknown id,
 *   a task of the other operation, or during the task's `notFoundPolls`. Any
 *   `:vendor` finds the task.
 * - `GET /proxy/results/:taskId/:file` serves the results without auth, like
 *   a CDN link; 404 until the task is `COMPLETED`. The emulator's result URLs
 *   point at the separate result server ({@link resultsListener}); this route
 *   stays on the main origin for routers without one.
 */
export function proxyRoutes(state: ProxyState): Route[] {
  return routeTable(state, PROXY_ROUTES);
}

/**
 * The request listener of the result server: the host `generated` URLs point
 * at, on its own origin, like the live proxy's result host.
 *
 * - Every request is recorded in `state.resultRequests` first.
 * - Any request carrying a credential header ({@link CREDENTIAL_HEADERS}:
 *   `Authorization`, `Cookie`, `X-API-Key`, `Proxy-Authorization`) is refused
 *   with `401 { error: 'unauthorized' }`, whatever its path.
 * - `GET /proxy/results/:taskId/:file` serves a completed task's result PNG
 *   (404 otherwise); `GET /redirect/:taskId/:file` answers `302` with an
 *   absolute `Location` to that path, to test redirects.
 * - `state.resultFaults` applies (after the credential check).
 * - `extraRoutes` are served too, behind the same credential check (the
 *   emulator adds the registry's signed upload route, `PUT /registry-uploads/:nodeId/:version/node.zip`).
 */
export function resultsListener(state: ProxyState, log: Log = SILENT, extraRoutes: Route[] = []): (req: IncomingMessage, res: ServerResponse) => void {
  const router = new Router(state.resultFaults, 0, log).add(extraRoutes).add(routeTable(state, RESULT_ROUTES));
  return (req, res) => {
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    state.resultRequests.push({
      method: (req.method ?? 'GET').toUpperCase(),
      path: q >= 0 ? target.slice(0, q) : target,
      url: target,
      headers: { ...req.headers },
      time: Date.now(),
    });
    if (state.resultRequests.length > REQUEST_LOG_LIMIT) state.resultRequests.splice(0, state.resultRequests.length - REQUEST_LOG_LIMIT);
    const sent = CREDENTIAL_HEADERS.filter((h) => req.headers[h] !== undefined);
    if (sent.length > 0) {
      sendError(res, 401, 'unauthorized', `The result host takes no credentials; got ${sent.join(', ')}`);
      return;
    }
    router.listener(req, res);
  };
}
