/**
 * Comfy API v2's SSE frames as the SDK's socket events (`spec/cloud-v2.md` §3,
 * §9.4), each with `data.prompt_id` set to the job's id, so that a follower
 * reads a v2 job as it reads any other. Pure and never throwing: a frame that
 * does not read becomes a `malformed` event.
 *
 * | v2 frame | socket event |
 * | --- | --- |
 * | `status` `running` (first time) | `execution_start`, then `job_status` |
 * | `status` (any) | `unknown` with `rawType: 'job_status'`, `data: { prompt_id, status, terminal, queue_position? }` |
 * | `progress` | `progress` `{ value, max, node, prompt_id }`: nodes done of nodes when both are > 0, else percent; never lower than the last sent |
 * | `preview` | `binary`, a `preview_image_with_metadata` frame with the decoded bytes and their MIME type |
 * | `output` | `executed` `{ node, output: { images: [file] }, prompt_id }` (the file as `fileOfOutput()` makes it) |
 * | `log`, `error`, anything else | `unknown` with the frame's name as `rawType` |
 * | data that is not a JSON object | `malformed` |
 *
 * No `execution_success` or `execution_error`: a terminal status is only
 * news that the job ended, which the follower confirms by polling.
 *
 * @module
 */
import type { NodeOutputs } from '../../schemas/cloud.ts';
import type { PreviewImageWithMetadataFrame } from '../frames.ts';
import { isFinalPhase, jobPhase } from '../jobs.ts';
import type { CloudMessage, UnknownMessage } from '../messages.ts';
import type { BinaryEvent, SocketEvent } from '../socket.ts';
import { fileOfOutput } from './wire.ts';

/**
 * The `rawType` of the event a status frame becomes: an `unknown` event (no
 * such type exists on other servers) with `data: { prompt_id, status, terminal, queue_position? }`.
 *
 * @example
 * ```ts
 * socket.subscribe(id, (e) => { if (e.type === 'unknown' && e.rawType === JOB_STATUS_EVENT) console.log(e.data); });
 * ```
 */
export const JOB_STATUS_EVENT = 'job_status';

/** `data` of a {@link JOB_STATUS_EVENT} event. */
export interface JobStatusEventData {
  prompt_id: string;
  /** The v2 status as sent (`queued`, `running`, `canceling`, `succeeded`, …). */
  status: string;
  /** Whether the status is final (`succeeded`, `failed`, `canceled`, `expired`): confirm it with a poll. */
  terminal: boolean;
  queue_position?: number | null;
}

/**
 * Whether a socket event is a v2 job's status, and which.
 *
 * @example
 * ```ts
 * if (isJobStatusEvent(e) && e.data.terminal) pollNow();
 * ```
 */
export function isJobStatusEvent(e: SocketEvent): e is UnknownMessage & { rawType: typeof JOB_STATUS_EVENT; data: JobStatusEventData } {
  return e.type === 'unknown' && e.rawType === JOB_STATUS_EVENT;
}

/** What was sent of a job so far: the translation's memory across frames and reconnects. */
export interface JobSent {
  id: string;
  /** `execution_start` was sent. */
  started: boolean;
  /** The last progress sent (`max` 0: none yet). */
  value: number;
  max: number;
  /** A terminal status came. */
  terminal: boolean;
}

/**
 * A fresh {@link JobSent} for a job.
 *
 * @example
 * ```ts
 * const job = jobSent('j1');
 * translate(job, 'status', '{"status":"running"}'); // [execution_start, job_status]
 * ```
 */
export const jobSent = (id: string): JobSent => ({ id, started: false, value: 0, max: 0, terminal: false });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const malformed = (raw: string, error: string): CloudMessage => ({ type: 'malformed', raw, error });

