/**
 * A submission whose id is chosen before the request (issue 23): the SDK
 * sends `prompt_id`, so a job whose answer is lost can still be named. When
 * the answer is lost (a timeout, a reset, a 5xx after sending), the request
 * is never simply sent again: the job is looked up by its id for a bounded
 * window. Found: the submission succeeded. Not found: the caller gets an
 * error naming the job and saying it may exist (or, only if asked with
 * `resubmitUnconfirmed`, the same id is sent once more).
 *
 * @module
 */
import { APIConnectionError, APIError, APIUserAbortError } from '../errors.ts';
import type { SubmissionResponse } from '../schemas/cloud.ts';
import { describeError, type Log } from '../transport/log.ts';
import type { WithResponse } from '../transport/promise.ts';
import { backoff, type BackoffOptions } from '../transport/backoff.ts';
import { sleep } from '../transport/sleep.ts';

/** How long a lost submission is looked up by its id, by default (ms). */
export const CONFIRM_WITHIN_MS = 15_000;
/** The first look-up waits 100 ms (the request may still be on its way); later ones double, up to a second. */
const LOOKUP_GAP: BackoffOptions = { first: 100, max: 1_000 };
/** The least time one look-up is given to answer. */
const MIN_LOOKUP_TIMEOUT_MS = 1_000;

/** What a submission needs from its client. */
export interface SubmissionDeps {
  /** Sends `POST /api/prompt` once (a paid request: the transport never repeats it). */
  send(body: Record<string, unknown>): Promise<WithResponse<SubmissionResponse>>;
  /** The job's status; throws when the server does not know it (yet) or gives no answer. */
  lookup(id: string, timeout: number): Promise<WithResponse<unknown>>;
  log: Log;
  /** Per client: whether this server uses the ids it is sent (`undefined` until it has answered one). */
  honoursIds: { value: boolean | undefined };
}

/** Options of one submission. */
export interface SubmissionOptions {
  resubmitUnconfirmed?: boolean | undefined;
  confirmWithin?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Once aborted, nothing more is sent (a request already out is left to finish). */
  stopBefore?: AbortSignal | undefined;
  /** Awaited immediately before each send; a throw sends nothing and rejects with it (see `SubmitOptions.beforeSubmit`). */
  beforeSubmit?: ((promptId: string) => void | Promise<void>) | undefined;
}

/**
 * Whether a failed submission may have created its job: `'no'` (the request
 * provably never left), `'maybe'` (its answer was lost), or `undefined`: the
 * server answered, and a 4xx answer created no job.
 */
export function answerLost(err: unknown): 'no' | 'maybe' | undefined {
  if (err instanceof APIConnectionError) return err.sent;
  if (err instanceof APIError && (err.status >= 500 || err.status === 408)) return 'maybe';
  return undefined;
}

/**
 * Sends `body` with `prompt_id: id` and resolves with the server's answer, or
 * with the job found by its id after the answer was lost. Rejects with the
 * server's own error when it answered, else with an {@link APIConnectionError}
 * naming the job (`sent: 'no'`: it was never sent; `'maybe'`: it may exist).
 */
export async function submitWithId(deps: SubmissionDeps, body: Record<string, unknown>, id: string, options: SubmissionOptions = {}): Promise<WithResponse<SubmissionResponse>> {
  const { log, honoursIds } = deps;
  for (let sends = 1; ; sends++) {
    let failure: unknown;
    // Before every send, the second too: it comes a look-up window after the first, time enough for whatever the
    // caller checks (a queue worker's lock) to have changed.
    if (options.beforeSubmit) await options.beforeSubmit(id);
    // Abandoned before anything left: nothing to name.
    if (options.stopBefore?.aborted) throw new APIUserAbortError(undefined, { cause: options.stopBefore.reason });
    try {
      const r = await deps.send({ ...body, prompt_id: id });
      const answered = r.data?.prompt_id;
      // Only an answer that names a job says whether the id was used (an `error` body names none).
      if (typeof answered === 'string') {
        if (answered !== id && honoursIds.value !== false) {
          log.debug?.(`this server ignores the job ids it is sent (sent ${id}, got ${answered}): a lost answer cannot be looked up`, { sent: id, answered });
        }
        honoursIds.value = answered === id;
      }
      return r;
    } catch (err) {
      failure = err;
    }
    if (failure instanceof APIUserAbortError) throw abortedJob(failure, id);
    // After a first send whose answer was lost, nothing proves the job does not exist.
    const lost = sends > 1 ? 'maybe' : answerLost(failure);
    if (lost === undefined) throw failure;
    // A server that ignores chosen ids gave this job another: nothing to look up, nothing to name.
    if (honoursIds.value === false) throw namingJob(failure, undefined, lost);
    if (lost === 'no') throw namingJob(failure, id, lost);
    const window = options.confirmWithin ?? CONFIRM_WITHIN_MS;
    log.info?.(`job ${id}: its submission's answer was lost (${describeError(failure)}); looking it up for ${window} ms`, { promptId: id, windowMs: window });
    const found = await lookUp(deps, id, window, options.signal).catch((err: unknown) => {
      throw err instanceof APIUserAbortError ? abortedJob(err, id) : err;
    });
    if (found) {
      log.info?.(`job ${id}: found; the submission went through`, { promptId: id });
      return { data: { prompt_id: id, node_errors: {} } as SubmissionResponse, response: found.response };
    }
    // Never once more for a caller who has given up.
    const again = options.resubmitUnconfirmed === true && sends === 1 && !options.stopBefore?.aborted;
    log.warn?.(`job ${id}: its submission's answer was lost and the server does not show it after ${window} ms; ${again ? 'sending it once more (resubmitUnconfirmed)' : 'it may exist (not sent again)'}`, { promptId: id, windowMs: window });
    if (!again) throw namingJob(failure, id, 'maybe');
  }
}

/** The failure as a connection error naming the job (a 5xx after sending is one: the answer that counts was lost). */
function namingJob(err: unknown, promptId: string | undefined, sent: 'no' | 'maybe'): APIConnectionError {
  if (err instanceof APIConnectionError) return err.aboutJob(promptId, sent);
  const e = err as APIError;
  return new APIConnectionError(e.method, e.url, `HTTP ${e.status}`, undefined, { promptId, sent, cause: err });
}

/** Looks the job up until found or `window` ms have passed; `undefined` when it never showed. */
async function lookUp(deps: SubmissionDeps, id: string, window: number, signal: AbortSignal | undefined): Promise<WithResponse<unknown> | undefined> {
  if (window <= 0) return undefined;
  const deadline = Date.now() + window;
  for (let attempt = 0; ; attempt++) {
    await sleep(Math.min(backoff(attempt, LOOKUP_GAP), Math.max(0, deadline - Date.now())), signal);
    try {
      // A look-up may end a little after the window: one cut short by its timeout would still reach the server.
      return await deps.lookup(id, Math.max(MIN_LOOKUP_TIMEOUT_MS, deadline - Date.now()));
    } catch (err) {
      if (err instanceof APIUserAbortError) throw err;
      // Not known (yet), or no answer: the request may still be on its way, the server restarting, the network down.
    }
    if (Date.now() >= deadline) return undefined;
  }
}

/** The caller gave up on a submission that may have left: its job may exist, so the error names it. */
function abortedJob(err: APIUserAbortError, id: string): APIUserAbortError {
  return new APIUserAbortError(`Aborted; job ${id} may exist (its submission may have been sent)`, { cause: err.cause, promptId: id });
}
