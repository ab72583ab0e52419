/**
 * Every route of the emulated Comfy API v2 server (personalities `v2` and
 * `v2-real`): jobs (`jobs-routes.ts`), the event stream (`events.ts`),
 * assets (`assets-routes.ts`), `GET /api/v2/health`, and `GET
 * /api/object_info` (no key: what a client that validates, or converts
 * editor files, reads from the ComfyUI behind the server).
 *
 * @module
 */
import { sendJson, type Route } from '../http.ts';
import { assetRoutes } from './assets-routes.ts';
import { eventRoutes } from './events.ts';
import { jobRoutes } from './jobs-routes.ts';
import type { V2State } from './state.ts';

export { signedContentRoutes } from './assets-routes.ts';

/** The v2 routes of the main server (event stream before `GET /jobs/{id}/…` twins: first match wins). */
export function v2Routes(state: V2State): Route[] {
  return [
    ...eventRoutes(state),
    ...jobRoutes(state),
    ...assetRoutes(state),
    { method: 'GET', path: '/api/v2/health', handler: (ctx) => sendJson(ctx.res, 200, { status: 'ok' }) },
    { method: 'GET', path: '/api/object_info', handler: (ctx) => sendJson(ctx.res, 200, state.cloud.objectInfo()) },
  ];
}
