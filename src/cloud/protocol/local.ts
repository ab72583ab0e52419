/**
 * A self-hosted local server's protocol (`fixtures/local-server`): no status
 * route, so the status is the record (`/api/jobs/{id}`, else `/history` and
 * `/queue`); one job stopped by the atomic cancel where the server has it,
 * else in an order that cannot miss it (`stop.ts`): `POST /queue { delete }`
 * (pending only), then a look, then `POST /interrupt { prompt_id }` (that
 * prompt only, if it runs) while it runs, until it is seen stopped.
 *
 * The routes load on a client's first request about a job (`v1.ts`); what
 * needs no request, {@link LOCAL}, is at start.
 *
 * @module
 */
import * as rules from '../../schemas/rules.generated.ts';
import type { Transport } from '../../transport/transport.ts';
import { atomicCancel, jobRecords } from './routes.ts';
import { orderedStop } from './stop.ts';
import type { JobRoutes, ProtocolConstants } from './types.ts';

/** A local server's interrupt names the prompt it may stop; its jobs list takes its own filters. */
export const LOCAL: ProtocolConstants = {
  interruptBody: (promptId) => (promptId === undefined ? undefined : { prompt_id: promptId }),
  listJobsParams: rules.LocalListJobsParams,
};

/** A local server's routes of a job. */
export function localRoutes(transport: Transport): JobRoutes {
  const record = jobRecords(transport);
  return {
    status: record,
    record,
    stopJob: atomicCancel(transport, orderedStop(transport, record)),
  };
}
