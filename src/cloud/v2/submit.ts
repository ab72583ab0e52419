/**
 * A Comfy API v2 submission, sent at most once in effect (`spec/cloud-v2.md`
 * §5): every `POST /api/v2/jobs` carries an `Idempotency-Key` chosen before
 * the request, and the server guarantees one job per key. So, unlike v1,
 * a lost answer (a timeout, a reset, a 5xx after sending) is resolved by
 * sending again with the same key: a 201 is the job; `422
 * idempotency_key_reuse` means it exists, and it is found by the label the
 * SDK set on it (a job list filtered by it), else the submission rejects with
 * {@link JobExistsError}, naming the key. `queue_full` is sent again with the
 * same key within a budget, honouring `Retry-After`. Nothing is ever sent
 * without the key.
 *
 * @module
 */
import { APIConnectionError, APIError, APIUserAbortError } from '../../errors.ts';
import { JobExistsError, SubmissionError } from '../submission-errors.ts';
import { describeError, type Log } from '../../transport/log.ts';
import type { RequestOptions } from '../../transport/options.ts';
import type { WithResponse } from '../../transport/promise.ts';
import { retryAfterMs } from '../../transport/retry-after.ts';
import { sleep } from '../../transport/sleep.ts';
import type { Transport } from '../../transport/transport.ts';
import { answerLost, CONFIRM_WITHIN_MS } from '../submission.ts';
import { isV2Job, jobsOf, type V2Job } from './wire.ts';

/** The label key the SDK puts a submission's Idempotency-Key under, to find the job when only the key is known. */
export const KEY_LABEL = 'platformui-idempotency-key';
/** How long `queue_full` is waited out, sending again with the same key (the official SDK's budget). */
const QUEUE_FULL_BUDGET_MS = 60_000;
/** `Retry-After` of a `queue_full` without one, and the least wait (seconds are the header's unit). */
const QUEUE_FULL_DEFAULT_MS = 2_000;
const QUEUE_FULL_MIN_MS = 1_000;
/** Between two sends after a lost answer: 250 ms, doubling to 2 s. */
const RESEND_FIRST_MS = 250;
const RESEND_MAX_MS = 2_000;

/**
 * How this server takes the label: `map` (the published spec: `metadata` is a
 * map, filterable with `metadata[k]=v`), `string` (comfy-api-proxy: an
 * opaque string, echoed on every job), `none` (Comfy Cloud:
 * `metadata_not_supported`). Learnt per client from the first refusal.
 */
export type LabelStyle = 'map' | 'string' | 'none';

/** What a submission needs besides its body. */
export interface V2SubmitInit {
  transport: Transport;
  log: Log;
  /** Per client: how the server takes labels (changed when it refuses one). */
  labels: { style: LabelStyle };
}

/** Options of one v2 submission. */
export interface V2SubmitOptions {
  /** The Idempotency-Key (the run's `promptId` option, else a random UUID). */
  key: string;
  /** How long (ms) a lost answer is resolved by sending again with the key. Default 15000. */
  confirmWithin?: number | undefined;
  request?: RequestOptions | undefined;
  /** Once aborted, nothing more is sent (a request already out is left to finish). */
  stopBefore?: AbortSignal | undefined;
  /** Awaited immediately before each send; a throw sends nothing. */
  beforeSubmit?: ((key: string) => void | Promise<void>) | undefined;
}

const labelOf = (style: LabelStyle, key: string): unknown => (style === 'map' ? { [KEY_LABEL]: key } : style === 'string' ? `${KEY_LABEL}:${key}` : undefined);

/** Whether a 4xx refuses the label itself (the body's `metadata`), not the workflow: then the key was released. */
function refusesLabel(err: unknown): LabelStyle | undefined {
  if (!(err instanceof APIError) || (err.status !== 400 && err.status !== 422)) return undefined;
  if (err.code === 'metadata_not_supported') return 'none';
  const message = (err.error as { message?: unknown } | undefined)?.message;
  if (err.code === 'invalid_request' && typeof message === 'string' && /metadata/i.test(message)) return /string/i.test(message) ? 'string' : 'none';
  return undefined;
}

/**
 * Submits `body` (`workflow`, `extra_data`) under `options.key` and resolves
 * with the job the server made, whatever happened to the answers on the way.
 *
 * @example
 * ```ts
 * const job = await submitV2({ transport, log, labels: { style: 'map' } }, { workflow }, { key: crypto.randomUUID() });
 * ```
 */
