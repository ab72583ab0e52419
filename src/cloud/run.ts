/**
 * Job orchestration: submit, follow on the shared socket, fall back to
 * polling, and settle exactly once, with every output file. The socket is a
 * live feed; the job status is the truth (a completion missed while
 * disconnected is found by polling) and the job record is where outputs the
 * socket did not carry are recovered (DESIGN §8).
 *
 * Depends on the narrow {@link JobBackend}, not on `CloudClient`.
 *
 * @module
 */
import { APIConnectionError, APIError, APIUserAbortError, ExecutionError, JobCancelledError, JobTimeoutError, NotFoundError, ServerLostError } from '../errors.ts';
import type { FileRef, NodeOutputs, Workflow } from '../schemas/cloud.ts';
import { count, describeError, errorDetails } from '../transport/log.ts';
import { checkInterval, type RequestOptions } from '../transport/options.ts';
import type { SubmitOptions } from './client.ts';
import { isImageFrame, type ImageFrame } from './frames.ts';
import { filesOf, isFinalPhase, jobEndError, toJobRecord, type JobBackend, type JobRecord, type JobStatusResult } from './jobs.ts';
import type { BinaryEvent, CloudSocket, SocketEvent } from './socket.ts';

/** Options of `CloudClient.follow`: how to follow a job to its end. */
export interface FollowOptions {
  /** Every event of this job, JSON and binary. */
  onEvent?: (event: SocketEvent) => void;
  /** Sampling progress of this job. */
  onProgress?: (progress: { value: number; max: number; node: string | undefined }) => void;
  /** Preview images of this job (binary frames of types 1 and 4). */
  onPreview?: (frame: ImageFrame) => void;
  /** Ends the wait with `APIUserAbortError`; with `stopOnAbort`, also stops the job on the server (never another). */
  signal?: AbortSignal;
  /** Silence deadline (ms): rejects with `JobTimeoutError` when the job sends nothing for this long (and stops it, with `stopOnAbort`). */
  timeout?: number;
  /**
   * Whether giving up on the job (abort, silence deadline, a callback that
   * throws) also stops it on the server (`CloudClient.stopJob`). `run()`:
   * true (the job is yours and nobody else follows it); `follow()`: false by default.
   */
  stopOnAbort?: boolean;
  /**
   * Polling interval (ms), default 1000. While the socket is down the status
   * is polled at this interval, so an ending is found within one interval;
   * while it is open, once every 20 intervals (20 s by default), so a job
   * whose ending the socket never tells (a lost worker) still ends.
   */
  pollInterval?: number;
  /** Extra headers for the requests this run makes (submit, status polls, records, stop). */
  headers?: Record<string, string>;
  /**
   * How long (ms) the server may give no answer (socket down, every status
   * poll failing to connect or answering 5xx) before the run rejects with a
   * {@link ServerLostError} naming the job and the server. Default 30000;
   * `Infinity` waits for the server forever. A job this run submitted that
   * the server answers it does not know (it restarted) rejects the same way
   * at once.
   */
  serverLostAfter?: number;
}

/** Options of `CloudClient.run`: how to submit, then how to follow. */
export interface RunOptions extends FollowOptions, Pick<SubmitOptions, 'partnerApiKey' | 'extraData' | 'validate' | 'promptId' | 'resubmitUnconfirmed' | 'confirmWithin'> {
  /**
   * Called with the job's id as soon as the submission is accepted, before the
   * job is followed (e.g. to record it). The run waits for a returned promise; if
   * it throws or rejects, the job is stopped and `run()` rejects with that error.
   */
  onSubmitted?: (promptId: string) => void | Promise<void>;
}

/** What a completed job produced. */
export interface JobResult {
  /** The job's id (`prompt_id` on the wire). */
  promptId: string;
  status: 'completed';
  /** Outputs by node id: from `executed` events, completed from the job record when the socket did not carry them all. */
  outputs: Record<string, NodeOutputs>;
  /** Every file reference of every output, in node order: images, then video, then audio. */
  files: FileRef[];
  /** The job record, when it was read (outputs recovered, or the ending found by polling). */
  record?: JobRecord;
}

