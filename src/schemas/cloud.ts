/**
 * Schemas of the cloud REST API (`cloud.md`). The API is experimental: every
 * object is loose and every enum open; only wrong types are errors.
 *
 * @module
 */
import * as z from 'zod/mini';
import { openEnum, opt } from './common.ts';

/** Job status values the spec names (also the mapped `status` of job records, `GET /api/jobs/{id}`). */
export const JOB_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'cancelled'] as const;
/**
 * Raw states the live cloud's `GET /api/job/{id}/status` answers (DESIGN §8).
 * In flight: everything up to `cancelling_preparing`; terminal: `success`,
 * `error`, `non_retryable_error`, `lost`, `cancelled`. Never match on the
 * in-flight names: use {@link jobPhase}.
 */
export const CLOUD_JOB_STATES = [
  'submitted',
  'queued_limited',
  'queued_waiting',
  'allocated',
  'preparing',
  'pending_execution',
  'executing',
  'executed',
  'erroring',
  'cancel_requested',
  'cancel_pending',
  'cancelling_preparing',
  'success',
  'error',
  'non_retryable_error',
  'lost',
  'cancelled',
] as const;
/** `output_type` values of `GET /api/jobs`. */
export const JOB_OUTPUT_TYPES = ['image', 'video', 'audio'] as const;
/** File reference `type` values. */
export const FILE_TYPES = ['input', 'output', 'temp'] as const;

/** A file reference: `filename`, `subfolder` (usually empty), `type`. */
export const FileRef = z.looseObject({ filename: z.string(), subfolder: opt(z.string()), type: opt(openEnum(FILE_TYPES)) });

/** Outputs of one node: `images`, `video`, `audio`, each a list of file references; other keys kept. */
export const NodeOutputs = z.looseObject({ images: opt(z.array(FileRef)), video: opt(z.array(FileRef)), audio: opt(z.array(FileRef)) });

/** One node of a workflow in API format. */
export const WorkflowNode = z.looseObject({ inputs: z.record(z.string(), z.unknown()), class_type: opt(z.string()) });

/** A workflow in API format: nodes keyed by node id. */
export const Workflow = z.record(z.string(), WorkflowNode);

/** Response of the upload endpoints. */
export const UploadResponse = z.looseObject({ name: z.string(), subfolder: opt(z.string()), type: opt(z.string()) });

/** Response of `POST /api/prompt`: `prompt_id`, or `error` when the submission failed. */
export const SubmissionResponse = z.looseObject({ prompt_id: opt(z.string()), error: opt(z.unknown()) });

/**
 * Response of `GET /api/job/{prompt_id}/status`: the spec's five values, or the
 * live cloud's raw states with `id`, times and `error_message`.
 */
export const JobStatus = z.looseObject({
  status: openEnum([...JOB_STATUSES, ...CLOUD_JOB_STATES]),
  id: opt(z.string()),
  created_at: opt(z.unknown()),
  updated_at: opt(z.unknown()),
  last_state_update: opt(z.unknown()),
  assigned_inference: opt(z.unknown()),
  error_message: opt(z.nullable(z.string())),
});

/** `execution_error` of a job record: where and why the job failed. */
export const JobExecutionError = z.looseObject({
  node_id: opt(z.nullable(z.string())),
  node_type: opt(z.nullable(z.string())),
  exception_message: opt(z.nullable(z.string())),
  exception_type: opt(z.nullable(z.string())),
  traceback: opt(z.unknown()),
  current_inputs: opt(z.unknown()),
  current_outputs: opt(z.unknown()),
});

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
export const JobSummary = z.looseObject(jobSummaryShape);

/**
 * Response of `GET /api/jobs/{id}`: the job with its mapped `status`, its
 * `outputs` by node id, `execution_error`, `workflow` and times. (The SDK's
 * `JobRecord` adds the normalized `phase`.)
 */
export const JobRecordBody = z.looseObject({
  ...jobSummaryShape,
  outputs: opt(z.nullable(z.record(z.string(), NodeOutputs))),
  workflow: opt(z.unknown()),
  update_time: opt(z.nullable(z.number())),
  execution_status: opt(z.unknown()),
  execution_meta: opt(z.unknown()),
});

