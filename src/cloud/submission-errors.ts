/**
 * A submission the server refused, and the messages that name the nodes at
 * fault; a Comfy API v2 job that exists under its key but cannot be found.
 * They live with the submission; the root entry exports them under the same
 * names. (A browser build's lazily loaded file carries its own copy of those it
 * throws: `instanceof` holds by name, see `errors.ts`.)
 *
 * @module
 */
import { PlatformUIError } from '../errors.ts';
import type { NodeErrors } from '../schemas/cloud.ts';
import { isObject, optString } from '../schemas/rule.ts';
import { clip } from '../transport/redact.ts';

/**
 * `POST /api/prompt` answered with an `error` (whatever the HTTP status). The
 * message names the first few nodes at fault and why:
 * `Submission rejected (400): Prompt outputs failed validation — SaveImage #2: filename_prefix: Required input is missing`.
 */
export class SubmissionError extends PlatformUIError {
  static override name = 'SubmissionError';
  /** The `error` member as the server sent it (wire names: `{ type, message, details, extra_info }` on a local server). */
  readonly error: unknown;
  /**
   * `node_errors` as the server sent it (wire names), when it is of the known
   * shape: node id → `{ errors: [{ type, message, details, extra_info }], dependent_outputs, class_type }`.
   * Anything else stays in {@link body}.
   */
  readonly nodeErrors: NodeErrors | undefined;
  /** The whole response body (wire names). */
  readonly body: unknown;
  /** HTTP status of the response. */
  readonly status: number;
  /** The id the submission was sent with (a rejected workflow created no job by it); on Comfy API v2, its Idempotency-Key. */
  readonly promptId: string | undefined;
  /** Comfy API v2's reason (`invalid_workflow`, `workflow_format_ui`, `missing_asset`, `deployment_stopped`, …). Absent elsewhere. */
  declare readonly code?: string;
  constructor(status: number, body: Record<string, unknown>, promptId?: string, code?: string) {
    const e = body.error;
    const text =
      typeof e === 'string' ? e : e && typeof e === 'object' ? describeWireError(e as Record<string, unknown>) ?? JSON.stringify(e) : JSON.stringify(e);
    const nodes = describeNodeErrors(body.node_errors);
    super(`Submission rejected (${status}): ${text}${nodes ? ` — ${nodes}` : ''}`);
    this.error = e;
    // Typed only when it is of the known shape: a malformed body must not make a typed lie.
    this.nodeErrors = isNodeErrors(body.node_errors) ? body.node_errors : undefined;
    this.body = body;
    this.status = status;
    this.promptId = promptId;
    if (code !== undefined) (this as { code?: string }).code = code;
  }
}

/**
 * The shape `NodeErrors` promises, checked by hand: this module is in every
 * bundle, and importing the cloud schemas here would put them in a registry-only one.
 */
function isNodeErrors(v: unknown): v is NodeErrors {
  return (
    isObject(v) &&
    Object.values(v).every(
      (node) =>
        isObject(node) &&
        Array.isArray(node.errors) &&
        node.errors.every((e) => isObject(e) && typeof e.type === 'string' && typeof e.message === 'string' && optString(e.details) && (e.extra_info === undefined || isObject(e.extra_info))) &&
        optString(node.class_type) &&
        (node.dependent_outputs === undefined || (Array.isArray(node.dependent_outputs) && node.dependent_outputs.every((o) => typeof o === 'string')))
    )
  );
}

const SUBMISSION_NODES_SHOWN = 3;
const SUBMISSION_ERRORS_PER_NODE = 2;
const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** `{ type, message, details }` → `message (details)`; details that only repeat are left out. */
function describeWireError(e: Record<string, unknown>): string | undefined {
  const message = str(e.message) ?? str(e.type);
  if (!message) return undefined;
  const details = str(e.details);
  return clip(details && details !== message ? `${message} (${details})` : message, 240);
}

/** One `node_errors[id].errors[i]`: `input: message (details)`. */
function describeNodeErrorItem(item: unknown): string | undefined {
  if (!item || typeof item !== 'object') return undefined;
  const it = item as Record<string, unknown>;
  const extra = it.extra_info && typeof it.extra_info === 'object' ? (it.extra_info as Record<string, unknown>) : {};
  const input = str(extra.input_name);
  const message = str(it.message) ?? str(it.type);
  let details = str(it.details);
  if (details && input && details.startsWith(`${input} - `)) details = details.slice(input.length + 3);
  if (details === input || details === message) details = undefined;
  const text = [message, details && `(${details})`].filter(Boolean).join(' ');
  if (!text) return undefined;
  return clip(input ? `${input}: ${text}` : text, 160);
}

/** `SaveImage #2: filename_prefix: Required input is missing; …; and N more nodes` (bounded). */
function describeNodeErrors(nodeErrors: unknown): string | undefined {
  if (!nodeErrors || typeof nodeErrors !== 'object' || Array.isArray(nodeErrors)) return undefined;
  const ids = Object.keys(nodeErrors).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  if (ids.length === 0) return undefined;
  const parts = ids.slice(0, SUBMISSION_NODES_SHOWN).map((id) => {
    const entry = (nodeErrors as Record<string, unknown>)[id];
    const node = entry && typeof entry === 'object' ? (entry as Record<string, unknown>) : {};
    const label = `${str(node.class_type) ?? 'node'} #${id}`;
    const items = (Array.isArray(node.errors) ? node.errors : []).map(describeNodeErrorItem).filter((x): x is string => x !== undefined);
    if (items.length === 0) return label;
    const extra = items.length - SUBMISSION_ERRORS_PER_NODE;
    return `${label}: ${items.slice(0, SUBMISSION_ERRORS_PER_NODE).join(', ')}${extra > 0 ? ` (+${extra} more)` : ''}`;
  });
  const rest = ids.length - SUBMISSION_NODES_SHOWN;
  if (rest > 0) parts.push(`and ${rest} more node${rest === 1 ? '' : 's'}`);
  return parts.join('; ');
}

/**
 * A Comfy API v2 submission whose `Idempotency-Key` the server has seen
 * already (`422 idempotency_key_reuse`): a job exists under this key (an
 * earlier send whose answer was lost, or another process with the same
 * key), and the server let the SDK find neither it nor its id (no job list,
 * no labels). Nothing was sent twice. Find the job in the server's console,
 * or submit under a new key.
 *
 * @example
 * ```ts
 * catch (err) { if (err instanceof JobExistsError) console.log(`a job exists under key ${err.idempotencyKey}`); }
 * ```
 */
export class JobExistsError extends PlatformUIError {
  static override name = 'JobExistsError';
  /** The `Idempotency-Key` the job was submitted under (the run's `promptId` option, or the one the SDK chose). */
  readonly idempotencyKey: string;
  constructor(idempotencyKey: string, why: string) {
    super(`A job exists under Idempotency-Key ${idempotencyKey} (this server answered idempotency_key_reuse), but its id could not be found: ${why}. It was not submitted again`);
    this.idempotencyKey = idempotencyKey;
  }
}
