/**
 * The emulated cloud's node catalogue (`GET /api/object_info`, in the real
 * format of `fixtures/local-server/object_info.json`) and the validation of
 * submitted workflows against it, answering like the local counterpart
 * server does (`07_errors`): `{ error: { type, message, details, extra_info }, node_errors }`.
 *
 * @module
 */

/** One input spec: `[type]`, `[type, options]`, or `[[choices], options]`. */
export type InputSpec = [string | string[], Record<string, unknown>?];

/** A node class definition, as `object_info` lists it. */
export interface NodeDefinition {
  input: { required: Record<string, InputSpec>; optional?: Record<string, InputSpec>; hidden?: Record<string, string> };
  input_order: { required: string[]; optional?: string[]; hidden?: string[] };
  output: string[];
  output_is_list: boolean[];
  output_name: string[];
  name: string;
  display_name: string;
  description: string;
  python_module: string;
  category: string;
  output_node: boolean;
  deprecated: boolean;
  experimental: boolean;
  api_node: boolean;
}

/** How the emulator runs a node class (not part of `object_info`). */
export interface NodeBehaviour {
  /** Reports `progress` steps, with binary previews and progress text. */
  progress: boolean;
  /** Writes an image: `output` (final) or `temp` (preview). */
  save?: 'output' | 'temp';
  /** Calls a partner service: needs `extra_data.api_key_platform_org`. */
  partner?: boolean;
}

const HIDDEN = { hidden: { prompt: 'PROMPT', extra_pnginfo: 'EXTRA_PNGINFO' } };

function def(
  name: string,
  display: string,
  category: string,
  required: Record<string, InputSpec>,
  output: string[],
  extra: Partial<NodeDefinition> = {},
): NodeDefinition {
  const optional = extra.input?.optional;
  return {
    input: { required, ...(optional ? { optional } : {}), ...(extra.input?.hidden ? { hidden: extra.input.hidden } : {}) },
    input_order: {
      required: Object.keys(required),
      ...(optional ? { optional: Object.keys(optional) } : {}),
      ...(extra.input?.hidden ? { hidden: Object.keys(extra.input.hidden) } : {}),
    },
    output,
    output_is_list: output.map(() => false),
    output_name: [...output],
    name,
    display_name: display,
    description: extra.description ?? '',
    python_module: extra.python_module ?? 'nodes',
    category,
    output_node: extra.output_node ?? false,
    deprecated: false,
    experimental: false,
    api_node: extra.api_node ?? false,
  };
}

/** Behaviour of each class the emulator knows. */
export const NODE_BEHAVIOUR: Readonly<Record<string, NodeBehaviour>> = {
  LoadImage: { progress: false },
  EmptyImage: { progress: false },
  ImageInvert: { progress: true },
  ImageBlur: { progress: true },
  ImageScale: { progress: true },
  SaveImage: { progress: true, save: 'output' },
  PreviewImage: { progress: false, save: 'temp' },
  PartnerRelightNode: { progress: true, partner: true },
};

/**
 * The catalogue. `LoadImage.image` lists the uploaded input files, as the
 * real server lists its input directory.
 */
