/**
 * Job states and job records, normalized once for the live cloud, the seed
 * documents and a local server (DESIGN §4, §8). Everything else asks this
 * module what a job's state means; nothing else matches raw status strings.
 *
 * @module
 */
import { ExecutionError, JobCancelledError, JobExpiredError } from './job-errors.ts';
import { InvalidArgumentError } from '../errors.ts';
import type { FileRef, History, JobExecutionError, JobList, JobRecordBody, JobStatus, JobSummary, NodeOutputs, Queue, Workflow } from '../schemas/cloud.ts';
import * as rules from '../schemas/rules.generated.ts';
import { isValid } from '../schemas/validate.ts';
import type { RequestOptions } from '../transport/options.ts';
import type { Log } from '../transport/log.ts';
import type { StopJobOptions } from './protocol/stop.ts';
import { walkPages } from '../transport/pages.ts';
import type { WithResponse } from '../transport/promise.ts';

/**
 * One normalized phase per job, whatever the server said:
 * `pending` (queued), `running` (anything in flight, and any state this SDK
 * does not know yet), `completed`, `failed`, `cancelled`.
 */
export type JobPhase = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled';

const PHASES: Readonly<Record<string, JobPhase>> = {
  // The seed documents' values, which are also the job records' mapped values.
  pending: 'pending',
  in_progress: 'running',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
  // The live cloud's raw states. Only the terminal ones matter; the queued ones read as pending.
  submitted: 'pending',
  queued_limited: 'pending',
  queued_waiting: 'pending',
  success: 'completed',
  error: 'failed',
  non_retryable_error: 'failed',
  lost: 'failed',
  // Comfy API v2's states (`canceling` is not final: it reads as running).
  queued: 'pending',
  succeeded: 'completed',
  canceled: 'cancelled',
  expired: 'failed',
};

/**
 * The phase of a status value (a raw cloud state, a spec status or a job
 * record's mapped status). Unknown values count as still running, so a new
 * in-flight state never ends a wait early.
 *
 * @example
 * ```ts
 * jobPhase('queued_limited'); // 'pending'
 * jobPhase('non_retryable_error'); // 'failed'
 * jobPhase('some_future_state'); // 'running'
 * ```
 */
export function jobPhase(status: string | undefined): JobPhase {
  return (status !== undefined && Object.hasOwn(PHASES, status) ? PHASES[status] : undefined) ?? 'running';
}

/** Whether a phase is final: `completed`, `failed` or `cancelled`. */
export function isFinalPhase(phase: JobPhase): boolean {
  return phase === 'completed' || phase === 'failed' || phase === 'cancelled';
}

/** `GET /api/job/{id}/status` (or its local equivalent) with the normalized {@link JobPhase}. */
export interface JobStatusResult extends JobStatus {
  /** The normalized phase of `status`. */
  phase: JobPhase;
}

/**
 * A job record (`GET /api/jobs/{id}`, or a local server's `/history/{id}`
 * shaped like one) with the normalized {@link JobPhase}. An interrupted job
 * reads `cancelled` even where the server maps it to `failed`.
 */
export interface JobRecord extends JobRecordBody {
  /** The normalized phase. */
  phase: JobPhase;
}

/** The server's `execution_status.messages`, when it sent any. */
function messagesOf(executionStatus: unknown): unknown[] {
  const m = (executionStatus as { messages?: unknown } | null | undefined)?.messages;
  return Array.isArray(m) ? m : [];
}

/** The data of the first `[type, data]` entry of that type in an `execution_status.messages` list. */
function messageData(executionStatus: unknown, type: string): Record<string, unknown> | undefined {
  for (const entry of messagesOf(executionStatus)) {
    if (Array.isArray(entry) && entry[0] === type && entry[1] && typeof entry[1] === 'object') return entry[1] as Record<string, unknown>;
  }
  return undefined;
}

/** Adds the phase to a job record as the server sent it. */
export function toJobRecord(body: JobRecordBody): JobRecord {
  let phase = jobPhase(body.status);
  // A local server reads an interrupted job as `failed`; its messages say what happened.
  if (phase === 'failed' && messageData(body.execution_status, 'execution_interrupted')) phase = 'cancelled';
  return { ...body, phase };
}

/**
 * A local server's `/history/{id}` entry as a job record, or `undefined` when
 * the history has none (the job is pending, running or unknown).
 */
