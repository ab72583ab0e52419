/**
 * Schemas of the JSON messages of the cloud WebSocket (`cloud.md`, Events).
 *
 * The API is experimental (DESIGN §5): every object is loose at runtime
 * (unknown keys are kept), every enum is open, and a member is required only
 * where both the spec and the recordings guarantee it. What stays an error is a
 * wrong type, such as a string where a number belongs. Each `data` is typed by
 * a named interface without index signature (see `common.ts`).
 *
 * `execution_error` is deliberately the most tolerant: the event that tells a
 * caller their job failed must not be lost to a missing `traceback`, so all its
 * members but `prompt_id` are optional, and `traceback` may be a list of lines
 * or one string.
 *
 * The SDK validates messages with the rules generated from these schemas
 * (`rules.generated.ts`), never with `safeParse`.
 *
 * @module
 */
import * as z from 'zod/mini';
import { EVENT_TYPES, EXCEPTION_TYPES, NODE_STATES } from './values.ts';
export { EVENT_TYPES, EXCEPTION_TYPES, NODE_STATES } from './values.ts';
import { NodeOutputs } from './cloud.ts';
import { openEnum, opt, strings, type Checks, type Fields, type Model, type OpenEnum, type Same } from './common.ts';


/** One of the eleven known message types. */
export type EventType = (typeof EVENT_TYPES)[number];



/** An `exception_type`: one of the six of the spec, or any other string (`ExceptionType` of `errors.ts` is this type). */
export type ExceptionTypeValue = OpenEnum<typeof EXCEPTION_TYPES>;
/** A node state of `progress_state` (open). */
export type NodeState = OpenEnum<typeof NODE_STATES>;

/** `exec_info` of a `status` message. */
export interface ExecInfo {
  /** Jobs still queued or running. */
  queue_remaining: number;
}

/** `status` of a `status` message. */
export interface ServerStatus {
  exec_info: ExecInfo;
}

/**
 * `data` of `status`: queue status. The first message of a connection also carries `sid`.
 *
 * @example `{"status":{"exec_info":{"queue_remaining":0}},"sid":"80a5…"}`
 */
export interface StatusData {
  status: ServerStatus;
  /** The connection's session id (first message only). */
  sid?: string;
}

/** `data` of `notification`: a friendly message in `value`. */
export interface NotificationData {
  value: string;
  id?: string;
}

/** `data` of `execution_start`: the job started. */
export interface ExecutionStartData {
  prompt_id: string;
  timestamp?: number;
}

/**
 * `data` of `executing`: node `node` is running; `node: null` marks the end of the run (a legacy marker after `execution_success`).
 * `prompt_id` is missing when a local server tells a socket that just (re)connected which node is running (it sends
 * `{ node }` alone): such a message belongs to no job.
 */
export interface ExecutingData {
  node: string | null;
  display_node?: string | null;
  prompt_id?: string;
}

/** `data` of `progress`: `value` of `max` steps (sampling steps) of node `node`. */
export interface ProgressData {
  value: number;
  max: number;
  prompt_id: string;
  node?: string | null;
}

/** One node's entry in `progress_state.nodes`. */
export interface NodeProgress {
  value: number;
  max: number;
  /** `pending`, `running`, `finished`, `error` (open). */
  state: NodeState;
  node_id: string;
  prompt_id?: string;
  display_node_id?: string;
  parent_node_id?: string | null;
  real_node_id?: string;
}

/** `data` of `progress_state`: progress of every node of the job, keyed by node id. */
export interface ProgressStateData {
  prompt_id: string;
  nodes: Record<string, NodeProgress>;
}

/**
 * `data` of `executed`: node `node` finished; `output` holds its files (`images`, `video`, `audio`; other keys kept at runtime).
 * `output` is `null` for a cached node that has no UI output: a local server reports every cached node so
 * (its `execution.py` sends the cached UI output, which may be none).
 */
export interface ExecutedData {
  node: string;
  display_node?: string;
  output: NodeOutputs | null;
  prompt_id: string;
}

/** `data` of `execution_cached`: nodes skipped because their outputs are cached. */
export interface ExecutionCachedData {
  nodes: string[];
  prompt_id: string;
  timestamp?: number;
}

/** `data` of `execution_success`: the whole workflow finished. */
export interface ExecutionSuccessData {
  prompt_id: string;
  timestamp?: number;
}

/** `data` of `execution_error`: the job failed. Tolerant on purpose (see the module notes). */
export interface ExecutionErrorData {
  prompt_id: string;
  /** One of the six of the spec, or any other string. */
  exception_type?: ExceptionTypeValue;
  exception_message?: string;
  /** A list of lines, or one string. */
  traceback?: string[] | string;
  node_id?: string | null;
  node_type?: string | null;
  executed?: string[];
  timestamp?: number;
}

/** `data` of `execution_interrupted`: the user cancelled the job. */
export interface ExecutionInterruptedData {
  prompt_id: string;
  node_id?: string | null;
  node_type?: string | null;
  executed?: string[];
  timestamp?: number;
}

/** Maps each known message type to the type of its `data`. */
export interface EventDataMap {
  status: StatusData;
  notification: NotificationData;
  execution_start: ExecutionStartData;
  executing: ExecutingData;
  progress: ProgressData;
  progress_state: ProgressStateData;
  executed: ExecutedData;
  execution_cached: ExecutionCachedData;
  execution_success: ExecutionSuccessData;
  execution_error: ExecutionErrorData;
  execution_interrupted: ExecutionInterruptedData;
}

