/**
 * Where a pool's job may run, and where it should: pure functions over what
 * the pool knows of each server (its `object_info`, its load), so the rules
 * are tested without a server and cost O(servers) per job.
 *
 * @module
 */
import type { ObjectInfo, Workflow } from '../../schemas/cloud.ts';
import type { EditorOptions } from '../../workflow/editor.ts';
import { isEditorFormat, type WorkflowIssue } from '../../workflow/issue.ts';
import type { EditorWorkflowJSON } from '../client.ts';
import { editorConverter, validator } from '../workflow-code.ts';

// Judging is synchronous (a job is placed in the tick it is submitted, when a server can take it); loading the validator
// and the editor-format converter is not. So a pool loads the validator when it is made and the converter on the first
// editor file, and judges a job only once what it needs is here (until then the job waits, as for a server whose nodes
// are not known yet). Each is a file of its own in the browser build: an app that never pools pays for neither at start.
let validation: typeof import('../validation.ts') | undefined;
let conversion: typeof import('../../workflow/editor.ts') | undefined;

/**
 * Loads what judging `workflow` needs (the validator; for the editor's format the converter too), and resolves
 * when it is here; `undefined` when it is already.
 *
 * @example
 * ```ts
 * const loading = loadJudging(entry.workflow);
 * if (loading) void loading.then(() => rejudge());
 * ```
 */
export function loadJudging(workflow?: unknown): Promise<unknown> | undefined {
  const load: Promise<unknown>[] = [];
  if (!validation) load.push(validator().then((m) => void (validation = m)));
  if (!conversion && workflow !== undefined && isEditorFormat(workflow)) load.push(editorConverter().then((m) => void (conversion = m)));
  return load.length > 0 ? Promise.all(load) : undefined;
}

/** What placement needs to know of one server. */
export interface Placeable {
  readonly id: string;
  readonly weight: number;
  readonly maxConcurrent: number;
  /** Only `up` servers take jobs. */
  readonly state: 'starting' | 'up' | 'down';
  /** This pool's jobs placed there and not settled (uploading, submitting, queued or running). */
  readonly active: number;
  /** Work on the server: its queue as it last said, plus this pool's submissions it does not show yet. */
  readonly load: number;
  /** When it went down (ms since the epoch); meaningful while `down`. */
  readonly downSince: number;
}

/** What placement needs to know of one job. */
export interface Judged {
  /** Per server id: `[]` can run it, reasons otherwise; absent while its nodes are unknown. */
  readonly verdicts: ReadonlyMap<string, readonly string[]>;
  /** Servers the job must not go back to, with why (one lost it, or failed its upload). */
  readonly avoid: ReadonlyMap<string, string>;
}

/** Whether a job may go to a server: its nodes and models are there, and it did not fail this job before. */
export const canRun = (job: Judged, s: Placeable): boolean => !job.avoid.has(s.id) && job.verdicts.get(s.id)?.length === 0;

/**
 * Why a server cannot run a workflow: its classes the server lacks and the
 * combo values (checkpoints, LoRAs, …) not in the server's lists, one line
 * each; `[]` when it can run it. `uploaded` names the inputs (`'10.inputs.image'`)
 * the pool fills with an upload: their placeholder values are not judged.
 *
 * @example
 * ```ts
 * missingOn(workflow, objectInfo, new Set(['10.inputs.image'])); // ['#4 TiledKSampler: this server has no node class "TiledKSampler" …']
 * ```
 */
export function missingOn(workflow: Workflow, objectInfo: ObjectInfo, uploaded: ReadonlySet<string>): string[] {
  if (!validation) throw new Error('missingOn() before loadJudging() resolved');
  // A file input's name missing from the list is only a warning to validateWorkflow (it may have been uploaded
  // since); here it is a miss: the pool brings files with `inputs`, and this server does not list that one.
  return validation!.validateWorkflow(workflow, objectInfo)
    .filter((i) => (i.code === 'value_not_in_list' || (i.code === 'unknown_class' && i.severity === 'error')) && !uploaded.has(`${i.nodeId}.inputs.${i.input}`))
    .map((i) => i.message);
}

/** A workflow in the editor's format as converted for one server: the API format, and warnings of what `widgetValues: 'editor'` changed. */
export interface Converted {
  workflow: Workflow;
  warnings: readonly WorkflowIssue[];
}

