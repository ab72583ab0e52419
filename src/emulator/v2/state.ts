/**
 * The state of the emulator's Comfy API v2 server, exposed as
 * `emulator.v2`: the v2 view of jobs the cloud's one job engine runs
 * (`cloud-jobs.ts`, by composition: a v2 job is an engine job plus what v2
 * adds), idempotency keys, assets, the stream limit, fault switches and
 * counters. Engine events are turned here into v2 frames (`status`,
 * `progress`, `preview`, `output`) for the SSE route (`events.ts`).
 *
 * @module
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { CloudEvent, CloudState, Job } from '../cloud.ts';
import { contentTypeFor } from '../cloud-files.ts';
import { AssetStore, type AssetRecord, type BlobRef } from './assets.ts';
import type { V2Behaviour } from './behaviour.ts';
import { blake3Of } from './blake3.ts';
import { V2Error } from './errors.ts';

/** Test-settable faults of the v2 server (`emulator.v2.faults`); counts go down as they fire. */
export interface V2Faults {
  /** The next N `POST /jobs` create their job, then lose the answer (the connection is destroyed before any byte). */
  loseSubmitAnswers: number;
  /** The next N `POST /jobs` answer 429 `queue_full` with `Retry-After: retryAfter` (the key is released). */
  queueFull: number;
  /** The next N v2 requests (any route) answer 429 `rate_limited` with `Retry-After: retryAfter`. */
  rateLimited: number;
  /** `Retry-After` (seconds) of `queue_full` and `rate_limited`. Default 1. */
  retryAfter: number;
  /** `GET /jobs/{id}/events` answers 501 `not_implemented` (a surface without streaming). */
  eventsNotImplemented: boolean;
  /** The next N jobs polled (`GET /jobs/{id}`) for the first time after their end read `expired` with no outputs, once (the published proxy's race). */
  falseExpired: number;
}

/** What tests read (`emulator.v2.counters`); `resetCounters()` zeroes them. */
export interface V2Counters {
  /** `POST /jobs` received (every one, refused or not). */
  jobPosts: number;
  /** Jobs created. */
  jobsCreated: number;
  /** Upload requests (`POST /assets`) received. */
  uploads: number;
  /** Bytes of file parts received by `POST /assets` (0 for a from-hash). */
  uploadBytes: number;
  /** Event streams opened (200s). */
  streamsOpened: number;
  /** Event streams open now. */
  streamsOpen: number;
  /** `POST /jobs/{id}/cancel` received. */
  cancels: number;
}

/** A v2 frame of a job's event stream (an `output` carries its entry; the stream renders it for its origin). */
export type V2Frame = { event: 'status' | 'progress' | 'preview'; data: Record<string, unknown> } | { event: 'output'; entry: V2OutputEntry };

/** One output file of a v2 job. */
export interface V2OutputEntry {
  nodeId: string;
  /** `image`, `video`, `audio`, `text`, `latent`. */
  kind: string;
  filename: string;
  type: string;
  /** The asset record (outputIds `asset`) or the signed token (`token`). */
  id: string;
  record: AssetRecord | undefined;
}

/** A v2 job: the engine's job plus what v2 adds. */
export interface V2JobRecord {
  id: string;
  lane: string;
  job: Job;
  /** The workflow as submitted (`core/ASSET` references unresolved). */
  submitted: Record<string, unknown>;
  metadata: unknown;
  idempotencyKey: string | undefined;
  /** A cancel of the running job waits for the next node or step boundary. */
  cancelRequested: boolean;
  /** Cancelled while queued on a server that calls that `expired`. */
  expired: boolean;
  /** Every node cached (the real server's `outputs_reused`). */
  reused: boolean;
  /** Latest progress snapshot (fraction of the graph). */
  progress: Record<string, unknown> | null;
  nodesStarted: number;
  nodesDone: number;
  preview: Record<string, unknown> | undefined;
  outputs: V2OutputEntry[];
  polledAfterEnd: boolean;
  listeners: Set<(frame: V2Frame) => void>;
}

const OUTPUT_KIND: Record<string, string> = { images: 'image', gifs: 'video', audio: 'audio', text: 'text', latents: 'latent' };
const TERMINAL = new Set(['succeeded', 'failed', 'canceled', 'expired']);
const ENDINGS = new Set(['execution_success', 'execution_error', 'execution_interrupted']);

/** Whether a v2 status is terminal. */
export const isTerminal = (status: string): boolean => TERMINAL.has(status);

