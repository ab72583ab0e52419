/**
 * Stopping one job on a local server without the atomic cancel, in an order
 * that cannot miss it. Its queue delete removes a pending job only and its
 * interrupt stops a running one only: sent together, an interrupt that lands
 * while the job still waits and a delete that lands after it started both
 * miss, and the job runs to its end. So: delete; look; interrupt while it
 * runs (delete again while it waits); look again; until the server shows the
 * job ended or gone, within `confirmWithin`.
 *
 * A stop that is one request (the atomic cancel, the cloud's queue delete,
 * which stops pending and running jobs alike) has no such gap: the server's
 * answer is its word that the job is stopped, and nothing is looked at.
 *
 * Beside it, the interrupt of what runs (`interrupt()`), which stops one job
 * with the same requests where the kind of server names none in its body.
 *
 * @module
 */
import { JobNotStoppedError, NotFoundError } from '../../errors.ts';
import { joinKeys, type OptionKeys } from '../../args.ts';
import { checkInterval, REQUEST_OPTIONS, type RequestOptions } from '../../transport/options.ts';
import type { WithResponse } from '../../transport/promise.ts';
import { backoff, type BackoffOptions } from '../../transport/backoff.ts';
import { sleep } from '../../transport/sleep.ts';
import type { Transport } from '../../transport/transport.ts';
import { checkArgsLater, checkId, checkOptions } from '../../args.ts';
import * as rules from '../../schemas/rules.generated.ts';
import { isFinalPhase, type JobRecord } from '../jobs.ts';
import type { InterruptOptions } from '../client-options.ts';
import type { ServerProtocol } from './types.ts';

/** One job's question to the server: its record, its status, or its stop. */
export type JobCall<T, O extends RequestOptions = RequestOptions> = (id: string, options?: O) => Promise<T>;

/** `cancel()`'s ids, one or a list, as the queue delete takes them (checked against their rule). */
export const checkPromptIds = (promptIds: string | string[]): Promise<string[]> =>
  checkArgsLater(rules.PromptIds, typeof promptIds === 'string' ? [promptIds] : promptIds, 'promptIds');

/** `POST /api/queue { delete: ids }`: the cloud stops those jobs pending or running; a local server removes pending ones. */
export const deleteFromQueue = (transport: Transport, ids: string[], options?: RequestOptions): Promise<WithResponse<unknown>> =>
  transport.request({ method: 'POST', path: 'api/queue', json: { delete: ids }, auth: true, options });

/** `POST /api/interrupt`, with `json` as the body when there is one. */
const interruptRoute = (transport: Transport, json: { prompt_id: string } | undefined, options: RequestOptions): Promise<WithResponse<unknown>> =>
  transport.request({ method: 'POST', path: 'api/interrupt', json, auth: true, options });

/**
 * `CloudClient.interrupt()` once this kind of server has it (or `promptId` names the job): `POST /api/interrupt` with
 * this kind's body (`interruptBody`); where that is none for one job (the cloud, whose interrupt stops every running
 * job of the account), the job is stopped with `stopJob` instead.
 *
 * @example
 * ```ts
 * await interrupt(transport, protocol, { promptId });
 * ```
 */
export async function interrupt(transport: Transport, protocol: ServerProtocol, options: InterruptOptions): Promise<WithResponse<unknown>> {
  const { promptId, ...request } = options;
  const id = promptId === undefined ? undefined : checkId(promptId, 'promptId');
  const json = protocol.interruptBody(id);
  if (id !== undefined && json === undefined) return { data: undefined, response: await protocol.stopJob(id, request) };
  return interruptRoute(transport, json, request);
}

/** Options of `stopJob`: the request's, and how long a stop of several requests looks for the job stopped. */
export interface StopJobOptions extends RequestOptions {
  /**
   * How long (ms) a stop that takes several requests (a local server without
   * the atomic cancel: delete, then interrupt while it runs) looks for the
   * job stopped before it rejects with {@link JobNotStoppedError}. Default
   * 10000. A stop that is one request is confirmed by the server's answer.
   */
  confirmWithin?: number;
}

