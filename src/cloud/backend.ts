/**
 * What `CloudClient`'s methods do differently per kind of server, beyond the
 * protocol's status, records and stopping (`protocol/`): how a file goes up,
 * an output comes down, a prompt is sent and jobs are listed. One
 * implementation per kind, chosen once with the server: the cloud and a local
 * server share the v1 routes (`uploads.ts`, `downloads.ts`, `submit.ts`,
 * `job-pages.ts`); Comfy API v2's code loads on first use (`v2/backend.ts`).
 * A further kind of server is one more implementation here.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.ts';
import type { FileRef, ListJobsParams, SubmissionResponse, UploadResponse, Workflow } from '../schemas/cloud.ts';
import type { RequestOptions } from '../transport/options.ts';
import type { WithResponse } from '../transport/promise.ts';
import type { SubmitOptions, UploadImageOptions, UploadInput } from './client-options.ts';
import { firstJobPage } from './job-pages.ts';
import type { JobPage } from './jobs.ts';
import type { SubmitTarget } from './submit.ts';
import { downloads, uploads } from './transfers-code.ts';
import type { V2Backend } from './v2/backend.ts';
import { onFirstUse } from '../on-first-use.ts';

/** A kind of server's uploads, downloads, submission and job list (options checked by the client first). */
export interface Backend {
  /** The `extra_data` member that carries a partner key. */
  readonly partnerKey: string;
  /**
   * The client's methods this kind has no equivalent for, each with what to do instead: the client throws
   * `UnsupportedError` for them before any request.
   */
  readonly lacks: Readonly<Record<string, string>>;
  /** `uploadImage()`: the file as this kind keeps inputs. */
  upload(file: UploadInput, options: UploadImageOptions): Promise<WithResponse<UploadResponse>>;
  /** `download()`: `fileRef` as the caller gave it (v2 reads its asset's `id` or `url`), `ref` as checked. */
  download(fileRef: FileRef, ref: FileRef, options: RequestOptions): Promise<Response>;
  /** `submit()`: the prompt as job (v2: under the `Idempotency-Key`) `id`. */
  submit(prompt: Workflow, extra: Record<string, unknown>, id: string, options: SubmitOptions): Promise<WithResponse<SubmissionResponse & { prompt_id: string }>>;
  /** `listJobs()`'s first page: `params` as given, `checked` by the protocol's rules. */
  firstPage(params: ListJobsParams, checked: ListJobsParams, options: RequestOptions | undefined): Promise<WithResponse<JobPage>>;
  /** Comfy API v2's code, loaded on first use, for the methods of v2's own (only a v2 backend has it). */
  readonly v2?: () => Promise<V2Backend>;
}

/**
 * The submission (`submit.ts`, `submission.ts`: `POST /api/prompt` under the job's id, a lost answer looked up),
 * loaded on the first `submit()` or `run()`: a file of its own in the browser build.
 */
const submission = /* @__PURE__ */ onFirstUse(() => import('./submit.ts'));

/** Comfy API v2's own methods, which the cloud and a local server lack. */
const V2S = "it is Comfy API v2's (server: 'v2')";
const V2_ONLY: Readonly<Record<string, string>> = { 'uploadAsset()': V2S, 'getAsset()': V2S, 'deleteAsset()': V2S, 'getJobWorkflow()': V2S, 'getJobLogs()': V2S };

/**
 * The cloud's and a local server's routes (`/api/upload/image`, `/api/view`, `/api/prompt`, `/api/jobs`).
 *
 * @example
 * ```ts
 * const backend = v1Backend({ transport, protocol, honoursIds: { value: undefined } });
 * ```
 */
export function v1Backend(target: SubmitTarget): Backend {
  const t = target.transport;
  return {
    partnerKey: 'api_key_platform_org',
    lacks: V2_ONLY,
    upload: async (file, options) =>
      (await uploads()).uploadForm(t, 'api/upload/image', file, options, () => {
        const type = options.type ?? 'input';
        if (type !== 'input' && type !== 'temp') throw new InvalidArgumentError("must be 'input' or 'temp'", 'type');
        if (options.overwrite !== undefined && typeof options.overwrite !== 'boolean') throw new InvalidArgumentError('must be a boolean', 'overwrite');
        return { type, ...(options.overwrite !== undefined ? { overwrite: String(options.overwrite) } : {}) };
      }),
    download: async (_fileRef, ref, options) => (await downloads()).downloadView(t, ref, options),
    submit: async (prompt, extra, id, options) => (await submission()).submitPrompt(target, prompt, extra, id, options),
    firstPage: (_params, checked, options) => firstJobPage(t, checked, options),
  };
}

/**
 * Comfy API v2, its code loaded on first use: assets hashed on the client,
 * submissions under an `Idempotency-Key`, its own job list.
 *
 * @example
 * ```ts
 * const backend = v2Door(() => import('./v2/backend.ts').then((m) => new m.V2Backend(transport)));
 * ```
 */
export function v2Door(load: () => Promise<V2Backend>): Backend {
  return {
    v2: load,
    partnerKey: 'api_key_comfy_org',
    lacks: {
      'uploadMask()': 'upload the mask with uploadImage() for a LoadImageMask node',
      'getQueue()': "read a job's queue_position with getJob(id)",
      'cancel()': 'stop each job with stopJob(id)',
      'interrupt()': 'stop each job with stopJob(id)',
      'connect()': "follow each job's own stream with run() or follow()",
    },
    upload: async (file, options) => (await load()).upload(file, options),
    // v2: the output's asset (its id or url), kept on the file reference by run() and getJob().
    download: async (fileRef, _ref, options) => (await load()).download(fileRef as FileRef & { id?: unknown; url?: unknown }, options),
    // v2: `id` is the Idempotency-Key; the answer's `prompt_id` is the server's job id.
    submit: async (prompt, extra, id, options) => (await load()).submitWorkflow(prompt, extra, id, options),
    firstPage: async (params, _checked, options) => (await load()).listPage(params, options),
  };
}
