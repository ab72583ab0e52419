/**
 * The emulated cloud's node catalogue (`GET /api/object_info`, in the real
 * format of `fixtures/local-server/object_info.json`) and the validation of
 * submitted workflows against it, answering like the local counterpart
 * server does (`07_errors`): `{ error: { type, message, details, extra_info }, node_errors }`.
 *
 * @module
 */
import type { ObjectInfo } from '../schemas/cloud.ts';
import { asLink, byId, type WorkflowIssue } from '../workflow/issue.ts';
import { validateWorkflow } from '../workflow/validate.ts';

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
  /**
   * Outputs other than a list of `images` (see `cloud-jobs.ts`): `animated`
   * adds `animated: [true]` beside the image (`SaveAnimatedPNG`); `gifs`
   * writes a GIF listed under `gifs`, with the extra members a video pack
   * sends (`VHS_VideoCombine`; `save_output: false` makes it a temp file);
   * `text` writes no file and says its `source` as `text: ['…']` (`PreviewAny`).
   */
  output?: 'animated' | 'gifs' | 'text';
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
  SaveAnimatedPNG: { progress: true, save: 'output', output: 'animated' },
  VHS_VideoCombine: { progress: true, save: 'output', output: 'gifs' },
  PreviewAny: { progress: false, output: 'text' },
};

/**
 * The catalogue. `LoadImage.image` lists the uploaded input files, as the
 * real server lists its input directory. Besides images, three classes give
 * the other kinds of output a server sends: `SaveAnimatedPNG` (an image and
 * `animated: [true]`, as the real class), `VHS_VideoCombine` (a GIF under
 * `gifs`, as the custom video pack's node, with its required inputs; GIF only)
 * and `PreviewAny` (text, no file).
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
    SaveAnimatedPNG: def(
      'SaveAnimatedPNG',
      'SaveAnimatedPNG',
      'image/animation',
      {
        images: ['IMAGE', {}],
        filename_prefix: ['STRING', { default: 'PlatformUI', multiline: false }],
        fps: ['FLOAT', { default: 6.0, min: 0.01, max: 1000.0, step: 0.01 }],
        compress_level: ['INT', { default: 4, min: 0, max: 9 }],
      },
      [],
      { output_node: true, input: { required: {}, ...HIDDEN }, python_module: 'comfy_extras.nodes_images' },
    ),
    VHS_VideoCombine: def(
      'VHS_VideoCombine',
      'Video Combine 🎥🅥🅗🅢',
      'Video Helper Suite 🎥🅥🅗🅢',
      {
        images: ['IMAGE'],
        frame_rate: ['FLOAT', { default: 8, min: 1, step: 1 }],
        loop_count: ['INT', { default: 0, min: 0, max: 100, step: 1 }],
        filename_prefix: ['STRING', { default: 'AnimateDiff' }],
        format: [['image/gif']],
        pingpong: ['BOOLEAN', { default: false }],
        save_output: ['BOOLEAN', { default: true }],
      },
      ['VHS_FILENAMES'],
      { output_node: true, input: { required: {}, ...HIDDEN }, python_module: 'custom_nodes.ComfyUI-VideoHelperSuite' },
    ),
    PreviewAny: def('PreviewAny', 'Preview as Text', 'utils', { source: ['*', {}] }, [], { output_node: true, python_module: 'comfy_extras.nodes_preview_any' }),
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

/**
 * Validates a submission's `prompt` against `info` with the SDK's own
 * {@link validateWorkflow}, so the emulator rejects exactly what the client
 * would catch, and answers in the local server's words. `hasInputFile`
 * decides whether `LoadImage.image` names an uploaded file (the server's
 * custom check). Throws {@link PromptRejection}:
 *
 * - `no_prompt`: no `prompt`;
 * - `invalid_prompt`: not an object, a node without `class_type`/`inputs`, an
 *   unknown class, a dependency cycle, the editor's saved format;
 * - `prompt_no_outputs`: no output node;
 * - `prompt_outputs_failed_validation` with `node_errors`: every error of the
 *   nodes an output depends on. Any error rejects the whole submission (the
 *   real server may run the outputs that did validate; the emulator keeps it
 *   strict and simple).
 *
 * Only nodes an output depends on are executed, as on the real server.
 */
