/**
 * The cloud's protocol (also the seed documents', and any client with a
 * relay in front of the cloud: `keyless`). Status from
 * `/api/job/{id}/status` (raw states), records from `/api/jobs/{id}`; one
 * job stopped by the atomic cancel, else `POST /api/queue { delete }`, which
 * on the cloud stops pending and running jobs alike: one request, whose
 * answer is the server's word that the job is stopped (nothing is looked at
 * after it). Never an interrupt: the cloud's takes no body and stops every
 * running job of the account.
 *
 * The routes load on a client's first request about a job (`v1.ts`); what
 * needs no request, {@link CLOUD}, is at start.
 *
 * @module
 */
import type { JobStatus } from '../../schemas/cloud.ts';
import * as rules from '../../schemas/rules.generated.ts';
import { path, type Transport } from '../../transport/transport.ts';
import type { RequestOptions } from '../../transport/options.ts';
import { jobPhase } from '../jobs.ts';
import { atomicCancel, deleteFromQueue, jobRecords, optionalRoute } from './routes.ts';
import { requestOptions } from './stop.ts';
import type { JobRoutes, ProtocolConstants } from './types.ts';

/** The cloud's interrupt takes no body (it stops every running job of the account); its jobs list takes its own filters. */
export const CLOUD: ProtocolConstants = { interruptBody: () => undefined, listJobsParams: rules.CloudListJobsParams };

/** The cloud service's routes of a job. */
export function cloudRoutes(transport: Transport): JobRoutes {
  const record = jobRecords(transport);
  return {
    // A JSON 404 is this job unknown; a bare one is the route missing (a local server): its record answers instead.
    status: optionalRoute({
      call: async (id: string, options?: RequestOptions) => {
        const r = await transport.request<JobStatus>({ method: 'GET', path: path`api/job/${id}/status`, auth: true, schema: rules.JobStatus, options });
        return { data: { ...r.data, phase: jobPhase(r.data.status) }, response: r.response };
      },
      fallback: record,
    }),
    record,
    stopJob: atomicCancel(transport, async (id, options) => (await deleteFromQueue(transport, [id], requestOptions(options))).response),
  };
}
