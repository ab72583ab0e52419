/**
 * The pieces both kinds of server share: the job record (`/api/jobs/{id}`,
 * else a local server's `/history` and `/queue`) and the atomic cancel
 * (`POST /api/jobs/{id}/cancel`, newer servers), each remembering per
 * client whether the server has the route.
 *
 * @module
 */
import { APIError, NotFoundError } from '../../errors.ts';
import type { History, JobRecordBody, Queue } from '../../schemas/cloud.ts';
import * as rules from '../../schemas/rules.generated.ts';
import type { RequestOptions } from '../../transport/options.ts';
import type { WithResponse } from '../../transport/promise.ts';
import { path, type Transport } from '../../transport/transport.ts';
import { recordFromHistory, toJobRecord, toQueueState, type JobRecord } from '../jobs.ts';

/** A 404 whose body is not JSON: the route does not exist here (aiohttp's `404: Not Found`), as opposed to an unknown job. */
export const routeMissing = (err: unknown): boolean => err instanceof NotFoundError && (err.body === undefined || typeof err.body === 'string');

/** Reads job records; remembers whether `/api/jobs/{id}` exists here (recent servers; old local ones only have `/history`). */
export class Records {
  #jobsApi: boolean | undefined;
  readonly #transport: Transport;
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** The job record from `/api/jobs/{id}`, else (a local server without it) from `/history/{id}` and `/queue`. */
  async read(id: string, options?: RequestOptions): Promise<WithResponse<JobRecord>> {
    if (this.#jobsApi !== false) {
      try {
        const r = await this.#transport.request<JobRecordBody>({ method: 'GET', path: path`api/jobs/${id}`, auth: true, schema: rules.JobRecordBody, options });
        this.#jobsApi = true;
        return { data: toJobRecord(r.data), response: r.response };
      } catch (err) {
        // A JSON 404 ({"error":"Job not found"}) is this job unknown; a bare one is a server without the jobs API.
        if (!routeMissing(err) || this.#jobsApi === true) throw err;
        this.#jobsApi = false;
      }
    }
    const found = await this.#fromHistory(id, options);
    if (found) return found;
    throw new NotFoundError({ status: 404, body: { error: 'Job not found' }, method: 'GET', url: this.#transport.displayUrl(path`api/history/${id}`) });
  }

  /** A local server's answer: history when the job ended, else its place in the queue; `undefined` when unknown. */
  async #fromHistory(id: string, options?: RequestOptions): Promise<WithResponse<JobRecord> | undefined> {
    const history = () => this.#transport.request<History>({ method: 'GET', path: path`api/history/${id}`, auth: true, schema: rules.History, options });
    const h = await history();
    const ended = recordFromHistory(id, h.data);
    if (ended) return { data: ended, response: h.response };
    const q = await this.#transport.request<Queue>({ method: 'GET', path: 'api/queue', auth: true, schema: rules.Queue, options });
    const queue = toQueueState(q.data);
    const has = (list: typeof queue.queue_running) => list.some((item) => item.promptId === id);
    if (has(queue.queue_running)) return { data: toJobRecord({ id, status: 'in_progress' }), response: q.response };
    if (has(queue.queue_pending)) return { data: toJobRecord({ id, status: 'pending' }), response: q.response };
    // It may have ended between the two reads.
    const again = await history();
    const late = recordFromHistory(id, again.data);
    return late ? { data: late, response: again.response } : undefined;
  }
}

/**
 * `POST /api/jobs/{id}/cancel`: stops one job wherever it is, and answers 200
 * for a finished or unknown one (servers after 2026-06; the cloud's editor
 * uses it). Remembers a server without it (404 or 405) and then answers
 * `false` at once, so the caller falls back to what that kind did before.
 */
export class AtomicCancel {
  #exists: boolean | undefined;
  readonly #transport: Transport;
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** The answer when the job was stopped this way; `undefined`: the server has no such route (use the fallback). */
  async stop(id: string, options?: RequestOptions): Promise<Response | undefined> {
    if (this.#exists === false) return undefined;
    try {
      const r = await this.#transport.request({ method: 'POST', path: path`api/jobs/${id}/cancel`, auth: true, options });
      this.#exists = true;
      return r.response;
    } catch (err) {
      const missing = err instanceof APIError && (err.status === 404 || err.status === 405);
      if (!missing) throw err;
      // Once seen working, a 404 is about this job, not the route: the fallback is harmless either way.
      if (this.#exists === undefined) this.#exists = false;
      return undefined;
    }
  }
}