export function validatePrompt(raw: unknown, info: Record<string, NodeDefinition>, hasInputFile: (name: string) => boolean): ValidatedPrompt {
  if (raw === undefined || raw === null) throw new PromptRejection('no_prompt', 'No prompt provided', 'No prompt provided');
  const issues = validateWorkflow(raw, info as unknown as ObjectInfo);
  const whole = issues.find((i) => i.severity === 'error' && (i.code === 'ui_format' || i.code === 'invalid_prompt' || i.code === 'unknown_class' || i.code === 'prompt_no_outputs'));
  if (whole) {
    if (whole.code === 'prompt_no_outputs') throw new PromptRejection('prompt_no_outputs', 'Prompt has no outputs');
    if (whole.code === 'unknown_class') throw new PromptRejection('invalid_prompt', `Cannot execute because node ${whole.classType} does not exist.`, `Node ID '#${whole.nodeId}'`);
    throw new PromptRejection('invalid_prompt', whole.message, whole.nodeId ? `Node ID '#${whole.nodeId}'` : '');
  }
  // The local server answers a cycle an output depends on with an empty node_errors.
  if (issues.some((i) => i.code === 'dependency_cycle' && i.severity === 'error')) throw new PromptRejection('prompt_outputs_failed_validation', 'Prompt outputs failed validation');

  const prompt = raw as Record<string, PromptNode>;
  const ids = Object.keys(prompt).sort(byId);
  const outputs = ids.filter((id) => info[prompt[id]!.class_type]!.output_node);
  // Which outputs depend on each node: the `dependent_outputs` of its errors.
  const reach = new Map<string, Set<string>>();
  for (const out of outputs) {
    const stack = [out];
    while (stack.length) {
      const id = stack.pop()!;
      let deps = reach.get(id);
      if (!deps) reach.set(id, (deps = new Set()));
      if (deps.has(out)) continue;
      deps.add(out);
      for (const [, [from]] of linksOf(prompt[id]!)) if (prompt[from]) stack.push(from);
    }
  }
  const errors = new Map<string, NodeErrorItem[]>();
  const add = (id: string, item: NodeErrorItem) => {
    let list = errors.get(id);
    if (!list) errors.set(id, (list = []));
    list.push(item);
  };
  for (const i of issues) {
    if (i.severity !== 'error' || !i.nodeId || !i.input) continue;
    add(i.nodeId, serverItem(i, info[prompt[i.nodeId]!.class_type]!));
  }
  for (const id of reach.keys()) {
    const node = prompt[id]!;
    // The server's custom check: the choice list is the input directory, which uploads change.
    if (node.class_type === 'LoadImage' && (typeof node.inputs.image !== 'string' || !hasInputFile(node.inputs.image))) {
      add(id, item('custom_validation_failed', 'Custom validation failed for node', `image - Invalid image file: ${String(node.inputs.image)}`, { input_name: 'image' }));
    }
    // Emulator extras: `fail_with` / `fail_message` make the node fail when it runs.
    for (const extra of ['fail_with', 'fail_message']) {
      if (extra in node.inputs && typeof node.inputs[extra] !== 'string') {
        add(id, item('invalid_input_type', 'Failed to convert an input value to a STRING value', `${extra}, ${JSON.stringify(node.inputs[extra])}`, { input_name: extra }));
      }
    }
  }
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

/** An SDK issue in the local server's words (`07_errors`). */
function serverItem(i: WorkflowIssue, def: NodeDefinition): NodeErrorItem {
  const name = i.input!;
  const spec = def.input.required[name] ?? def.input.optional?.[name];
  const value = i.given;
  const extra = { input_name: name, ...(spec ? { input_config: spec } : {}), received_value: value };
  switch (i.code) {
    case 'required_input_missing':
      return item('required_input_missing', 'Required input is missing', name, { input_name: name });
    case 'bad_linked_input': {
      const link = asLink(value);
      if (!link) return item('bad_linked_input', 'Bad linked input, must be a length-2 list of [string, int]', `${name}: ${JSON.stringify(value)}`, { input_name: name, received_value: value });
      const [from, index] = link;
      return i.expected === undefined
        ? item('bad_linked_input', 'Linked node does not exist', `${name}: node '${from}' is not in the prompt`, { input_name: name, linked_node: value })
        : item('bad_linked_input', 'Linked output does not exist', `${name}: node '${from}' has ${String(i.expected)} output(s), link asks for #${index}`, { input_name: name, linked_node: value });
    }
    case 'return_type_mismatch':
      return item('return_type_mismatch', 'Return type mismatch between linked nodes', `${name}, received_type(${String(value)}) mismatch input_type(${String(i.expected)})`, { input_name: name, received_type: value });
    case 'value_not_in_list':
      return item('value_not_in_list', 'Value not in list', `${name}: '${String(value)}' not in ${JSON.stringify(i.expected)}`, extra);
    case 'value_smaller_than_min':
      return item('value_smaller_than_min', `Value ${String(value)} smaller than min of ${String(i.expected)}`, name, extra);
    case 'value_bigger_than_max':
      return item('value_bigger_than_max', `Value ${String(value)} bigger than max of ${String(i.expected)}`, name, extra);
    case 'unknown_input':
      return item('invalid_input_type', `Input ${name} is not an input of ${def.name}, and a link there fails the run`, `${name}, ${JSON.stringify(value)}`, { input_name: name });
    default:
      return item('invalid_input_type', `Failed to convert an input value to a ${String(i.expected)} value`, `${name}, ${JSON.stringify(value)}`, extra);
  }
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
