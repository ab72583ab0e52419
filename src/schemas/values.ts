/**
 * The lists of known enum values, apart from the zod schemas: runtime code
 * that needs a list (the event types, the task statuses) imports it from here
 * and so never loads a schema, which keeps zod out of bundles and start-up.
 * The schema files build on these lists and re-export them.
 *
 * @module
 */

/** Values of `NodeStatus`. */
export const NODE_STATUSES = ['NodeStatusActive', 'NodeStatusDeleted', 'NodeStatusBanned'] as const;

/** Values of `NodeVersionStatus`. */
export const NODE_VERSION_STATUSES = [
  'NodeVersionStatusActive',
  'NodeVersionStatusDeleted',
  'NodeVersionStatusBanned',
  'NodeVersionStatusPending',
  'NodeVersionStatusFlagged',
] as const;

/** Values of `PublisherStatus`. */
export const PUBLISHER_STATUSES = ['PublisherStatusActive', 'PublisherStatusBanned'] as const;

/** Allowed values of `style` (image-relight). */
export const RELIGHT_STYLES = ['standard', 'darker_but_realistic', 'clean', 'smooth', 'brighter', 'contrasted_n_hdr', 'just_composition'] as const;

/**
 * Task statuses: `CREATED` (the spec: a newly started task), then `IN_PROGRESS`
 * and `COMPLETED` or `FAILED` as the task moves (the provider's states, which
 * the webhook notifications carry). Any other value is kept.
 */
export const TASK_STATUSES = ['CREATED', 'IN_PROGRESS', 'COMPLETED', 'FAILED'] as const;

/** Job status values the spec names (also the mapped `status` of job records, `GET /api/jobs/{id}`). */
export const JOB_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'cancelled'] as const;

/**
 * Raw states the live cloud's `GET /api/job/{id}/status` answers (DESIGN §8).
 * In flight: everything up to `cancelling_preparing`; terminal: `success`,
 * `error`, `non_retryable_error`, `lost`, `cancelled`. Never match on the
 * in-flight names: use {@link jobPhase}.
 */
export const CLOUD_JOB_STATES = [
  'submitted',
  'queued_limited',
  'queued_waiting',
  'allocated',
  'preparing',
  'pending_execution',
  'executing',
  'executed',
  'erroring',
  'cancel_requested',
  'cancel_pending',
  'cancelling_preparing',
  'success',
  'error',
  'non_retryable_error',
  'lost',
  'cancelled',
] as const;

/** `output_type` values of `GET /api/jobs`. */
export const JOB_OUTPUT_TYPES = ['image', 'video', 'audio'] as const;

/** File reference `type` values. */
export const FILE_TYPES = ['input', 'output', 'temp'] as const;

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
