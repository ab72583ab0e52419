/**
 * Job orchestration: submit, follow on the shared socket, fall back to
 * polling, and settle exactly once. The socket is a live feed; the job status
 * endpoint is the truth (a completion missed while disconnected is found by
 * polling).
 *
 * @module
 */
import { APIError, APITimeoutError, APIUserAbortError, ExecutionError, JobCancelledError } from '../errors.ts';
import { FINAL_JOB_STATUSES, type FileRef, type JobStatus, type NodeOutputs, type Workflow } from '../schemas/cloud.ts';
import { checkTimeout, type RequestOptions } from '../transport/options.ts';
import type { CloudClient, SubmitOptions } from './client.ts';
import { isImageFrame, type ImageFrame } from './frames.ts';
import type { BinaryEvent, CloudSocket, SocketEvent } from './socket.ts';

/** Options of `CloudClient.run`. */
export interface RunOptions extends Pick<SubmitOptions, 'partnerApiKey' | 'extraData'> {
  /** Every event of this job, JSON and binary. */
  onEvent?: (event: SocketEvent) => void;
  /** Sampling progress of this job. */
  onProgress?: (progress: { value: number; max: number; node: string | undefined }) => void;
  /** Preview images of this job (binary frames of types 1 and 4). */
  onPreview?: (frame: ImageFrame) => void;
  /** Aborting cancels this job on the server (`POST /api/queue` with `delete`), never the account's other jobs. */
  signal?: AbortSignal;
  /** Silence deadline (ms): rejects with `APITimeoutError` and cancels the job when it sends nothing for this long. */
  timeout?: number;
  /** First polling interval (ms) while the socket is down. Default 500, doubling to 5000. */
  pollInterval?: number;
  /** Extra headers for the requests this run makes (submit, status polls, cancel). */
  headers?: Record<string, string>;
}

/** What a completed job produced. */
export interface JobResult {
  prompt_id: string;
  status: 'completed';
  /** Outputs by node id, from `executed` events (and from the status response when it carries them). */
  outputs: Record<string, NodeOutputs>;
  /** Every file reference of every output, in node order: images, then video, then audio. */
  files: FileRef[];
}

/** Options of `CloudClient.waitForJob`. */
export interface WaitForJobOptions extends RequestOptions {
  /** Polling interval (ms). Default 1000. */
  pollInterval?: number;
}

const CONNECT_GRACE_MS = 3000;

/** Polls a job's status until it is final (`completed`, `failed` or `cancelled`) and returns it. */
export async function waitForJob(cloud: CloudClient, promptId: string, options: WaitForJobOptions = {}): Promise<JobStatus> {
  checkTimeout(options.pollInterval, 'pollInterval');
  const interval = options.pollInterval ?? 1000;
  for (;;) {
    const s = await cloud.getJobStatus(promptId, options);
    if (FINAL_JOB_STATUSES.has(s.status)) return s;
    await sleep(interval, options.signal);
  }
}