const promptId = z.string();
const timestamp = opt(z.number());

const execInfoShape = { queue_remaining: z.number() };
const ExecInfo: Model<ExecInfo> = z.looseObject(execInfoShape);
const serverStatusShape = { exec_info: ExecInfo };
const ServerStatus: Model<ServerStatus> = z.looseObject(serverStatusShape);
const statusShape = { status: ServerStatus, sid: opt(z.string()) };

/** `status`: queue status. The first message of a connection also carries `sid`. */
export const StatusData: Model<StatusData> = z.looseObject(statusShape);

const notificationShape = { value: z.string(), id: opt(z.string()) };
/** `notification`: a friendly message in `value`. */
export const NotificationData: Model<NotificationData> = z.looseObject(notificationShape);

const executionStartShape = { prompt_id: promptId, timestamp };
/** `execution_start`: the job started. */
export const ExecutionStartData: Model<ExecutionStartData> = z.looseObject(executionStartShape);

const executingShape = { node: z.nullable(z.string()), display_node: opt(z.nullable(z.string())), prompt_id: opt(promptId) };
/** `executing`: node `node` is running; `node: null` marks the end of the run (a legacy marker after `execution_success`). */
export const ExecutingData: Model<ExecutingData> = z.looseObject(executingShape);

const progressShape = { value: z.number(), max: z.number(), prompt_id: promptId, node: opt(z.nullable(z.string())) };
/** `progress`: `value` of `max` steps (sampling steps) of node `node`. */
export const ProgressData: Model<ProgressData> = z.looseObject(progressShape);

const nodeProgressShape = {
  value: z.number(),
  max: z.number(),
  state: openEnum(NODE_STATES),
  node_id: z.string(),
  prompt_id: opt(z.string()),
  display_node_id: opt(z.string()),
  parent_node_id: opt(z.nullable(z.string())),
  real_node_id: opt(z.string()),
};
/** One node's entry in `progress_state.nodes`. */
export const NodeProgress: Model<NodeProgress> = z.looseObject(nodeProgressShape);

const progressStateShape = { prompt_id: promptId, nodes: z.record(z.string(), NodeProgress) };
/** `progress_state`: progress of every node of the job, keyed by node id. */
export const ProgressStateData: Model<ProgressStateData> = z.looseObject(progressStateShape);

const executedShape = { node: z.string(), display_node: opt(z.string()), output: z.nullable(NodeOutputs), prompt_id: promptId };
/** `executed`: node `node` finished; `output` holds its files (`images`, `video`, `audio`; other keys kept), `null` for a cached node without UI output. */
export const ExecutedData: Model<ExecutedData> = z.looseObject(executedShape);

const executionCachedShape = { nodes: strings, prompt_id: promptId, timestamp };
/** `execution_cached`: nodes skipped because their outputs are cached. */
export const ExecutionCachedData: Model<ExecutionCachedData> = z.looseObject(executionCachedShape);

const executionSuccessShape = { prompt_id: promptId, timestamp };
/** `execution_success`: the whole workflow finished. */
export const ExecutionSuccessData: Model<ExecutionSuccessData> = z.looseObject(executionSuccessShape);

const executionErrorShape = {
  prompt_id: promptId,
  exception_type: opt(openEnum(EXCEPTION_TYPES)),
  exception_message: opt(z.string()),
  traceback: opt(z.union([strings, z.string()])),
  node_id: opt(z.nullable(z.string())),
  node_type: opt(z.nullable(z.string())),
  executed: opt(strings),
  timestamp,
};
/** `execution_error`: the job failed. Tolerant on purpose (see the module notes). */
export const ExecutionErrorData: Model<ExecutionErrorData> = z.looseObject(executionErrorShape);

const executionInterruptedShape = {
  prompt_id: promptId,
  node_id: opt(z.nullable(z.string())),
  node_type: opt(z.nullable(z.string())),
  executed: opt(strings),
  timestamp,
};
/** `execution_interrupted`: the user cancelled the job. */
export const ExecutionInterruptedData: Model<ExecutionInterruptedData> = z.looseObject(executionInterruptedShape);

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
} as const satisfies { [K in EventType]: Model<EventDataMap[K]> };

// Each interface above is exactly what its shape validates.
type _Exact = Checks<
  [
    Same<ExecInfo, Fields<typeof execInfoShape>>,
    Same<ServerStatus, Fields<typeof serverStatusShape>>,
    Same<StatusData, Fields<typeof statusShape>>,
    Same<NotificationData, Fields<typeof notificationShape>>,
    Same<ExecutionStartData, Fields<typeof executionStartShape>>,
    Same<ExecutingData, Fields<typeof executingShape>>,
    Same<ProgressData, Fields<typeof progressShape>>,
    Same<NodeProgress, Fields<typeof nodeProgressShape>>,
    Same<ProgressStateData, Fields<typeof progressStateShape>>,
    Same<ExecutedData, Fields<typeof executedShape>>,
    Same<ExecutionCachedData, Fields<typeof executionCachedShape>>,
    Same<ExecutionSuccessData, Fields<typeof executionSuccessShape>>,
    Same<ExecutionErrorData, Fields<typeof executionErrorShape>>,
    Same<ExecutionInterruptedData, Fields<typeof executionInterruptedShape>>,
  ]
>;
