/**
 * Schemas of the cloud REST API (`cloud.md`). The API is experimental: every
 * object is loose at runtime (unknown fields are kept) and every enum open;
 * only wrong types are errors. Each model is typed by a named interface
 * without index signature (see `common.ts`).
 *
 * A member is required only where the spec shows it as part of the shape and
 * every recording of a real server (`fixtures/local-server`) carries it:
 * `UploadResponse.name`, `FileRef.filename`, `JobStatus.status`,
 * `Queue`'s two lists, the job list's `jobs`,
 * `pagination.offset` / `has_more` and each job's `id` and `status`. Where the
 * spec says "not shown" or a server may leave a member out, it stays optional
 * (`UploadResponse.subfolder` and `NodeDefinition.input` are always sent by the
 * servers recorded, but one that left them out would fail a whole upload or
 * `object_info` for a member nobody needs: optional).
 *
 * @module
 */
import * as z from 'zod/mini';
import { JOB_STATUSES, CLOUD_JOB_STATES, JOB_OUTPUT_TYPES } from './values.ts';
export { JOB_STATUSES, CLOUD_JOB_STATES, JOB_OUTPUT_TYPES, FILE_TYPES } from './values.ts';
// What a workflow is made of (its nodes, the server's node definitions, file references): a file of its own.
export * from './nodes.ts';
import { NodeOutputs } from './nodes.ts';
import { openEnum, opt, strings, type Checks, type Fields, type Model, type OpenEnum, type Same } from './common.ts';


/** A job status the spec names (also a job record's mapped `status`), or any other string. */
export type JobRecordStatus = OpenEnum<typeof JOB_STATUSES>;
/** A raw job state or a spec status, or any other string (`JobStatus['status']`). */
export type JobStatusValue = (typeof JOB_STATUSES)[number] | (typeof CLOUD_JOB_STATES)[number] | (string & {});

/** Response of the upload endpoints. */
export interface UploadResponse {
  /** The stored file's name: pass it to a `LoadImage` input. */
  name: string;
  /** Usually empty. */
  subfolder?: string;
  /** `input` or `temp`, where the server says. */
  type?: string;
}

/** Response of `POST /api/prompt`: `prompt_id`, or `error` when the submission failed. */
export interface SubmissionResponse {
  /** The job's id. */
  prompt_id?: string;
  /** Present when the submission failed (its shape: {@link SubmissionErrorBody}). */
  error?: unknown;
}

/**
 * One reason a submission was refused: the body's `error` (when it is an
 * object) and each entry of a node's `errors`.
 *
 * @example `{ type: 'required_input_missing', message: 'Required input is missing', details: 'filename_prefix', extra_info: { input_name: 'filename_prefix' } }`
 */
export interface SubmissionErrorDetail {
  /** Machine-readable kind (`prompt_outputs_failed_validation`, `required_input_missing`, …). */
  type: string;
  /** Human-readable summary. */
  message: string;
  /** More about it (often the input concerned); may be empty. */
  details?: string;
  /** Structured extras, such as `input_name`. */
  extra_info?: Record<string, unknown>;
}

/** Why one node of a refused workflow is invalid. */
export interface NodeError {
  /** Each problem of this node. */
  errors: SubmissionErrorDetail[];
  /** Ids of the output nodes that depend on this node. */
  dependent_outputs?: string[];
  /** The node's class (`SaveImage`, …). */
  class_type?: string;
}

/** `node_errors` of a refused submission: node id → why that node is invalid. */
export type NodeErrors = Record<string, NodeError>;

/**
 * The body of a refused `POST /api/prompt` (HTTP 400, or a 2xx carrying
 * `error`), as a local server sends it. The spec does not show it, so every
 * member a server might leave out is optional.
 *
 * @example
 * ```json
 * { "error": { "type": "prompt_outputs_failed_validation", "message": "Prompt outputs failed validation", "details": "", "extra_info": {} },
 *   "node_errors": { "1": { "errors": [{ "type": "custom_validation_failed", "message": "Custom validation failed for node",
 *     "details": "image - Invalid image file: nope_missing.png", "extra_info": { "input_name": "image" } }],
 *     "dependent_outputs": ["2"], "class_type": "LoadImage" } } }
 * ```
 */
export interface SubmissionErrorBody {
  /** What went wrong: an object, or a bare message. */
  error: SubmissionErrorDetail | string;
  /** Per-node reasons, when the workflow failed validation (may be empty). */
  node_errors?: NodeErrors;
}