/** The keys of {@link StopJobOptions}. */
export const STOP_JOB_OPTIONS = /* @__PURE__ */ joinKeys(REQUEST_OPTIONS, { confirmWithin: 1 } as const) satisfies OptionKeys<StopJobOptions>;

/** `stopJob()`'s options, checked (the keys, then `confirmWithin`) and returned. */
export function checkStopJobOptions(options: StopJobOptions | undefined): StopJobOptions | undefined {
  checkOptions(options, STOP_JOB_OPTIONS, 'stopJob()');
  checkInterval(options?.confirmWithin, 'confirmWithin');
  return options;
}

/** The default of {@link StopJobOptions.confirmWithin}. */
export const STOP_CONFIRM_MS = 10_000;
/** Gaps between looks, 25 ms doubling to a second: a server's interrupt takes effect when the running node checks for it. */
const LOOK_GAP: BackoffOptions = { first: 25, max: 1000 };

/** The options of one request of a stop: `confirmWithin` is the stop's, not the transport's. */
export function requestOptions(options: StopJobOptions | undefined): RequestOptions {
  const { confirmWithin: _, ...request } = options ?? {};
  return request;
}

/**
 * The ordered stop of one job on a local server, for the atomic cancel's
 * fallback (`atomicCancel`): resolves with the last answer once a look shows the job ended or
 * gone; rejects with {@link JobNotStoppedError} when none did within
 * `confirmWithin`, or with the error of a request that failed (a failed
 * delete is followed by the interrupt all the same).
 *
 * @example
 * ```ts
 * const stopJob = atomicCancel(transport, orderedStop(transport, jobRecords(transport)));
 * await stopJob(promptId, { confirmWithin: 5000 });
 * ```
 */
export function orderedStop(transport: Transport, record: JobCall<WithResponse<JobRecord>>): JobCall<Response, StopJobOptions> {
  const interrupt = (id: string, options: RequestOptions) => interruptRoute(transport, { prompt_id: id }, options);
  return async (id, options) => {
    const confirmWithin = options?.confirmWithin ?? STOP_CONFIRM_MS;
    const request = requestOptions(options);
    const deadline = AbortSignal.timeout(confirmWithin);
    const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;
    const bounded = { ...request, signal };
    let phase: 'pending' | 'running' | undefined;
    try {
      let answer = await deleteFromQueue(transport, [id], bounded).catch(async (err: unknown) => {
        // A failed delete must not spare a running job; the error still says the job may wait in the queue.
        await interrupt(id, bounded).catch(() => undefined);
        throw err;
      });
      for (let attempt = 0; ; attempt++) {
        const seen = await look(record, id, bounded);
        if (seen === 'stopped') return answer.response;
        phase = seen;
        // Still pending: the delete did not take. Running: it came after the job started.
        answer = await (seen === 'pending' ? deleteFromQueue(transport, [id], bounded) : interrupt(id, bounded));
        await sleep(backoff(attempt, LOOK_GAP), signal);
      }
    } catch (err) {
      if (deadline.aborted && !request.signal?.aborted) throw new JobNotStoppedError(id, phase, confirmWithin, { cause: err });
      throw err;
    }
  };
}

/** What the server shows of the job: ended or unknown (a local server forgets a job its delete removed) is `stopped`. */
async function look(record: JobCall<WithResponse<JobRecord>>, id: string, options: RequestOptions): Promise<'stopped' | 'pending' | 'running'> {
  try {
    const { phase } = (await record(id, options)).data;
    return isFinalPhase(phase) ? 'stopped' : phase === 'pending' ? 'pending' : 'running';
  } catch (err) {
    if (err instanceof NotFoundError) return 'stopped';
    throw err;
  }
}
