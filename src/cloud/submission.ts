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
import { sleep } from './run.ts';

/** How long a lost submission is looked up by its id, by default (ms). */
export const CONFIRM_WITHIN_MS = 15_000;
/** The first look-up waits this long (the request may still be on its way); later ones double, up to a second. */
const FIRST_LOOKUP_MS = 100;
const MAX_LOOKUP_GAP_MS = 1_000;
/** The least time one look-up is given to answer. */
const MIN_LOOKUP_TIMEOUT_MS = 1_000;

/** What a submission needs from its client. */
export interface SubmissionDeps {
  /** Sends `POST /api/prompt` once (a paid request: the transport never repeats it). */
  send(body: Record<string, unknown>): Promise<WithResponse<SubmissionResponse>>;
  /** The job's status or record, `undefined` when the server does not know it; throws when there is no answer. */
  lookup(id: string, timeout: number): Promise<WithResponse<unknown> | undefined>;
  log: Log;
  /** Per client: whether this server uses the ids it is sent (`undefined` until it has answered one). */
  honoursIds: { value: boolean | undefined };
}

/** Options of one submission. */
export interface SubmissionOptions {
  resubmitUnconfirmed?: boolean | undefined;
  confirmWithin?: number | undefined;
  signal?: AbortSignal | undefined;
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
  const log = deps.log;
  for (let sends = 1; ; sends++) {
    let lost: 'no' | 'maybe' | undefined;
    let failure: unknown;
    try {
      const r = await deps.send({ ...body, prompt_id: id });
      noteHonoured(deps, id, r.data?.prompt_id);
      return r;
    } catch (err) {
      lost = answerLost(err);
      if (lost === undefined || err instanceof APIUserAbortError) throw err;
      failure = err;
    }
    const shown = asConnectionError(failure);
    // A server that ignores chosen ids gave this job another: nothing to look up, nothing to name.
    if (lost === 'no' || deps.honoursIds.value === false) throw shown.aboutJob(deps.honoursIds.value === false ? undefined : id, lost);
    const window = options.confirmWithin ?? CONFIRM_WITHIN_MS;
    log.info?.(`job ${id}: the answer to its submission was lost (${describeError(failure)}); looking it up by id for ${window} ms`, { promptId: id, windowMs: window });
    const found = await lookUp(deps, id, window, options.signal);
    if (found) {
      log.info?.(`job ${id}: found on the server; the submission went through`, { promptId: id });
      return { data: { prompt_id: id, node_errors: {} } as SubmissionResponse, response: found.response };
    }
    if (!options.resubmitUnconfirmed || sends >= 2) {
      log.warn?.(`job ${id}: its submission got no answer and the server does not show it after ${window} ms; it may still exist (not sent again)`, { promptId: id, windowMs: window });
      throw shown.aboutJob(id, 'maybe');
    }
    log.warn?.(`job ${id}: not found after ${window} ms; sending it once more with the same id (resubmitUnconfirmed)`, { promptId: id });
  }
}

function noteHonoured(deps: SubmissionDeps, sent: string, answered: unknown): void {
  const honours = answered === sent;
  if (deps.honoursIds.value !== honours && !honours) {
    deps.log.debug?.(`this server does not use the job ids it is sent (sent ${sent}, it chose ${String(answered)}): a submission whose answer is lost cannot be looked up here`, { sent, answered });
  }
  deps.honoursIds.value = honours;
}

/** The failure as a connection error (a 5xx after sending is one: the answer that counts was lost). */
function asConnectionError(err: unknown): APIConnectionError {
  if (err instanceof APIConnectionError) return err;
  const e = err as APIError;
  return new APIConnectionError(e.method, e.url, `HTTP ${e.status} after the request was sent`, undefined, { sent: 'maybe', cause: err });
}

/** Looks the job up until found or `window` ms have passed; `undefined` when it never showed. */
async function lookUp(deps: SubmissionDeps, id: string, window: number, signal: AbortSignal | undefined): Promise<WithResponse<unknown> | undefined> {
  const deadline = Date.now() + window;
  for (let gap = FIRST_LOOKUP_MS; ; gap = Math.min(gap * 2, MAX_LOOKUP_GAP_MS)) {
    await sleep(Math.min(gap, Math.max(0, deadline - Date.now())), signal);
    try {
      // A look-up may end a little after the window: one cut short by its timeout would still reach the server.
      const found = await deps.lookup(id, Math.max(MIN_LOOKUP_TIMEOUT_MS, deadline - Date.now()));
      if (found) return found;
    } catch (err) {
      if (err instanceof APIUserAbortError) throw err;
      // No answer (yet): the server may be restarting, or the network still down.
    }
    if (Date.now() >= deadline) return undefined;
  }
}
