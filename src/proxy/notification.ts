/**
 * What a server receiving `webhook_url` callbacks gets. The spec does not
 * show the payload, so the parser accepts the task record shape with or
 * without its `data` wrapper and keeps everything else.
 *
 * @module
 */
import * as z from 'zod/mini';
import { InvalidArgumentError } from '../errors.ts';
import { opt, openEnum, strings, type Checks, type Fields, type Model, type Same } from '../schemas/common.ts';
import { TASK_STATUSES, type TaskStatus } from '../schemas/proxy.ts';

/**
 * A parsed task notification: the task's fields where the sender gave them.
 * Unknown fields are kept at runtime (read them with `'field' in task`).
 */
export interface TaskNotification {
  /** The task's id. */
  task_id?: string;
  /** `CREATED`, `IN_PROGRESS`, `COMPLETED`, `FAILED`, or any other value the provider sends. */
  status?: TaskStatus;
  /** Result references (URLs), once the task has produced them. */
  generated?: string[];
}

const taskNotificationShape = { task_id: opt(z.string()), status: opt(openEnum(TASK_STATUSES)), generated: opt(strings) };

/** A task notification: the task's fields where the sender gave them, unknown ones kept. */
export const TaskNotification: Model<TaskNotification> = z.looseObject(taskNotificationShape);

type _Exact = Checks<[Same<TaskNotification, Fields<typeof taskNotificationShape>>]>;

/**
 * Parses a webhook notification body (a JSON string, bytes, or an already
 * parsed value). Returns the task object whether or not it came wrapped in
 * `{ data: … }`. Throws {@link InvalidArgumentError} for anything that is not
 * a JSON object or whose known fields have the wrong type.
 *
 * @example
 * ```ts
 * http.createServer(async (req, res) => {
 *   const chunks = []; for await (const c of req) chunks.push(c);
 *   const task = parseTaskNotification(Buffer.concat(chunks).toString());
 *   console.log(task.task_id, task.status, task.generated);
 *   res.end();
 * });
 * ```
 */
export function parseTaskNotification(body: unknown): TaskNotification {
  let value = body;
  if (value instanceof Uint8Array) value = new TextDecoder().decode(value);
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new InvalidArgumentError('is not valid JSON', 'body');
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidArgumentError('must be a JSON object', 'body');
  const wrapped = (value as { data?: unknown }).data;
  const task = wrapped !== null && typeof wrapped === 'object' && !Array.isArray(wrapped) ? { ...(value as object), ...wrapped } : value;
  const r = z.safeParse(TaskNotification, task);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new InvalidArgumentError(issue.message, ['body', ...issue.path.map(String)].join('.'), r.error.issues);
  }
  return task as TaskNotification;
}
