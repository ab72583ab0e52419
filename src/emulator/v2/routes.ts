/**
 * Every route of the emulated Comfy API v2 server (personalities `v2` and
 * `v2-real`) as one table: jobs (`jobs-routes.ts`), the event stream
 * (`events.ts`), assets (`assets-routes.ts`), `GET /api/v2/health`, and `GET
 * /api/object_info` (no key: what a client that validates, or converts
 * editor files, reads from the ComfyUI behind the server). Every handler
 * answers its errors in v2's envelope ({@link v2Handler}).
 *
 * @module
 */
import { routeTable, type RequestContext, type Route, type RouteRow } from '../dispatch.ts';
import { sendJson } from '../reply.ts';
import { ASSET_ROUTES } from './assets-routes.ts';
import { v2Handler } from './errors.ts';
import { EVENT_ROUTES } from './events.ts';
import { JOB_ROUTES } from './jobs-routes.ts';
import type { V2State } from './state.ts';

export { signedContentRoutes } from './assets-routes.ts';

/** `GET /api/v2/health`: `{ status: 'ok' }`. */
function getHealth(_state: V2State, ctx: RequestContext): void {
  sendJson(ctx.res, 200, { status: 'ok' });
}

/** `GET /api/object_info`: the nodes of the ComfyUI behind the server. */
function getObjectInfo(state: V2State, ctx: RequestContext): void {
  sendJson(ctx.res, 200, state.cloud.objectInfo());
}

/** The v2 table of the main server (the event stream before `GET /jobs/{id}/…` twins: first match wins). */
const V2_ROUTES: readonly RouteRow<V2State>[] = [
  ...EVENT_ROUTES,
  ...JOB_ROUTES,
  ...ASSET_ROUTES,
  ['GET /api/v2/health', getHealth],
  ['GET /api/object_info', getObjectInfo],
];

/** The v2 routes of the main server. */
export function v2Routes(state: V2State): Route[] {
  return routeTable(state, V2_ROUTES, v2Handler);
}