export async function submitV2(init: V2SubmitInit, body: Record<string, unknown>, options: V2SubmitOptions): Promise<WithResponse<V2Job>> {
  const { transport, log, labels } = init;
  const { key } = options;
  const started = Date.now();
  let lostSince: number | undefined;
  let wait = RESEND_FIRST_MS;
  for (;;) {
    if (options.beforeSubmit) await options.beforeSubmit(key);
    if (options.stopBefore?.aborted) throw new APIUserAbortError(lostSince === undefined ? undefined : `Aborted; a job may exist under Idempotency-Key ${key}`, { cause: options.stopBefore.reason, promptId: key });
    const sentStyle = labels.style;
    const label = labelOf(sentStyle, key);
    let failure: unknown;
    try {
      const r = await transport.request<unknown>({
        method: 'POST',
        path: 'api/v2/jobs',
        json: label === undefined ? body : { ...body, metadata: label },
        headers: { 'idempotency-key': key },
        auth: true,
        paid: true,
        options: options.request,
      });
      if (!isV2Job(r.data)) throw new SubmissionError(r.response.status, { error: 'the server answered the submission without a job (no id and status)', body: r.data }, key);
      return r as WithResponse<V2Job>;
    } catch (err) {
      failure = err;
    }
    if (failure instanceof APIUserAbortError || failure instanceof SubmissionError) throw failure;
    const code = failure instanceof APIError ? failure.code : undefined;
    if (code === 'idempotency_key_reuse') {
      // The first send made a job (this is a later one), or another process used the key.
      if (labels.style === 'none') throw new JobExistsError(key, 'this server takes no labels to find it by');
      const found = await findByKey(init, key, options.request).catch((err: unknown) => {
        throw new JobExistsError(key, `the job list could not be read (${describeError(err)})`);
      });
      if (!found) throw new JobExistsError(key, "no job in the server's list carries its label");
      log.info?.(`job ${found.data.id}: ${lostSince !== undefined ? 'found under its Idempotency-Key after a lost answer' : 'already submitted under this Idempotency-Key'}; not sent again`, { promptId: found.data.id, idempotencyKey: key });
      return found;
    }
    const style = refusesLabel(failure);
    // Compared with what this send carried: submissions sent at once are all refused, the first one's learning is theirs too.
    if (style !== undefined && sentStyle !== style) {
      if (labels.style === sentStyle) log.debug?.(`this v2 server refuses labels as a ${sentStyle}; labelling as ${style === 'none' ? 'nothing' : `a ${style}`} from now on`, { from: sentStyle, to: style });
      labels.style = style;
      continue; // a refused submission released its key
    }
    if (failure instanceof APIError && code === 'queue_full') {
      const ms = Math.max(QUEUE_FULL_MIN_MS, retryAfterMs(failure.retryAfter) ?? QUEUE_FULL_DEFAULT_MS);
      if (Date.now() + ms - started > QUEUE_FULL_BUDGET_MS) throw failure;
      log.info?.(`the server's queue is full; sending again under the same Idempotency-Key in ${ms} ms`, { idempotencyKey: key, delayMs: ms });
      await sleep(ms, options.request?.signal);
      continue;
    }
    // Every other 422 is the server's word that this submission made no job: `invalid_workflow`, `missing_asset`, …
    if (failure instanceof APIError && failure.status === 422) throw asSubmissionError(failure, key);
    const lost = lostSince !== undefined ? 'maybe' : answerLost(failure);
    if (lost === undefined) throw failure;
    // Refused, no such host: it never left, and nothing before it may have. Said at once (a pool moves the job on).
    if (lost === 'no') throw (failure as APIConnectionError).aboutJob(key, 'no');
    // The key makes a second send safe: it cannot start a second job.
    lostSince ??= Date.now();
    const window = options.confirmWithin ?? CONFIRM_WITHIN_MS;
    if (Date.now() - lostSince >= window) {
      log.warn?.(`no answer to the submission under Idempotency-Key ${key} for ${window} ms; a job may exist under it (not sent again)`, { idempotencyKey: key, windowMs: window });
      throw failure instanceof APIConnectionError ? failure.aboutJob(key, lost) : new APIConnectionError('POST', transport.displayUrl('api/v2/jobs'), describeError(failure), undefined, { promptId: key, sent: lost, cause: failure });
    }
    log.info?.(`the submission's answer was lost (${describeError(failure)}); sending it again under the same Idempotency-Key in ${wait} ms`, { idempotencyKey: key, delayMs: wait });
    await sleep(wait, options.request?.signal);
    wait = Math.min(wait * 2, RESEND_MAX_MS);
  }
}

/**
 * A v2 refusal of a submission (422) as v1's {@link SubmissionError}, with
 * its `code`: `invalid_workflow`'s `node_errors` read exactly as on v1 (the
 * same members, the same message); `missing_asset`'s ids stay in
 * `error.details.missing_ids`.
 */
export function asSubmissionError(err: APIError, key: string | undefined): SubmissionError {
  const e = err.error as { message?: unknown; details?: { node_errors?: unknown } | null; code?: unknown } | undefined;
  const details = e?.details ?? undefined;
  return new SubmissionError(err.status, { error: { type: e?.code, message: e?.message, details: details ?? '' }, node_errors: details?.node_errors ?? {} }, key, err.code);
}

/**
 * The job submitted under `key`, found by its label: `GET /api/v2/jobs`
 * filtered by it (the published spec), or the recent jobs whose label is it
 * (comfy-api-proxy, which lists every job with its `metadata`). `undefined`
 * when none carries it, or the server takes no labels.
 *
 * @example
 * ```ts
 * const found = await findByKey({ transport, log, labels }, key);
 * ```
 */
export async function findByKey(init: V2SubmitInit, key: string, request?: RequestOptions): Promise<WithResponse<V2Job> | undefined> {
  const { transport, labels } = init;
  if (labels.style === 'none') return undefined;
  const query = labels.style === 'map' ? { [`metadata[${KEY_LABEL}]`]: key, limit: 100 } : { limit: 100 };
  const r = await transport.request<unknown>({ method: 'GET', path: 'api/v2/jobs', query, auth: true, options: request });
  const want = labelOf(labels.style, key);
  const found = jobsOf(r.data).find((j) => (labels.style === 'map' ? (j.metadata as Record<string, unknown> | undefined)?.[KEY_LABEL] === key : j.metadata === want));
  return found ? { data: found, response: r.response } : undefined;
}