/** The emulator's v2 server state (`emulator.v2`). */
export class V2State {
  readonly cloud: CloudState;
  readonly behaviour: V2Behaviour;
  readonly assets: AssetStore;
  /** v2 jobs by id (bounded with the engine's history). */
  readonly jobs = new Map<string, V2JobRecord>();
  readonly faults: V2Faults = { loseSubmitAnswers: 0, queueFull: 0, rateLimited: 0, retryAfter: 1, eventsNotImplemented: false, falseExpired: 0 };
  readonly counters: V2Counters = { jobPosts: 0, jobsCreated: 0, uploads: 0, uploadBytes: 0, streamsOpened: 0, streamsOpen: 0, cancels: 0 };
  /** Concurrent event streams allowed (all lanes); the next one is 429 `too_many_streams`. Default 8 (the proxy's). */
  streamLimit = 8;
  /** `Retry-After` of `too_many_streams`, seconds. Default 5. */
  streamRetryAfter = 5;
  /** A `: keepalive` comment after this long without a frame, ms. Default 15000. */
  keepaliveMs = 15_000;
  /** Lifetime of signed content URLs, ms. Default 60000. */
  signedUrlTtlMs = 60_000;
  /** Origin of the result host where signed content URLs point (set by `startEmulator`). */
  resultsOrigin: string | undefined;
  /** Retention of jobs and keys (`expires_at`), ms. Default 24 h. */
  retentionMs = 24 * 3600_000;
  readonly #keys = new Map<string, string | null>();
  readonly #secret = randomBytes(32);
  readonly #off: () => void;

  constructor(cloud: CloudState, behaviour: V2Behaviour) {
    this.cloud = cloud;
    this.behaviour = behaviour;
    this.assets = new AssetStore(cloud.files);
    this.#off = cloud.subscribe((event) => this.#onEngine(event));
  }

  // --- idempotency -------------------------------------------------------------

