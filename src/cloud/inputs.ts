/**
 * Files for a workflow's inputs by path (`'10.inputs.image'`), as `run()`'s
 * and the pool's `inputs` option take them: where each goes, and the value an
 * upload becomes in the workflow. One place for both, on every kind of server.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.ts';
import type { UploadResponse, Workflow } from '../schemas/cloud.ts';
import { isObject } from '../schemas/rule.ts';

/** `'10.inputs.image'` → `['10', 'image']`; the node id may hold dots, the input name not. `undefined` without `.inputs.`. */
export function splitInputPath(at: string): [nodeId: string, input: string] | undefined {
  const i = at.lastIndexOf('.inputs.');
  return i < 0 ? undefined : [at.slice(0, i), at.slice(i + '.inputs.'.length)];
}

/**
 * Checks each path against the workflow (when its node ids are known: API
 * format), before anything is uploaded; returns `[nodeId, input]` by path.
 */
export function inputTargets(workflow: Workflow | undefined, inputs: unknown): Map<string, [nodeId: string, input: string]> {
  if (!isObject(inputs)) throw new InvalidArgumentError("must be an object of files by input path ('10.inputs.image')", 'inputs');
  const targets = new Map<string, [string, string]>();
  for (const at of Object.keys(inputs)) {
    const [nodeId, input] = splitInputPath(at) ?? [];
    const node = nodeId && workflow ? workflow[nodeId] : { inputs: {} };
    if (!nodeId || !node || !isObject(node.inputs) || !input) throw new InvalidArgumentError(`must name an input of a node of the workflow, as 'nodeId.inputs.name'`, `inputs.${at}`);
    targets.set(at, [nodeId, input]);
  }
  return targets;
}

/**
 * The value an upload's answer becomes in a workflow input: a Comfy API v2
 * asset's `core/ASSET` reference, else the file name as a file input names it
 * (`subfolder/name`, with ` [temp]` for a temporary upload, as the server's
 * annotated paths say). Anything else stays as it is.
 *
 * @example
 * ```ts
 * uploadValue({ name: 'a.png', subfolder: 'x', type: 'input' }); // 'x/a.png'
 * uploadValue({ name: 'a.png', reference: { __type: 'core/ASSET', info: { id: 'f1' } } }); // { __type: 'core/ASSET', info: { id: 'f1' } }
 * ```
 */
export function uploadValue(value: unknown): unknown {
  if (isObject(value) && isObject(value.reference) && value.reference.__type === 'core/ASSET') return value.reference;
  if (isObject(value) && typeof value.name === 'string' && (typeof value.subfolder === 'string' || typeof value.type === 'string')) {
    const { name, subfolder, type } = value as unknown as UploadResponse;
    const path = subfolder ? `${subfolder}/${name}` : name;
    return type === 'temp' || type === 'output' ? `${path} [${type}]` : path;
  }
  return value;
}

/**
 * `workflow` (copied) with each input's file uploaded by `upload` and its
 * value set. Every path is checked before the first upload.
 *
 * @example
 * ```ts
 * const ready = await withInputs(workflow, { '10.inputs.image': './photo.png' }, (file) => cloud.uploadImage(file));
 * ```
 */
export async function withInputs<F>(workflow: Workflow, inputs: Record<string, F>, upload: (file: F) => PromiseLike<unknown>): Promise<Workflow> {
  const targets = inputTargets(workflow, inputs);
  const copy = structuredClone(workflow);
  await Promise.all(
    [...targets].map(async ([at, [nodeId, input]]) => {
      (copy[nodeId]!.inputs as Record<string, unknown>)[input] = uploadValue(await upload(inputs[at]!));
    }),
  );
  return copy;
}

/** A pool's or a queue's job: checks `inputs` against the workflow (when its node ids are known: API format) before anything is queued; returns their paths. */
export function checkInputs(workflow: Workflow | undefined, inputs: Readonly<Record<string, unknown>> | undefined): Set<string> {
  if (inputs === undefined) return new Set();
  inputTargets(workflow, inputs);
  for (const [at, file] of Object.entries(inputs)) {
    const ok = file instanceof Blob || file instanceof Uint8Array || file instanceof ArrayBuffer || typeof file === 'string';
    if (!ok) throw new InvalidArgumentError('must be a Blob, bytes or (Node) a file path: a stream can be read only once, and a job may need its file on a second server', `inputs.${at}`);
  }
  return new Set(Object.keys(inputs));
}