/**
 * The SDK's events for one v2 frame (`event`, its `data` text) of `job`, which
 * it updates (started, progress sent, ended). Never throws.
 *
 * @example
 * ```ts
 * const job = jobSent('j1');
 * translate(job, 'progress', '{"value":1,"nodes_done":2,"nodes_total":3}');
 * // [{ type: 'progress', data: { value: 2, max: 3, node: null, prompt_id: 'j1' } }]
 * translate(job, 'progress', '{"value":0,"nodes_done":0,"nodes_total":0}'); // value 2, max 3 again: never back
 * translate(job, 'status', 'not json'); // [{ type: 'malformed', … }]
 * ```
 */
export function translate(job: JobSent, event: string, data: string): SocketEvent[] {
  let body: unknown;
  try {
    body = JSON.parse(data);
  } catch {
    // Not the parser's message: it quotes the text.
    return [malformed(data, `The ${event.slice(0, 40)} event's data is not valid JSON`)];
  }
  if (!isObject(body)) return [malformed(data, `The ${event.slice(0, 40)} event's data is not a JSON object`)];
  const prompt_id = job.id;
  switch (event) {
    case 'status': {
      const status = body.status;
      if (typeof status !== 'string') return [malformed(data, 'The status event has no string `status`')];
      const terminal = isFinalPhase(jobPhase(status));
      if (terminal) job.terminal = true;
      const out: SocketEvent[] = [];
      if (status === 'running' && !job.started) {
        job.started = true;
        out.push({ type: 'execution_start', data: { prompt_id } });
      }
      const q = body.queue_position;
      out.push({ type: 'unknown', rawType: JOB_STATUS_EVENT, data: { prompt_id, status, terminal, ...(typeof q === 'number' || q === null ? { queue_position: q } : {}) } satisfies JobStatusEventData });
      return out;
    }
    case 'progress': {
      const done = body.nodes_done;
      const total = body.nodes_total;
      const v = body.value;
      let value: number;
      let max: number;
      if (typeof done === 'number' && typeof total === 'number' && done > 0 && total > 0) [value, max] = [Math.min(done, total), total];
      else if (typeof v === 'number' && Number.isFinite(v)) [value, max] = [Math.round(Math.min(1, Math.max(0, v)) * 100), 100];
      else return [malformed(data, 'The progress event has no number `value`')];
      // The real server's counts restart at 0 with each native progress frame: a user's bar never runs back.
      if (job.max > 0 && value / max < job.value / job.max) [value, max] = [job.value, job.max];
      [job.value, job.max] = [value, max];
      const node = typeof body.current_node === 'string' ? body.current_node : null;
      return [{ type: 'progress', data: { value, max, node, prompt_id } }];
    }
    case 'preview': {
      const image = typeof body.data_base64 === 'string' ? fromBase64(body.data_base64) : undefined;
      if (!image) return [malformed(data.slice(0, 200), 'The preview event has no base64 `data_base64`')];
      const nodeId = typeof body.node_id === 'string' ? body.node_id : undefined;
      const mime = typeof body.content_type === 'string' ? body.content_type : undefined;
      const frame: PreviewImageWithMetadataFrame = {
        type: 'preview_image_with_metadata',
        eventType: 4,
        metadata: { ...(nodeId !== undefined ? { node_id: nodeId } : {}), prompt_id, ...(mime ? { image_type: mime } : {}) },
        nodeId,
        promptId: prompt_id,
        mime,
        image,
      };
      return [{ type: 'binary', promptId: prompt_id, frame } satisfies BinaryEvent];
    }
    case 'output': {
      const f = fileOfOutput(body);
      if (!f) return [{ type: 'unknown', rawType: event, data: { ...body, prompt_id } }];
      return [{ type: 'executed', data: { node: f.nodeId, output: { [f.mediaType]: [f.file] } as unknown as NodeOutputs, prompt_id } }];
    }
    default:
      // `log`, a newer `error`, anything to come: passed on untouched (the poll says how the job ended).
      return [{ type: 'unknown', rawType: event, data: { ...body, prompt_id } }];
  }
}

/** Base64 to bytes without Node's `Buffer` (browsers have none); `undefined` when it is not base64. */
function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    const native = (Uint8Array as unknown as { fromBase64?: (s: string) => Uint8Array<ArrayBuffer> }).fromBase64;
    if (native) return native(text);
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return undefined;
  }
}
