/**
 * Schemas of the cloud REST API (`cloud.md`). The API is experimental: every
 * object is loose and every enum open; only wrong types are errors.
 *
 * @module
 */
import * as z from 'zod/mini';
import { openEnum, opt } from './common.ts';

/** Job status values the spec names. */
export const JOB_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'cancelled'] as const;
/** Statuses after which a job never changes. */
export const FINAL_JOB_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);
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

/** Response of `GET /api/job/{prompt_id}/status`. */
export const JobStatus = z.looseObject({ status: openEnum(JOB_STATUSES) });

/** Response of `GET /api/queue`. The element shape is not specified. */
export const Queue = z.looseObject({ queue_running: z.array(z.unknown()), queue_pending: z.array(z.unknown()) });

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
/** A job status value (open). */
export type JobStatusValue = JobStatus['status'];
/** `{ queue_running, queue_pending }`. */
export type Queue = z.infer<typeof Queue>;
/** A node class definition. */
export type NodeDefinition = z.infer<typeof NodeDefinition>;
/** All node definitions. */
export type ObjectInfo = z.infer<typeof ObjectInfo>;
