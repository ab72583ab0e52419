/**
 * Following a proxy task: the status record normalized once (wrapped or bare,
 * `status` or `task_status`), and the polling loop of `waitForTask()`.
 *
 * @module
 */
import {
  APIConnectionError,
  APIUserAbortError,
  InternalServerError,
  InvalidArgumentError,
  NotFoundError,
  RateLimitError,
} from '../errors.ts';
import {
  TaskFailedError,
  TaskTimeoutError,
} from './errors.ts';
import type { Task } from '../schemas/proxy.ts';
import { isObject } from '../schemas/rule.ts';
import type { OptionKeys } from '../args.ts';
import { checkInterval, checkTimeout } from '../transport/options.ts';
import { count, SILENT, type Log } from '../transport/log.ts';
import type { WithResponse } from '../transport/promise.ts';
import { backoff, type BackoffOptions } from '../transport/backoff.ts';
import { sleep } from '../transport/sleep.ts';

/**
 * An operation whose tasks can be read back: `'image-relight'`, or
 * `'skin-enhancer'` (every skin-enhancer mode, `creative` included). Any other
 * string is allowed for operations the SDK does not model yet; it is the path
 * below `/proxy/{vendor}/v1/ai/`.
 */
export type ProxyOperation = 'image-relight' | 'skin-enhancer' | (string & {});

/** The operations `confirmNotification()` tries, in order, when none is given. */
export const KNOWN_OPERATIONS: readonly ProxyOperation[] = ['image-relight', 'skin-enhancer'];

/** Options of `waitForTask()`. */
export interface WaitForTaskOptions {
  /** Stops waiting at once (no request after it); the rejection is an `APIUserAbortError` whose `cause` is `signal.reason`. The task keeps running. */
  signal?: AbortSignal;
  /** Deadline for the whole wait, in ms (not per request). Rejects with `TaskTimeoutError`. Default: none. */
  timeout?: number | false;
  /**
   * Delay between two reads, in ms. Default: starts at about 1 s and backs off,
   * with jitter, to 10 s (the interval of the host application).
   */
  pollInterval?: number;
  /** Called with the record on every change of status (the first read included). An exception it throws ends the wait with it. */
  onStatus?: (task: Task) => void;
  /** Consecutive transient failures (5xx, 429, network, a per-request timeout) tolerated before the wait fails with the last one. Default 5. */
  maxTransientErrors?: number;
  /** How long, in ms from the start of the wait, a `404` counts as "not visible yet" rather than "no such task". Default 30000. */
  notFoundGrace?: number;
}

/** The keys of {@link WaitForTaskOptions}. */
export const WAIT_FOR_TASK_OPTIONS = { signal: 1, timeout: 1, pollInterval: 1, onStatus: 1, maxTransientErrors: 1, notFoundGrace: 1 } as const satisfies OptionKeys<WaitForTaskOptions>;

/** The host application's own poll: about 1 s, growing by half to 10 s, spread ±20 % so that many waits do not read in step. */
const POLL: BackoffOptions = { first: 1000, max: 10_000, factor: 1.5, jitter: 0.2 };

/**
 * The default delay before read `n + 1` (n from 0): 1 s, 1.5 s, 2.25 s, …
 * capped at 10 s, each with ±20 % jitter (never above 10 s).
 */
export function defaultPollDelay(n: number, random: () => number = Math.random): number {
  return backoff(n, POLL, random);
}


/**
 * The task inside a status answer, whatever its shape: `{ data: { … } }` or
 * bare, with the status as `status` or `task_status` (copied to `status`).
 * Every other field is kept. A missing `task_id` is filled with the id asked for.
 * Returns the value unchanged when it is not an object (validation reports it).
 */
export function normalizeTask(body: unknown, taskId?: string): unknown {
  if (!isObject(body)) return body;
  const inner = isObject(body.data) ? body.data : body;
  const task: Record<string, unknown> = { ...inner };
  if (task.status === undefined && task.task_status !== undefined) task.status = task.task_status;
  if (task.task_id === undefined && taskId !== undefined) task.task_id = taskId;
  return task;
}

