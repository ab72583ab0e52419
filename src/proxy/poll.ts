/**
 * The polling loop of `waitForTask()`: reads a proxy task until it ends, with
 * the host application's backoff, transient failures and an early `404`
 * tolerated, the caller's abort and the whole wait's deadline. Loaded on the
 * first wait (`tasks.ts`' `polling()`).
 *
 * @module
 */
import { APIConnectionError, APIUserAbortError, InternalServerError, InvalidArgumentError, NotFoundError, RateLimitError } from '../errors.ts';
import { TaskFailedError, TaskTimeoutError } from './errors.ts';
import type { Task } from '../schemas/proxy.ts';
import { checkInterval, checkTimeout } from '../transport/options.ts';
import { count, SILENT, type Log } from '../transport/log.ts';
import type { WithResponse } from '../transport/promise.ts';
import { backoff, type BackoffOptions } from '../transport/backoff.ts';
import { sleep } from '../transport/sleep.ts';
import type { WaitForTaskOptions } from './tasks.ts';

/** The host application's own poll: about 1 s, growing by half to 10 s, spread ±20 % so that many waits do not read in step. */
const POLL: BackoffOptions = { first: 1000, max: 10_000, factor: 1.5, jitter: 0.2 };

/**
 * The default delay before read `n + 1` (n from 0): 1 s, 1.5 s, 2.25 s, …
 * capped at 10 s, each with ±20 % jitter (never above 10 s).
 */
export function defaultPollDelay(n: number, random: () => number = Math.random): number {
  return backoff(n, POLL, random);
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

