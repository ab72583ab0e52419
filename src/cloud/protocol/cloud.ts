/**
 * The cloud's protocol (also the seed documents', and any client with a
 * relay in front of the cloud: `keyless`). Status from
 * `/api/job/{id}/status` (raw states), records from `/api/jobs/{id}`; one
 * job stopped by the atomic cancel, else `POST /api/queue { delete }`, which
 * on the cloud stops pending and running jobs alike. Never an interrupt: the
 * cloud's takes no body and stops every running job of the account.
 *
 * @module
 */
import type { JobStatus } from '../../schemas/cloud.ts';
import * as rules from '../../schemas/rules.generated.ts';
import type { RequestOptions } from '../../transport/options.ts';
import type { WithResponse } from '../../transport/promise.ts';
import { path, type Transport } from '../../transport/transport.ts';
import { NotFoundError } from '../../errors.ts';
import { jobPhase, type JobStatusResult } from '../jobs.ts';
import { AtomicCancel, Records, routeMissing } from './routes.ts';
import type { ServerProtocol } from './types.ts';

/** The cloud service's protocol. */
export class CloudProtocol implements ServerProtocol {
  readonly kind = 'cloud';
  readonly #records: Records;
  readonly #cancel: AtomicCancel;
  /** Whether `GET /api/job/{id}/status` exists here: unknown until a status call says. */
  #statusEndpoint: boolean | undefined;

  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
    this.#records = new Records(transport);
    this.#cancel = new AtomicCancel(transport);
  }

  async status(id: string, options?: RequestOptions): Promise<WithResponse<JobStatusResult>> {
    if (this.#statusEndpoint !== false) {
      try {
        const r = await this.#transport.request<JobStatus>({ method: 'GET', path: path`api/job/${id}/status`, auth: true, schema: rules.JobStatus, options });
        this.#statusEndpoint = true;
        return { data: { ...r.data, phase: jobPhase(r.data.status) }, response: r.response };
      } catch (err) {
        // A JSON 404 is this job unknown; a bare one is the route missing.
        if (!routeMissing(err) || this.#statusEndpoint === true) throw err;
        this.#statusEndpoint = false;
      }
    }
    return this.#records.read(id, options);
  }

  record(id: string, options?: RequestOptions) {
    return this.#records.read(id, options);
  }

  async stopJob(id: string, options?: RequestOptions): Promise<Response> {
    const cancelled = await this.#cancel.stop(id, options);
    if (cancelled) return cancelled;
    return (await this.#transport.request({ method: 'POST', path: 'api/queue', json: { delete: [id] }, auth: true, options })).response;
  }

  interruptBody(): undefined {
    return undefined;
  }

  async lookup(id: string, options?: RequestOptions) {
    return this.status(id, options).catch((err: unknown) => {
      if (err instanceof NotFoundError && !routeMissing(err)) return undefined;
      throw err;
    });
  }
}
