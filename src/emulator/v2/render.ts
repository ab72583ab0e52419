/**
 * v2 jobs, outputs and assets on the wire, as the personality's
 * {@link V2Behaviour} says: pure functions of the state and the request's
 * origin (URLs are absolute on the origin the client used).
 *
 * @module
 */
import type { AssetRecord } from './assets.ts';
import type { V2JobRecord, V2OutputEntry, V2State } from './state.ts';

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** An output file on the wire. */
export function outputJson(state: V2State, r: V2JobRecord, entry: V2OutputEntry, origin: string): Record<string, unknown> {
  const asset = state.behaviour.outputIds === 'asset';
  const file = state.cloud.files.get(entry.filename, entry.type);
  const hash = entry.record?.blob.hash;
  return {
    node_id: entry.nodeId,
    name: entry.filename,
    type: entry.kind,
    content_type: file?.contentType ?? entry.record?.blob.contentType ?? 'application/octet-stream',
    size_bytes: asset ? (file?.size ?? 0) : 0,
    id: entry.id,
    hash: asset && hash && hash !== 'blake3:' ? hash : null,
    url: `${origin}/api/v2/assets/${entry.id}/content`,
    url_expires_at: iso(Date.now() + state.retentionMs),
    job_id: r.id,
  };
}

/** The job's `error`: a JobError for a failed job, else null. */
function errorOf(r: V2JobRecord): Record<string, unknown> | null {
  const e = r.job.error;
  if (r.job.status !== 'failed') return null;
  return {
    code: 'node_execution_error',
    message: e?.exception_message ?? 'The job failed.',
    node_id: e?.node_id ?? null,
    class_type: e?.node_type ?? null,
    traceback: null,
  };
}

/** The poll's `progress`. */
function progressOf(state: V2State, r: V2JobRecord, status: string): Record<string, unknown> | null {
  if (state.behaviour.pollProgress === 'zero') return status === 'running' || status === 'canceling' ? { value: 0.0, nodes_done: 0, nodes_total: 0 } : null;
  return status === 'queued' ? null : r.progress;
}

/**
 * A Job. `as` overrides the status (`canceling` in a cancel's answer, the
 * false `expired`); `list` drops outputs and urls (the spec's list items).
 */
export function jobJson(state: V2State, r: V2JobRecord, origin: string, options: { as?: string; list?: boolean; created?: boolean } = {}): Record<string, unknown> {
  const b = state.behaviour;
  const status = options.as ?? state.statusOf(r);
  const falseExpired = options.as === 'expired' && !r.expired;
  const self = `${origin}/api/v2/jobs/${r.id}`;
  const j = r.job;
  const body: Record<string, unknown> = {
    id: r.id,
    status,
    created_at: iso(j.created),
    started_at: b.timings ? iso(j.started) : null,
    completed_at: b.timings ? iso(j.ended) : null,
    expires_at: iso(j.created + state.retentionMs),
    queue_position: options.created && !b.queuePositionOnCreate ? null : state.queuePosition(r),
    progress: progressOf(state, r, status),
  };
  if (!options.list) body.outputs = falseExpired ? [] : r.outputs.map((e) => outputJson(state, r, e, origin));
  body.error = errorOf(r);
  if (b.outputsReused) body.outputs_reused = r.reused;
  if (!options.list) {
    body.urls = { self, events: `${self}/events`, cancel: `${self}/cancel`, ...(b.logs ? { logs: `${self}/logs` } : {}) };
  }
  if (b.timings) {
    body.metrics = {
      queue_ms: j.started === undefined ? null : j.started - j.created,
      execution_ms: j.started === undefined || j.ended === undefined ? null : j.ended - j.started,
    };
  }
  if (r.metadata !== undefined) body.metadata = r.metadata;
  return body;
}

/** An Asset (`created_new` only in the answers of uploads and from-hash). */
export function assetJson(state: V2State, a: AssetRecord, origin: string, createdNew?: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: a.id,
    hash: a.blob.hash === 'blake3:' ? null : a.blob.hash,
    size_bytes: a.blob.size,
    content_type: a.blob.contentType,
    file_path: a.filePath,
    created_at: iso(a.created),
    url: `${origin}/api/v2/assets/${a.id}/content`,
    url_expires_at: iso(Date.now() + state.retentionMs),
  };
  if (state.behaviour.assetExpiry) {
    body.expires_at = iso(a.expires);
    body.tags = [...a.tags];
  }
  if (createdNew !== undefined) body.created_new = createdNew;
  return body;
}
