/**
 * The pieces both kinds of server share: the job record (`/api/jobs/{id}`,
 * else a local server's `/history` and `/queue`), the queue, the queue
 * delete and the atomic cancel (`POST /api/jobs/{id}/cancel`, newer servers), each route
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
import { toError } from '../../transport/to-error.ts';
import type { Transport } from '../../transport/transport.ts';
import { recordFromHistory, toJobRecord, toQueueState, type JobRecord, type QueueState } from '../jobs.ts';
import { requestOptions, type JobCall, type StopJobOptions } from './stop.ts';

export { deleteFromQueue, type JobCall } from './stop.ts';

/** A 404 whose body is not JSON: the route does not exist here (aiohttp's `404: Not Found`), as opposed to an unknown job. */
export const routeMissing = (err: unknown): boolean => err instanceof NotFoundError && (err.body === undefined || typeof err.body === 'string');

/** A route that may be missing (see {@link optionalRoute}). */
export interface OptionalRoute<A extends unknown[], T> {
  /** The request on the route. */
  call: (...args: A) => Promise<T>;
  /** Whether a failure of `call` says the route is missing here (default {@link routeMissing}). */
  missing?: (err: unknown) => boolean;
  /** What this server does instead. */
  fallback: (...args: A) => Promise<T>;
  /**
   * Once the route has answered, a failure that reads as "missing" is about
   * this call (a job unknown), not the route: `'throw'` it (default), or take
   * the `'fallback'` all the same (where the fallback is harmless either way).
   */
  afterAnswer?: 'throw' | 'fallback';
}

/**
 * The one memory of "this server lacks the route", per client: `call` until
 * the server shows it lacks the route, then `fallback` only, without asking
 * again. Unknown until the first answer.
 *
 * @example
 * ```ts
 * const status = optionalRoute({ call: (id) => statusRoute(id), fallback: (id) => record(id) });
 * ```
 */
export function optionalRoute<A extends unknown[], T>(route: OptionalRoute<A, T>): (...args: A) => Promise<T> {
  const { call, fallback, missing = routeMissing, afterAnswer = 'throw' } = route;
  let exists: boolean | undefined;
  return async (...args) => {
    if (exists !== false) {
      try {
        const answer = await call(...args);
        exists = true;
        return answer;
      } catch (err) {
        if (!missing(err) || (exists === true && afterAnswer === 'throw')) throw err;
        exists ??= false;
      }
    }
    return fallback(...args);
  };
}

/**
 * `GET /api/queue`, each entry normalized (`toQueueState`): `getQueue()`'s answer, and where a local server without
 * the jobs API shows a job that has not ended.
 */
export async function queueState(transport: Transport, options?: RequestOptions): Promise<WithResponse<QueueState>> {
  const q = await transport.request<Queue>({ method: 'GET', path: 'api/queue', auth: true, schema: rules.Queue, options });
  return { data: toQueueState(q.data), response: q.response };
}

/** Job records from `/api/jobs/{id}`; remembers a server without it (old local ones), then reads `/history/{id}` and `/queue`. */
export function jobRecords(transport: Transport): JobCall<WithResponse<JobRecord>> {
  const history = (id: string, options?: RequestOptions) =>
    transport.request<History>({ method: 'GET', path: path`api/history/${id}`, auth: true, schema: rules.History, options });

  /** A local server's answer: history when the job ended, else its place in the queue; `undefined` when unknown. */
  async function fromHistory(id: string, options?: RequestOptions): Promise<WithResponse<JobRecord> | undefined> {
    const h = await history(id, options);
    const ended = recordFromHistory(id, h.data);
    if (ended) return { data: ended, response: h.response };
    const { data: queue, response } = await queueState(transport, options);
    const has = (list: typeof queue.queue_running) => list.some((item) => item.promptId === id);
    if (has(queue.queue_running)) return { data: toJobRecord({ id, status: 'in_progress' }), response };
    if (has(queue.queue_pending)) return { data: toJobRecord({ id, status: 'pending' }), response };
    // It may have ended between the two reads.
    const again = await history(id, options);
    const late = recordFromHistory(id, again.data);
    return late ? { data: late, response: again.response } : undefined;
  }

  return optionalRoute({
    // A JSON 404 ({"error":"Job not found"}) is this job unknown; a bare one is a server without the jobs API.
    call: async (id: string, options?: RequestOptions) => {
      const r = await transport.request<JobRecordBody>({ method: 'GET', path: path`api/jobs/${id}`, auth: true, schema: rules.JobRecordBody, options });
      return { data: toJobRecord(r.data), response: r.response };
    },
    fallback: async (id: string, options?: RequestOptions) => {
      const found = await fromHistory(id, options);
      if (found) return found;
      // The answer a server with the jobs API gives for a job it does not know.
      throw toError({ kind: 'status', status: 404, body: { error: 'Job not found' }, method: 'GET', url: transport.displayUrl(path`api/history/${id}`), service: transport.service });
    },
  });
}

/**
 * Stops one job with `POST /api/jobs/{id}/cancel`, which stops it wherever it
 * is and answers 200 for a finished or unknown one (servers after 2026-06;
 * the cloud's editor uses it); else with `fallback`, what that kind did
 * before. A server without the route (404 or 405) is remembered: later stops
 * go straight to the fallback.
 */
export function atomicCancel(transport: Transport, fallback: JobCall<Response, StopJobOptions>): JobCall<Response, StopJobOptions> {
  return optionalRoute({
    call: async (id: string, options?: StopJobOptions) =>
      (await transport.request({ method: 'POST', path: path`api/jobs/${id}/cancel`, auth: true, options: requestOptions(options) })).response,
    missing: (err) => err instanceof APIError && (err.status === 404 || err.status === 405),
    fallback,
    // Once seen working, a 404 is about this job, not the route: the fallback is harmless either way.
    afterAnswer: 'fallback',
  });
}
