/**
 * What a server receiving `webhook_url` callbacks gets. The spec does not
 * show the payload, so the parser accepts the task record shape with or
 * without its `data` wrapper and keeps everything else.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.ts';
import type { TaskNotification } from '../schemas/proxy.ts';
import { TaskNotification as taskNotification } from '../schemas/rules.generated.ts';
import { validate } from '../schemas/validate.ts';

export type { TaskNotification };


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
  const r = validate(taskNotification, task);
  if (!r.ok) {
    const issue = r.issues[0]!;
    throw new InvalidArgumentError(issue.message, ['body', ...issue.path.map(String)].join('.'), r.issues);
  }
  return r.value;
}
