/**
 * The job list of the cloud and a local server: `GET /api/jobs`, one page per
 * request, later pages by offset. (Comfy API v2: `v2/backend.ts`.)
 *
 * @module
 */
import type { JobList, ListJobsParams } from '../schemas/cloud.ts';
import * as rules from '../schemas/rules.generated.ts';
import type { RequestOptions } from '../transport/options.ts';
import type { WithResponse } from '../transport/promise.ts';
import type { Transport } from '../transport/transport.ts';
import { JobPage } from './jobs.ts';

/**
 * The first page of the list `params` asks for (checked already).
 *
 * @example
 * ```ts
 * const { data: page } = await firstJobPage(transport, { status: 'failed', limit: 20 });
 * ```
 */
export async function firstJobPage(transport: Transport, p: ListJobsParams, options?: RequestOptions): Promise<WithResponse<JobPage>> {
  const query = { ...p, status: Array.isArray(p.status) ? p.status.join(',') : p.status };
  const fetchPage = (offset: number) => transport.request<JobList>({ method: 'GET', path: 'api/jobs', query: offset === (p.offset ?? 0) ? query : { ...query, offset }, auth: true, schema: rules.JobList, options });
  const r = await fetchPage(p.offset ?? 0);
  return { data: new JobPage(r, fetchPage, options?.signal), response: r.response };
}