/**
 * Response of `GET /api/job/{prompt_id}/status`: the spec's five values, or the
 * live cloud's raw states with `id`, times and `error_message`.
 */
export interface JobStatus {
  /** A raw cloud state or a spec status (open): ask `jobPhase()` what it means. */
  status: JobStatusValue;
  id?: string;
  created_at?: unknown;
  updated_at?: unknown;
  last_state_update?: unknown;
  assigned_inference?: unknown;
  /** Why the job failed, on the live cloud. */
  error_message?: string | null;
}

/** `execution_error` of a job record: where and why the job failed. */
export interface JobExecutionError {
  node_id?: string | null;
  node_type?: string | null;
  exception_message?: string | null;
  exception_type?: string | null;
  traceback?: unknown;
  current_inputs?: unknown;
  current_outputs?: unknown;
}

/** One job of `GET /api/jobs` (`create_time` in Unix seconds on the cloud, milliseconds on a local server). */
export interface JobSummary {
  id: string;
  /** `pending`, `in_progress`, `completed`, `failed`, `cancelled` (open). */
  status: JobRecordStatus;
  create_time?: number | null;
  execution_error?: JobExecutionError | null;
  /** The first output file (its shape is not specified). */
  preview_output?: Record<string, unknown> | null;
  outputs_count?: number | null;
  workflow_id?: string | null;
  execution_start_time?: number | null;
  execution_end_time?: number | null;
}

/**
 * Response of `GET /api/jobs/{id}`: the job with its mapped `status`, its
 * `outputs` by node id, `execution_error`, `workflow` and times. (The SDK's
 * `JobRecord` adds the normalized `phase`.)
 */
export interface JobRecordBody extends JobSummary {
  /** Outputs by node id. */
  outputs?: Record<string, NodeOutputs> | null;
  workflow?: unknown;
  update_time?: number | null;
  execution_status?: unknown;
  execution_meta?: unknown;
}

/** `pagination` of `GET /api/jobs`. */
export interface JobPagination {
  offset: number;
  /** `null` on a local server when none was asked for. */
  limit?: number | null;
  total?: number | null;
  has_more: boolean;
}

/** Response of `GET /api/jobs`. */
export interface JobList {
  jobs: JobSummary[];
  pagination: JobPagination;
}

/** Response of `GET /api/queue`. The element shape is not specified (cloud and local servers differ; see `getQueue`). */
export interface Queue {
  queue_running: unknown[];
  queue_pending: unknown[];
}

/** `status` of a local server's history entry. */
export interface HistoryStatus {
  status_str?: string | null;
  completed?: boolean;
  /** `[type, data]` pairs of the job's messages. */
  messages?: unknown[];
}

/** One job of a local server's `/history/{id}` answer. */
export interface HistoryEntry {
  /** `[number, prompt_id, prompt, extra_data, outputs_to_execute]`. */
  prompt?: unknown[];
  outputs?: Record<string, NodeOutputs> | null;
  status?: HistoryStatus | null;
}

/**
 * `GET /history/{id}` of a local server: `{}` while the job is pending,
 * running or unknown; `{ [id]: { prompt, outputs, status, meta } }` once it ended.
 */
export type History = Record<string, HistoryEntry>;

const uploadResponseShape = { name: z.string(), subfolder: opt(z.string()), type: opt(z.string()) };
/** Response of the upload endpoints. */
export const UploadResponse: Model<UploadResponse> = z.looseObject(uploadResponseShape);

const submissionResponseShape = { prompt_id: opt(z.string()), error: opt(z.unknown()) };
/** Response of `POST /api/prompt`: `prompt_id`, or `error` when the submission failed. */
export const SubmissionResponse: Model<SubmissionResponse> = z.looseObject(submissionResponseShape);

const submissionErrorDetailShape = { type: z.string(), message: z.string(), details: opt(z.string()), extra_info: opt(z.record(z.string(), z.unknown())) };
const SubmissionErrorDetail: Model<SubmissionErrorDetail> = z.looseObject(submissionErrorDetailShape);
const nodeErrorShape = { errors: z.array(SubmissionErrorDetail), dependent_outputs: opt(strings), class_type: opt(z.string()) };
const NodeError: Model<NodeError> = z.looseObject(nodeErrorShape);
const submissionErrorBodyShape = { error: z.union([SubmissionErrorDetail, z.string()]), node_errors: opt(z.record(z.string(), NodeError)) };

