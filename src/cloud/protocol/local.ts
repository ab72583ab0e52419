/**
 * A self-hosted local server's protocol (`fixtures/local-server`): no status
 * route, so the status is the record (`/api/jobs/{id}`, else `/history` and
 * `/queue`); one job stopped by the atomic cancel where the server has it,
 * else `POST /queue { delete }` (pending only) together with
 * `POST /interrupt { prompt_id }` (that prompt only, if it runs).
 *
 * @module
 */
import { NotFoundError } from '../../errors.ts';
import type { RequestOptions } from '../../transport/options.ts';
import type { Transport } from '../../transport/transport.ts';
import { AtomicCancel, Records } from './routes.ts';
import type { ServerProtocol } from './types.ts';

/** A local server's protocol. */
export class LocalProtocol implements ServerProtocol {
  readonly kind = 'local';
  readonly #records: Records;
  readonly #cancel: AtomicCancel;

  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
    this.#records = new Records(transport);
    this.#cancel = new AtomicCancel(transport);
  }

  status(id: string, options?: RequestOptions) {
    return this.#records.read(id, options);
  }

  record(id: string, options?: RequestOptions) {
    return this.#records.read(id, options);
  }

  async stopJob(id: string, options?: RequestOptions): Promise<Response> {
    const cancelled = await this.#cancel.stop(id, options);
    if (cancelled) return cancelled;
    // Both, whatever becomes of the other: a failed delete must not spare a running job.
    const results = await Promise.allSettled([
      this.#transport.request({ method: 'POST', path: 'api/queue', json: { delete: [id] }, auth: true, options }),
      this.#transport.request({ method: 'POST', path: 'api/interrupt', json: { prompt_id: id }, auth: true, options }),
    ]);
    for (const r of results) if (r.status === 'rejected') throw r.reason;
    return (results[1] as PromiseFulfilledResult<{ response: Response }>).value.response;
  }

  interruptBody(promptId: string | undefined) {
    return promptId === undefined ? undefined : { prompt_id: promptId };
  }

  async lookup(id: string, options?: RequestOptions) {
    return this.#records.read(id, options).catch((err: unknown) => {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    });
  }
}
