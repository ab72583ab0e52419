/**
 * A failed job's error, as kept in Redis and as rebuilt by `result()` in any
 * process: the SDK's typed errors keep their class and fields
 * (`ExecutionError`'s `exceptionType`, `ServerLostError`'s `server`…). Only
 * the errors' own safe fields (`toJSON`) are stored: never a request, a
 * header or a credential.
 *
 * @module
 */
import { ExecutionError, JobCancelledError, JobTimeoutError, PlacementError, PlatformUIError, ServerLostError } from '@platformui/sdk';
import * as sdkErrors from '@platformui/sdk';

/** An error as stored in a failed job's data. */
export interface StoredError {
  name: string;
  message: string;
  /** The error's own fields (its `toJSON()`), without name and message. */
  fields: Record<string, unknown>;
}

/** What to store of `err`. */
export function storeError(err: unknown): StoredError {
  if (err instanceof PlatformUIError) {
    const { name, message, ...fields } = err.toJSON() as Record<string, unknown>;
    return { name: String(name), message: String(message), fields: JSON.parse(JSON.stringify(fields)) as Record<string, unknown> };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  return { name: e.name, message: e.message, fields: {} };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The stored error as the SDK class it was (its message as it was); a class not known here is a `PlatformUIError` with that name and fields. */
export function rebuildError(s: StoredError): Error {
  const f = s.fields;
  let err: Error;
  switch (s.name) {
    case 'ExecutionError':
      err = new ExecutionError(str(f.promptId), (f.data as Record<string, unknown> | undefined) ?? undefined);
      break;
    case 'JobCancelledError':
      err = new JobCancelledError(str(f.promptId), (f.data as Record<string, unknown> | undefined) ?? undefined);
      break;
    case 'ServerLostError':
      err = new ServerLostError(str(f.promptId), str(f.server), f.reason === 'forgotten' ? 'forgotten' : 'unreachable', Number(f.silentMs) || 0);
      break;
    case 'PlacementError':
      err = new PlacementError((f.reasons as Record<string, string[]>) ?? {});
      break;
    case 'JobTimeoutError':
      err = new JobTimeoutError(str(f.promptId), Number(f.timeout) || 0);
      break;
    default: {
      // Another SDK class (APIError, SubmissionError…): its prototype, with the stored fields.
      const cls = (sdkErrors as Record<string, unknown>)[s.name];
      const proto = typeof cls === 'function' && cls.prototype instanceof PlatformUIError ? (cls.prototype as object) : PlatformUIError.prototype;
      err = Object.assign(Object.create(proto) as Error, f);
      Object.defineProperty(err, 'stack', { value: `${s.name}: ${s.message}\n    (rebuilt from the queue)`, configurable: true, writable: true });
      Object.defineProperty(err, 'name', { value: s.name, configurable: true, writable: true, enumerable: true });
    }
  }
  err.message = s.message;
  return err;
}

/**
 * `JobQueue.add()` could not put the job in Redis (Redis refused the write,
 * `OOM command not allowed` under `maxmemory`, or went away): nothing is left
 * under its id, so the same `add()` again adds it (and it runs once).
 *
 * @example
 * ```ts
 * try {
 *   await queue.add(workflow, { jobId: 'order-1234' });
 * } catch (err) {
 *   if (err instanceof QueueAddError) setTimeout(() => void queue.add(workflow, { jobId: err.jobId }), 5000);
 * }
 * ```
 */
export class QueueAddError extends PlatformUIError {
  static override name = 'QueueAddError';
  constructor(
    readonly jobId: string,
    queue: string,
    cause: unknown,
  ) {
    super(`job ${JSON.stringify(jobId)} was not added to queue ${JSON.stringify(queue)}: ${cause instanceof Error ? cause.message : String(cause)}. Nothing is left under its id: add() it again`, { cause });
  }
}
