/**
 * What a Comfy API v2 server does, as data: the published spec
 * (`spec/cloud-v2.md` §1–§5) or the real local server (comfy-api-proxy in
 * front of ComfyUI, §9.7). The `v2` and `v2-real` personalities carry one of
 * these as `personality.v2`; the v2 routes read the members that concern
 * them. Build a variant by spreading one, e.g.
 * `{ ...PERSONALITIES.v2, v2: { ...PERSONALITIES.v2.v2!, jobList: 'truncated' } }`.
 *
 * @module
 */

/** How one emulated v2 server behaves where servers differ. */
export interface V2Behaviour {
  /** `started_at`, `completed_at` and `metrics` (`queue_ms`, `execution_ms`) filled (spec), or always null / absent (real). */
  readonly timings: boolean;
  /** A running job's polled `progress`: the latest snapshot (`snapshot`), or a constant `{value:0,nodes_done:0,nodes_total:0}` and null otherwise (`zero`). */
  readonly pollProgress: 'snapshot' | 'zero';
  /** Output ids: an asset UUID with `size_bytes` and `hash` (`asset`), or a signed token with `size_bytes: 0` and `hash: null` (`token`). */
  readonly outputIds: 'asset' | 'token';
  /** `GET /api/v2/jobs`: `{ jobs, next_cursor? }` of records without outputs or urls (`cursor`), or `{ jobs, truncated }` of full jobs (`truncated`). */
  readonly jobList: 'cursor' | 'truncated';
  /** `GET /jobs/{id}/logs` served (200 or 204) and `urls.logs` set; false: the route is absent (plain-text `404: Not Found`). */
  readonly logs: boolean;
  /** Body `metadata`: a map of string labels (`map`), or an opaque string of ≤ 1 KiB (`string`: a map is 422 `invalid_request`). Echoed on jobs either way. */
  readonly metadata: 'map' | 'string';
  /** HTTP status of an unknown `extra_data` key (`invalid_request`): 422 (spec) or 400 (real). */
  readonly unknownExtraDataStatus: 400 | 422;
  /** The `output` SSE frames of a job: as each output is written (`before`), or after the terminal `status` (`after`). */
  readonly outputFrames: 'before' | 'after';
  /** What cancelling a queued job makes of it: `canceled` (spec) or `expired` (real). */
  readonly queuedCancel: 'canceled' | 'expired';
  /** A `Range` that starts past the end: 416 (spec) or 502 `upstream_error` (real). */
  readonly rangePastEnd: 416 | 502;
  /** `GET /assets/{id}/content`: 302 to a signed URL on the result host (`redirect`), or the bytes (`inline`). */
  readonly content: 'redirect' | 'inline';
  /** `Idempotency-Key` on `POST /assets`: reject-on-duplicate like jobs (`reject`), or ignored (`ignore`). */
  readonly assetKeys: 'reject' | 'ignore';
  /** `from-hash` (and a re-upload under another `file_path`): 201 a new reference (`mint`), or 200 the one record of the hash (`same`). */
  readonly fromHash: 'mint' | 'same';
  /** A polled job being cancelled reads `canceling` (spec) or still `running` (real). */
  readonly pollCanceling: boolean;
  /** `queue_position` in the 201 of a submission (spec), or null there (real). */
  readonly queuePositionOnCreate: boolean;
  /** Jobs carry `outputs_reused` (real). */
  readonly outputsReused: boolean;
  /** SSE `progress`: a fraction of the job's nodes (`fraction`), or `nodes_total` = nodes started so far, value 1.0 from the first finished node (`started`). */
  readonly progressFrames: 'fraction' | 'started';
  /** Asset records carry `expires_at` and `tags` (spec). */
  readonly assetExpiry: boolean;
  /** `GET /jobs/{id}/workflow`: the workflow as submitted (`submitted`), or with `core/ASSET` references resolved to file names (`resolved`). */
  readonly workflowEcho: 'submitted' | 'resolved';
}

/** The published spec. */
export const V2_SPEC: V2Behaviour = Object.freeze({
  timings: true,
  pollProgress: 'snapshot',
  outputIds: 'asset',
  jobList: 'cursor',
  logs: true,
  metadata: 'map',
  unknownExtraDataStatus: 422,
  outputFrames: 'before',
  queuedCancel: 'canceled',
  rangePastEnd: 416,
  content: 'redirect',
  assetKeys: 'reject',
  fromHash: 'mint',
  pollCanceling: true,
  queuePositionOnCreate: true,
  outputsReused: false,
  progressFrames: 'fraction',
  assetExpiry: true,
  workflowEcho: 'submitted',
});

/** The real local server (comfy-api-proxy on ComfyUI 0.8.0, `spec/cloud-v2.md` §9.7). */
export const V2_REAL: V2Behaviour = Object.freeze({
  timings: false,
  pollProgress: 'zero',
  outputIds: 'token',
  jobList: 'truncated',
  logs: false,
  metadata: 'string',
  unknownExtraDataStatus: 400,
  outputFrames: 'after',
  queuedCancel: 'expired',
  rangePastEnd: 502,
  content: 'inline',
  assetKeys: 'ignore',
  fromHash: 'same',
  pollCanceling: false,
  queuePositionOnCreate: false,
  outputsReused: true,
  progressFrames: 'started',
  assetExpiry: false,
  workflowEcho: 'resolved',
});