/** Options of `CloudClient.waitForJob`. */
export interface WaitForJobOptions extends RequestOptions {
  /** Polling interval (ms). Default 1000. */
  pollInterval?: number;
}

/** Reads of a completed job's record while its outputs are not persisted yet: 250 ms doubling to 2 s, about 6 s in all. */
const OUTPUT_READS = 6;
const OUTPUT_FIRST_DELAY_MS = 250;
const OUTPUT_MAX_DELAY_MS = 2000;
/** The longest a submission waits for a first socket connection still under way. */
const FIRST_ATTEMPT_MS = 1000;
/** While the socket is open, the status is still confirmed every this many poll intervals. */
const OPEN_POLL_FACTOR = 20;
/** How long a server may give no answer before a run gives its job up as lost (`serverLostAfter`). */
const SERVER_LOST_AFTER_MS = 30_000;
/** The longest delay a timer takes; longer ones fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** Whether a status or record lists outputs (a local server's record, the seed emulator's status). */
function hasOutputs(s: unknown): s is JobRecord {
  const outputs = (s as { outputs?: unknown } | undefined)?.outputs;
  return !!outputs && typeof outputs === 'object' && Object.keys(outputs).length > 0;
}

/** A status that already lists the outputs, as the job's record (the seed emulator's status has no `id`). */
const asRecord = (s: JobRecord, promptId: string): JobRecord => ({ ...s, id: promptId });

/**
 * The record of a completed job, read until it lists outputs: `execution_success`
 * can precede the persisted outputs. Bounded; gives the last record read, or
 * `undefined` when the server keeps no records (the seed's status endpoint only).
 */
export async function readCompletedRecord(jobs: JobBackend, promptId: string, options: RequestOptions = {}): Promise<JobRecord | undefined> {
  let delay = OUTPUT_FIRST_DELAY_MS;
  let last: JobRecord | undefined;
  for (let read = 1; ; read++) {
    try {
      last = await jobs.getJob(promptId, options);
      // A local server writes a job's outputs together with its ending: nothing comes later.
      if (hasOutputs(last) || jobs.server === 'local') return last;
    } catch (err) {
      if (err instanceof NotFoundError && last === undefined) return undefined;
      if (err instanceof APIUserAbortError) throw err;
      // A connection failure or a 5xx the transport's retries did not cure: read again below.
    }
    if (read >= OUTPUT_READS) return last;
    jobs.log?.debug?.(`job ${promptId}: completed, its record lists no outputs yet; reading it again in ${delay} ms`, { promptId, read, delayMs: delay });
    await sleep(delay, options.signal);
    delay = Math.min(delay * 2, OUTPUT_MAX_DELAY_MS);
  }
}

/**
 * What an ended job resolves or rejects with, given the status that said so:
 * the record (outputs recovered) of a completed job, else the job's error.
 */
async function settleEnded(jobs: JobBackend, promptId: string, s: JobStatusResult, options: RequestOptions): Promise<JobRecord> {
  if (s.phase === 'completed') {
    const record = hasOutputs(s) ? asRecord(s, promptId) : await readCompletedRecord(jobs, promptId, options);
    return record ?? toJobRecord({ ...s, id: promptId, status: 'completed', outputs: {} });
  }
  if (s.phase === 'cancelled') throw jobEndError(promptId, 'cancelled', {});
  // The record says where and why, when the server keeps one.
  const record = 'execution_error' in s ? (s as JobRecord) : await Promise.resolve(jobs.getJob(promptId, options)).catch(() => undefined);
  throw jobEndError(promptId, 'failed', { status: s, record });
}

/**
 * Stops a job nobody follows any more, without waiting. `delete` and
 * `interrupt { prompt_id }` are idempotent, so these POSTs may be repeated:
 * the job must not run on unpaid-for.
 */