/**
 * The body of a refused submission, `{ error, node_errors }` (see the type).
 * Lenient like every model: unknown keys kept, only wrong types fail.
 */
export const SubmissionErrorBody: Model<SubmissionErrorBody> = z.looseObject(submissionErrorBodyShape);

const jobStatusShape = {
  status: openEnum([...JOB_STATUSES, ...CLOUD_JOB_STATES]),
  id: opt(z.string()),
  created_at: opt(z.unknown()),
  updated_at: opt(z.unknown()),
  last_state_update: opt(z.unknown()),
  assigned_inference: opt(z.unknown()),
  error_message: opt(z.nullable(z.string())),
};
/**
 * Response of `GET /api/job/{prompt_id}/status`: the spec's five values, or the
 * live cloud's raw states with `id`, times and `error_message`.
 */
export const JobStatus: Model<JobStatus> = z.looseObject(jobStatusShape);

const jobExecutionErrorShape = {
  node_id: opt(z.nullable(z.string())),
  node_type: opt(z.nullable(z.string())),
  exception_message: opt(z.nullable(z.string())),
  exception_type: opt(z.nullable(z.string())),
  traceback: opt(z.unknown()),
  current_inputs: opt(z.unknown()),
  current_outputs: opt(z.unknown()),
};
/** `execution_error` of a job record: where and why the job failed. */
export const JobExecutionError: Model<JobExecutionError> = z.looseObject(jobExecutionErrorShape);

/** Fields a job summary (`GET /api/jobs`) and a job record (`GET /api/jobs/{id}`) share. */
const jobSummaryShape = {
  id: z.string(),
  status: openEnum(JOB_STATUSES),
  create_time: opt(z.nullable(z.number())),
  execution_error: opt(z.nullable(JobExecutionError)),
  preview_output: opt(z.nullable(z.looseObject({}))),
  outputs_count: opt(z.nullable(z.number())),
  workflow_id: opt(z.nullable(z.string())),
  execution_start_time: opt(z.nullable(z.number())),
  execution_end_time: opt(z.nullable(z.number())),
};

/** One job of `GET /api/jobs` (`create_time` in Unix seconds on the cloud, milliseconds on a local server). */
export const JobSummary: Model<JobSummary> = z.looseObject(jobSummaryShape);

const jobRecordBodyShape = {
  ...jobSummaryShape,
  outputs: opt(z.nullable(z.record(z.string(), NodeOutputs))),
  workflow: opt(z.unknown()),
  update_time: opt(z.nullable(z.number())),
  execution_status: opt(z.unknown()),
  execution_meta: opt(z.unknown()),
};
/**
 * Response of `GET /api/jobs/{id}`: the job with its mapped `status`, its
 * `outputs` by node id, `execution_error`, `workflow` and times. (The SDK's
 * `JobRecord` adds the normalized `phase`.)
 */
export const JobRecordBody: Model<JobRecordBody> = z.looseObject(jobRecordBodyShape);

// A local server answers `limit: null` when none was asked for.
const jobPaginationShape = { offset: z.number(), limit: opt(z.nullable(z.number())), total: opt(z.nullable(z.number())), has_more: z.boolean() };
const JobPagination: Model<JobPagination> = z.looseObject(jobPaginationShape);
const jobListShape = { jobs: z.array(JobSummary), pagination: JobPagination };

/** Response of `GET /api/jobs`. */
export const JobList: Model<JobList> = z.looseObject(jobListShape);

/** `status` of `GET /api/jobs`: one of `values`, or a non-empty list of them (sent comma-separated). */
const jobStatusFilter = <const T extends readonly [string, ...string[]]>(values: T) => {
  const one = z.enum(values);
  return opt(z.union([one, z.array(one).check(z.minLength(1))]));
};
const listJobsShape = {
  status: jobStatusFilter(JOB_STATUSES),
  workflow_id: opt(z.string().check(z.minLength(1))),
  output_type: opt(z.enum(JOB_OUTPUT_TYPES)),
  /** The cloud: `create_time` or `execution_time`; a local server: `created_at` or `execution_duration`. */
  sort_by: opt(z.enum(['create_time', 'execution_time', 'created_at', 'execution_duration'])),
  sort_order: opt(z.enum(['asc', 'desc'])),
  offset: opt(z.number().check(z.int(), z.gte(0))),
  limit: opt(z.number().check(z.int(), z.gte(1), z.lte(1000))),
};