export function recordFromHistory(promptId: string, history: History): JobRecord | undefined {
  const entry = history[promptId];
  if (!entry) return undefined;
  const status = entry.status?.status_str === 'error' ? 'failed' : 'completed';
  const tuple = entry.prompt ?? [];
  const error = messageData(entry.status, 'execution_error');
  return toJobRecord({
    ...(entry as Record<string, unknown>),
    id: promptId,
    status,
    outputs: entry.outputs ?? {},
    execution_status: entry.status,
    workflow: { prompt: tuple[2], extra_data: tuple[3] },
    ...(error ? { execution_error: error as JobExecutionError } : {}),
  });
}

/** One queue entry, normalized over the cloud's and a local server's tuples; `raw` is the tuple as sent. */
export interface QueueItem {
  /** Position number the server gave the job. */
  number: number | undefined;
  /** The job's `prompt_id`. */
  promptId: string | undefined;
  /** The workflow (API format). */
  workflow: Workflow | undefined;
  /** Ids of the nodes whose outputs the job produces. */
  outputNodeIds: string[] | undefined;
  /** Creation time as the server sent it (a local server: Unix ms in `extra_data`). */
  createTime: number | undefined;
  /** A local server's `extra_data` (the cloud does not send it). */
  extraData: Record<string, unknown> | undefined;
  /** The entry exactly as the server sent it. */
  raw: unknown;
}

/** `GET /api/queue`, each entry normalized to a {@link QueueItem}. */
export interface QueueState {
  /** The running jobs. */
  queue_running: QueueItem[];
  /** The jobs waiting to run, in order. */
  queue_pending: QueueItem[];
}

const asObject = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
const asNumber = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const asStrings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.map(String) : undefined);

/**
 * Normalizes one queue tuple. Cloud: `[number, prompt_id, workflow,
 * output_node_ids, { create_time }]`; local: `[number, prompt_id, prompt,
 * extra_data, outputs_to_execute]`. Anything else keeps only `raw`.
 */
export function toQueueItem(raw: unknown): QueueItem {
  const t = Array.isArray(raw) ? raw : [];
  const cloud = Array.isArray(t[3]);
  const extra = cloud ? undefined : asObject(t[3]);
  const meta = cloud ? asObject(t[4]) : extra;
  return {
    number: asNumber(t[0]),
    promptId: typeof t[1] === 'string' ? t[1] : undefined,
    workflow: asObject(t[2]) as Workflow | undefined,
    outputNodeIds: asStrings(cloud ? t[3] : t[4]),
    createTime: asNumber(meta?.create_time),
    extraData: extra,
    raw,
  };
}

/** Normalizes both lists of a queue answer. */
export function toQueueState(q: Queue): QueueState {
  return { queue_running: q.queue_running.map(toQueueItem), queue_pending: q.queue_pending.map(toQueueItem) };
}

/**
 * A file a job produced, with where it came from: the node and the key of
 * that node's outputs it is listed under. The same shape as a job record's
 * `preview_output` (the server's own names). Only `filename`, `subfolder` and
 * `type` reach the server when it is downloaded.
 *
 * @example
 * ```ts
 * const { files } = await cloud.run(workflow);
 * for (const f of files) if (f.mediaType === 'gifs') await cloud.downloadToFile(f, f.filename);
 * ```
 */
export interface OutputFile extends FileRef {
  /** The id of the node whose outputs list it (`"9"`, or `"10:2"` inside a subgraph). */
  nodeId: string;
  /** The key it is listed under: `images`, `video`, `audio`, or any other a node sends (`gifs`, `3d`, `latents`, …). */
  mediaType: string;
}

/**
 * Every file of a job's outputs: each entry that is a file reference (an
 * object with a string `filename`, and `subfolder` and `type` strings when
 * present) in a list under any key of any node, in node order, then key
 * order, as the server sent them. What is not a file (`text: ['…']`,
 * `animated: [true]`) stays in `outputs` only; nothing malformed throws.
 *
 * @example
 * ```ts
 * filesOf({ '9': { gifs: [{ filename: 'a.gif', subfolder: '', type: 'output' }], text: ['done'] } });
 * // [{ filename: 'a.gif', subfolder: '', type: 'output', nodeId: '9', mediaType: 'gifs' }]
 * ```
 */
export function filesOf(outputs: Readonly<Record<string, NodeOutputs>> | null | undefined): OutputFile[] {
  const files: OutputFile[] = [];
  for (const [nodeId, out] of Object.entries(outputs ?? {})) {
    // A record is validated, but a socket event or `validate: false` may hand anything.
    if (!asObject(out)) continue;
    for (const [mediaType, list] of Object.entries(out)) {
      if (Array.isArray(list)) for (const f of list) if (isValid(rules.FileRef, f)) files.push({ ...f, nodeId, mediaType });
    }
  }
  return files;
}

