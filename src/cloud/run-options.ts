/**
 * The options of `run()`, `follow()` and `waitForJob()`, and what a run
 * resolves with: apart from `run.ts`, which loads on first use, so that the
 * options are checked (and typed) without it.
 *
 * @module
 */
import { joinKeys, type OptionKeys } from '../args.ts';
import type { NodeOutputs } from '../schemas/cloud.ts';
import { REQUEST_OPTIONS, type RequestOptions } from '../transport/options.ts';
import type { SubmitOptions, UploadInput } from './client.ts';
import type { ImageFrame } from './frames.ts';
import type { JobRecord, OutputFile } from './jobs.ts';
import type { SocketEvent } from './socket.ts';

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
   * With `stopOnAbort`, how long (ms) an abort waits for the job to be seen
   * stopped (`CloudClient.stopJob`'s `confirmWithin`) before the run rejects
   * with an `APIUserAbortError` whose `mayStillRun` is true. Default 10000.
   */
  stopWithin?: number;
  /**
   * Polling interval (ms), default 1000. While the socket is down the status
   * is polled at a gap of four round trips of the poll itself, at least 25 ms
   * and at most this interval (doubling while polls get no answer): an ending
   * is found within one gap (25 ms on loopback, about this interval on a
   * distant server), and a follower keeps at most a quarter of one connection
   * to the server busy. When the socket comes back, the status is read at once. While
   * the socket is open, the status is polled once every 20 intervals (20 s by
   * default), so a job whose ending the socket never tells (a lost worker)
   * still ends.
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
export interface RunOptions extends FollowOptions, Pick<SubmitOptions, 'partnerApiKey' | 'extraData' | 'validate' | 'promptId' | 'resubmitUnconfirmed' | 'confirmWithin' | 'beforeSubmit' | 'widgetValues'> {
  /**
   * Called with the job's id as soon as the submission is accepted, before the
   * job is followed (e.g. to record it): the id chosen before the request
   * (`promptId`, else a random UUID), or the server's own where it does not
   * honour chosen ids. The run waits for a returned promise; if it throws or
   * rejects, the job is stopped and `run()` rejects with that error.
   */
  onSubmitted?: (promptId: string) => void | Promise<void>;
  /**
   * Files for the workflow's inputs, by path (`'10.inputs.image'`): each is
   * uploaded (`uploadImage()`: on Comfy API v2 as a content-addressed asset,
   * whose bytes are not sent again when the server has them) and its value
   * set, before the submission. A value is anything `uploadImage()` takes: a
   * path (Node), a Blob, bytes, a stream. Every path is checked first.
   *
   * @example
   * ```ts
   * await cloud.run(workflow, { inputs: { '10.inputs.image': './photo.png' } });
   * ```
   */
  inputs?: Record<string, UploadInput>;
}

/** What a completed job produced. */
export interface JobResult {
  /** The job's id (`prompt_id` on the wire). */
  promptId: string;
  status: 'completed';
  /** Outputs by node id: from `executed` events, completed from the job record when the socket did not carry them all. */
  outputs: Record<string, NodeOutputs>;
  /** Every file of `outputs`, whatever key it is listed under, with its node and key (see `filesOf`). */
  files: OutputFile[];
  /** The job record, when it was read (outputs recovered, or the ending found by polling). */
  record?: JobRecord;
}

/** Options of `CloudClient.waitForJob`. */
export interface WaitForJobOptions extends RequestOptions {
  /** Polling interval (ms). Default 1000. */
  pollInterval?: number;
}

/** The keys of {@link FollowOptions}, {@link RunOptions} and {@link WaitForJobOptions}, for `checkOptions`. */
export const FOLLOW_OPTIONS = { onEvent: 1, onProgress: 1, onPreview: 1, signal: 1, timeout: 1, stopOnAbort: 1, stopWithin: 1, pollInterval: 1, headers: 1, serverLostAfter: 1 } as const satisfies OptionKeys<FollowOptions>;
export const RUN_OPTIONS = /* @__PURE__ */ joinKeys(FOLLOW_OPTIONS, {
  partnerApiKey: 1,
  extraData: 1,
  validate: 1,
  promptId: 1,
  resubmitUnconfirmed: 1,
  confirmWithin: 1,
  widgetValues: 1,
  onSubmitted: 1,
  beforeSubmit: 1,
  inputs: 1,
} as const) satisfies OptionKeys<RunOptions>;
export const WAIT_FOR_JOB_OPTIONS = /* @__PURE__ */ joinKeys(REQUEST_OPTIONS, { pollInterval: 1 } as const) satisfies OptionKeys<WaitForJobOptions>;
