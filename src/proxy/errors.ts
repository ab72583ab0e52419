/**
 * The errors of following a proxy task (`waitForTask()`, the `…AndWait()`
 * calls, `confirmNotification()`): they live with the tasks; the root entry
 * exports them under the same names.
 *
 * @module
 */
import { PlatformUIError } from '../errors.ts';

/**
 * A proxy task followed by `waitForTask()` (or a `…AndWait()` call) ended
 * `FAILED`. `task` is the record the proxy answered, unknown fields kept.
 *
 * @example
 * ```ts
 * try { await proxy.waitForTask('image-relight', id); }
 * catch (err) { if (err instanceof TaskFailedError) console.log(err.taskId, err.task.status); }
 * // TaskFailedError: Task 3f1c… (image-relight) ended FAILED
 * ```
 */
export class TaskFailedError extends PlatformUIError {
  static override name = 'TaskFailedError';
  /** The task's id. */
  readonly taskId: string;
  /** The operation it was read under (`'image-relight'`, `'skin-enhancer'`, …). */
  readonly operation: string;
  /** The task record as the proxy answered it. */
  readonly task: { task_id: string; status: string; generated?: string[] };
  constructor(operation: string, task: { task_id: string; status: string; generated?: string[] }) {
    super(`Task ${task.task_id} (${operation}) ended ${task.status}`);
    this.taskId = task.task_id;
    this.operation = operation;
    this.task = task;
  }
}

/**
 * `waitForTask()` reached its `timeout` (a deadline for the whole wait, not
 * for one request) before the task ended. The task itself keeps running on
 * the proxy: wait again with the same id to pick it up. Not about one HTTP
 * request, and no {@link APIConnectionError} (since 0.2): the task is still running.
 *
 * @example
 * ```ts
 * try { await proxy.waitForTask('image-relight', id, { timeout: 60_000 }); }
 * catch (err) { if (err instanceof TaskTimeoutError) console.log(err.taskId, err.task?.status); }
 * // TaskTimeoutError: Task 3f1c… (image-relight) did not finish within 60000 ms (last status IN_PROGRESS); it may still be running
 * ```
 */
export class TaskTimeoutError extends PlatformUIError {
  static override name = 'TaskTimeoutError';
  /** The task's id. */
  readonly taskId: string;
  /** The operation it was read under. */
  readonly operation: string;
  /** The deadline that ran out, in ms. */
  readonly timeout: number;
  /** The last record read before the deadline, if any was. */
  readonly task: { task_id: string; status: string; generated?: string[] } | undefined;
  constructor(operation: string, taskId: string, ms: number, task?: { task_id: string; status: string; generated?: string[] }) {
    super(`Task ${taskId} (${operation}) did not finish within ${ms} ms (${task ? `last status ${task.status}` : 'no status read yet'}); it may still be running`);
    this.taskId = taskId;
    this.operation = operation;
    this.timeout = ms;
    this.task = task;
  }
}

/**
 * The proxy knows no task with this id under any operation asked
 * (`confirmNotification()`): the notification was forged, replayed from
 * another account, or is for an operation the SDK did not try.
 *
 * @example
 * ```ts
 * try { await proxy.confirmNotification(body); }
 * catch (err) { if (err instanceof TaskNotFoundError) res.writeHead(403).end(); }
 * ```
 */
export class TaskNotFoundError extends PlatformUIError {
  static override name = 'TaskNotFoundError';
  /** The id the notification named. */
  readonly taskId: string;
  /** The operations it was looked up under, in order. */
  readonly operations: readonly string[];
  constructor(taskId: string, operations: readonly string[], options?: { cause?: unknown }) {
    super(`No task ${taskId} under ${operations.join(', ')}: notification not confirmed`, options);
    this.taskId = taskId;
    this.operations = operations;
  }
}