  /** Claims `key` for a submission of `lane`: 422 `idempotency_key_reuse` when used before (or in flight). */
  claimKey(lane: string, key: string, scope = 'jobs'): void {
    const k = `${scope}\u0000${lane}\u0000${key}`;
    if (this.#keys.has(k)) throw new V2Error(422, 'idempotency_key_reuse', 'This Idempotency-Key has already been used. Keys are single-use; poll or list your jobs instead of resubmitting with the same key.');
    this.#keys.set(k, null);
  }

  /** Frees a key after a submission that definitively failed without a job. */
  releaseKey(lane: string, key: string, scope = 'jobs'): void {
    this.#keys.delete(`${scope}\u0000${lane}\u0000${key}`);
  }

  // --- jobs ----------------------------------------------------------------------

  /** Wraps a job the engine just queued. */
  track(lane: string, job: Job, submitted: Record<string, unknown>, metadata: unknown, idempotencyKey: string | undefined): V2JobRecord {
    const record: V2JobRecord = {
      id: job.prompt_id, lane, job, submitted, metadata, idempotencyKey, cancelRequested: false, expired: false, reused: false,
      progress: null, nodesStarted: 0, nodesDone: 0, preview: undefined, outputs: [], polledAfterEnd: false, listeners: new Set(),
    };
    this.jobs.set(record.id, record);
    this.counters.jobsCreated++;
    // Bounded with the engine: a job it forgot is forgotten here too.
    for (const id of this.jobs.keys()) {
      if (this.cloud.engine.jobs.has(id)) break;
      this.jobs.delete(id);
    }
    return record;
  }

  /** A job of `lane`, or undefined. */
  get(lane: string, id: string): V2JobRecord | undefined {
    const r = this.jobs.get(id);
    return r && r.lane === lane ? r : undefined;
  }

  /** The v2 status of a job (`canceling` while a cancel waits, when `pollCanceling`). */
  statusOf(r: V2JobRecord, forCancel = false): string {
    switch (r.job.status) {
      case 'pending':
        return 'queued';
      case 'in_progress':
        return r.cancelRequested && (forCancel || this.behaviour.pollCanceling) ? 'canceling' : 'running';
      case 'completed':
        return 'succeeded';
      case 'failed':
        return 'failed';
      default:
        return r.expired ? 'expired' : 'canceled';
    }
  }

  /** 1-based place of a queued job in its lane, else null. */
  queuePosition(r: V2JobRecord): number | null {
    if (r.job.status !== 'pending') return null;
    const at = this.cloud.engine.pendingIds(r.job.key).indexOf(r.id);
    return at < 0 ? null : at + 1;
  }

  /**
   * Cancels a job: a queued one at once (`canceled`, or `expired` per
   * `queuedCancel`), a running one at its next node or step boundary
   * (`canceling` until then). Terminal ones are left alone.
   */
  cancel(r: V2JobRecord): void {
    if (r.job.status === 'pending') {
      r.expired = this.behaviour.queuedCancel === 'expired';
      this.cloud.engine.cancel(r.job.key, [r.id]);
    } else if (r.job.status === 'in_progress') {
      r.cancelRequested = true;
    }
  }

  /** The status frame of a job now. */
  statusFrame(r: V2JobRecord): V2Frame & { event: 'status' } {
    const status = this.statusOf(r);
    const position = this.queuePosition(r);
    const data: Record<string, unknown> = { status };
    if (this.behaviour.progressFrames === 'fraction' || position !== null) data.queue_position = position;
    return { event: 'status', data };
  }

  /** The progress frame of a job now: the poll's snapshot, or (`started`) the nodes finished of those started, 1.0 once one is done. */
  progressFrame(r: V2JobRecord): V2Frame & { event: 'progress' } {
    if (this.behaviour.progressFrames === 'fraction') return { event: 'progress', data: { ...(r.progress ?? { value: 0, nodes_done: 0, nodes_total: r.job.order.length }) } };
    const n = r.nodesDone;
    return { event: 'progress', data: { value: n > 0 ? 1.0 : 0.0, nodes_done: n, nodes_total: n, current_node: null, step: null, steps: null } };
  }

  /** Listens to one job's frames; returns the unsubscribe function. */
  listen(r: V2JobRecord, listener: (frame: V2Frame) => void): () => void {
    r.listeners.add(listener);
    return () => r.listeners.delete(listener);
  }

  // --- signed output tokens and content URLs -----------------------------------

  /** The real server's output id: base64url JSON of the file, a dot, an HMAC. */
  outputToken(jobId: string, filename: string, type: string): string {
    // Python's json.dumps spacing, as the real server's tokens (`eyJqIjog…`).
    const json = `{"j": ${JSON.stringify(jobId)}, "f": ${JSON.stringify(filename)}, "s": "", "t": ${JSON.stringify(type)}}`;
    const body = Buffer.from(json, 'utf8').toString('base64url');
    return `${body}.${createHmac('sha256', this.#secret).update(body).digest('base64url').slice(0, 22)}`;
  }

  /** The file an output token names, or undefined for a forged or malformed one. */
  readToken(token: string): { jobId: string; filename: string; type: string } | undefined {
    const [body = '', mac = ''] = token.split('.');
    if (createHmac('sha256', this.#secret).update(body).digest('base64url').slice(0, 22) !== mac) return undefined;
    try {
      const v = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { j?: unknown; f?: unknown; t?: unknown };
      return typeof v.j === 'string' && typeof v.f === 'string' && typeof v.t === 'string' ? { jobId: v.j, filename: v.f, type: v.t } : undefined;
    } catch {
      return undefined;
    }
  }

  // --- housekeeping --------------------------------------------------------------

  /** Zeroes the counters (`streamsOpen` stays: it is a gauge). */
  resetCounters(): void {
    Object.assign(this.counters, { jobPosts: 0, jobsCreated: 0, uploads: 0, uploadBytes: 0, streamsOpened: 0, cancels: 0 });
  }

  /** Switches every fault off. */
  resetFaults(): void {
    Object.assign(this.faults, { loseSubmitAnswers: 0, queueFull: 0, rateLimited: 0, retryAfter: 1, eventsNotImplemented: false, falseExpired: 0 });
  }

  /** Forgets jobs, keys and assets; faults and counters reset. */
  reset(): void {
    this.jobs.clear();
    this.#keys.clear();
    this.assets.clear();
    this.resetFaults();
    this.resetCounters();
  }

  /** Stops listening to the engine. */
  close(): void {
    this.#off();
  }

  // --- engine events → v2 -----------------------------------------------------------

  #onEngine(event: CloudEvent): void {
    const id = event.kind === 'json' ? event.message.data.prompt_id : event.promptId;
    const r = typeof id === 'string' ? this.jobs.get(id) : undefined;
    if (!r) return;
    if (event.kind === 'preview') {
      r.preview = { node_id: event.nodeId, content_type: event.mime, data_base64: event.image.toString('base64') };
      return this.#send(r, { event: 'preview', data: r.preview });
    }
    if (event.kind !== 'json') return;
    const { type, data } = event.message;
    const node = typeof data.node === 'string' ? data.node : undefined;
    if (type === 'execution_start') return this.#send(r, this.statusFrame(r));
    if (type === 'execution_cached' && Array.isArray(data.nodes)) r.reused = data.nodes.length > 0 && data.nodes.length >= r.job.order.length;
    if (type === 'executing' && node !== undefined) {
      r.nodesStarted++;
      this.#snapshot(r, node, null, null);
      this.#boundary(r);
    } else if (type === 'progress' && node !== undefined) {
      this.#snapshot(r, node, Number(data.value), Number(data.max));
      if (this.behaviour.progressFrames === 'fraction') this.#send(r, { event: 'progress', data: { ...r.progress } });
      this.#boundary(r);
    } else if (type === 'executed' && node !== undefined) {
      for (const entry of this.#outputs(r, node, data.output)) this.#send(r, { event: 'output', entry });
    } else if (type === 'progress_state' && isFinishedState(data.nodes, r.job.executed.length)) {
      r.nodesDone = r.job.executed.length + 1;
      this.#snapshot(r, null, null, null);
      this.#send(r, this.progressFrame(r));
    } else if (ENDINGS.has(type)) {
      if (type === 'execution_success') {
        r.nodesDone = r.job.order.length;
        this.#snapshot(r, null, null, null);
      }
      this.#send(r, this.statusFrame(r));
    }
  }

  /** The fraction snapshot of the poll. */
  #snapshot(r: V2JobRecord, node: string | null, step: number | null, steps: number | null): void {
    const total = Math.max(1, r.job.order.length);
    const partial = step !== null && steps ? step / steps : 0;
    r.progress = {
      value: Math.min(1, (r.nodesDone + partial) / total),
      nodes_done: r.nodesDone,
      nodes_total: r.job.order.length,
      current_node: node,
      current_node_class: node === null ? null : (r.job.prompt[node]?.class_type ?? null),
      step,
      steps,
    };
  }

  /** A waiting cancel lands at a node or step boundary (after the event is delivered). */
  #boundary(r: V2JobRecord): void {
    if (!r.cancelRequested) return;
    queueMicrotask(() => this.cloud.engine.cancel(r.job.key, [r.id]));
  }

  #outputs(r: V2JobRecord, nodeId: string, output: unknown): V2OutputEntry[] {
    const out: V2OutputEntry[] = [];
    if (!output || typeof output !== 'object') return out;
    for (const [key, items] of Object.entries(output)) {
      const kind = OUTPUT_KIND[key];
      if (!kind || !Array.isArray(items)) continue;
      for (const item of items as Array<Record<string, unknown>>) {
        if (!item || typeof item.filename !== 'string') continue;
        const type = typeof item.type === 'string' ? item.type : 'output';
        const entry: V2OutputEntry = { nodeId, kind, filename: item.filename, type, id: '', record: undefined };
        if (this.behaviour.outputIds === 'token') entry.id = this.outputToken(r.id, item.filename, type);
        else this.#outputAsset(r, entry);
        r.outputs.push(entry);
        out.push(entry);
      }
    }
    return out;
  }

  /** Registers an output as an asset; its hash follows (null until computed). */
  #outputAsset(r: V2JobRecord, entry: V2OutputEntry): void {
    const file = this.cloud.files.get(entry.filename, entry.type);
    const blob: BlobRef = { hash: 'blake3:', size: file?.size ?? 0, contentType: file?.contentType ?? contentTypeFor(entry.filename), name: entry.filename, type: entry.type };
    entry.record = this.assets.mint(r.lane, blob, entry.filename, [], undefined, r.id);
    entry.id = entry.record.id;
    if (file?.data) {
      void blake3Of(file.data).then((hash) => {
        blob.hash = hash;
        this.assets.addOutputBlob(r.lane, blob);
      });
    }
  }

  #send(r: V2JobRecord, frame: V2Frame): void {
    for (const l of r.listeners) {
      try {
        l(frame);
      } catch {
        // a stream's failure must not stop the job
      }
    }
  }
}

/** Whether a `progress_state` reports one more finished node than `done`. */
function isFinishedState(nodes: unknown, done: number): boolean {
  if (!nodes || typeof nodes !== 'object') return false;
  return Object.values(nodes).filter((n) => (n as { state?: unknown })?.state === 'finished').length > done;
}
