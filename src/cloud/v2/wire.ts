/**
 * Comfy API v2's wire shapes as the SDK reads them (`spec/cloud-v2.md` §1–§4),
 * and the one mapping of a v2 job onto the shapes every kind of server
 * shares: a job's status and record with their {@link JobPhase}, its outputs
 * by node id as file references that `download()` takes. Tolerant: unknown
 * fields are kept, and a member of the wrong type is left out of what is
 * derived from it rather than thrown (the real server and the published spec
 * differ, §9.7).
 *
 * @module
 */
import type { JobExecutionError, NodeOutputs } from '../../schemas/cloud.ts';
import { jobPhase, type JobRecord, type JobStatusResult } from '../jobs.ts';

/** A v2 job status: `queued`, `running`, `canceling` (not final), `succeeded`, `canceled`, `failed`, `expired`; open to new ones. */
export type V2Status = 'queued' | 'running' | 'succeeded' | 'canceling' | 'canceled' | 'failed' | 'expired' | (string & {});

/** A v2 job's latest progress snapshot (`value` 0..1). The real server sends `{0,0,0}` on a poll. */
export interface V2Progress {
  value?: number;
  nodes_done?: number;
  nodes_total?: number;
  current_node?: string | null;
  current_node_class?: string | null;
  step?: number | null;
  steps?: number | null;
  message?: string | null;
  [member: string]: unknown;
}

/** One output of a v2 job (`Output`): an asset, downloadable by `url` (short-lived) or `/assets/{id}/content`. */
export interface V2Output {
  node_id: string;
  /** The file's name (`ComfyUI_00001_.png`). */
  name: string;
  /** `image`, `video`, `audio`, `text`, `file`, `latent` (open). */
  type: string;
  content_type?: string;
  size_bytes?: number;
  /** The asset's id (the real server: a signed token). */
  id?: string;
  /** `blake3:<hex>`, or `null` until computed. */
  hash?: string | null;
  url?: string;
  url_expires_at?: string;
  job_id?: string;
  [member: string]: unknown;
}

/** Why a v2 job failed (`JobError`). */
export interface V2JobError {
  code?: string;
  message?: string;
  node_id?: string | null;
  class_type?: string | null;
  traceback?: unknown;
  [member: string]: unknown;
}

/** A v2 job as the server sends it (`Job`). */
export interface V2Job {
  id: string;
  status: V2Status;
  created_at?: string | null;
  started_at?: string | null;
  completed_at?: string | null;
  /** Until when the job, its workflow and logs can be read. */
  expires_at?: string | null;
  /** 1-based while queued (the real server), else `null`. */
  queue_position?: number | null;
  progress?: V2Progress | null;
  outputs?: V2Output[];
  error?: V2JobError | null;
  urls?: { self?: string; events?: string; cancel?: string; logs?: string; [member: string]: unknown };
  /** Timings by name (`queue_ms`, `execution_ms`); a missing value is `null`. */
  metrics?: Record<string, number | null> | null;
  /** Labels: a map (the published spec) or an opaque string (the real proxy). */
  metadata?: unknown;
  [member: string]: unknown;
}

/** An asset (`Asset`): content-addressed bytes the server keeps, referenced from a workflow by id. */
export interface V2Asset {
  id: string;
  /** `blake3:<hex>`, or `null` until computed. */
  hash: string | null;
  size_bytes?: number;
  content_type?: string;
  file_path?: string;
  url?: string;
  url_expires_at?: string;
  /** Whether the upload stored new bytes (`false`: the server had them). */
  created_new?: boolean;
  created_at?: string;
  expires_at?: string | null;
  [member: string]: unknown;
}

/** The reference a workflow input takes for an asset. */
export interface AssetReference {
  __type: 'core/ASSET';
  info: { id: string; hash?: string; file_path?: string };
}

/**
 * A v2 output as a file of a job's outputs: the same `filename`, `subfolder`
 * and `type` as any server's, with v2's own members kept (`url`, `id`,
 * `content_type`, `size_bytes`, `hash`, `job_id`), which `download()` reads.
 * v2's own `type` (`image`, `video`, …) is `output_type` here.
 */