export function buildObjectInfo(inputNames: readonly string[]): Record<string, NodeDefinition> {
  return {
    LoadImage: def('LoadImage', 'Load Image', 'image', { image: [[...inputNames], { image_upload: true }] }, ['IMAGE', 'MASK']),
    EmptyImage: def(
      'EmptyImage',
      'EmptyImage',
      'image',
      {
        width: ['INT', { default: 512, min: 1, max: 16384, step: 1 }],
        height: ['INT', { default: 512, min: 1, max: 16384, step: 1 }],
        batch_size: ['INT', { default: 1, min: 1, max: 4096 }],
        color: ['INT', { default: 0, min: 0, max: 16777215, step: 1, display: 'color' }],
      },
      ['IMAGE'],
    ),
    ImageInvert: def('ImageInvert', 'Invert Image', 'image', { image: ['IMAGE'] }, ['IMAGE']),
    ImageBlur: def(
      'ImageBlur',
      'Image Blur',
      'image/postprocessing',
      {
        image: ['IMAGE', {}],
        blur_radius: ['INT', { default: 1, min: 1, max: 31, step: 1 }],
        sigma: ['FLOAT', { default: 1.0, min: 0.1, max: 10.0, step: 0.1 }],
      },
      ['IMAGE'],
      { python_module: 'comfy_extras.nodes_post_processing' },
    ),
    ImageScale: def(
      'ImageScale',
      'Upscale Image',
      'image/upscaling',
      {
        image: ['IMAGE'],
        upscale_method: [['nearest-exact', 'bilinear', 'area', 'bicubic', 'lanczos']],
        width: ['INT', { default: 512, min: 0, max: 16384, step: 1 }],
        height: ['INT', { default: 512, min: 0, max: 16384, step: 1 }],
        crop: [['disabled', 'center']],
      },
      ['IMAGE'],
    ),
    SaveImage: def(
      'SaveImage',
      'Save Image',
      'image',
      { images: ['IMAGE', { tooltip: 'The images to save.' }], filename_prefix: ['STRING', { default: 'PlatformUI', tooltip: 'The prefix for the file to save.' }] },
      [],
      { output_node: true, input: { required: {}, ...HIDDEN }, description: 'Saves the input images to your output directory.' },
    ),
    PreviewImage: def('PreviewImage', 'Preview Image', 'image', { images: ['IMAGE'] }, [], {
      output_node: true,
      input: { required: {}, ...HIDDEN },
      description: 'Saves the input images to your temp directory.',
    }),
    PartnerRelightNode: def(
      'PartnerRelightNode',
      'Relight Image (Partner)',
      'api node/image/Partner',
      { image: ['IMAGE'], prompt: ['STRING', { multiline: true, default: '' }] },
      ['IMAGE'],
      {
        api_node: true,
        python_module: 'comfy_api_nodes.nodes_partner',
        description: 'Relights an image through a partner service. Needs the account API key in extra_data.api_key_platform_org.',
        input: { required: {}, optional: { strength: ['FLOAT', { default: 1, min: 0, max: 2, step: 0.05 }] } },
      },
    ),
  };
}

// ---------------------------------------------------------------------------
// Validation

/** A workflow node after validation. */
export interface PromptNode {
  class_type: string;
  inputs: Record<string, unknown>;
  [extra: string]: unknown;
}

/** A validated workflow: what to execute and in which order. */
export interface ValidatedPrompt {
  prompt: Record<string, PromptNode>;
  /** Node ids to execute (reachable from an output node), in topological order. */
  order: string[];
  /** Output node ids, sorted. */
  outputs: string[];
  /** Partner nodes among `order`. */
  partnerNodes: string[];
}

/** One entry of `node_errors[id].errors`. */
export interface NodeErrorItem {
  type: string;
  message: string;
  details: string;
  extra_info: Record<string, unknown>;
}

/** The local server's rejection body. */
export interface PromptErrorBody {
  error: { type: string; message: string; details: string; extra_info: Record<string, unknown> };
  node_errors: Record<string, { errors: NodeErrorItem[]; dependent_outputs: string[]; class_type: string }>;
}

