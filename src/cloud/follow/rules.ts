/**
 * Small pure rules of the follower: the poll gap while the socket is down,
 * how a run that rejected ended, how outputs heard twice for one node merge,
 * a completed job's result, and the log lines that say how a run ended.
 *
 * @module
 */
import { APIUserAbortError } from '../../errors.ts';
import { ExecutionError, JobCancelledError, JobTimeoutError } from '../job-errors.ts';
import type { NodeOutputs } from '../../schemas/cloud.ts';
import { backoff } from '../../transport/backoff.ts';
import { count, describeError, errorDetails } from '../../transport/log.ts';
import { filesOf, type JobRecord } from '../jobs.ts';
import type { JobResult } from '../run-options.ts';
import type { Effect, FollowerState } from './model.ts';

/** The shortest gap between two polls while the socket is down. */
const MIN_GAP_MS = 25;
/** While the socket is down, a poll goes out this many of its own round trips after the last went out. */
const GAP_PER_ROUND_TRIP = 4;

/**
 * The gap (ms) from one status poll to the next while the socket is down:
 * four round trips of the poll itself (smoothed), at least 25 ms and at most
 * `pollInterval`; doubled for each poll in a row that got no answer (or a
 * 429). One poll at a time. So an ending is found within one gap and a round
 * trip (about 30 ms on loopback), and a follower keeps at most a quarter of
 * one connection to the server busy: a slow, loaded or distant server is
 * polled less often, down to once per `pollInterval`.
 *
 * @example
 * ```ts
 * downPollGap(2, 1000, 0); // 25: loopback
 * downPollGap(120, 1000, 0); // 480: a distant server
 * downPollGap(2, 1000, 3); // 200: three polls in a row without an answer
 * ```
 */
export function downPollGap(roundTripMs: number | undefined, pollInterval: number, failures: number): number {
  const gap = Math.max(MIN_GAP_MS, Math.round(GAP_PER_ROUND_TRIP * (roundTripMs ?? 0)));
  return backoff(failures, { first: gap, max: pollInterval });
}

/**
 * How a run that rejected ended, in one word (the outcome line's `status`).
 *
 * @example
 * ```ts
 * howEnded(new JobTimeoutError('p1', 1000)); // 'timed_out'
 * ```
 */
export function howEnded(err: unknown): string {
  if (err instanceof JobCancelledError) return 'cancelled';
  if (err instanceof JobTimeoutError) return 'timed_out';
  if (err instanceof APIUserAbortError) return 'aborted';
  return err instanceof ExecutionError ? 'failed' : 'error';
}

/**
 * A node's outputs heard again: lists grow, other fields are replaced.
 *
 * @example
 * ```ts
 * mergeOutputs({ images: [a] }, { images: [b] }); // { images: [a, b] }
 * ```
 */
export function mergeOutputs(a: NodeOutputs | undefined, b: NodeOutputs): NodeOutputs {
  if (!a) return b;
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = Array.isArray(v) && Array.isArray(out[k]) ? [...(out[k] as unknown[]), ...v] : v;
  return out as NodeOutputs;
}

/** The result of a completed job once its record (if one was needed) is read: the record wins for every node it lists. */
export function completed(s: FollowerState, record: JobRecord | undefined, fx: Effect[]): JobResult {
  const id = s.promptId;
  let outputs = s.outputs;
  if (record?.outputs) {
    const heardNodes = Object.keys(outputs).length;
    outputs = { ...outputs, ...record.outputs };
    const recordNodes = Object.keys(record.outputs).length;
    fx.push(log('debug', `job ${id}: outputs reconciled with the job record (${count(heardNodes, 'node')} heard on the socket, ${recordNodes} in the record)`, { promptId: id, socketNodes: heardNodes, recordNodes, endedBy: s.ending?.by }));
  }
  return { promptId: id, status: 'completed', outputs: outputs as Record<string, NodeOutputs>, files: filesOf(outputs), ...(record ? { record } : {}) };
}

/** The log line of a followed job's end: what it produced, or how it ended without a result. */
export function outcome(s: FollowerState, result: JobResult | undefined, err: unknown, now: number): Effect {
  const id = s.promptId;
  const ms = now - s.startedAt;
  if (result) {
    const nodes = Object.keys(result.outputs).length;
    return log('info', `job ${id} completed in ${ms} ms: ${count(result.files.length, 'file')} from ${count(nodes, 'node')}`, { promptId: id, status: 'completed', durationMs: ms, outputs: nodes, files: result.files.length });
  }
  return log('info', `job ${id} ended without a result after ${ms} ms: ${howEnded(err)} (${describeError(err)})`, { promptId: id, status: howEnded(err), durationMs: ms, ...errorDetails(err) });
}

/** A log line, as an effect. */
export function log(level: 'debug' | 'info' | 'warn', message: string, details: Record<string, unknown>): Effect {
  return { type: 'log', level, message, details };
}
