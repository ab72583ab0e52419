/**
 * `CloudClient`: the cloud workflow service's endpoints (`cloud.md`), one thin method each over one module per concern:
 * which server, chosen once (`server-choice.ts`: the kind, its transport, its protocol for status, records, stopping
 * and the queue, `protocol/`, and its backend for uploads, downloads, submission, the job list and what the kind lacks,
 * `backend.ts`), workflows and `object_info` (`workflow-source.ts`), a submission made ready (`prepare.ts`), v1's
 * uploads and downloads (`uploads.ts`, `downloads.ts`), and the live feed (`live.ts`: the socket or v2's stream, and
 * the follower, loaded on first use). The methods' options are `client-options.ts`.
 *
 * @module
 */
import { checkArgsLater, checkId, checkOptions } from '../args.ts';
import { UnsupportedError } from '../errors.ts';
import type { FileRef, ListJobsParams, ObjectInfo, SubmissionResponse, UploadResponse } from '../schemas/cloud.ts';
import * as rules from '../schemas/rules.generated.ts';
import { checkRequestOptions, type RequestOptions } from '../transport/options.ts';
import { PagePromise } from '../transport/pages.ts';
import { APIPromise } from '../transport/promise.ts';
import { redactUrl } from '../transport/redact.ts';
import type { Log } from '../transport/log.ts';
import type { Transport } from '../transport/transport.ts';
import type { JobBackend, JobPage, JobRecord, JobStatusResult, QueueState } from './jobs.ts';
import { checkPromptIds, checkStopJobOptions, type StopJobOptions } from './protocol/stop.ts';
import type { ServerKind, ServerProtocol } from './protocol/types.ts';
import { v1Routes } from './protocol/v1.ts';
import { prepareAndSubmit } from './prepare.ts';
import { FOLLOW_OPTIONS, RUN_OPTIONS, WAIT_FOR_JOB_OPTIONS, type FollowOptions, type JobResult, type RunOptions, type WaitForJobOptions } from './run-options.ts';
import type { CloudSocket, CloudSocketOptions } from './socket.ts';
import { realtime } from './realtime.ts';
import type { WorkflowIssue } from '../workflow/issue.ts';
import type { V2Backend, V2JobLogs, V2UploadResponse } from './v2/backend.ts';
import type { V2Asset } from './v2/wire.ts';
import { INTERRUPT_OPTIONS, SUBMIT_OPTIONS, UPLOAD_IMAGE_OPTIONS, UPLOAD_MASK_OPTIONS, VALIDATE_WORKFLOW_OPTIONS, type CloudClientOptions, type InterruptOptions, type SubmitOptions, type UploadImageOptions, type UploadInput, type UploadMaskOptions, type ValidateWorkflowOptions, type WorkflowInput } from './client-options.ts';
import { chooseServer } from './server-choice.ts';
import { WorkflowSource } from './workflow-source.ts';
import { downloads, uploads } from './transfers-code.ts';
import type { Backend } from './backend.ts';
import { checkFollowOptions, LiveFeed } from './live.ts';

/** The methods' options, as the package's root exports them. */
export { CLOUD_CLIENT_OPTIONS, SUBMIT_OPTIONS, jsonOf, withSavedWorkflow, type CloudClientOptions, type EditorWorkflowJSON, type InterruptOptions, type NodeReadableLike, type SubmitOptions, type UploadImageOptions, type UploadInput, type UploadMaskOptions, type ValidateWorkflowOptions, type WorkflowInput } from './client-options.ts';

/**
 * Client of the cloud workflow service.
 *
 * @example
 * ```ts
 * const cloud = new CloudClient({ baseUrl: 'https://cloud.example.com', apiKey: process.env.PLATFORMUI_API_KEY });
 * const { name } = await cloud.uploadImage(new Blob([bytes], { type: 'image/png' }), { filename: 'in.png' });
 * const { prompt_id } = await cloud.submit(workflow);
 * ```
 */
