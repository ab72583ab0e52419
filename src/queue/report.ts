/**
 * What a queued job reports while it runs on its server: progress, its node
 * events (`job.on('node')`) and, with `previews`, its preview images, all
 * through the job's BullMQ progress.
 *
 * @module
 */
import type { Job } from 'bullmq';
import type { RunOptions, SocketEvent } from '@platformui/sdk';
import { isObject } from '../schemas/rule.ts';
import type { JobData, QueueNodeEvent, QueueReport } from './types.ts';

/** The run's listeners a job reports through. */
export type Listeners = Pick<RunOptions, 'onProgress' | 'onPreview' | 'onEvent'>;

/** The socket's node-level messages a job reports as they are (without their payloads: see {@link QueueNodeEvent}). */
const NODE_EVENTS = new Set<string>(['execution_start', 'execution_cached', 'executing', 'executed', 'execution_success', 'execution_error', 'execution_interrupted']);

/**
 * `e` as the job's node events: the socket's node messages reduced to their node ids, and what a `progress_state`
 * snapshot adds (a node newly finished, which the live cloud reports only there). `finished` is the job's memory
 * of what was reported finished, so that a snapshot repeating it sends nothing.
 */
export function nodeEvents(e: SocketEvent, finished: Set<string>): QueueNodeEvent[] {
  if (e.type === 'binary' || e.type === 'malformed') return [];
  const type = e.type === 'invalid' || e.type === 'unknown' ? e.rawType : e.type;
  const data = isObject(e.data) ? e.data : {};
  if (type === 'progress_state') {
    const nodes = isObject(data.nodes) ? data.nodes : {};
    const newly = Object.entries(nodes).filter(([id, p]) => isObject(p) && p.state === 'finished' && !finished.has(id));
    return newly.map(([id]) => (finished.add(id), { type: 'executed', node: id }));
  }
  if (!NODE_EVENTS.has(type)) return [];
  const node = typeof data.node === 'string' ? data.node : typeof data.node_id === 'string' ? data.node_id : undefined;
  if (type === 'executed' && node !== undefined) {
    if (finished.has(node)) return [];
    finished.add(node);
  }
  const nodes = type === 'execution_cached' && Array.isArray(data.nodes) ? data.nodes.filter((n): n is string => typeof n === 'string') : undefined;
  return [{ type: type as QueueNodeEvent['type'], ...(node !== undefined ? { node } : {}), ...(nodes ? { nodes } : {}) }];
}

/** The largest preview image a job reports by default (`previews: true`): Redis holds it, every producer listening gets it. */
export const PREVIEW_BYTES = 256 * 1024;

/**
 * What a job reports while it runs: progress, its node events (`job.on('node')`), and with `previews`
 * each preview image up to its size bound (base64 in the job's progress: Redis keeps only the latest,
 * every listener hears each). Node events carry value and max -1, as previews do, so that a handle of
 * an SDK before them can tell them from steps.
 */
export function jobListeners(job: Job<JobData>, previewBytes: number): Listeners {
  const report = (p: QueueReport) => void job.updateProgress(p as unknown as object).catch(() => undefined);
  const bound = previewBytes;
  const finished = new Set<string>();
  return {
    onProgress: (p) => report({ ...(p.node !== undefined ? { node: p.node } : {}), value: p.value, max: p.max }),
    onEvent: (e) => {
      for (const event of nodeEvents(e, finished)) report({ ...(event.node !== undefined ? { node: event.node } : {}), value: -1, max: -1, event });
    },
    ...(bound > 0
      ? {
          onPreview: (frame) => {
            if (frame.image.byteLength > bound) return;
            const node = 'metadata' in frame ? frame.metadata.node_id : undefined;
            // Node only (this entry is): Buffer encodes in one call.
            report({ ...(typeof node === 'string' ? { node } : {}), value: -1, max: -1, preview: { mime: frame.mime ?? 'application/octet-stream', base64: Buffer.from(frame.image).toString('base64') } });
          },
        }
      : {}),
  };
}