export interface V2OutputFileRef {
  filename: string;
  subfolder: '';
  type: 'output';
  [member: string]: unknown;
}

const MEDIA_KEYS: Readonly<Record<string, string>> = { image: 'images', video: 'video', audio: 'audio', text: 'text', latent: 'latents' };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * One output as the key it is listed under (`images` for an image) and its
 * file reference; `undefined` when it is not an output (no `node_id` or
 * `name`).
 *
 * @example
 * ```ts
 * fileOfOutput({ node_id: '9', name: 'a.png', type: 'image', id: 'f1', url: 'https://…' });
 * // { nodeId: '9', mediaType: 'images',
 * //   file: { filename: 'a.png', subfolder: '', type: 'output', output_type: 'image', node_id: '9', name: 'a.png', id: 'f1', url: 'https://…' } }
 * ```
 */
export function fileOfOutput(output: unknown): { nodeId: string; mediaType: string; file: V2OutputFileRef } | undefined {
  if (!isObject(output) || typeof output.node_id !== 'string' || typeof output.name !== 'string') return undefined;
  const kind = typeof output.type === 'string' ? output.type : 'file';
  const { type: _kind, ...rest } = output;
  return { nodeId: output.node_id, mediaType: MEDIA_KEYS[kind] ?? kind, file: { ...rest, output_type: kind, filename: output.name, subfolder: '', type: 'output' } };
}

/** A v2 job's outputs by node id, each under the key of its kind, in the order sent; what is not an output is left out. */
export function outputsByNode(outputs: unknown): Record<string, NodeOutputs> {
  const byNode: Record<string, Record<string, V2OutputFileRef[]>> = {};
  if (!Array.isArray(outputs)) return byNode as Record<string, NodeOutputs>;
  for (const o of outputs) {
    const f = fileOfOutput(o);
    if (!f) continue;
    const node = (byNode[f.nodeId] ??= {});
    (node[f.mediaType] ??= []).push(f.file);
  }
  return byNode as Record<string, NodeOutputs>;
}

/** A v2 `JobError` as the `execution_error` of a record (what `ExecutionError` reads): `code` as the exception type. */
export function executionErrorOf(error: unknown): JobExecutionError | undefined {
  if (!isObject(error)) return undefined;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    ...error,
    exception_type: str(error.code) ?? null,
    exception_message: str(error.message) ?? null,
    node_id: str(error.node_id) ?? null,
    node_type: str(error.class_type) ?? null,
    traceback: error.traceback,
  } as JobExecutionError;
}

/**
 * A v2 job as the status and the record of every kind of server: the job as
 * sent, its `phase`, its outputs by node id, and its error as
 * `execution_error`. One object serves both (the poll carries the outputs).
 *
 * @example
 * ```ts
 * const s = toJobState({ id: 'j1', status: 'succeeded', outputs: [{ node_id: '9', name: 'a.png', type: 'image' }] });
 * s.phase; // 'completed'
 * s.outputs; // { '9': { images: [{ filename: 'a.png', subfolder: '', type: 'output', … }] } }
 * ```
 */
export function toJobState(job: V2Job): JobStatusResult & JobRecord {
  const executionError = executionErrorOf(job.error);
  return {
    ...(job as Record<string, unknown>),
    id: job.id,
    status: job.status,
    phase: jobPhase(job.status),
    outputs: outputsByNode(job.outputs),
    ...(executionError ? { execution_error: executionError } : {}),
  } as JobStatusResult & JobRecord;
}

/** The jobs of a `GET /api/v2/jobs` answer: `jobs` (comfy-api-proxy), `items` or `data` (other surfaces); what is not a job is left out. */
export function jobsOf(body: unknown): V2Job[] {
  const list = isObject(body) ? (body.jobs ?? body.items ?? body.data) : undefined;
  return Array.isArray(list) ? list.filter(isV2Job) : [];
}

/** Whether a body is a v2 job (an object with a string `id` and `status`). */
export function isV2Job(v: unknown): v is V2Job {
  return isObject(v) && typeof v.id === 'string' && typeof v.status === 'string';
}
