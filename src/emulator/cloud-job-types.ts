/**
 * What the emulated cloud's job engine keeps and publishes: a job, its
 * outputs and forced failures, the events a socket layer turns into frames,
 * and the context the engine runs in.
 *
 * @module
 */
import type { FileStore } from './cloud-files.ts';
import type { PromptNode } from './cloud-nodes.ts';
import type { Personality } from './personality.ts';

/** Job status values of the spec. */
export type JobStatusValue = 'pending' | 'in_progress' | 'completed' | 'failed' | 'cancelled';

/** A file reference in outputs. */
export interface OutputRef {
  filename: string;
  subfolder: string;
  type: string;
}

/** Outputs of one node. */
export interface NodeOutput {
  images?: OutputRef[];
  [key: string]: unknown;
}

/** A forced failure. */
export interface FailSpec {
  /** `exception_type` to report; any string (the spec's six, or something new). */
  exceptionType: string;
  /** `exception_message`; default: a message typical of the type. */
  message?: string;
  /** Fail at this node; default: the first node that executes. */
  nodeId?: string;
  /**
   * The live cloud's raw terminal state of the failure (`GET /api/job/{id}/status`
   * in the `cloud` personality); default `error`. `lost` is a worker that died
   * silently: no `execution_error`, no event at all for the job's end, and no
   * `execution_error` in its record.
   */
  rawStatus?: RawFailure;
}

/** Raw terminal states of a failed job on the live cloud. */
export type RawFailure = 'error' | 'non_retryable_error' | 'lost';

/** A message a job keeps for its history: `[type, data]`, as the local server stores them. */
export type JobMessage = [type: string, data: Record<string, unknown>];

/** A job, as the emulator keeps it. */
export interface Job {
  prompt_id: string;
  number: number;
  key: string;
  prompt: Record<string, PromptNode>;
  /** `extra_data` without `api_key_platform_org` (never echoed back). */
  extraData: Record<string, unknown>;
  /** The partner key of the submission, kept apart. */
  partnerKey: string | undefined;
  order: string[];
  outputNodes: string[];
  status: JobStatusValue;
  outputs: Record<string, NodeOutput>;
  error: { exception_type: string; exception_message: string; node_id: string; node_type: string } | undefined;
  /** Raw terminal state of a failure (see {@link FailSpec.rawStatus}); undefined unless failed. */
  rawStatus: RawFailure | undefined;
  /** The submission's `client_id`: the socket its events go to when the personality routes by it. */
  clientId: string | undefined;
  /** `execution_start`, `execution_cached` and the ending message, as sent (see {@link JobMessage}). */
  messages: JobMessage[];
  /** Nodes executed so far. */
  executed: string[];
  /** Times, ms since the epoch. `created` is `extra_data.create_time`. */
  created: number;
  started: number | undefined;
  /** When its first node started (the live cloud's `preparing` → `executing`). */
  firstNodeAt: number | undefined;
  ended: number | undefined;
  /** Key of the workflow in the per-key cache. */
  cacheKey: string;
  fail: FailSpec | undefined;
  controller: AbortController | undefined;
  currentNode: string | undefined;
}

/**
 * What the engine publishes; a socket layer turns these into frames. `key` is
 * the lane (the API key, or `LOCAL_LANE` when no key is required);
 * `clientId` is the submitting client of a job's events (absent on `status`
 * and for submissions without one).
 */
export type CloudEvent =
  | { kind: 'json'; key: string; clientId?: string; message: { type: string; data: Record<string, unknown> } }
  | { kind: 'preview'; key: string; clientId?: string; promptId: string; nodeId: string; displayNodeId: string; image: Buffer; mime: 'image/png' }
  | { kind: 'text'; key: string; clientId?: string; promptId: string; nodeId: string; text: string };

/** Where the engine lives. */
export interface EngineContext {
  files: FileStore;
  emit(event: CloudEvent): void;
  /** The parallel limit of a key. */
  parallelOf(key: string): number;
  /** Mode of a key (for partner keys); undefined when unknown. */
  modeOf(key: string): string | undefined;
  /** Timing knobs, read at every step so tests may change them live. */
  timing(): { stepMs: number; progressSteps: number };
  historyLimit: number;
  /** The server imitated (the engine reads `cachedExecuted`). */
  personality: Personality;
}
