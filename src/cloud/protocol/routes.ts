/**
 * The pieces both kinds of server share: the job record (`/api/jobs/{id}`,
 * else a local server's `/history` and `/queue`), the queue delete and the
 * atomic cancel (`POST /api/jobs/{id}/cancel`, newer servers), each route
 * that a server may lack remembered per client.
 *
 * @module
 */
import { APIError, NotFoundError } from '../../errors.ts';
import type { History, JobRecordBody, Queue } from '../../schemas/cloud.ts';
import * as rules from '../../schemas/rules.generated.ts';
import type { RequestOptions } from '../../transport/options.ts';
import type { WithResponse } from '../../transport/promise.ts';
import { path } from '../../transport/path.ts';
import type { Transport } from '../../transport/transport.ts';
import { recordFromHistory, toJobRecord, toQueueState, type JobRecord } from '../jobs.ts';
import { requestOptions, type StopJobOptions } from './stop.ts';

/** One job's question to the server: its record, its status, or its stop. */
export type JobCall<T, O extends RequestOptions = RequestOptions> = (id: string, options?: O) => Promise<T>;

/** A 404 whose body is not JSON: the route does not exist here (aiohttp's `404: Not Found`), as opposed to an unknown job. */
export const routeMissing = (err: unknown): boolean => err instanceof NotFoundError && (err.body === undefined || typeof err.body === 'string');

/** `POST /api/queue { delete: ids }`: the cloud stops those jobs pending or running; a local server removes pending ones. */
export const deleteFromQueue = (transport: Transport, ids: string[], options?: RequestOptions): Promise<WithResponse<unknown>> =>
  transport.request({ method: 'POST', path: 'api/queue', json: { delete: ids }, auth: true, options });

/** Job records from `/api/jobs/{id}`; remembers a server without it (old local ones), then reads `/history/{id}` and `/queue`. */
export function jobRecords(transport: Transport): JobCall<WithResponse<JobRecord>> {
  let jobsApi: boolean | undefined;
  const history = (id: string, options?: RequestOptions) =>
    transport.request<History>({ method: 'GET', path: path`api/history/${id}`, auth: true, schema: rules.History, options });

  /** A local server's answer: history when the job ended, else its place in the queue; `undefined` when unknown. */
  async function fromHistory(id: string, options?: RequestOptions): Promise<WithResponse<JobRecord> | undefined> {
    const h = await history(id, options);
    const ended = recordFromHistory(id, h.data);
    if (ended) return { data: ended, response: h.response };
    const q = await transport.request<Queue>({ method: 'GET', path: 'api/queue', auth: true, schema: rules.Queue, options });
    const queue = toQueueState(q.data);
    const has = (list: typeof queue.queue_running) => list.some((item) => item.promptId === id);
    if (has(queue.queue_running)) return { data: toJobRecord({ id, status: 'in_progress' }), response: q.response };
    if (has(queue.queue_pending)) return { data: toJobRecord({ id, status: 'pending' }), response: q.response };
    // It may have ended between the two reads.
    const again = await history(id, options);
    const late = recordFromHistory(id, again.data);
    return late ? { data: late, response: again.response } : undefined;
  }

  return async (id, options) => {
    if (jobsApi !== false) {
      try {
        const r = await transport.request<JobRecordBody>({ method: 'GET', path: path`api/jobs/${id}`, auth: true, schema: rules.JobRecordBody, options });
        jobsApi = true;
        return { data: toJobRecord(r.data), response: r.response };
      } catch (err) {
        // A JSON 404 ({"error":"Job not found"}) is this job unknown; a bare one is a server without the jobs API.
        if (!routeMissing(err) || jobsApi === true) throw err;
        jobsApi = false;
      }
    }
    const found = await fromHistory(id, options);
    if (found) return found;
    throw new NotFoundError({ status: 404, body: { error: 'Job not found' }, method: 'GET', url: transport.displayUrl(path`api/history/${id}`) });
  };
}

/**
 * Stops one job with `POST /api/jobs/{id}/cancel`, which stops it wherever it
 * is and answers 200 for a finished or unknown one (servers after 2026-06;
 * the cloud's editor uses it); else with `fallback`, what that kind did
 * before. A server without the route (404 or 405) is remembered: later stops
 * go straight to the fallback.
 */
export function atomicCancel(transport: Transport, fallback: JobCall<Response, StopJobOptions>): JobCall<Response, StopJobOptions> {
  let exists: boolean | undefined;
  return async (id, options) => {
    if (exists !== false) {
      try {
        const r = await transport.request({ method: 'POST', path: path`api/jobs/${id}/cancel`, auth: true, options: requestOptions(options) });
        exists = true;
        return r.response;
      } catch (err) {
        if (!(err instanceof APIError && (err.status === 404 || err.status === 405))) throw err;
        // Once seen working, a 404 is about this job, not the route: the fallback is harmless either way.
        exists ??= false;
      }
    }
    return fallback(id, options);
  };
}
