/**
 * Comfy API v2's protocol behind the seam (`types.ts`): a thin shell that
 * loads the v2 chunk (`../v2/backend.ts`) on first use, so that a client of
 * another kind never downloads it and a v2 client's start costs no more.
 *
 * @module
 */
import type { Typed } from '../../schemas/rule.ts';
import type { ListJobsParams } from '../../schemas/cloud.ts';
import type { Transport } from '../../transport/transport.ts';
import type { V2Backend } from '../v2/backend.ts';
import type { ServerProtocol } from './types.ts';

/** A v2 server's protocol; `backend()` loads the v2 chunk once. */
export function v2Protocol(transport: Transport): ServerProtocol & { backend(): Promise<V2Backend> } {
  let loading: Promise<V2Backend> | undefined;
  const backend = () =>
    (loading ??= import('../v2/backend.ts').then((m) => new m.V2Backend(transport)));
  return {
    backend,
    status: async (id, options) => (await backend()).job(id, options),
    record: async (id, options) => (await backend()).job(id, options),
    stopJob: async (id, options) => (await backend()).stopJob(id, options),
    interruptBody: () => undefined,
    // Checked in the v2 chunk (`V2Backend.listPage`), still before any request.
    listJobsParams: 'unknown' as Typed<ListJobsParams>,
  };
}
