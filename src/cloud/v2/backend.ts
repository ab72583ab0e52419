/**
 * Comfy API v2's protocol (`spec/cloud-v2.md`): what `CloudClient` does on a
 * v2 server, behind the same seam as the cloud's and a local server's
 * (`protocol/types.ts`). This module and everything it imports from `v2/`
 * load on first use (`import()`), only in a client that names
 * `server: 'v2'`.
 *
 * - A job's status and record are one `GET /api/v2/jobs/{id}` (the poll is
 *   the truth; it carries the outputs), mapped once (`wire.ts`). An
 *   `expired` is read again before it is believed.
 * - One job is stopped with `POST /jobs/{id}/cancel`, then looked at until
 *   it is final (`canceling` is not), within `confirmWithin`.
 * - Submission: `submit.ts` (an Idempotency-Key on every send).
 * - Outputs: `/assets/{id}/content` (a 302 to a signed URL is followed with
 *   no credential), else the output's `url`.
 *
 * @module
 */
import { DownloadError, InvalidArgumentError, JobNotStoppedError, NotFoundError, ResponseValidationError } from '../../errors.ts';
import { checkArgs } from '../../args.ts';
import type { JobList, SubmissionResponse } from '../../schemas/cloud.ts';
import { ARRAY, INTEGER, OPTIONAL, RECORD, STRICT, UNION, VALUES, type Typed } from '../../schemas/rule.ts';
import type { Log } from '../../transport/log.ts';
import { requestOptionsOf, type RequestOptions } from '../../transport/options.ts';
import type { WithResponse } from '../../transport/promise.ts';
import { sleep } from '../../transport/sleep.ts';
import { path } from '../../transport/path.ts';
import type { Transport } from '../../transport/transport.ts';
import { isFinalPhase, JobPage, type JobRecord, type JobStatusResult } from '../jobs.ts';
import { requestOptions, STOP_CONFIRM_MS, type StopJobOptions } from '../protocol/stop.ts';
import { assetReference, deleteAsset, getAsset, uploadAsset } from './assets.ts';
import type { SubmitOptions, UploadImageOptions, UploadInput } from '../client.ts';
import { findByKey, submitV2, type LabelStyle, type V2SubmitOptions } from './submit.ts';
import { JobEventStream } from './stream.ts';
import { followSigned } from '../signed.ts';
import { isV2Job, jobsOf, toJobState, type AssetReference, type V2Asset, type V2Job } from './wire.ts';

/** An `expired` is read this many more times, this far apart, before it is believed (a proxy's read race, §9.6). */
const EXPIRED_REREADS = 2;
const EXPIRED_REREAD_MS = 300;
/** How long after its submission a run's event stream opens (see `events()`). */
const FIRST_STREAM_AFTER_MS = 50;
/** Looks after a cancel: 50 ms doubling to 1 s (a cancel lands at the running node's end). */
const FIRST_LOOK_MS = 50;
const MAX_LOOK_MS = 1000;

/** What `uploadImage()` answers on v2: an upload's `name`, `subfolder`, `type`, and the asset it made. */
export interface V2UploadResponse {
  /** The asset's `file_path`. */
  name: string;
  subfolder: '';
  type: 'input';
  /** The asset as the server answered. */
  asset: V2Asset;
  /** What a workflow input takes for it (`Workflow.set()` and the `inputs` option use it). */
  reference: AssetReference;
  /** Bytes of the file sent: 0 when the server had them already. */
  bytesSent: number;
}

/** Parameters of a v2 `GET /api/v2/jobs`: its statuses, `limit` (1–100 on the real server), a `cursor`, label filters. */
const V2_STATUSES = [VALUES, 'queued', 'running', 'succeeded', 'canceling', 'canceled', 'failed', 'expired'] as const;
const V2_LIST_JOBS_PARAMS: Typed<V2ListJobsParams> = [
  STRICT,
  {
    status: [OPTIONAL, [UNION, V2_STATUSES, [ARRAY, V2_STATUSES]]],
    limit: [OPTIONAL, [INTEGER, 1, 1000]],
    cursor: 'string?',
    metadata: [OPTIONAL, [RECORD, 'string']],
  },
];

/** What `listJobs()` takes on v2. */
export interface V2ListJobsParams {
  status?: string | string[];
  limit?: number;
  cursor?: string;
  metadata?: Record<string, string>;
}

/** A job as every kind of server reads it: its status and its record at once. */
export type V2JobState = JobStatusResult & JobRecord;

/** The v2 job list as the SDK reads it: the jobs (mapped), and where the next page starts when the server pages. */
export interface V2JobList {
  /** The jobs, each as {@link toJobState} maps it. */
  jobs: V2JobState[];
  /** The next page's cursor (`next_cursor`); absent on the last page and on servers that do not page. */
  nextCursor: string | undefined;
  /** Whether the server cut the list short (comfy-api-proxy's `truncated`). */
  truncated: boolean;
  /** The answer as sent. */
  body: unknown;
}

