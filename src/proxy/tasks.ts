/**
 * A proxy task as the client reads it: the status record normalized once
 * (wrapped or bare, `status` or `task_status`), the operation's path, and
 * the door to the polling loop of `waitForTask()` (`poll.ts`), loaded on
 * its first wait (issue 34: a file of its own in the browser build).
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.ts';
import type { Task } from '../schemas/proxy.ts';
import { isObject } from '../schemas/rule.ts';
import type { OptionKeys } from '../args.ts';
import { onFirstUse } from '../on-first-use.ts';

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

/**
 * The polling loop of `waitForTask()`, loaded once per process on the first wait.
 *
 * @example
 * ```ts
 * const { pollTask } = await polling();
 * ```
 */
export const polling = /* @__PURE__ */ onFirstUse(() => import('./poll.ts'));
