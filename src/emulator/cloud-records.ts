/**
 * How a job looks on the wire, in the dialect of each emulated server: the
 * spec's and the live cloud's answers of `GET /api/job/{id}/status`, job
 * records of `GET /api/jobs[/{id}]` in the live cloud's and the local
 * server's shapes, the local server's history entries, and `GET /api/queue`
 * entries. Pure functions of a {@link Job} and a {@link RecordClock}; the
 * routes (`cloud-routes.ts`) pick the dialect from the personality.
 *
 * Shapes of the local dialect follow the real server (`comfy_execution/jobs.py`,
 * `fixtures/local-server/09_jobs_api_and_stopping.jsonl`); those of the cloud
 * dialect follow DESIGN §8.
 *
 * @module
 */
import type { Job, JobMessage, JobStatusValue, NodeOutput } from './cloud-jobs.ts';

/** What time it is and how late outputs are persisted (`CloudState.outputsDelayMs`). */
export interface RecordClock {
  /** ms since the epoch. */
  readonly now: number;
  readonly outputsDelayMs: number;
}

/** A job-record dialect: the live cloud's or the local server's. */
export type RecordDialect = 'cloud' | 'local';

/** Job status values of the local server (no `cancelled`: an interrupted job reads `failed`). */
export type LocalJobStatus = 'pending' | 'in_progress' | 'completed' | 'failed';

/** Whether a job has ended (completed, failed or cancelled). */
export function isFinished(job: Job): boolean {
  return job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled';
}

/** The status a dialect reports: the local server has no `cancelled` (a cancelled job failed). */
export function statusIn(dialect: RecordDialect, job: Job): JobStatusValue | LocalJobStatus {
  return dialect === 'local' && job.status === 'cancelled' ? 'failed' : job.status;
}

/**
 * The outputs a job's REST answers show: those of a finished job once
 * `outputsDelayMs` has passed since its end (the live cloud persists them
 * after `execution_success`), `{}` before and while it runs.
 */
export function persistedOutputs(job: Job, clock: RecordClock): Record<string, NodeOutput> {
  if (job.ended === undefined || clock.now < job.ended + clock.outputsDelayMs) return {};
  return structuredClone(job.outputs);
}

const PREVIEWABLE = new Set(['images', 'video', 'audio']);

/** Number of output files and the first previewable one (`type: 'output'` preferred), as the local server computes them. */
export function outputsSummary(outputs: Record<string, NodeOutput>): { count: number; preview: Record<string, unknown> | undefined } {
  let count = 0;
  let preview: Record<string, unknown> | undefined;
  let fallback: Record<string, unknown> | undefined;
  for (const [nodeId, output] of Object.entries(outputs)) {
    for (const [mediaType, items] of Object.entries(output)) {
      if (!Array.isArray(items)) continue; // e.g. `animated`, a flag
      for (const item of items as unknown[]) {
        if (!item || typeof item !== 'object') continue;
        count++;
        if (preview || !PREVIEWABLE.has(mediaType)) continue;
        const enriched = { ...(item as Record<string, unknown>), nodeId, mediaType };
        if ((item as Record<string, unknown>).type === 'output') preview = enriched;
        else fallback ??= enriched;
      }
    }
  }
  return { count, preview: preview ?? fallback };
}

/** `extra_data.extra_pnginfo.workflow.id` (where the local server reads it), else `extra_data.workflow_id`. */
export function workflowIdOf(job: Job): string | undefined {
  const pnginfo = job.extraData.extra_pnginfo as { workflow?: { id?: unknown } } | undefined;
  const id = pnginfo?.workflow?.id ?? job.extraData.workflow_id;
  return typeof id === 'string' ? id : undefined;
}

/** Unix seconds of a time in ms. */
const seconds = (ms: number): number => Math.floor(ms / 1000);

/** The job's last state change, ms. */
function updatedAt(job: Job): number {
  return Math.max(job.created, job.started ?? 0, job.firstNodeAt ?? 0, job.ended ?? 0);
}

/** Drops `undefined` members (the local server prunes `None`s). */
function prune(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));
}

const ENDINGS = new Set(['execution_success', 'execution_error', 'execution_interrupted']);

/** Data of the first kept message matching `types`. */
function message(job: Job, types: ReadonlySet<string>): Record<string, unknown> | undefined {
  return job.messages.find(([type]) => types.has(type))?.[1];
}

/** `{ status_str, completed, messages }` of a finished job (the history's `status`, the record's `execution_status`). */
export function executionStatus(job: Job): { status_str: 'success' | 'error'; completed: boolean; messages: JobMessage[] } {
  const completed = job.status === 'completed';
  return { status_str: completed ? 'success' : 'error', completed, messages: structuredClone(job.messages) };
}

// --- GET /api/job/{id}/status ------------------------------------------------------

/** The spec's body: `{ status }`, plus `outputs` when completed and `error` when failed with one. */
export function specStatus(job: Job, clock: RecordClock): Record<string, unknown> {
  const body: Record<string, unknown> = { status: job.status };
  if (job.status === 'completed') body.outputs = persistedOutputs(job, clock);
  if (job.status === 'failed' && job.error) body.error = { ...job.error };
  return body;
}

/**
 * The live cloud's raw state of a job. `slotsFull`: every running slot of
 * its key is taken, so a pending job is `queued_limited` rather than `submitted`.
 */