/** A v2 job's logs (`GET /jobs/{id}/logs`); `undefined` where there are none (204, or a server without the route). */
export interface V2JobLogs {
  text: string;
  truncated?: boolean;
  captured_at?: string;
  complete?: boolean;
  [member: string]: unknown;
}

/** Comfy API v2 behind the seam every kind of server shares. */
export class V2Backend {
  readonly #t: Transport;
  readonly #log: Log;
  /** How this server takes labels, learnt from its first refusal (`submit.ts`). */
  readonly #labels: { style: LabelStyle } = { style: 'map' };
  /** Job ids by the Idempotency-Key they were submitted under: a key names its job too (a queue records the key first). */
  readonly #ids = new Map<string, string>();
  /** Jobs this client stopped: an `expired` of theirs is their cancel (comfy-api-proxy ends a job cancelled while queued `expired`). */
  readonly #stopped = new Set<string>();
  /** The event streams of the runs following jobs now: told when this client stops one of their jobs. */
  readonly #streams = new Set<JobEventStream>();

  constructor(transport: Transport) {
    this.#t = transport;
    this.#log = transport.log;
  }

  /**
   * `GET /api/v2/jobs/{id}` as a status and record; an `expired` read again
   * before it is believed. `id` may also be the Idempotency-Key the job was
   * submitted under (by this process or another): a key the server does not
   * know as an id is looked up by its label, once.
   */
  async job(idOrKey: string, options?: RequestOptions): Promise<WithResponse<V2JobState>> {
    let id = this.#ids.get(idOrKey) ?? idOrKey;
    for (let read = 0; ; read++) {
      let r: WithResponse<V2Job>;
      try {
        r = await this.#t.request<V2Job>({ method: 'GET', path: path`api/v2/jobs/${id}`, auth: true, options });
      } catch (err) {
        const found = err instanceof NotFoundError && id === idOrKey && typeof err.body === 'object' ? await findByKey(this.#submitInit, idOrKey, options).catch(() => undefined) : undefined;
        if (!found) throw err;
        this.#ids.set(idOrKey, (id = found.data.id));
        r = found;
      }
      if (!isV2Job(r.data)) throw new ResponseValidationError('GET', this.#t.displayUrl(path`api/v2/jobs/${id}`), [{ code: 'invalid_type', path: [], message: 'must be a job (an object with string id and status)' }], r.data);
      if (this.#stopped.has(r.data.id) && r.data.status === 'expired') return { data: { ...toJobState(r.data), phase: 'cancelled' }, response: r.response };
      if (r.data.status !== 'expired' || read >= EXPIRED_REREADS) return { data: toJobState(r.data), response: r.response };
      this.#log.debug?.(`job ${id}: reads expired; reading it again in ${EXPIRED_REREAD_MS} ms before believing it`, { promptId: id, read });
      await sleep(EXPIRED_REREAD_MS, options?.signal);
    }
  }

  get #submitInit() {
    return { transport: this.#t, log: this.#log, labels: this.#labels };
  }

  /**
   * `submit()` on v2: the workflow (converted and checked by the client) with
   * its `extra_data`, under the key `promptId` names; answered as every kind's
   * submission, `prompt_id` being the server's job id.
   */
  async submitWorkflow(workflow: Record<string, unknown>, extra: Record<string, unknown>, key: string, options: SubmitOptions): Promise<WithResponse<SubmissionResponse & { prompt_id: string }>> {
    const body = { workflow, ...(Object.keys(extra).length ? { extra_data: extra } : {}) };
    const r = await this.submit(body, { key, confirmWithin: options.confirmWithin, request: requestOptionsOf(options), stopBefore: options.stopBefore, beforeSubmit: options.beforeSubmit });
    return { data: { prompt_id: r.data.id, node_errors: {}, job: r.data } as SubmissionResponse & { prompt_id: string }, response: r.response };
  }

  /** Submits under an Idempotency-Key (`submit.ts`); the key names the job from then on. */
  async submit(body: Record<string, unknown>, options: V2SubmitOptions): Promise<WithResponse<V2Job>> {
    const r = await submitV2(this.#submitInit, body, options);
    this.#ids.set(options.key, r.data.id);
    return r;
  }

  /**
   * `POST /api/v2/jobs/{id}/cancel` (idempotent), then looks until the job is
   * final; {@link JobNotStoppedError} when it is not within `confirmWithin`.
   * An unknown job has nothing to stop.
   */
  async stopJob(idOrKey: string, options?: StopJobOptions): Promise<Response> {
    const confirmWithin = options?.confirmWithin ?? STOP_CONFIRM_MS;
    const request = requestOptions(options);
    const deadline = AbortSignal.timeout(confirmWithin);
    const bounded = { ...request, signal: request.signal ? AbortSignal.any([request.signal, deadline]) : deadline };
    let phase: 'pending' | 'running' | undefined;
    try {
      const cancel = (id: string) => this.#t.request<unknown>({ method: 'POST', path: path`api/v2/jobs/${id}/cancel`, auth: true, options: bounded });
      const known = this.#ids.get(idOrKey);
      // Not a job id this server knows: the key of one (found by its label, once), or nothing to stop.
      const answer = await cancel(known ?? idOrKey).catch(async (err: unknown) => {
        const found = !known && err instanceof NotFoundError && typeof err.body === 'object' ? await findByKey(this.#submitInit, idOrKey, bounded).catch(() => undefined) : undefined;
        if (!found) throw err;
        this.#ids.set(idOrKey, found.data.id);
        return cancel(found.data.id);
      });
      const id = this.#ids.get(idOrKey) ?? idOrKey;
      this.#stopped.add(id);
      let seen = isV2Job(answer.data) ? toJobState(answer.data) : undefined;
      for (let gap = FIRST_LOOK_MS; !seen || !isFinalPhase(seen.phase); gap = Math.min(gap * 2, MAX_LOOK_MS)) {
        if (seen) phase = seen.phase === 'pending' ? 'pending' : 'running';
        await sleep(gap, bounded.signal);
        seen = (await this.job(id, bounded)).data;
      }
      for (const stream of this.#streams) stream.ended(id, String(seen.status));
      return answer.response;
    } catch (err) {
      if (err instanceof NotFoundError) return new Response(null, { status: 404 });
      if (deadline.aborted && !request.signal?.aborted) throw new JobNotStoppedError(idOrKey, phase, confirmWithin, { cause: err });
      throw err;
    }
  }

  /**
   * `listJobs()` on v2: its parameters checked (before any request), then
   * pages as every kind's, the server's cursors kept by the offset each page
   * starts at.
   */
  async listPage(params: unknown, options: RequestOptions | undefined): Promise<WithResponse<JobPage>> {
    const p = checkArgs(V2_LIST_JOBS_PARAMS, params, 'params');
    const cursors = new Map<number, string>();
    const fetchPage = async (offset: number): Promise<WithResponse<JobList>> => {
      const r = await this.listJobs(offset === 0 ? p : { ...p, cursor: cursors.get(offset)! }, options);
      if (r.data.nextCursor !== undefined) cursors.set(offset + r.data.jobs.length, r.data.nextCursor);
      // The published spec has no status filter (comfy-api-proxy has): the page keeps only what was asked for either way.
      const wanted = p.status === undefined ? undefined : new Set([p.status].flat());
      const jobs = wanted ? r.data.jobs.filter((j) => wanted.has(String(j.status))) : r.data.jobs;
      return { data: { ...(r.data.body as object), jobs, pagination: { offset, limit: p.limit ?? null, has_more: r.data.nextCursor !== undefined } } as JobList, response: r.response };
    };
    const r = await fetchPage(0);
    return { data: new JobPage(r, fetchPage, options?.signal), response: r.response };
  }

  /** `GET /api/v2/jobs`: `status`, `limit`, `cursor`, `metadata` labels (a map, as `metadata[k]=v`). */
  async listJobs(params: V2ListJobsParams, options?: RequestOptions): Promise<WithResponse<V2JobList>> {
    const query: Record<string, string | number | undefined> = { status: Array.isArray(params.status) ? params.status.join(',') : params.status, limit: params.limit, cursor: params.cursor };
    for (const [k, v] of Object.entries(params.metadata ?? {})) query[`metadata[${k}]`] = v;
    const r = await this.#t.request<Record<string, unknown>>({ method: 'GET', path: 'api/v2/jobs', query, auth: true, options });
    const body = r.data ?? {};
    const jobs = jobsOf(body).map(toJobState);
    return { data: { jobs, nextCursor: typeof body.next_cursor === 'string' ? body.next_cursor : undefined, truncated: body.truncated === true, body }, response: r.response };
  }

  /** `GET /api/v2/jobs/{id}/workflow`: the workflow the job ran (`format` `api` for v2 submissions). */
  workflow(id: string, options?: RequestOptions): Promise<WithResponse<{ workflow: Record<string, unknown>; format: string; [member: string]: unknown }>> {
    return this.#t.request({ method: 'GET', path: path`api/v2/jobs/${id}/workflow`, auth: true, options });
  }

  /** `GET /api/v2/jobs/{id}/logs`; `undefined` for a 204 (no log) and for a server without the route (a plain-text 404). */
  async logs(id: string, options?: RequestOptions): Promise<V2JobLogs | undefined> {
    try {
      const r = await this.#t.request<V2JobLogs | undefined>({ method: 'GET', path: path`api/v2/jobs/${id}/logs`, auth: true, options });
      return r.response.status === 204 || r.data === undefined ? undefined : r.data;
    } catch (err) {
      // The real proxy has no such route: its 404 is plain text, not the JSON envelope of an unknown job.
      if (err instanceof NotFoundError && typeof err.body === 'string') return undefined;
      throw err;
    }
  }

  /**
   * `uploadImage()` on v2: the file as a content-addressed asset (`assets.ts`:
   * hashed here, sent only when the server lacks the bytes), answered in the
   * shape of every server's upload (`name`, `subfolder`, `type`) with the
   * asset and the `core/ASSET` reference a workflow input takes.
   */
  async upload(file: UploadInput, options: UploadImageOptions): Promise<WithResponse<V2UploadResponse>> {
    if (options.type === 'temp') throw new InvalidArgumentError("a Comfy API v2 server keeps assets, not temporary files: leave type out (or 'input')", 'type');
    const { type: _type, overwrite: _overwrite, ...rest } = options;
    const r = await uploadAsset(this.#t, file, rest);
    const name = r.data.file_path ?? options.filename ?? 'upload.bin';
    return { data: { name, subfolder: '', type: 'input', asset: r.data, reference: assetReference(r.data), bytesSent: r.bytesSent }, response: r.response };
  }

  /** `GET /api/v2/assets/{id}`: the asset, with a fresh `url`. */
  getAsset(id: string, options?: RequestOptions): Promise<WithResponse<V2Asset>> {
    return getAsset(this.#t, id, options);
  }

  /** `DELETE /api/v2/assets/{id}` (the record; shared bytes stay). */
  deleteAsset(id: string, options?: RequestOptions): Promise<void> {
    return deleteAsset(this.#t, id, options);
  }

  /**
   * One job's live feed for the follower (`follow/follower.ts`): its event
   * stream, opened once the job has an id (`defer`: the key a run waits
   * under before the server names the job).
   */
  events(defer?: string): JobEventStream {
    // A run's first stream opens a little after the job's first poll went out: a job that ends that soon
    // needs none (the poll is the truth), and a long one loses nothing (the poll covers its start).
    let first = defer !== undefined;
    const open = async (id: string, signal: AbortSignal) => {
      if (first) {
        first = false;
        await sleep(FIRST_STREAM_AFTER_MS, signal);
      }
      return this.openEvents(id, signal);
    };
    const stream = new JobEventStream({ open, log: this.#log, ...(defer === undefined ? {} : { defer }) });
    this.#streams.add(stream);
    stream.on('close', () => void this.#streams.delete(stream));
    return stream;
  }

  /** Why a v2 client without the `objectInfo` option cannot validate or convert an editor file: what to pass. */
  noObjectInfo(): InvalidArgumentError {
    return new InvalidArgumentError("a Comfy API v2 server serves no object_info, which validation and the editor's saved format need: pass the client's objectInfo option (the object_info object, or the URL of a server that serves /api/object_info, such as the one behind the proxy), or submit the workflow in API format without validate", 'objectInfo');
  }

  /** `GET /api/v2/jobs/{id}/events`: the response, its body not read (an error status throws the SDK's error). */
  openEvents(idOrKey: string, signal: AbortSignal): Promise<Response> {
    const id = this.#ids.get(idOrKey) ?? idOrKey;
    return this.#t.send({ method: 'GET', path: path`api/v2/jobs/${id}/events`, auth: true, headers: { accept: 'text/event-stream' }, options: { signal, timeout: false, retry: { limit: 0 } } });
  }

  /**
   * An output's bytes: `/assets/{id}/content` (its `id`), else its `url`.
   * Redirects are followed by hand: the signed URL gets no credential.
   */
  async download(file: { id?: unknown; url?: unknown; filename: string }, options: RequestOptions = {}): Promise<Response> {
    const base = new URL(`${this.#t.baseUrl}/`);
    let target: URL;
    if (typeof file.id === 'string' && file.id) target = new URL(path`api/v2/assets/${file.id}/content`, base);
    else if (typeof file.url === 'string' && URL.canParse(file.url, base)) target = new URL(file.url, base);
    else throw new DownloadError('missing_location', `${file.filename}: a Comfy API v2 output needs its asset id or url (a result's files have them)`);
    // The key goes only to the service's own URLs; any other (a signed URL) gets none.
    if (target.origin !== base.origin || !target.pathname.startsWith(base.pathname)) return this.#t.fetchElsewhere(target, options);
    const res = await this.#t.send({ method: 'GET', path: target.pathname.slice(base.pathname.length) + target.search, auth: true, redirect: 'manual', options });
    return followSigned(this.#t, res, target.pathname, target, options);
  }
}