function stopInBackground(jobs: JobBackend, promptId: string, headers: Record<string, string> | undefined, why: string): void {
  jobs.log?.debug?.(`job ${promptId}: stopping it on the server (${why})`, { promptId, reason: why });
  void Promise.resolve(jobs.stopJob(promptId, { ...(headers ? { headers } : {}), retry: { limit: 3, allowPost: true } })).catch((err: unknown) => {
    // The caller has had their answer: only the log can say the job may run on.
    jobs.log?.error?.(`job ${promptId} could not be stopped (${why}); it may still run: ${describeError(err)}`, { promptId, ...errorDetails(err) });
  });
}

/** Polls a job until it ends. See `CloudClient.waitForJob`. */
export async function waitForJob(jobs: JobBackend, promptId: string, options: WaitForJobOptions = {}): Promise<JobRecord> {
  checkInterval(options.pollInterval, 'pollInterval');
  const interval = options.pollInterval ?? 1000;
  for (;;) {
    const s = await jobs.getJobStatus(promptId, options);
    if (isFinalPhase(s.phase)) return settleEnded(jobs, promptId, s, options);
    await sleep(interval, options.signal);
  }
}

/**
 * Resolves once the socket's first connection attempt has an outcome (open,
 * refused, failed) or after `ms`: a job's events sent before its socket is
 * connected are lost for good, but a refused socket or a bad key must not
 * delay anything.
 */
function firstAttempt(socket: CloudSocket, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (socket.state !== 'connecting') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const off of offs) off();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const offs = [socket.on('open', done), socket.on('reconnecting', done), socket.on('close', done)];
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Submits `workflow` and follows it to the end. See `CloudClient.run`. The
 * submission waits only for the outcome of a first socket connection still
 * under way (at most a second), never for a socket that failed: events that
 * beat the submit response are held by the socket and replayed.
 */
export async function runJob(jobs: JobBackend, socket: CloudSocket, workflow: Workflow, opts: RunOptions = {}): Promise<JobResult> {
  if (opts.signal?.aborted) throw new APIUserAbortError(undefined, { cause: opts.signal.reason });
  // Whether the socket hears the whole job: its `execution_start` arrived and the socket never
  // dropped since the submission began (held events are replayed without their arrival times).
  const heard = { all: false, dropped: false };
  const startedAt = Date.now();
  const offDrop = socket.on('reconnecting', () => void ((heard.all = false), (heard.dropped = true)));
  await firstAttempt(socket, FIRST_ATTEMPT_MS, opts.signal);
  if (opts.signal?.aborted) {
    offDrop();
    throw new APIUserAbortError(undefined, { cause: opts.signal.reason });
  }
  let promptId: string;
  try {
    // Not given the signal: an aborted submission may still have created a job we could then not stop.
    ({ prompt_id: promptId } = await jobs.submit(workflow, {
      ...(opts.headers ? { headers: opts.headers } : {}),
      ...(opts.partnerApiKey !== undefined ? { partnerApiKey: opts.partnerApiKey } : {}),
      ...(opts.extraData ? { extraData: opts.extraData } : {}),
      ...(opts.validate ? { validate: true } : {}),
      clientId: socket.clientId,
    }));
  } catch (err) {
    offDrop();
    throw err;
  }
  jobs.log?.info?.(`job ${promptId} submitted (${count(Object.keys(workflow).length, 'node')})`, { promptId, nodes: Object.keys(workflow).length, clientId: socket.clientId, socket: socket.state });
  const follow = { ...opts, stopOnAbort: opts.stopOnAbort ?? true };
  if (opts.onSubmitted) {
    try {
      await opts.onSubmitted(promptId);
    } catch (err) {
      offDrop();
      // Nobody will follow the job this callback was meant to record.
      if (follow.stopOnAbort) stopInBackground(jobs, promptId, opts.headers, 'onSubmitted threw');
      throw err;
    }
  }
  return followJob(jobs, socket, promptId, follow, { heard, offDrop, justSubmitted: true, startedAt });
}

/**
 * Follows an existing job to its end over the shared socket, polling while
 * it is down. See `CloudClient.follow`. `from` is what `runJob` knows of the
 * socket since the submission; a job followed later was not heard whole.
 */