export function rawState(job: Job, slotsFull: boolean): string {
  switch (job.status) {
    case 'pending':
      return slotsFull ? 'queued_limited' : 'submitted';
    case 'in_progress':
      return job.firstNodeAt === undefined ? 'preparing' : 'executing';
    case 'completed':
      return 'success';
    case 'failed':
      return job.rawStatus ?? 'error';
    default:
      return 'cancelled';
  }
}

/** The live cloud's body: `{ id, status (raw), created_at, updated_at, last_state_update?, error_message? }`, ISO times, no outputs. */
export function rawStatus(job: Job, slotsFull: boolean): Record<string, unknown> {
  const updated = new Date(updatedAt(job)).toISOString();
  return prune({
    id: job.prompt_id,
    status: rawState(job, slotsFull),
    created_at: new Date(job.created).toISOString(),
    updated_at: updated,
    last_state_update: job.started !== undefined || job.ended !== undefined ? updated : undefined,
    error_message: job.status === 'failed' ? job.error?.exception_message : undefined,
  });
}

// --- job records ---------------------------------------------------------------------

const CLOUD_ERROR_FIELDS = ['node_id', 'node_type', 'exception_message', 'exception_type', 'traceback', 'current_inputs', 'current_outputs'] as const;

/** The cloud record's `execution_error`: the fields of the `execution_error` event it lists. */
function cloudError(job: Job): Record<string, unknown> | undefined {
  const data = message(job, new Set(['execution_error']));
  return data && Object.fromEntries(CLOUD_ERROR_FIELDS.filter((k) => k in data).map((k) => [k, structuredClone(data[k])]));
}

/**
 * A job record in `dialect`: the full one of `GET /api/jobs/{id}` (`detail`),
 * or the list item of `GET /api/jobs`.
 *
 * - cloud: `{ id, status, create_time, update_time (s), workflow, outputs,
 *   outputs_count, preview_output?, execution_error?, execution_status? (once
 *   finished), execution_meta, execution_start_time?, execution_end_time? (ms) }`;
 *   list items `{ id, status, create_time, execution_error?, preview_output?,
 *   outputs_count, workflow_id?, execution_start_time?, execution_end_time? }`.
 * - local: pending and running `{ id, status, priority, create_time,
 *   outputs_count: 0, workflow_id? }`; finished ones add the execution times,
 *   `execution_error` (the event's data), `outputs_count`, `preview_output`,
 *   and in detail `outputs`, `execution_status`, `workflow`. Times in ms.
 */
export function jobRecord(dialect: RecordDialect, job: Job, clock: RecordClock, detail: boolean): Record<string, unknown> {
  const outputs = persistedOutputs(job, clock);
  const { count, preview } = outputsSummary(outputs);
  const workflow = () => ({ prompt: structuredClone(job.prompt), extra_data: structuredClone(job.extraData) });
  const status = statusIn(dialect, job);
  if (dialect === 'cloud') {
    const times = { execution_start_time: job.started, execution_end_time: job.ended };
    if (!detail) {
      return prune({ id: job.prompt_id, status, create_time: seconds(job.created), execution_error: cloudError(job), preview_output: preview, outputs_count: count, workflow_id: workflowIdOf(job), ...times });
    }
    return prune({
      id: job.prompt_id,
      status,
      create_time: seconds(job.created),
      update_time: seconds(updatedAt(job)),
      workflow: workflow(),
      outputs,
      outputs_count: count,
      preview_output: preview,
      execution_error: cloudError(job),
      execution_status: isFinished(job) ? executionStatus(job) : undefined,
      execution_meta: {},
      ...times,
    });
  }
  const base = { id: job.prompt_id, status, priority: job.number, create_time: job.created };
  if (!isFinished(job)) return prune({ ...base, outputs_count: 0, workflow_id: workflowIdOf(job) });
  const record = prune({
    ...base,
    execution_start_time: message(job, new Set(['execution_start']))?.timestamp,
    execution_end_time: message(job, ENDINGS)?.timestamp,
    execution_error: structuredClone(message(job, new Set(['execution_error']))),
    outputs_count: count,
    preview_output: preview,
    workflow_id: workflowIdOf(job),
  });
  return detail ? { ...record, outputs, execution_status: executionStatus(job), workflow: workflow() } : record;
}

// --- history and queue ------------------------------------------------------------------

/**
 * The local server's `GET /history/{id}` body: `{}` until the job has
 * finished, then `{ [id]: { prompt, outputs, status, meta } }`.
 */
export function historyOf(job: Job | undefined, clock: RecordClock): Record<string, unknown> {
  if (!job || !isFinished(job)) return {};
  const outputs = persistedOutputs(job, clock);
  const meta = Object.fromEntries(Object.keys(outputs).map((id) => [id, { node_id: id, display_node: id, parent_node: null, real_node_id: id }]));
  return {
    [job.prompt_id]: {
      prompt: [job.number, job.prompt_id, structuredClone(job.prompt), structuredClone(job.extraData), [...job.outputNodes]],
      outputs,
      status: executionStatus(job),
      meta,
    },
  };
}

/**
 * One `GET /api/queue` entry: `local` `[number, prompt_id, prompt, extra_data,
 * outputs_to_execute]`, `cloud` `[number, prompt_id, workflow, output_node_ids, { create_time }]` (Unix seconds).
 */
export function queueEntry(shape: 'local' | 'cloud', job: Job): unknown[] {
  const prompt = structuredClone(job.prompt);
  return shape === 'local'
    ? [job.number, job.prompt_id, prompt, structuredClone(job.extraData), [...job.outputNodes]]
    : [job.number, job.prompt_id, prompt, [...job.outputNodes], { create_time: seconds(job.created) }];
}
