/**
 * The cloud's and a local server's protocol behind the seam (`types.ts`): what
 * needs no request at start ({@link CLOUD}, {@link LOCAL}), and the requests
 * about a job (status, record, stop; the queue and the interrupt) loaded on a
 * client's first such request (issue 34: what `import { CloudClient }` loads at
 * start), through the one door {@link v1Routes}. In the browser build they are
 * a file of their own (`routes.browser.js`). Comfy API v2's protocol has its
 * own door (`v2.ts`).
 *
 * @module
 */
import type { Transport } from '../../transport/transport.ts';
import { CLOUD } from './cloud.ts';
import { LOCAL } from './local.ts';
import type { JobRoutes, ServerProtocol } from './types.ts';
import { onFirstUse } from '../../on-first-use.ts';

/**
 * The cloud's and a local server's routes, loaded once per process whoever asks first.
 *
 * @example
 * ```ts
 * const { queueState } = await v1Routes();
 * ```
 */
export const v1Routes = /* @__PURE__ */ onFirstUse(() => import('./v1-routes.ts'));

/**
 * A client's protocol for the cloud or a local server. Its routes are made on
 * the first request, once per client: each keeps, for that client, whether the
 * server lacks it (`routes.ts`' `optionalRoute`).
 *
 * @example
 * ```ts
 * const protocol = v1Protocol('local', transport);
 * const { data } = await protocol.record(promptId); // loads the routes first
 * ```
 */
export function v1Protocol(kind: 'cloud' | 'local', transport: Transport): ServerProtocol {
  let routes: Promise<JobRoutes> | undefined;
  const load = () => (routes ??= v1Routes().then((m) => (kind === 'local' ? m.localRoutes : m.cloudRoutes)(transport)));
  return {
    ...(kind === 'local' ? LOCAL : CLOUD),
    status: async (id, options) => (await load()).status(id, options),
    record: async (id, options) => (await load()).record(id, options),
    stopJob: async (id, options) => (await load()).stopJob(id, options),
  };
}