export class CloudClient implements JobBackend {
  readonly #transport: Transport;
  /** `'cloud'`, `'local'` or `'v2'`: the kind of server this client talks to, decided once from the options (see {@link CloudClientOptions.server}). */
  readonly server: ServerKind;
  /** The server's base URL as errors and logs show it (credentials in it redacted). */
  readonly baseUrl: string;
  /** Everything that differs between the kinds of server, chosen once. */
  readonly #protocol: ServerProtocol;
  /** Uploads, downloads, submission and the job list of this kind of server. */
  readonly #backend: Backend;
  readonly #workflows: WorkflowSource;
  readonly #live: LiveFeed;

  constructor(options: CloudClientOptions = {}) {
    const { server, transport, protocol, v2, backend } = chooseServer(options);
    this.server = server;
    this.#transport = transport;
    this.#protocol = protocol;
    this.baseUrl = redactUrl(transport.baseUrl);
    this.#backend = backend;
    this.#workflows = new WorkflowSource(transport, server, options.objectInfo, v2, (o) => this.getObjectInfo(o));
    this.#live = new LiveFeed(transport, v2);
  }

  /** Throws {@link UnsupportedError}, before any request, when this kind of server has no equivalent of `method`. */
  #supports(method: string): void {
    const instead = this.#backend.lacks[method];
    if (instead !== undefined) throw new UnsupportedError(this.server, method, instead);
  }

  /** A Comfy API v2 method (every other kind lacks it): `call` on the loaded backend. */
  async #onV2<T>(method: string, call: (backend: V2Backend) => Promise<T>): Promise<T> {
    this.#supports(method);
    return call(await this.#backend.v2!());
  }

  /**
   * Where this client's lines go, as `logLevel` and `logger` (or `PLATFORMUI_LOG`) made it: a function per enabled
   * level. `run()` and the socket write to it.
   */
  get log(): Log {
    return this.#transport.log;
  }

  /**
   * `GET /api/object_info`: every node definition, keyed by class name. Fetched on every call; the answer is also what
   * {@link validateWorkflow} (and `validate: true`) check against from then on. In a browser bundle it loads
   * `Workflow.fromEditor()`'s converter too.
   */
  getObjectInfo(options?: RequestOptions): APIPromise<ObjectInfo> {
    return APIPromise.from(() => (checkRequestOptions(options, 'getObjectInfo()'), this.#workflows.fetch(options)));
  }

  /**
   * Every mistake this server's `object_info` reveals in a workflow (see {@link validateWorkflow}): errors the server
   * would reject it for, and warnings. `object_info` is fetched on the first call and kept; pass `refresh: true` after
   * installing nodes or models.
   *
   * @example
   * ```ts
   * const issues = await cloud.validateWorkflow(workflow);
   * for (const i of issues) console.log(i.severity, i.message);
   * // error #3 KSampler: sampler_name: must be one of "euler", …, got "eulr" (did you mean "euler"?)
   *
   * // Name the pack that provides each class the server lacks:
   * const named = await cloud.validateWorkflow(workflow, { registry: new RegistryClient() });
   * // error #12 TiledKSampler: this server has no node class "TiledKSampler": install the pack "pixelforge-tiled-diffusion" (0.6.4) from the registry
   * ```
   */
  async validateWorkflow(workflow: WorkflowInput, options: ValidateWorkflowOptions = {}): Promise<WorkflowIssue[]> {
    checkOptions(options, VALIDATE_WORKFLOW_OPTIONS, 'validateWorkflow()');
    return this.#workflows.validate(workflow, options);
  }

  /**
   * `POST /api/upload/image`. Blobs, files (a path, in Node) and streams are streamed, never read whole into memory.
   *
   * @example
   * ```ts
   * const ref = await cloud.uploadImage('./photo.png');              // Node: a path
   * const ref2 = await cloud.uploadImage(fileInput.files[0]);        // browser: a File
   * const ref3 = await cloud.uploadImage(fs.createReadStream(p), { filename: 'p.png' });
   * ```
   */
  uploadImage(file: UploadInput, options: UploadImageOptions = {}): APIPromise<UploadResponse> {
    return APIPromise.from(async () => (checkOptions(options, UPLOAD_IMAGE_OPTIONS, 'uploadImage()'), this.#backend.upload(file, options)));
  }

  /**
   * Comfy API v2: {@link uploadImage} with v2's answer typed: the asset, the `core/ASSET` reference a workflow input
   * takes, and `bytesSent` (0 when the server had the bytes: nothing of the file was sent). The file is hashed here
   * (BLAKE3, streamed) and sent only when the server lacks it.
   *
   * @example
   * ```ts
   * const { reference, bytesSent } = await v2.uploadAsset('./photo.png');
   * workflow['10'].inputs.image = reference;
   * ```
   */
  uploadAsset(file: UploadInput, options: Omit<UploadImageOptions, 'type' | 'overwrite'> = {}): APIPromise<V2UploadResponse> {
    return APIPromise.from(() => this.#onV2('uploadAsset()', async (b) => (checkOptions(options, UPLOAD_IMAGE_OPTIONS, 'uploadAsset()'), b.upload(file, options))));
  }

  /**
   * Comfy API v2: an asset (`GET /api/v2/assets/{id}`), with a fresh `url`.
   *
   * @example
   * ```ts
   * const { reference } = await v2.uploadImage('./photo.png');
   * const asset = await v2.getAsset(reference.info.id);
   * ```
   */
  getAsset(assetId: string, options?: RequestOptions): APIPromise<V2Asset> {
    return APIPromise.from(() => this.#onV2('getAsset()', (b) => b.getAsset(checkId(assetId, 'assetId'), (checkRequestOptions(options, 'getAsset()'), options))));
  }

  /**
   * Comfy API v2: deletes an asset's record (`DELETE /api/v2/assets/{id}`; bytes another record shares stay).
   * {@link NotFoundError} when it is gone already; {@link ConflictError} (`code` `asset_in_use`) while a job holds it.
   *
   * @example
   * ```ts
   * await v2.deleteAsset(upload.asset.id);
   * ```
   */
  deleteAsset(assetId: string, options?: RequestOptions): Promise<void> {
    return this.#onV2('deleteAsset()', (b) => b.deleteAsset(checkId(assetId, 'assetId'), (checkRequestOptions(options, 'deleteAsset()'), options)));
  }

  /**
   * `POST /api/upload/mask`: a mask for an uploaded image, sent with `type=input` and the JSON-encoded `original_ref`.
   */
  uploadMask(file: UploadInput, options: UploadMaskOptions): APIPromise<UploadResponse> {
    return APIPromise.from(async () => (checkOptions(options, UPLOAD_MASK_OPTIONS, 'uploadMask()'), this.#supports('uploadMask()'), (await uploads()).uploadMask(this.#transport, file, options)));
  }

  /**
   * `POST /api/prompt`: submits a workflow as a job whose id is chosen before the request (`promptId`, default a random
   * UUID, sent as `prompt_id`). A response carrying `error` throws {@link SubmissionError}, whatever its HTTP status.
   * Never sent twice on its own, whatever `retry` says: when the answer is lost (a timeout, a reset, a 5xx after
   * sending), the job is looked up by its id for `confirmWithin` ms (default 15 s). Found: this resolves as if the
   * answer had come. Not found: it rejects with an {@link APIConnectionError} whose `promptId` names the job and whose
   * `sent` is `'maybe'` (it may exist: follow it, stop it, or ask again with `resubmitUnconfirmed`); `sent: 'no'` when
   * the request provably never left (refused, DNS, no route). A server that does not use the ids it is sent (it answers
   * with its own) is remembered per client; there a lost answer cannot be looked up, and the error names no job.
   *
   * @example
   * ```ts
   * const { prompt_id } = await cloud.submit(workflow, { partnerApiKey: true });
   * // Your own id, e.g. to record it before sending:
   * await cloud.submit(workflow, { promptId: crypto.randomUUID() });
   * ```
   */
  submit(workflow: WorkflowInput, options: SubmitOptions = {}): APIPromise<SubmissionResponse & { prompt_id: string }> {
    return APIPromise.from(() => (checkOptions(options, SUBMIT_OPTIONS, 'submit()'), prepareAndSubmit(this.#workflows, this.#transport, this.#backend, workflow, options)));
  }

  /**
   * The job's status with its normalized {@link JobPhase} (`phase`), `status` kept raw. `GET /api/job/{id}/status`
   * answers the live cloud's raw states (`queued_limited`, `executing`, `success`, `lost`, …) or the seed's five
   * values. Where that endpoint does not exist (a local server), the job record answers instead: {@link getJob}.
   *
   * @example
   * ```ts
   * const { status, phase } = await cloud.getJobStatus(promptId);
   * if (phase === 'failed') console.log('ended with', status); // 'error', 'non_retryable_error' or 'lost'
   * ```
   */
  getJobStatus(promptId: string, options?: RequestOptions): APIPromise<JobStatusResult> {
    return APIPromise.from(() => (checkRequestOptions(options, 'getJobStatus()'), this.#protocol.status(checkId(promptId, 'promptId'), options)));
  }

  /**
   * The job record, outputs included: `GET /api/jobs/{id}` (status mapped to `pending | in_progress | completed |
   * failed | cancelled`, `outputs`, `execution_error`, `workflow`, times), with `phase` added. On a local server
   * without the jobs API, built from `/history/{id}` and `/queue`. Throws {@link NotFoundError} for a job the server
   * does not know.
   *
   * @example
   * ```ts
   * const job = await cloud.getJob(promptId);
   * if (job.phase === 'failed') console.log(job.execution_error?.exception_message);
   * ```
   */
  getJob(promptId: string, options?: RequestOptions): APIPromise<JobRecord> {
    return APIPromise.from(() => (checkRequestOptions(options, 'getJob()'), this.#protocol.record(checkId(promptId, 'promptId'), options)));
  }

  /**
   * `GET /api/jobs`: the account's jobs, newest first by default. Awaiting gives one {@link JobPage}; `for await` gives
   * every job, later pages fetched by offset as the loop asks for them. Parameters are checked against what this
   * client's kind of server takes, before the request ({@link InvalidArgumentError} naming the field and the allowed
   * values): `status` one of `pending`, `in_progress`, `completed`, `failed`, `cancelled` or a list of them; `limit`
   * 1–1000; `offset` ≥ 0; `sort_order` `asc` or `desc`. The cloud sorts by `create_time` or `execution_time` and
   * filters by `output_type`; a local server sorts by `created_at` or `execution_duration`, and has neither `cancelled`
   * nor `output_type`.
   *
   * @example
   * ```ts
   * const page = await cloud.listJobs({ status: ['failed', 'cancelled'], limit: 20 });
   * for await (const job of cloud.listJobs({ output_type: 'video' })) console.log(job.id, job.status);
   * ```
   */
  listJobs(params: ListJobsParams = {}, options?: RequestOptions): PagePromise<JobPage> {
    return new PagePromise(async () => this.#backend.firstPage(params, await checkArgsLater(this.#protocol.listJobsParams, params, 'params'), (checkRequestOptions(options, 'listJobs()'), options)));
  }

  /**
   * Comfy API v2: the workflow a job ran (`GET /api/v2/jobs/{id}/workflow`), `format` `api` for v2 submissions (assets
   * already resolved to file names on comfy-api-proxy).
   *
   * @example
   * ```ts
   * const { workflow } = await v2.getJobWorkflow(promptId);
   * ```
   */
  getJobWorkflow(promptId: string, options?: RequestOptions): APIPromise<{ workflow: Record<string, unknown>; format: string; [member: string]: unknown }> {
    return APIPromise.from(() => this.#onV2('getJobWorkflow()', (b) => b.workflow(checkId(promptId, 'promptId'), (checkRequestOptions(options, 'getJobWorkflow()'), options))));
  }

  /**
   * Comfy API v2: a job's logs (`GET /api/v2/jobs/{id}/logs`), `undefined` when there are none (a 204, or a server
   * without the route).
   *
   * @example
   * ```ts
   * const logs = await v2.getJobLogs(promptId);
   * if (logs) console.log(logs.text);
   * ```
   */
  getJobLogs(promptId: string, options?: RequestOptions): Promise<V2JobLogs | undefined> {
    return this.#onV2('getJobLogs()', (b) => b.logs(checkId(promptId, 'promptId'), (checkRequestOptions(options, 'getJobLogs()'), options)));
  }

  /**
   * `GET /api/queue`, each entry normalized ({@link QueueItem}: `number`, `promptId`, `workflow`, `outputNodeIds`,
   * `createTime`, and the tuple as sent in `raw`). The cloud and a local server send different tuples.
   */
  getQueue(options?: RequestOptions): APIPromise<QueueState> {
    return APIPromise.from(async () => (checkRequestOptions(options, 'getQueue()'), this.#supports('getQueue()'), (await v1Routes()).queueState(this.#transport, options)));
  }

  /**
   * `POST /api/queue` with `delete`: cancels the listed jobs, and no other. The cloud cancels pending and running jobs;
   * a local server removes only pending ones (to stop one job wherever it is, use {@link stopJob}).
   */
  cancel(promptIds: string | string[], options?: RequestOptions): APIPromise<unknown> {
    return APIPromise.from(async () => {
      const ids = await checkPromptIds(promptIds);
      return (checkRequestOptions(options, 'cancel()'), this.#supports('cancel()'), (await v1Routes()).deleteFromQueue(this.#transport, ids, options));
    });
  }

  /**
   * `POST /api/interrupt`. Without `promptId`: on the cloud, no body, and it interrupts every running job of the
   * account; on a local server, whatever runs. With `promptId`: only that job, never another (a local server gets `{
   * prompt_id }`; on the cloud, whose interrupt takes no body, the job is stopped with {@link stopJob}).
   */
  interrupt(options: InterruptOptions = {}): APIPromise<unknown> {
    return APIPromise.from(async () => {
      checkOptions(options, INTERRUPT_OPTIONS, 'interrupt()');
      // Without a job to stop, only where this kind of server has it.
      if (options.promptId === undefined) this.#supports('interrupt()');
      return (await v1Routes()).interrupt(this.#transport, this.#protocol, options);
    });
  }

  /**
   * Stops one job, pending or running, and never another: what aborting `run()` does. Resolves once the job is stopped.
   * Where the server has it, the atomic `POST /api/jobs/{id}/cancel` (a finished or unknown job: nothing to do); else,
   * on the cloud, `POST /api/queue { delete }` (both one request, whose answer says the job is stopped). On a local
   * server without the atomic cancel, whose queue delete leaves a running job alone and whose interrupt skips a pending
   * one, in an order that cannot miss: the delete, then a look at the job, `POST /interrupt { prompt_id }` while it
   * runs, and looks until it is seen ended or gone; a {@link JobNotStoppedError} when it is not within `confirmWithin`
   * ms (default 10000). Never an interrupt without the job's id.
   *
   * @example
   * ```ts
   * await cloud.stopJob(promptId);
   * try { await local.stopJob(promptId, { confirmWithin: 5000 }); }
   * catch (err) { if (err instanceof JobNotStoppedError) console.log(`job ${err.promptId} may still run`); }
   * ```
   */
  async stopJob(promptId: string, options?: StopJobOptions): Promise<void> {
    await this.#protocol.stopJob(checkId(promptId, 'promptId'), checkStopJobOptions(options));
  }

  /**
   * Downloads an output. `GET /api/view` answers with a redirect to a signed URL; the SDK reads the `location` itself
   * and fetches it with no API key and no other credential (fetch would forward `X-API-Key` to it). Returns the signed
   * URL's `Response`, whose body streams.
   *
   * Throws {@link DownloadError} when the redirect has no `location`, points to plain http on a host other than
   * loopback, or is opaque (browsers hide manual redirects).
   *
   * @example
   * ```ts
   * const res = await cloud.download({ filename: 'out_00001_.png', subfolder: '', type: 'output' });
   * const blob = await res.blob();
   * ```
   */
  async download(fileRef: FileRef, options: RequestOptions = {}): Promise<Response> {
    return this.#backend.download(fileRef, await checkArgsLater(rules.FileRef, fileRef, 'fileRef'), (checkRequestOptions(options, 'download()'), options));
  }

  /** Node only: downloads a file reference to `destination`, streaming. Resolves with the number of bytes written. */
  async downloadToFile(fileRef: FileRef, destination: string, options?: RequestOptions): Promise<number> {
    checkId(destination, 'destination');
    checkRequestOptions(options, 'downloadToFile()');
    return (await downloads()).saveToFile(await this.download(fileRef, options), destination);
  }

  /**
   * The client's WebSocket: one socket serves every job of the client. Opens it on first call (later calls return the
   * same socket while it is open; `options` apply when a socket is created).
   *
   * @example
   * ```ts
   * const socket = cloud.connect();
   * socket.on('status', (m) => console.log('queue', m.data.status?.exec_info?.queue_remaining));
   * ```
   */
  connect(options?: CloudSocketOptions): CloudSocket {
    this.#supports('connect()');
    return this.#live.connect(options);
  }

  /** Closes the client's socket, if any. Running `run()` calls fall back to polling. */
  close(): void {
    this.#live.close();
  }

  /**
   * Submits a workflow and follows it to the end over the shared socket, polling the job status whenever the socket is
   * down. Resolves with the outputs on `execution_success` (or status `completed`); rejects with {@link ExecutionError}
   * on `execution_error` / `failed`, with {@link JobCancelledError} on `execution_interrupted` / `cancelled`. Aborting
   * `signal` cancels this job only.
   *
   * @example
   * ```ts
   * const result = await cloud.run(workflow, {
   *   onProgress: ({ value, max }) => console.log(`${value}/${max}`),
   *   onPreview: (frame) => fs.writeFileSync('preview.jpg', frame.image),
   *   timeout: 120_000,
   * });
   * for (const file of result.files) await cloud.downloadToFile(file, file.filename);
   * // onSubmitted: the id as soon as the job exists (to record it, or follow() it later).
   * ```
   */
  async run(workflow: WorkflowInput, options: RunOptions = {}): Promise<JobResult> {
    checkOptions(options, RUN_OPTIONS, 'run()');
    checkFollowOptions(options);
    // Converted here, not in submit(): the job's log lines count the nodes the server gets.
    return this.#live.run(this, await this.#workflows.prompt(workflow, options), options);
  }

  /**
   * Follows a job that already exists (submitted earlier, by this process or another) to its end: the same events,
   * polling and result as {@link run}. Aborting stops following; the job keeps running unless `stopOnAbort: true`.
   *
   * @example
   * ```ts
   * const { prompt_id } = await cloud.submit(workflow);
   * saveSomewhere(prompt_id);
   * // …later, maybe in another process:
   * const result = await cloud.follow(prompt_id, { onProgress: ({ value, max }) => console.log(value, max) });
   * ```
   */
  async follow(promptId: string, options: FollowOptions = {}): Promise<JobResult> {
    checkOptions(options, FOLLOW_OPTIONS, 'follow()');
    return this.#live.follow(this, this.#protocol, checkId(promptId, 'promptId'), options);
  }

  /**
   * Polls the job until it ends (every terminal state of the cloud, the seed and a local server). Resolves with the job
   * record, outputs included (read again, briefly, while a completed job's outputs are not persisted yet); rejects with
   * {@link ExecutionError} when it failed (`error`, `non_retryable_error`, `lost`) and {@link JobCancelledError} when
   * cancelled.
   *
   * @example
   * ```ts
   * const { prompt_id } = await cloud.submit(workflow);
   * const job = await cloud.waitForJob(prompt_id, { pollInterval: 2000 });
   * for (const file of filesOf(job.outputs ?? {})) await cloud.downloadToFile(file, file.filename);
   * ```
   */
  async waitForJob(promptId: string, options?: WaitForJobOptions): Promise<JobRecord> {
    checkOptions(options, WAIT_FOR_JOB_OPTIONS, 'waitForJob()');
    return (await realtime()).waitForJob(this, promptId, options);
  }
}