/** Submits `workflow` and follows it to the end. See `CloudClient.run`. */
export async function runJob(cloud: CloudClient, socket: CloudSocket, workflow: Workflow, opts: RunOptions = {}): Promise<JobResult> {
  const { signal } = opts;
  if (signal?.aborted) throw new APIUserAbortError();
  // The socket should be open before the submission so no early event is missed,
  // but a job must not depend on it: after a grace period it runs on polling alone.
  const grace = AbortSignal.timeout(CONNECT_GRACE_MS);
  await socket.ready(signal ? AbortSignal.any([signal, grace]) : grace).catch(() => undefined);
  if (signal?.aborted) throw new APIUserAbortError();
  // Not given the signal: an aborted submission may still have created a job we could then not cancel.
  const headers = opts.headers ? { headers: opts.headers } : {};
  const { prompt_id } = await cloud.submit(workflow, {
    ...headers,
    ...(opts.partnerApiKey !== undefined ? { partnerApiKey: opts.partnerApiKey } : {}),
    ...(opts.extraData ? { extraData: opts.extraData } : {}),
    clientId: socket.clientId,
  });

  return new Promise<JobResult>((resolve, reject) => {
    const outputs: Record<string, NodeOutputs> = {};
    const cleanup: Array<() => void> = [];
    let settled = false;
    let lastStatus: string | undefined;
    let silence: ReturnType<typeof setTimeout> | undefined;
    let polling = false;

    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(silence);
      for (const f of cleanup.splice(0)) f();
      settle();
    };
    // Registers an undo; runs it at once when the job has already settled
    // (held events replayed by subscribe() can end a job before setup is over).
    const own = (undo: () => void) => (settled ? undo() : void cleanup.push(undo));
    const succeed = (fromStatus?: unknown) => {
      if (fromStatus && typeof fromStatus === 'object') {
        for (const [node, out] of Object.entries(fromStatus as Record<string, NodeOutputs>)) outputs[node] ??= out;
      }
      finish(() => resolve({ prompt_id, status: 'completed', outputs, files: filesOf(outputs) }));
    };
    const fail = (err: Error) => finish(() => reject(err));
    // `delete` is idempotent, so this POST may be repeated; the job must not run on unpaid-for.
    const cancelOnServer = () => void cloud.cancel([prompt_id], { ...headers, retry: { limit: 3, allowPost: true } }).catch(() => undefined);
    // A callback that throws ends the run with its error (and cancels the job
    // nobody follows any more) instead of escaping into the socket.
    const guard = (f: () => void): boolean => {
      try {
        f();
        return true;
      } catch (err) {
        cancelOnServer();
        fail(err instanceof Error ? err : new Error(String(err)));
        return false;
      }
    };

    const resetSilence = () => {
      if (!opts.timeout || settled) return;
      clearTimeout(silence);
      silence = setTimeout(() => {
        cancelOnServer();
        fail(new APITimeoutError('RUN', `job ${prompt_id}`, opts.timeout));
      }, opts.timeout);
    };

    const onStatus = (s: JobStatus) => {
      if (s.status !== lastStatus) resetSilence();
      lastStatus = s.status;
      if (s.status === 'completed') succeed((s as { outputs?: unknown }).outputs);
      else if (s.status === 'failed') fail(new ExecutionError(prompt_id, errorDataOf(s)));
      else if (s.status === 'cancelled') fail(new JobCancelledError(prompt_id));
    };

    const pollOnce = async () => {
      try {
        const s = await cloud.getJobStatus(prompt_id, { ...headers, ...(signal ? { signal } : {}) });
        if (!settled) onStatus(s);
      } catch (err) {
        // Connection failures, timeouts and 5xx are retried by the loop (or the next
        // reconnect); a revoked key or an unknown job will not get better.
        if (err instanceof APIError && err.status >= 400 && err.status < 500 && err.status !== 408) fail(err);
      }
    };

    // While the socket is down, the status endpoint is the only feed.
    const pollWhileDown = async () => {
      if (polling) return;
      polling = true;
      let delay = opts.pollInterval ?? 500;
      while (!settled && socket.state !== 'open') {
        await pollOnce();
        if (settled) break;
        await sleep(delay, signal).catch(() => undefined);
        delay = Math.min(delay * 2, 5000);
      }
      polling = false;
      // The socket is back (first open included): whatever ended while it was down shows here.
      if (!settled) await pollOnce();
    };

    const onEvent = (e: SocketEvent) => {
      if (settled) return;
      resetSilence();
      if (opts.onEvent && !guard(() => opts.onEvent!(e))) return;
      // An ending whose payload is off-spec still ends the job.
      const type = e.type === 'invalid' ? e.rawType : e.type;
      switch (type) {
        case 'executed': {
          if (e.type !== 'executed') break;
          const node = e.data.node;
          if (typeof node === 'string' && e.data.output) outputs[node] = mergeOutputs(outputs[node], e.data.output as NodeOutputs);
          break;
        }
        case 'progress':
          if (e.type === 'progress' && opts.onProgress) guard(() => opts.onProgress!({ value: e.data.value as number, max: e.data.max as number, node: e.data.node as string | undefined }));
          break;
        case 'binary': {
          const f = (e as BinaryEvent).frame;
          if (opts.onPreview && isImageFrame(f)) guard(() => opts.onPreview!(f));
          break;
        }
        case 'execution_success':
          succeed();
          break;
        case 'execution_error':
          fail(new ExecutionError(prompt_id, (e as { data?: Record<string, unknown> }).data));
          break;
        case 'execution_interrupted':
          fail(new JobCancelledError(prompt_id));
          break;
      }
    };

    own(socket.on('reconnecting', () => void pollWhileDown()));
    own(socket.on('reconnected', () => void pollOnce()));
    own(socket.on('close', () => void pollWhileDown()));
    if (signal) {
      const onAbort = () => {
        cancelOnServer();
        fail(new APIUserAbortError('Run was aborted; its job was cancelled'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      own(() => signal.removeEventListener('abort', onAbort));
      if (signal.aborted) onAbort();
    }
    resetSilence();
    // Last: replaying held events may end the job right here.
    own(socket.subscribe(prompt_id, onEvent));
    if (!settled && socket.state !== 'open') void pollWhileDown();
  });
}

function mergeOutputs(a: NodeOutputs | undefined, b: NodeOutputs): NodeOutputs {
  if (!a) return b;
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = Array.isArray(v) && Array.isArray(out[k]) ? [...(out[k] as unknown[]), ...v] : v;
  return out as NodeOutputs;
}

function filesOf(outputs: Record<string, NodeOutputs>): FileRef[] {
  const files: FileRef[] = [];
  for (const out of Object.values(outputs)) for (const k of ['images', 'video', 'audio'] as const) if (Array.isArray(out[k])) files.push(...out[k]);
  return files;
}

function errorDataOf(s: JobStatus): Record<string, unknown> | undefined {
  const e = (s as { error?: unknown }).error;
  return e && typeof e === 'object' ? (e as Record<string, unknown>) : undefined;
}


/** Waits `ms`; rejects with {@link APIUserAbortError} when the signal aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new APIUserAbortError());
    const onAbort = () => {
      clearTimeout(t);
      reject(new APIUserAbortError());
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