export function followJob(
  jobs: JobBackend,
  socket: CloudSocket,
  promptId: string,
  opts: RunOptions = {},
  from: { heard: { all: boolean; dropped: boolean }; offDrop: () => void; justSubmitted: boolean; startedAt?: number } = { heard: { all: false, dropped: false }, offDrop: () => undefined, justSubmitted: false },
): Promise<JobResult> {
  const log = jobs.log;
  const startedAt = from.startedAt ?? Date.now();
  const settled = followToEnd(jobs, socket, promptId, opts, from);
  if (!log?.info) return settled;
  const ms = () => Date.now() - startedAt;
  // Chained, not a side branch: an unawaited run that fails must still be an unhandled rejection.
  return settled.then(
    (r) => {
      log.info?.(`job ${promptId} completed in ${ms()} ms: ${count(r.files.length, 'file')} from ${count(Object.keys(r.outputs).length, 'node')}`, { promptId, status: 'completed', durationMs: ms(), outputs: Object.keys(r.outputs).length, files: r.files.length });
      return r;
    },
    (err: unknown) => {
      log.info?.(`job ${promptId} ended without a result after ${ms()} ms: ${howEnded(err)} (${describeError(err)})`, { promptId, status: howEnded(err), durationMs: ms(), ...errorDetails(err) });
      throw err;
    },
  );
}

/** How a run that rejected ended, in one word. */
function howEnded(err: unknown): string {
  if (err instanceof JobCancelledError) return 'cancelled';
  if (err instanceof JobTimeoutError) return 'timed_out';
  if (err instanceof APIUserAbortError) return 'aborted';
  return err instanceof ExecutionError ? 'failed' : 'error';
}