/** Response of `GET /api/jobs`. */
export const JobList = z.looseObject({
  jobs: z.array(JobSummary),
  // A local server answers `limit: null` when none was asked for.
  pagination: z.looseObject({ offset: z.number(), limit: opt(z.nullable(z.number())), total: opt(z.nullable(z.number())), has_more: z.boolean() }),
});

/** Query of `GET /api/jobs`, checked before the request. */
export const ListJobsParams = z.strictObject({
  /** One status or several (sent comma-separated). */
  status: opt(z.union([openEnum(JOB_STATUSES), z.array(openEnum(JOB_STATUSES)).check(z.minLength(1))])),
  workflow_id: opt(z.string().check(z.minLength(1))),
  output_type: opt(z.enum(JOB_OUTPUT_TYPES)),
  /** The cloud: `create_time` or `execution_time`; a local server: `created_at` or `execution_duration`. */
  sort_by: opt(z.enum(['create_time', 'execution_time', 'created_at', 'execution_duration'])),
  sort_order: opt(z.enum(['asc', 'desc'])),
  offset: opt(z.number().check(z.int(), z.gte(0))),
  limit: opt(z.number().check(z.int(), z.gte(1), z.lte(1000))),
});

/** Response of `GET /api/queue`. The element shape is not specified (cloud and local servers differ; see `getQueue`). */
export const Queue = z.looseObject({ queue_running: z.array(z.unknown()), queue_pending: z.array(z.unknown()) });

/**
 * `GET /history/{id}` of a local server: `{}` while the job is pending,
 * running or unknown; `{ [id]: { prompt, outputs, status, meta } }` once it ended.
 */
export const History = z.record(
  z.string(),
  z.looseObject({
    prompt: opt(z.array(z.unknown())),
    outputs: opt(z.nullable(z.record(z.string(), NodeOutputs))),
    status: opt(z.nullable(z.looseObject({ status_str: opt(z.nullable(z.string())), completed: opt(z.boolean()), messages: opt(z.array(z.unknown())) }))),
  }),
);

/** One node class of `object_info`: `input.required` keyed by input name; the rest is kept. */
export const NodeDefinition = z.looseObject({
  input: opt(z.looseObject({ required: opt(z.record(z.string(), z.unknown())), optional: opt(z.record(z.string(), z.unknown())) })),
});

/** Response of `GET /api/object_info`: node definitions keyed by class name. */
export const ObjectInfo = z.record(z.string(), NodeDefinition);

/** A file reference. */
export type FileRef = z.infer<typeof FileRef>;
/** Outputs of one node. */
export type NodeOutputs = z.infer<typeof NodeOutputs>;
/** One workflow node. */
export type WorkflowNode = z.infer<typeof WorkflowNode>;
/** A workflow in API format. */
export type Workflow = z.infer<typeof Workflow>;
/** `{ name, subfolder }` of an upload. */
export type UploadResponse = z.infer<typeof UploadResponse>;
/** `{ prompt_id }` (or `error`). */
export type SubmissionResponse = z.infer<typeof SubmissionResponse>;
/** `{ status }` of a job. */
export type JobStatus = z.infer<typeof JobStatus>;
/** A raw job state or a spec status (open). */
export type JobStatusValue = JobStatus['status'];
/** Where and why a job failed. */
export type JobExecutionError = z.infer<typeof JobExecutionError>;
/** One job of a job list. */
export type JobSummary = z.infer<typeof JobSummary>;
/** A job record, as the server sends it. */
export type JobRecordBody = z.infer<typeof JobRecordBody>;
/** A page of `GET /api/jobs`, as the server sends it. */
export type JobList = z.infer<typeof JobList>;
/** Query of `listJobs`. */
export type ListJobsParams = z.input<typeof ListJobsParams>;
/** `{ queue_running, queue_pending }` as the server sends it. */
export type Queue = z.infer<typeof Queue>;
/** A local server's history answer. */
export type History = z.infer<typeof History>;
/** A node class definition. */
export type NodeDefinition = z.infer<typeof NodeDefinition>;
/** All node definitions. */
export type ObjectInfo = z.infer<typeof ObjectInfo>;
