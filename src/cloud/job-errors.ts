/**
 * How a job followed to its end can fail: it ran and failed
 * ({@link ExecutionError}), was cancelled, went silent, expired, or its
 * server was lost. They live with the jobs (`jobs.ts` decides a job's end);
 * the root entry exports them under the same names. (A browser build's
 * lazily loaded file carries its own copy of those it throws: `instanceof`
 * holds by name, see `errors.ts`.)
 *
 * @module
 */
import { PlatformUIError } from '../errors.ts';
import type { ExceptionTypeValue } from '../schemas/events.ts';
import { clip } from '../transport/redact.ts';

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** The six `exception_type` values of the spec (`EXCEPTION_TYPES`); others are kept as strings. */
export type ExceptionType = ExceptionTypeValue;

/**
 * A job ended with `execution_error` (or status `failed`). The error's own
 * members are camelCase; `data` is the wire payload, unchanged (snake_case).
 *
 * @example
 * ```ts
 * catch (err) { if (err instanceof ExecutionError) console.log(err.nodeType, err.exceptionType, err.exceptionMessage, err.data); }
 * ```
 */
export class ExecutionError extends PlatformUIError {
  static override name = 'ExecutionError';
  /** The job that failed (`data.prompt_id`). */
  readonly promptId: string;
  /** `data.exception_type`: one of six known values, or another string, when the server said. */
  readonly exceptionType: ExceptionType | undefined;
  /** `data.exception_message`: the server's human-readable message. */
  readonly exceptionMessage: string | undefined;
  /** `data.traceback`: the server's traceback (a list of lines, or a string). */
  readonly traceback: unknown;
  /** `data.node_id`: the node that failed, when the server said. */
  readonly nodeId: string | undefined;
  /** `data.node_type`: the class of the node that failed, when the server said. */
  readonly nodeType: string | undefined;
  /** The whole `execution_error` payload as the server sent it (wire names), when there was one. */
  readonly data: unknown;
  constructor(promptId: string, data?: Record<string, unknown>) {
    const type = str(data?.exception_type);
    const msg = typeof data?.exception_message === 'string' ? data.exception_message : undefined;
    const nodeId = str(data?.node_id);
    const nodeType = str(data?.node_type);
    const where = nodeId !== undefined ? ` in ${nodeType ?? 'node'} #${nodeId}` : '';
    super(`Job ${promptId} failed${where}${type ? `: ${type}` : ''}${msg?.trim() ? `: ${clip(msg.trim(), 500)}` : ''}`);
    this.promptId = promptId;
    this.exceptionType = type;
    this.exceptionMessage = msg;
    this.traceback = data?.traceback;
    this.nodeId = nodeId;
    this.nodeType = nodeType;
    this.data = data;
  }
}

/** A job was cancelled (`execution_interrupted` or status `cancelled`). */
export class JobCancelledError extends PlatformUIError {
  static override name = 'JobCancelledError';
  /** The job that was cancelled. */
  readonly promptId: string;
  /** The `execution_interrupted` payload as the server sent it (wire names), when there was one. */
  readonly data: unknown;
  constructor(promptId: string, data?: Record<string, unknown>) {
    super(`Job ${promptId} was cancelled`);
    this.promptId = promptId;
    this.data = data;
  }
}

/**
 * A job followed by `run()` sent nothing (no event, no status change) for
 * `timeout` ms. The job may still be running: this is not a failed request,
 * so it is no {@link APIConnectionError} (a retry-on-connection-error wrapper
 * must not start a second paid job). Since 0.2 it is a {@link PlatformUIError}
 * only; `run()` stops the job (unless `stopOnAbort: false`).
 *
 * @example
 * ```ts
 * try { await cloud.run(workflow, { timeout: 120_000 }); }
 * catch (err) { if (err instanceof JobTimeoutError) console.log(err.promptId, err.timeout); }
 * // JobTimeoutError: Job 1f0c… sent nothing for 120000 ms
 * ```
 */
export class JobTimeoutError extends PlatformUIError {
  static override name = 'JobTimeoutError';
  /** The job that went silent. */
  readonly promptId: string;
  /** The silence deadline that ran out, in ms. */
  readonly timeout: number;
  constructor(promptId: string, ms: number) {
    super(`Job ${promptId} sent nothing for ${ms} ms`);
    this.promptId = promptId;
    this.timeout = ms;
  }
}

/**
 * A Comfy API v2 job ended `expired`: the server no longer has it (its
 * retention passed, it was dequeued, or the server behind a proxy restarted).
 * Read twice before it is believed (a proxy can report a job that just
 * finished as `expired` for one poll). Final, like a failure.
 *
 * @example
 * ```ts
 * catch (err) { if (err instanceof JobExpiredError) console.log(`job ${err.promptId} is gone from the server`); }
 * ```
 */
export class JobExpiredError extends PlatformUIError {
  static override name = 'JobExpiredError';
  /** The job (its v2 id). */
  readonly promptId: string;
  constructor(promptId: string) {
    super(`Job ${promptId} expired: the server no longer has it (retention passed, dequeued, or the server behind the proxy restarted)`);
    this.promptId = promptId;
  }
}

/**
 * The server that accepted a job stopped answering, or answers but no longer
 * knows the job (it restarted: neither its queue nor its history has it).
 * What became of the job is unknown, so nothing re-sends it on its own: it
 * may cost money or have side effects. `promptId` and `server` say which job
 * and where; follow it again later with `cloud.follow(promptId)` if the
 * server comes back, or submit it anew.
 *
 * @example
 * ```ts
 * try {
 *   await cloud.run(workflow);
 * } catch (err) {
 *   if (err instanceof ServerLostError) console.log(err.reason, err.promptId, err.server);
 *   // ServerLostError: Lost job 1f0c… on http://127.0.0.1:8188: no answer for 30 s
 * }
 * ```
 */
export class ServerLostError extends PlatformUIError {
  static override name = 'ServerLostError';
  /** The job the server had accepted. */
  readonly promptId: string;
  /** The server's base URL (credentials redacted). */
  readonly server: string;
  /** `unreachable`: no answer for the set time; `forgotten`: it answers, but the job is unknown to it. */
  readonly reason: 'unreachable' | 'forgotten';
  /** How long the server had given no answer (ms); 0 when it forgot the job. */
  readonly silentMs: number;
  constructor(promptId: string, server: string, reason: 'unreachable' | 'forgotten', silentMs: number, options?: { cause?: unknown }) {
    super(`Lost job ${promptId} on ${server}: ${reason === 'unreachable' ? `no answer for ${Math.round(silentMs / 1000)} s` : 'the server no longer knows the job (it restarted?)'}`, options);
    this.promptId = promptId;
    this.server = server;
    this.reason = reason;
    this.silentMs = silentMs;
  }
}
