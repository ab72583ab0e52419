/**
 * `POST /api/v2/jobs`: the body checked as the personality's server does
 * (`extra_data` closed, `metadata` a map or a string, reserved fields,
 * editor-format graphs), `core/ASSET` references resolved to the asset's
 * input file, then the cloud's own validation (`node_errors` in ComfyUI's
 * shape) and its job engine. The Idempotency-Key is claimed first and
 * released when the submission fails without a job.
 *
 * @module
 */
import { isObject } from '../../schemas/rule.ts';
import { PromptRejection } from '../cloud-nodes.ts';
import type { RequestContext } from '../http.ts';
import { checkCredits } from './access.ts';
import { V2Error } from './errors.ts';
import type { V2JobRecord, V2State } from './state.ts';

const EXTRA_DATA_KEYS = new Set(['api_key_comfy_org', 'auth_token_comfy_org', 'extra_pnginfo']);
const REAL_EXTRA_DATA_KEYS = new Set(['api_key_comfy_org']);
const BODY_KEYS = new Set(['workflow', 'extra_data', 'metadata', 'priority']);
const MAX_METADATA_STRING = 1024;

const invalid = (status: number, message: string): V2Error => new V2Error(status, 'invalid_request', message);

/** The checked body: the workflow, the extra data for the engine, the metadata to keep. */
function checkBody(state: V2State, body: unknown): { workflow: Record<string, unknown>; extra: Record<string, unknown>; metadata: unknown } {
  const b = state.behaviour;
  if (!isObject(body)) throw invalid(400, 'Body must be JSON.');
  for (const reserved of ['webhook_url', 'inputs']) if (reserved in body) throw invalid(422, `'${reserved}' is reserved and not accepted yet.`);
  const unknown = Object.keys(body).filter((k) => !BODY_KEYS.has(k));
  if (unknown.length && b.metadata === 'map') throw invalid(422, `Unknown field(s): ${unknown.join(', ')}.`);
  const workflow = body.workflow;
  if (!isObject(workflow)) throw invalid(422, "'workflow' must be an object (API format).");
  if (Array.isArray(workflow.nodes) || Array.isArray(workflow.links)) {
    throw new V2Error(422, 'workflow_format_ui', 'This is a UI-export graph. Export the workflow in API format instead.');
  }
  const extra = body.extra_data ?? {};
  if (!isObject(extra)) throw invalid(b.unknownExtraDataStatus, "'extra_data' must be an object.");
  const allowed = b.unknownExtraDataStatus === 400 ? REAL_EXTRA_DATA_KEYS : EXTRA_DATA_KEYS;
  const strange = Object.keys(extra).filter((k) => !allowed.has(k));
  if (strange.length) {
    throw invalid(b.unknownExtraDataStatus, b.unknownExtraDataStatus === 400 ? "'extra_data' accepts only the 'api_key_comfy_org' field." : `'extra_data' does not accept: ${strange.join(', ')}.`);
  }
  const metadata = body.metadata;
  if (metadata !== undefined && metadata !== null) {
    if (b.metadata === 'string') {
      if (typeof metadata !== 'string') throw invalid(422, "'metadata' must be a string (opaque label).");
      if (Buffer.byteLength(metadata) > MAX_METADATA_STRING) throw invalid(422, `'metadata' exceeds ${MAX_METADATA_STRING} bytes.`);
    } else if (!isObject(metadata) || Object.values(metadata).some((v) => typeof v !== 'string')) {
      throw invalid(422, "'metadata' must be a map of string labels.");
    }
  }
  return { workflow, extra, metadata: metadata ?? undefined };
}

/**
 * A copy of `workflow` whose `core/ASSET` references name the asset's input
 * file; 422 `missing_asset` with `details.missing_ids` for unknown ids.
 */
export function resolveAssets(state: V2State, lane: string, workflow: Record<string, unknown>): Record<string, unknown> {
  const missing: string[] = [];
  const copy = structuredClone(workflow);
  for (const node of Object.values(copy)) {
    if (!isObject(node) || !isObject(node.inputs)) continue;
    const inputs = node.inputs;
    for (const [name, value] of Object.entries(inputs)) {
      if (!isObject(value) || value.__type !== 'core/ASSET') continue;
      const id = isObject(value.info) && typeof value.info.id === 'string' ? value.info.id : '';
      const asset = state.assets.get(lane, id);
      if (!asset) missing.push(id);
      else inputs[name] = asset.blob.type === 'input' ? asset.blob.name : `${asset.blob.name} [${asset.blob.type}]`;
    }
  }
  if (missing.length) throw new V2Error(422, 'missing_asset', `Unknown asset id(s): ${missing.join(', ')}.`, { missing_ids: missing });
  return copy;
}

/** Validates, queues and tracks a submission; what the route answers is its own business. */
export async function submitJob(state: V2State, ctx: RequestContext, lane: string): Promise<V2JobRecord> {
  state.counters.jobPosts++;
  const raw = ctx.headers['idempotency-key'];
  const key = (Array.isArray(raw) ? raw[0] : raw)?.trim() || undefined;
  if (key !== undefined) state.claimKey(lane, key);
  try {
    let body: unknown;
    try {
      body = await ctx.readJson();
    } catch (err) {
      if (err instanceof V2Error) throw err;
      throw invalid(400, 'Body must be JSON.');
    }
    const { workflow, extra, metadata } = checkBody(state, body);
    const resolved = resolveAssets(state, lane, workflow);
    checkCredits(state, lane);
    if (state.faults.queueFull > 0) {
      state.faults.queueFull--;
      throw new V2Error(429, 'queue_full', 'The queue is full; retry after the delay.', null, { 'Retry-After': String(state.faults.retryAfter) });
    }
    const partnerKey = typeof extra.api_key_comfy_org === 'string' ? { api_key_platform_org: extra.api_key_comfy_org } : {};
    let job;
    try {
      job = state.cloud.submit(lane, { prompt: resolved, extra_data: partnerKey });
    } catch (err) {
      if (!(err instanceof PromptRejection)) throw err;
      throw new V2Error(422, 'invalid_workflow', err.body.error.message, { node_errors: err.body.node_errors });
    }
    return state.track(lane, job, workflow, metadata, key);
  } catch (err) {
    if (key !== undefined) state.releaseKey(lane, key);
    throw err;
  }
}