/** Checks an operation and returns its path, each segment encoded. */
export function operationPath(operation: unknown): string {
  const segments = typeof operation === 'string' ? operation.split('/') : [''];
  if (segments.some((s) => s === '' || s === '.' || s === '..')) throw new InvalidArgumentError("must be a non-empty path below /v1/ai/ without empty, '.' or '..' segments", 'operation');
  return segments.map(encodeURIComponent).join('/');
}

/** Whether an error of one read is worth another read (5xx, 429, network, per-request timeout). */
function isTransient(err: unknown): boolean {
  return err instanceof InternalServerError || err instanceof RateLimitError || err instanceof APIConnectionError;
}

/**
 * Polls `read` until the task is terminal. `read` gets a signal that fires on
 * the caller's abort or at the deadline.
 */
export async function pollTask(
  operation: string,
  taskId: string,
  read: (signal: AbortSignal) => Promise<WithResponse<Task>>,
  options: WaitForTaskOptions = {},
  /** What an error may carry of a record (the client scrubs its secrets: a server may echo the token). */
  shown: (task: Task) => Task = (task) => task,
  log: Log = SILENT,
): Promise<WithResponse<Task>> {
  checkTimeout(options.timeout, 'timeout');
  checkInterval(options.pollInterval, 'pollInterval');
  const maxTransient = options.maxTransientErrors ?? 5;
  if (!(maxTransient >= 0)) throw new InvalidArgumentError('must be a non-negative number', 'maxTransientErrors');
  const grace = options.notFoundGrace ?? 30_000;
  const user = options.signal;
  const aborted = () => new APIUserAbortError(undefined, { cause: user?.reason });
  if (user?.aborted) throw aborted();

  const started = Date.now();
  const deadline = new AbortController();
  const timeout = options.timeout === undefined || options.timeout === false ? undefined : options.timeout;
  let last: Task | undefined;
  const timer = timeout === undefined ? undefined : setTimeout(() => deadline.abort(new TaskTimeoutError(operation, taskId, timeout, last)), timeout);
  const signal = user ? AbortSignal.any([user, deadline.signal]) : deadline.signal;
  // What stopped the wait: the caller's abort wins over the deadline.
  const stopped = () => (user?.aborted ? aborted() : new TaskTimeoutError(operation, taskId, timeout ?? 0, last));

  try {
    let failures = 0;
    for (let n = 0; ; n++) {
      if (signal.aborted) throw stopped();
      let r: WithResponse<Task> | undefined;
      try {
        r = await read(signal);
      } catch (err) {
        if (signal.aborted) throw stopped();
        const earlyNotFound = err instanceof NotFoundError && last === undefined && Date.now() - started < grace;
        if (!earlyNotFound && !(isTransient(err) && ++failures <= maxTransient)) throw err;
      }
      if (r) {
        failures = 0;
        const changed = r.data.status !== last?.status;
        last = r.data;
        if (changed) {
          log.debug?.(`task ${operation} ${taskId}: ${r.data.status}`, { operation, taskId, status: r.data.status });
          options.onStatus?.(r.data);
        }
        if (r.data.status === 'COMPLETED' || r.data.status === 'FAILED') {
          const results = Array.isArray(r.data.generated) ? r.data.generated.length : 0;
          log.info?.(`task ${operation} ${taskId} ${r.data.status.toLowerCase()} after ${Date.now() - started} ms${r.data.status === 'COMPLETED' ? `: ${count(results, 'result')}` : ''}`, { operation, taskId, status: r.data.status, durationMs: Date.now() - started, results });
        }
        if (r.data.status === 'COMPLETED') return r;
        if (r.data.status === 'FAILED') throw new TaskFailedError(operation, shown(r.data));
      }
      await sleep(options.pollInterval ?? defaultPollDelay(n), signal).catch(() => {
        throw stopped();
      });
    }
  } finally {
    clearTimeout(timer);
  }
}