/** Thrown by {@link validatePrompt}; answered as HTTP 400 with {@link body}. */
export class PromptRejection extends Error {
  readonly body: PromptErrorBody;
  constructor(type: string, message: string, details = '', nodeErrors: PromptErrorBody['node_errors'] = {}, extraInfo: Record<string, unknown> = {}) {
    super(message);
    this.name = 'PromptRejection';
    this.body = { error: { type, message, details, extra_info: extraInfo }, node_errors: nodeErrors };
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A link: `[nodeId, outputIndex]`. Numeric node ids are accepted, as the real server does. */
function asLink(v: unknown): [string, number] | undefined {
  if (!Array.isArray(v) || v.length !== 2) return undefined;
  const [id, index] = v as [unknown, unknown];
  if ((typeof id !== 'string' && typeof id !== 'number') || typeof index !== 'number' || !Number.isInteger(index)) return undefined;
  return [String(id), index];
}

/** Orders node ids the way people number them: `2` before `10`. */
function byId(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}

/**
 * Validates a submission's `prompt` against `info`. `hasInputFile` decides
 * whether `LoadImage.image` names an uploaded file. Throws {@link PromptRejection}:
 *
 * - `no_prompt`: no `prompt`;
 * - `invalid_prompt`: not an object, a node without `class_type`/`inputs`, an
 *   unknown class, a dependency cycle;
 * - `prompt_no_outputs`: no output node;
 * - `prompt_outputs_failed_validation` with `node_errors`: missing required
 *   inputs, links to missing nodes or outputs, type mismatches, bad values.
 *   Any error rejects the whole submission (the real server may run the
 *   outputs that did validate; the emulator keeps it strict and simple).
 *
 * Only nodes an output depends on are validated and executed, as on the real server.
 */
export function validatePrompt(raw: unknown, info: Record<string, NodeDefinition>, hasInputFile: (name: string) => boolean): ValidatedPrompt {
  if (raw === undefined || raw === null) throw new PromptRejection('no_prompt', 'No prompt provided', 'No prompt provided');
  if (!isObject(raw)) throw new PromptRejection('invalid_prompt', 'Prompt must be an object keyed by node id', `Got ${Array.isArray(raw) ? 'an array' : typeof raw}`);
  const prompt = raw as Record<string, PromptNode>;
  const ids = Object.keys(prompt).sort(byId);
  for (const id of ids) {
    const node: unknown = prompt[id];
    if (!isObject(node) || typeof node.class_type !== 'string') {
      throw new PromptRejection('invalid_prompt', 'Cannot execute because a node is missing the class_type property.', `Node ID '#${id}'`);
    }
    if (!info[node.class_type]) {
      throw new PromptRejection('invalid_prompt', `Cannot execute because node ${node.class_type} does not exist.`, `Node ID '#${id}'`);
    }
    if (!isObject(node.inputs)) throw new PromptRejection('invalid_prompt', `Node '#${id}' (${node.class_type}) has no inputs object`, `Node ID '#${id}'`);
  }
  const outputs = ids.filter((id) => info[prompt[id]!.class_type]!.output_node);
  if (outputs.length === 0) throw new PromptRejection('prompt_no_outputs', 'Prompt has no outputs');

  const errors = new Map<string, NodeErrorItem[]>();
  const reach = new Map<string, Set<string>>(); // node id → outputs depending on it
  const visiting = new Set<string>();
  const done = new Set<string>();

  const visit = (id: string, output: string, path: string[]): void => {
    let deps = reach.get(id);
    if (!deps) reach.set(id, (deps = new Set()));
    deps.add(output);
    if (visiting.has(id)) {
      throw new PromptRejection('invalid_prompt', 'Dependency cycle detected', `Nodes ${[...path, id].map((n) => `'#${n}'`).join(' -> ')}`);
    }
    if (done.has(id)) {
      // Already validated; still propagate which outputs depend on its ancestors.
      for (const link of linksOf(prompt[id]!)) if (prompt[link[1][0]]) visit(link[1][0], output, [...path, id]);
      return;
    }
    visiting.add(id);
    const node = prompt[id]!;
    const nodeDef = info[node.class_type]!;
    const list: NodeErrorItem[] = [];
    const specs: Array<[string, InputSpec, boolean]> = [
      ...Object.entries(nodeDef.input.required).map(([k, s]): [string, InputSpec, boolean] => [k, s, true]),
      ...Object.entries(nodeDef.input.optional ?? {}).map(([k, s]): [string, InputSpec, boolean] => [k, s, false]),
    ];
    for (const [name, spec, required] of specs) {
      const value = node.inputs[name];
      if (value === undefined) {
        if (required) list.push(item('required_input_missing', 'Required input is missing', name, { input_name: name }));
        continue;
      }
      const link = asLink(value);
      if (link) {
        const [from, index] = link;
        const source = prompt[from];
        if (!source) {
          list.push(item('bad_linked_input', 'Linked node does not exist', `${name}: node '${from}' is not in the prompt`, { input_name: name, linked_node: [from, index] }));
          continue;
        }
        const sourceOutputs = info[source.class_type]!.output;
        const type = sourceOutputs[index];
        if (type === undefined || index < 0) {
          list.push(item('bad_linked_input', 'Linked output does not exist', `${name}: node '${from}' (${source.class_type}) has ${sourceOutputs.length} output(s), link asks for #${index}`, { input_name: name, linked_node: [from, index] }));
          continue;
        }
        const want = spec[0];
        const wantType = Array.isArray(want) ? 'COMBO' : want;
        if (wantType !== '*' && type !== '*' && type !== wantType) {
          list.push(item('return_type_mismatch', 'Return type mismatch between linked nodes', `${name}, received_type(${type}) mismatch input_type(${wantType})`, { input_name: name, received_type: type, linked_node: [from, index] }));
          continue;
        }
        visit(from, output, [...path, id]);
        continue;
      }
      const problem = checkValue(node.class_type, name, spec, value, hasInputFile);
      if (problem) list.push(problem);
    }
    // Emulator extras: `fail_with` / `fail_message` make the node fail when it runs.
    for (const extra of ['fail_with', 'fail_message']) {
      if (extra in node.inputs && typeof node.inputs[extra] !== 'string') {
        list.push(item('invalid_input_type', 'Failed to convert an input value to a STRING value', `${extra}, ${JSON.stringify(node.inputs[extra])}`, { input_name: extra }));
      }
    }
    if (list.length) errors.set(id, list);
    visiting.delete(id);
    done.add(id);
  };

  for (const out of outputs) visit(out, out, []);

  if (errors.size) {
    const nodeErrors: PromptErrorBody['node_errors'] = {};
    for (const [id, list] of [...errors].sort((a, b) => byId(a[0], b[0]))) {
      nodeErrors[id] = { errors: list, dependent_outputs: [...(reach.get(id) ?? [])].sort(byId), class_type: prompt[id]!.class_type };
    }
    throw new PromptRejection('prompt_outputs_failed_validation', 'Prompt outputs failed validation', '', nodeErrors);
  }

  const order = topoOrder([...reach.keys()], prompt);
  return { prompt, order, outputs, partnerNodes: order.filter((id) => info[prompt[id]!.class_type]!.api_node) };
}

function item(type: string, message: string, details: string, extra_info: Record<string, unknown> = {}): NodeErrorItem {
  return { type, message, details, extra_info };
}

function linksOf(node: PromptNode): Array<[string, [string, number]]> {
  const out: Array<[string, [string, number]]> = [];
  for (const [name, v] of Object.entries(node.inputs)) {
    const link = asLink(v);
    if (link) out.push([name, link]);
  }
  return out;
}

function checkValue(
  classType: string,
  name: string,
  spec: InputSpec,
  value: unknown,
  hasInputFile: (name: string) => boolean,
): NodeErrorItem | undefined {
  const [type, opts = {}] = spec;
  const extra = { input_name: name, input_config: spec, received_value: value };
  if (classType === 'LoadImage' && name === 'image') {
    // Like the real server: the choice list is the input directory, checked by a custom validator.
    if (typeof value !== 'string' || !hasInputFile(value)) {
      return item('custom_validation_failed', 'Custom validation failed for node', `image - Invalid image file: ${String(value)}`, { input_name: name });
    }
    return undefined;
  }
  if (Array.isArray(type)) {
    if (!type.includes(value as string)) {
      return item('value_not_in_list', 'Value not in list', `${name}: '${String(value)}' not in ${JSON.stringify(type)}`, extra);
    }
    return undefined;
  }
  switch (type) {
    case 'INT':
    case 'FLOAT': {
      if (typeof value !== 'number' || !Number.isFinite(value) || (type === 'INT' && !Number.isInteger(value))) {
        return item('invalid_input_type', `Failed to convert an input value to a ${type} value`, `${name}, ${JSON.stringify(value)}`, extra);
      }
      if (typeof opts.min === 'number' && value < opts.min) {
        return item('value_smaller_than_min', `Value ${value} smaller than min of ${opts.min}`, `${name}`, extra);
      }
      if (typeof opts.max === 'number' && value > opts.max) {
        return item('value_bigger_than_max', `Value ${value} bigger than max of ${opts.max}`, `${name}`, extra);
      }
      return undefined;
    }
    case 'STRING':
      return typeof value === 'string' ? undefined : item('invalid_input_type', 'Failed to convert an input value to a STRING value', `${name}, ${JSON.stringify(value)}`, extra);
    case 'BOOLEAN':
      return typeof value === 'boolean' ? undefined : item('invalid_input_type', 'Failed to convert an input value to a BOOLEAN value', `${name}, ${JSON.stringify(value)}`, extra);
    default:
      // IMAGE, MASK, …: only a link can provide them.
      return item('invalid_input_type', `Input ${name} expects a link to a ${type} output`, `${name}, ${JSON.stringify(value)}`, extra);
  }
}

/** Kahn's algorithm over the reachable nodes; ties broken by id so runs repeat. */
function topoOrder(ids: string[], prompt: Record<string, PromptNode>): string[] {
  const set = new Set(ids);
  const indegree = new Map<string, number>();
  const dependents = new Map<string, string[]>();
  for (const id of set) {
    const deps = new Set(linksOf(prompt[id]!).map(([, [from]]) => from).filter((from) => set.has(from)));
    indegree.set(id, deps.size);
    for (const from of deps) {
      let list = dependents.get(from);
      if (!list) dependents.set(from, (list = []));
      list.push(id);
    }
  }
  const ready = [...set].filter((id) => indegree.get(id) === 0).sort(byId);
  const order: string[] = [];
  while (ready.length) {
    const id = ready.shift()!;
    order.push(id);
    for (const next of dependents.get(id) ?? []) {
      const n = (indegree.get(next) ?? 0) - 1;
      indegree.set(next, n);
      if (n === 0) {
        ready.push(next);
        ready.sort(byId);
      }
    }
  }
  return order;
}