function followToEnd(jobs: JobBackend, socket: CloudSocket, promptId: string, opts: RunOptions, from: { heard: { all: boolean; dropped: boolean }; offDrop: () => void; justSubmitted: boolean }): Promise<JobResult> {
  const { signal } = opts;
  const headers = opts.headers ? { headers: opts.headers } : {};
  const requestOptions: RequestOptions = { ...headers, ...(signal ? { signal } : {}) };
  const interval = opts.pollInterval ?? 1000;
  const { heard, offDrop } = from;

  return new Promise<JobResult>((resolve, reject) => {
    const outputs: Record<string, NodeOutputs> = {};
    const cleanup: Array<() => void> = [];
    let settled = false;
    let lastStatus: string | undefined;
    let silence: ReturnType<typeof setTimeout> | undefined;
    let polling = false;
    // Cached nodes the socket sent no outputs for (the cloud sends no `executed` for those).
    const cachedUnheard = new Set<string>();

    // Stops listening at once (nothing more may change the outcome), then settles.
    const finish = (settle: () => void | Promise<void>) => {
      if (settled) return;
      settled = true;
      clearTimeout(silence);
      for (const f of cleanup.splice(0)) f();
      Promise.resolve()
        .then(settle)
        .catch((err: unknown) => reject(err));
    };
    // Registers an undo; runs it at once when the job has already settled
    // (held events replayed by subscribe() can end a job before setup is over).
    const own = (undo: () => void) => (settled ? undo() : void cleanup.push(undo));
    own(offDrop);
    // The socket's outputs are the job's only when the socket itself said it ended, having heard
    // all of it; an ending found by a status poll may come before the last `executed` arrives.
    const complete = (fromStatus?: JobStatusResult) =>
      finish(async () => {
        const socketHeardAll = fromStatus === undefined && heard.all && cachedUnheard.size === 0 && filesOf(outputs).length > 0;
        let record = hasOutputs(fromStatus) ? asRecord(fromStatus, promptId) : undefined;
        if (!record && !socketHeardAll) record = await readCompletedRecord(jobs, promptId, requestOptions);
        // The record is the server's own account: it wins for every node it lists.
        if (record?.outputs) {
          const heardNodes = Object.keys(outputs).length;
          Object.assign(outputs, record.outputs);
          jobs.log?.debug?.(`job ${promptId}: outputs reconciled with the job record (${count(heardNodes, 'node')} heard on the socket, ${Object.keys(record.outputs).length} in the record)`, {
            promptId,
            socketNodes: heardNodes,
            recordNodes: Object.keys(record.outputs).length,
            endedBy: fromStatus === undefined ? 'socket' : 'status',
          });
        }
        resolve({ promptId, status: 'completed', outputs, files: filesOf(outputs), ...(record ? { record } : {}) });
      });
    const fail = (err: Error) => finish(() => reject(err));
    const stopOnServer = (why: string) => {
      if (opts.stopOnAbort) stopInBackground(jobs, promptId, opts.headers, why);
    };
    // A callback that throws ends the run with its error (and stops the job
    // nobody follows any more) instead of escaping into the socket.
    const guard = (f: () => void): boolean => {
      try {
        f();
        return true;
      } catch (err) {
        stopOnServer('a callback threw');
        fail(err instanceof Error ? err : new Error(String(err)));
        return false;
      }
    };

    const resetSilence = () => {
      if (!opts.timeout || settled) return;
      clearTimeout(silence);
      silence = setTimeout(() => {
        stopOnServer(`silent for ${opts.timeout} ms`);
        fail(new JobTimeoutError(promptId, opts.timeout!));
      }, opts.timeout);
    };

    const onStatus = (s: JobStatusResult) => {
      if (s.status !== lastStatus) {
        resetSilence();
        jobs.log?.debug?.(`job ${promptId}: status ${s.status} (${s.phase})`, { promptId, status: s.status, phase: s.phase });
      }
      lastStatus = s.status;
      if (s.phase === 'completed') complete(s);
      else if (s.phase === 'failed' || s.phase === 'cancelled') finish(() => settleEnded(jobs, promptId, s, requestOptions).then(() => undefined));
    };

    // The last time the server showed it is alive: an answer to a poll, an open socket, an event.
    let lastAnswer = Date.now();
    const lostAfter = opts.serverLostAfter ?? SERVER_LOST_AFTER_MS;
    const origin = jobs.baseUrl ?? 'the server';
    const pollOnce = async () => {
      try {
        // With the socket down, the poll itself must end within the bound: a frozen server that
        // accepts connections and never answers would otherwise hold it for the client's timeout and retries.
        const left = lostAfter - (Date.now() - lastAnswer);
        const s = await jobs.getJobStatus(promptId, socket.state === 'open' || !Number.isFinite(left) ? requestOptions : { ...requestOptions, timeout: Math.max(1, left), retry: { limit: 0 } });
        lastAnswer = Date.now();
        if (!settled) onStatus(s);
      } catch (err) {
        if (settled) return;
        // Connection failures, timeouts and 5xx are retried by the loop (or the next reconnect);
        // a revoked key, an unknown job or an off-spec answer will not get better.
        const answered = !(err instanceof APIConnectionError || err instanceof APIUserAbortError || (err instanceof APIError && (err.status >= 500 || err.status === 408)));
        if (answered) {
          lastAnswer = Date.now();
          // The server took this job and now does not know it: it restarted and lost its queue.
          if (err instanceof NotFoundError && from.justSubmitted) fail(new ServerLostError(promptId, origin, 'forgotten', 0, { cause: err }));
          else fail(err instanceof Error ? err : new Error(String(err)));
        } else if (socket.state === 'open') {
          lastAnswer = Date.now();
        } else {
          const silentMs = Date.now() - lastAnswer;
          if (silentMs < lostAfter) return;
          jobs.log?.warn?.(`job ${promptId}: no answer from ${origin} for ${silentMs} ms; giving the job up as lost`, { promptId, server: origin, silentMs, ...errorDetails(err) });
          fail(new ServerLostError(promptId, origin, 'unreachable', silentMs, { cause: err }));
        }
      }
    };

    // While the socket is down, polling is the only feed.
    const pollWhileDown = async () => {
      if (polling) return;
      polling = true;
      jobs.log?.debug?.(`job ${promptId}: the socket is ${socket.state}; polling the status every ${interval} ms`, { promptId, socket: socket.state, intervalMs: interval });
      while (!settled && socket.state !== 'open') {
        await pollOnce();
        if (settled) break;
        await sleep(interval, signal).catch(() => undefined);
      }
      polling = false;
      // The socket is back (first open included): whatever ended while it was down shows here.
      if (!settled) await pollOnce();
    };

    let heardFromJob = false;
    const pollUntilHeard = async () => {
      while (!settled && !heardFromJob) {
        if (!polling) await pollOnce();
        if (settled || heardFromJob) break;
        await sleep(interval, signal).catch(() => undefined);
      }
    };

    // While the socket is open, a slow confirming poll: an ending it never tells still ends the run.
    const confirm = setInterval(() => {
      if (!polling && socket.state === 'open') void pollOnce();
    }, Math.min(interval * OPEN_POLL_FACTOR, MAX_TIMER_MS));
    own(() => clearInterval(confirm));

    const onEvent = (e: SocketEvent) => {
      if (settled) return;
      heardFromJob = true;
      lastAnswer = Date.now();
      resetSilence();
      if (opts.onEvent && !guard(() => opts.onEvent!(e))) return;
      // An ending whose payload is off-spec still ends the job.
      const type = e.type === 'invalid' ? e.rawType : e.type;
      switch (type) {
        case 'executed': {
          if (e.type !== 'executed') break;
          const node = e.data.node;
          if (typeof node === 'string' && e.data.output) {
            outputs[node] = mergeOutputs(outputs[node], e.data.output as NodeOutputs);
            cachedUnheard.delete(node);
          }
          break;
        }
        case 'execution_cached': {
          const nodes = (e as { data?: { nodes?: unknown } }).data?.nodes;
          if (Array.isArray(nodes)) for (const n of nodes) if (typeof n === 'string' && !outputs[n]) cachedUnheard.add(n);
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
        case 'execution_start':
          // Held events are replayed on subscribe: a start heard before the submit response counts.
          heard.all = !heard.dropped;
          break;
        case 'execution_success':
          complete();
          break;
        case 'execution_error':
          fail(new ExecutionError(promptId, (e as { data?: Record<string, unknown> }).data));
          break;
        case 'execution_interrupted':
          fail(new JobCancelledError(promptId, (e as { data?: Record<string, unknown> }).data));
          break;
      }
    };

    own(socket.on('reconnecting', () => void pollWhileDown()));
    own(
      socket.on('reconnected', () => {
        jobs.log?.debug?.(`job ${promptId}: the socket is back; confirming the status once`, { promptId });
        void pollOnce();
      }),
    );
    own(
      socket.on('close', () => {
        heard.all = false;
        heard.dropped = true;
        void pollWhileDown();
      }),
    );
    if (signal) {
      const onAbort = () => {
        stopOnServer('aborted');
        fail(new APIUserAbortError(opts.stopOnAbort ? `Aborted; job ${promptId} was stopped` : `Aborted; stopped following job ${promptId} (it keeps running)`, { cause: signal.reason }));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      own(() => signal.removeEventListener('abort', onAbort));
      if (signal.aborted) onAbort();
    }
    resetSilence();
    // Last: replaying held events may end the job right here.
    own(
      socket.subscribe(promptId, onEvent, {
        onLost: () => {
          heard.all = false;
          heard.dropped = true;
        },
      }),
    );
    if (!settled && socket.state !== 'open') void pollWhileDown();
    // A job followed after the fact may have ended already, and a local server sends its
    // events only to the socket that submitted it: poll until this socket hears from it.
    else if (!settled && !from.justSubmitted) void pollUntilHeard();
  });
}

function mergeOutputs(a: NodeOutputs | undefined, b: NodeOutputs): NodeOutputs {
  if (!a) return b;
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = Array.isArray(v) && Array.isArray(out[k]) ? [...(out[k] as unknown[]), ...v] : v;
  return out as NodeOutputs;
}

/** Waits `ms`; rejects with {@link APIUserAbortError} when the signal aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new APIUserAbortError(undefined, { cause: signal.reason }));
    const onAbort = () => {
      clearTimeout(t);
      reject(new APIUserAbortError(undefined, { cause: signal!.reason }));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