/** What judging a job needs: its workflow as handed over, and where the ones converted for each server go. */
export interface Convertible {
  readonly workflow: Workflow | EditorWorkflowJSON;
  readonly uploaded: ReadonlySet<string>;
  /** A workflow in the editor's format, converted with each server's object_info (and what that changed), by server id. */
  readonly converted: Map<string, Converted>;
  readonly options: Pick<EditorOptions, 'widgetValues'>;
}

/**
 * {@link missingOn} for a job on one server. A workflow in the editor's
 * format is converted with that server's `object_info` first (two servers
 * may lay a node's widgets out differently): what stops the conversion there
 * is a miss, and the workflow converted for the server is kept for it.
 * `undefined` (not judged) while what judging needs still loads ({@link loadJudging}).
 */
export function judge(job: Convertible, serverId: string, objectInfo: ObjectInfo | 'unknown'): string[] | undefined {
  // A server whose nodes nobody can read (Comfy API v2 without an objectInfo source): placed by load, as able as any,
  // except for an editor file, which cannot be converted without them.
  if (objectInfo === 'unknown') return isEditorFormat(job.workflow) ? [`its nodes are unknown (a Comfy API v2 server without the objectInfo option), and a workflow in the editor's format needs them to be converted`] : [];
  if (loadJudging(job.workflow)) return undefined; // not judged yet: loadJudging()'s caller judges again once it is here
  if (!isEditorFormat(job.workflow)) return missingOn(job.workflow as Workflow, objectInfo, job.uploaded);
  const { workflow, issues } = conversion!.convertEditorWorkflow(job.workflow, objectInfo, job.options.widgetValues ? { widgetValues: job.options.widgetValues } : {});
  const errors = issues.filter((i) => i.severity === 'error').map((i) => i.message);
  for (const at of job.uploaded) {
    const nodeId = at.slice(0, at.lastIndexOf('.inputs.'));
    if (!Object.hasOwn(workflow, nodeId)) errors.push(`inputs: ${at} names no node of the workflow as converted for this server`);
  }
  if (errors.length > 0) return errors;
  job.converted.set(serverId, { workflow, warnings: issues });
  return missingOn(workflow, objectInfo, job.uploaded);
}

/**
 * The server a job goes to: among the `up` servers it can run on (`canRun`)
 * with a free slot (`active < maxConcurrent`), the one with the least
 * `load / weight`; ties go round-robin from `turn`. `undefined` when none.
 *
 * @example
 * ```ts
 * const server = choose(servers, (s) => capable.has(s.id), turn++);
 * ```
 */
export function choose<S extends Placeable>(servers: readonly S[], canRun: (server: S) => boolean, turn: number): S | undefined {
  let best: S | undefined;
  let bestScore = Infinity;
  const n = servers.length;
  for (let k = 0; k < n; k++) {
    const s = servers[(turn + k) % n]!;
    if (s.state !== 'up' || s.active >= s.maxConcurrent || !canRun(s)) continue;
    const score = s.load / s.weight;
    // Strictly less: the first of equals from `turn` wins, so ties rotate.
    if (score < bestScore) {
      best = s;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Why none of `servers` can take a job, by server id; `undefined` while one
 * may (it can run the job, or its nodes are not known yet). A server down
 * for `lostAfter` ms or more counts as unable.
 *
 * @example
 * ```ts
 * const reasons = nowhere(servers, job, Date.now(), 15_000);
 * if (reasons) throw new PlacementError(reasons);
 * ```
 */
export function nowhere(servers: readonly Placeable[], job: Judged, now: number, lostAfter: number): Record<string, string[]> | undefined {
  const reasons: Record<string, string[]> = {};
  for (const s of servers) {
    const verdict = job.verdicts.get(s.id);
    const avoided = job.avoid.get(s.id);
    if (avoided !== undefined) reasons[s.id] = [avoided];
    else if (verdict?.length) reasons[s.id] = [...verdict];
    else if (s.state === 'down' && now - s.downSince >= lostAfter) reasons[s.id] = [`down for ${Math.round((now - s.downSince) / 1000)} s`];
    else return undefined; // able, or not known yet
  }
  return reasons;
}