/**
 * The error a failed or cancelled job ends with: {@link JobCancelledError},
 * {@link JobExpiredError} (Comfy API v2's `expired`), or {@link ExecutionError} carrying the record's `execution_error` (else the
 * status's `error_message`, else the seed's `error` object).
 */
export function jobEndError(promptId: string, phase: 'failed' | 'cancelled', found: { status?: JobStatusResult | undefined; record?: JobRecord | undefined }): Error {
  if (phase === 'cancelled') return new JobCancelledError(promptId);
  // Comfy API v2's `expired`: no error to read, the job is gone.
  if ((found.record ?? found.status)?.status === 'expired') return new JobExpiredError(promptId);
  const fromRecord = asObject(found.record?.execution_error);
  if (fromRecord) return new ExecutionError(promptId, fromRecord);
  const message = found.status?.error_message;
  if (typeof message === 'string') return new ExecutionError(promptId, { exception_message: message });
  return new ExecutionError(promptId, asObject((found.status as { error?: unknown } | undefined)?.error));
}

/**
 * The narrow view of a job service that `run()`, `waitForJob()` (and a pool
 * of servers) need. `CloudClient` implements it; tests and other backends may too.
 */
export interface JobBackend {
  /** The kind of server, when known: a local server's records (and a v2 server's) are final once written. */
  readonly server?: 'cloud' | 'local' | 'v2';
  /** The server's base URL, credentials redacted: a lost job's error names it. */
  readonly baseUrl?: string;
  /** Submits a workflow; resolves with its `prompt_id`. */
  submit(
    workflow: Workflow,
    options: { headers?: Record<string, string>; partnerApiKey?: string | true; extraData?: Record<string, unknown>; clientId?: string; validate?: boolean; promptId?: string; resubmitUnconfirmed?: boolean; confirmWithin?: number; stopBefore?: AbortSignal; beforeSubmit?: (promptId: string) => void | Promise<void> },
  ): PromiseLike<{ prompt_id: string }>;
  /** The job's status with its phase (works on every server kind). */
  getJobStatus(promptId: string, options?: RequestOptions): PromiseLike<JobStatusResult>;
  /** The job's record, outputs included (works on every server kind). */
  getJob(promptId: string, options?: RequestOptions): PromiseLike<JobRecord>;
  /** Stops this job whether pending or running, and no other; resolves once it is stopped (`CloudClient.stopJob`). */
  stopJob(promptId: string, options?: StopJobOptions): PromiseLike<void>;
  /** Where `run()` tells what it does; nothing is logged without it. */
  readonly log?: Log;
}

/** Fetches the page of `GET /api/jobs` starting at `offset`. */
export type JobPageFetcher = (offset: number) => Promise<WithResponse<JobList>>;

/**
 * One page of `GET /api/jobs`: its `jobs` and `pagination`. Iterating it
 * yields every job from here on, fetching later pages by offset while the
 * server says `has_more`.
 */
export class JobPage implements AsyncIterable<JobSummary> {
  /** The jobs of this page. */
  readonly jobs: JobSummary[];
  /** `{ offset, limit, total, has_more }` as the server sent it. */
  readonly pagination: JobList['pagination'];
  /** The whole response body, unknown fields included. */
  readonly body: JobList;
  /** The HTTP response this page was read from. */
  readonly response: Response;
  readonly #fetch: JobPageFetcher;
  readonly #signal: AbortSignal | undefined;

  constructor(result: WithResponse<JobList>, fetchPage: JobPageFetcher, signal?: AbortSignal) {
    this.body = result.data;
    this.response = result.response;
    this.jobs = result.data.jobs;
    this.pagination = result.data.pagination;
    this.#fetch = fetchPage;
    this.#signal = signal;
  }

  /** Whether the server has more jobs after this page (an empty page ends the list too). */
  hasNextPage(): boolean {
    return this.pagination.has_more && this.jobs.length > 0;
  }

  /** Fetches the following page. Throws {@link InvalidArgumentError} when there is none. */
  async getNextPage(): Promise<JobPage> {
    if (!this.hasNextPage()) throw new InvalidArgumentError('there is no page after this one');
    return new JobPage(await this.#fetch(this.pagination.offset + this.jobs.length), this.#fetch, this.#signal);
  }

  /** Every job from this page on; stops when a server repeats an offset instead of advancing. */
  async *[Symbol.asyncIterator](): AsyncIterator<JobSummary> {
    yield* walkPages<JobSummary, JobPage>(this, (p) => p.jobs, (p) => p.pagination.offset, this.#signal);
  }
}