/**
 * Query of `GET /api/jobs`, what one server kind or the other takes (the type
 * of `listJobs`); `listJobs` checks its kind's: {@link CloudListJobsParams} or
 * {@link LocalListJobsParams}.
 */
export const ListJobsParams = z.strictObject(listJobsShape);

/** Query of the cloud's `GET /api/jobs`: sorted by `create_time` or `execution_time`. */
export const CloudListJobsParams = z.strictObject({ ...listJobsShape, sort_by: opt(z.enum(['create_time', 'execution_time'])) });

/**
 * Query of a local server's `GET /api/jobs`: no `cancelled` status (it reads
 * its stopped jobs as `failed`), no `output_type` filter, sorted by
 * `created_at` or `execution_duration`.
 */
export const LocalListJobsParams = z.strictObject({
  status: jobStatusFilter(['pending', 'in_progress', 'completed', 'failed']),
  workflow_id: listJobsShape.workflow_id,
  sort_by: opt(z.enum(['created_at', 'execution_duration'])),
  sort_order: listJobsShape.sort_order,
  offset: listJobsShape.offset,
  limit: listJobsShape.limit,
});

/** The submission members of `submit()`/`run()` options, checked before the request (other members are request options). */
export const SubmitOptionsParams = z.looseObject({
  partnerApiKey: opt(z.union([z.string().check(z.minLength(1)), z.literal(true)])),
  extraData: opt(z.record(z.string(), z.unknown())),
  clientId: opt(z.string()),
  validate: opt(z.boolean()),
  promptId: opt(z.string().check(z.minLength(1))),
  resubmitUnconfirmed: opt(z.boolean()),
  confirmWithin: opt(z.number().check(z.gte(0))),
  widgetValues: opt(z.enum(['strict', 'editor'])),
});

/** The job ids of `cancel()`: at least one, none empty. */
export const PromptIds = z.array(z.string().check(z.minLength(1))).check(z.minLength(1));

/** Query of `listJobs`. */
export type ListJobsParams = z.input<typeof ListJobsParams>;

const queueShape = { queue_running: z.array(z.unknown()), queue_pending: z.array(z.unknown()) };
/** Response of `GET /api/queue`. The element shape is not specified (cloud and local servers differ; see `getQueue`). */
export const Queue: Model<Queue> = z.looseObject(queueShape);

const historyStatusShape = { status_str: opt(z.nullable(z.string())), completed: opt(z.boolean()), messages: opt(z.array(z.unknown())) };
const HistoryStatus: Model<HistoryStatus> = z.looseObject(historyStatusShape);
const historyEntryShape = {
  prompt: opt(z.array(z.unknown())),
  outputs: opt(z.nullable(z.record(z.string(), NodeOutputs))),
  status: opt(z.nullable(HistoryStatus)),
};
const HistoryEntry: Model<HistoryEntry> = z.looseObject(historyEntryShape);

/**
 * `GET /history/{id}` of a local server: `{}` while the job is pending,
 * running or unknown; `{ [id]: { prompt, outputs, status, meta } }` once it ended.
 */
export const History = z.record(z.string(), HistoryEntry);


// Each interface above is exactly what its shape validates.
type _Exact = Checks<
  [
    Same<UploadResponse, Fields<typeof uploadResponseShape>>,
    Same<SubmissionResponse, Fields<typeof submissionResponseShape>>,
    Same<SubmissionErrorDetail, Fields<typeof submissionErrorDetailShape>>,
    Same<NodeError, Fields<typeof nodeErrorShape>>,
    Same<SubmissionErrorBody, Fields<typeof submissionErrorBodyShape>>,
    Same<JobStatus, Fields<typeof jobStatusShape>>,
    Same<JobExecutionError, Fields<typeof jobExecutionErrorShape>>,
    Same<JobSummary, Fields<typeof jobSummaryShape>>,
    Same<JobRecordBody, Fields<typeof jobRecordBodyShape>>,
    Same<JobPagination, Fields<typeof jobPaginationShape>>,
    Same<JobList, Fields<typeof jobListShape>>,
    Same<Queue, Fields<typeof queueShape>>,
    Same<HistoryStatus, Fields<typeof historyStatusShape>>,
    Same<HistoryEntry, Fields<typeof historyEntryShape>>,
    Same<History, z.infer<typeof History>>,
  ]
>;
