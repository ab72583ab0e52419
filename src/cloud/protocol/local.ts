/**
 * A self-hosted local server's protocol (`fixtures/local-server`): no status
 * route, so the status is the record (`/api/jobs/{id}`, else `/history` and
 * `/queue`); one job stopped by the atomic cancel where the server has it,
 * else `POST /queue { delete }` (pending only) together with
 * `POST /interrupt { prompt_id }` (that prompt only, if it runs).
 *
 * @module
 */
import * as rules from '../../schemas/rules.generated.ts';
import type { Transport } from '../../transport/transport.ts';
import { atomicCancel, deleteFromQueue, jobRecords } from './routes.ts';
import type { ServerProtocol } from './types.ts';

/** A local server's protocol. */
export function localProtocol(transport: Transport): ServerProtocol {
  const record = jobRecords(transport);
  return {
    status: record,
    record,
    stopJob: atomicCancel(transport, async (id, options) => {
      // Both, whatever becomes of the other: a failed delete must not spare a running job.
      const [deleted, interrupted] = await Promise.allSettled([
        deleteFromQueue(transport, [id], options),
        transport.request({ method: 'POST', path: 'api/interrupt', json: { prompt_id: id }, auth: true, options }),
      ]);
      if (deleted.status === 'rejected') throw deleted.reason;
      if (interrupted.status === 'rejected') throw interrupted.reason;
      return interrupted.value.response;
    }),
    interruptBody: (promptId) => (promptId === undefined ? undefined : { prompt_id: promptId }),
    listJobsParams: rules.LocalListJobsParams,
  };
}
