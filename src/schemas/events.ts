/**
 * Schemas of the JSON messages of the cloud WebSocket (`cloud.md`, Events).
 *
 * The API is experimental (DESIGN §5): every object is loose (unknown keys are
 * kept), every enum is open, and a member is required only where both the spec
 * and the recordings guarantee it. What stays an error is a wrong type, such as
 * a string where a number belongs.
 *
 * `execution_error` is deliberately the most tolerant: the event that tells a
 * caller their job failed must not be lost to a missing `traceback`, so all its
 * members but `prompt_id` are optional, and `traceback` may be a list of lines
 * or one string.
 *
 * These schemas are validated with `check.ts`, never `safeParse` on the hot path.
 *
 * @module
 */
import * as z from 'zod/mini';
import { NodeOutputs } from './cloud.ts';
import { openEnum, opt, strings } from './common.ts';

/** The eleven message types the spec names, in the order it lists them. */
export const EVENT_TYPES = [
  'status',
  'notification',
  'execution_start',
  'executing',
  'progress',
  'progress_state',
  'executed',
  'execution_cached',
  'execution_success',
  'execution_error',
  'execution_interrupted',
] as const;

/** One of the eleven known message types. */
export type EventType = (typeof EVENT_TYPES)[number];

/** `exception_type` values of the spec; any other string is kept as is. */
export const EXCEPTION_TYPES = [
  'ValidationError',
  'ModelDownloadError',
  'ImageDownloadError',
  'OOMError',
  'InsufficientFundsError',
  'InactiveSubscriptionError',
] as const;

/** Node states seen in `progress_state` (open: others are kept). */
export const NODE_STATES = ['pending', 'running', 'finished', 'error'] as const;

const promptId = z.string();
const timestamp = opt(z.number());

/**
 * `status`: queue status. The first message of a connection also carries `sid`.
 *
 * @example `{"status":{"exec_info":{"queue_remaining":0}},"sid":"80a5…"}`
 */
export const StatusData = z.looseObject({
  status: z.looseObject({ exec_info: z.looseObject({ queue_remaining: z.number() }) }),
  sid: opt(z.string()),
});

/** `notification`: a friendly message in `value`. */
export const NotificationData = z.looseObject({ value: z.string(), id: opt(z.string()) });

/** `execution_start`: the job started. */
export const ExecutionStartData = z.looseObject({ prompt_id: promptId, timestamp });

/** `executing`: node `node` is running; `node: null` marks the end of the run (a legacy marker after `execution_success`). */
export const ExecutingData = z.looseObject({
  node: z.nullable(z.string()),
  display_node: opt(z.nullable(z.string())),
  prompt_id: promptId,
});

/** `progress`: `value` of `max` steps (sampling steps) of node `node`. */
export const ProgressData = z.looseObject({
  value: z.number(),
  max: z.number(),
  prompt_id: promptId,
  node: opt(z.nullable(z.string())),
});

/** One node's entry in `progress_state.nodes`. */
export const NodeProgress = z.looseObject({
  value: z.number(),
  max: z.number(),
  state: openEnum(NODE_STATES),
  node_id: z.string(),
  prompt_id: opt(z.string()),
  display_node_id: opt(z.string()),
  parent_node_id: opt(z.nullable(z.string())),
  real_node_id: opt(z.string()),
});

/** `progress_state`: progress of every node of the job, keyed by node id. */
export const ProgressStateData = z.looseObject({
  prompt_id: promptId,
  nodes: z.record(z.string(), NodeProgress),
});

/** `executed`: node `node` finished; `output` holds its files (`images`, `video`, `audio`; other keys kept). */
export const ExecutedData = z.looseObject({
  node: z.string(),
  display_node: opt(z.string()),
  output: NodeOutputs,
  prompt_id: promptId,
});

/** `execution_cached`: nodes skipped because their outputs are cached. */
export const ExecutionCachedData = z.looseObject({ nodes: strings, prompt_id: promptId, timestamp });

/** `execution_success`: the whole workflow finished. */
export const ExecutionSuccessData = z.looseObject({ prompt_id: promptId, timestamp });

/** `execution_error`: the job failed. Tolerant on purpose (see the module notes). */
export const ExecutionErrorData = z.looseObject({
  prompt_id: promptId,
  exception_type: opt(openEnum(EXCEPTION_TYPES)),
  exception_message: opt(z.string()),
  traceback: opt(z.union([strings, z.string()])),
  node_id: opt(z.nullable(z.string())),
  node_type: opt(z.nullable(z.string())),
  executed: opt(strings),
  timestamp,
});

/** `execution_interrupted`: the user cancelled the job. */
export const ExecutionInterruptedData = z.looseObject({
  prompt_id: promptId,
  node_id: opt(z.nullable(z.string())),
  node_type: opt(z.nullable(z.string())),
  executed: opt(strings),
  timestamp,
});

/** The `data` schema of each known message type. */
export const EVENT_SCHEMAS = {
  status: StatusData,
  notification: NotificationData,
  execution_start: ExecutionStartData,
  executing: ExecutingData,
  progress: ProgressData,
  progress_state: ProgressStateData,
  executed: ExecutedData,
  execution_cached: ExecutionCachedData,
  execution_success: ExecutionSuccessData,
  execution_error: ExecutionErrorData,
  execution_interrupted: ExecutionInterruptedData,
} as const satisfies Record<EventType, z.ZodMiniType>;

/** `data` of `status`. */
export type StatusData = z.infer<typeof StatusData>;
/** `data` of `notification`. */
export type NotificationData = z.infer<typeof NotificationData>;
/** `data` of `execution_start`. */
export type ExecutionStartData = z.infer<typeof ExecutionStartData>;
/** `data` of `executing`. */
export type ExecutingData = z.infer<typeof ExecutingData>;
/** `data` of `progress`. */
export type ProgressData = z.infer<typeof ProgressData>;
/** One node of `progress_state`. */
export type NodeProgress = z.infer<typeof NodeProgress>;
/** `data` of `progress_state`. */
export type ProgressStateData = z.infer<typeof ProgressStateData>;
/** `data` of `executed`. */
export type ExecutedData = z.infer<typeof ExecutedData>;
/** `data` of `execution_cached`. */
export type ExecutionCachedData = z.infer<typeof ExecutionCachedData>;
/** `data` of `execution_success`. */
export type ExecutionSuccessData = z.infer<typeof ExecutionSuccessData>;
/** `data` of `execution_error`. */
export type ExecutionErrorData = z.infer<typeof ExecutionErrorData>;
/** `data` of `execution_interrupted`. */
export type ExecutionInterruptedData = z.infer<typeof ExecutionInterruptedData>;
/** An `exception_type`: one of the six of the spec, or any other string (`ExceptionType` of `errors.ts` is this type). */
export type ExceptionTypeValue = (typeof EXCEPTION_TYPES)[number] | (string & {});
/** A node state of `progress_state` (open). */
export type NodeState = (typeof NODE_STATES)[number] | (string & {});
/** Maps each known message type to the type of its `data`. */
export type EventDataMap = { [K in EventType]: z.infer<(typeof EVENT_SCHEMAS)[K]> };
