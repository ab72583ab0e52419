/**
 * `validateWorkflow()`: every mistake a server's `object_info` can reveal in
 * an API-format workflow, found before anything is sent (and paid for).
 *
 * It judges values as the server does: what the server converts (`"5"` for
 * an INT, `3` for a STRING) is a warning, what it rejects is an error.
 * Errors in nodes that no output depends on are warnings too: the server
 * never runs those nodes. The emulator rejects workflows with this same
 * function, so the two agree.
 *
 * @module
 */
import { checkOptions, closest, type OptionKeys } from '../args.ts';
import type { MissingPacks } from '../registry/missing-packs.ts';
import type { ObjectInfo } from '../schemas/cloud.ts';
import { describeValue, rangeText as boundsText } from '../schemas/describe.ts';
import { isObject } from '../schemas/rule.ts';
import { asLink, at, byId, isEditorFormat, label, outputsText, titleOf, unknownClass, type WorkflowIssue, type WorkflowIssueCode } from './issue.ts';

export type { WorkflowIssue, WorkflowIssueCode } from './issue.ts';

/** An input as `object_info` describes it, read once per class. */
interface InputSpec {
  /** `INT`, `IMAGE`, `IMAGE,MASK`, `*`, `COMBO` (a list of values), or a dynamic type (`COMFY_AUTOGROW_V3`). */
  type: string;
  required: boolean;
  min?: number;
  max?: number;
  /** The allowed values of a combo; `undefined` when the server fills them in (`remote`). */
  values?: readonly unknown[];
  valueSet?: ReadonlySet<unknown>;
  /** A file the user uploads (`image_upload` …): a name not listed may have been uploaded since. */
  upload: boolean;
  /** Takes several values: a list, sent wrapped as `{ __value__: [...] }`. */
  multiselect?: boolean;
}

interface ClassSpec {
  inputs: Map<string, InputSpec>;
  /** Output types, by index. */
  outputs: readonly string[];
  isOutput: boolean;
  /** Has inputs that expand into names object_info does not list (`COMFY_AUTOGROW_V3` …). */
  dynamic: boolean;
}

// Parsed once per object_info and class, on first use: a workflow touches a few of hundreds of classes.
const specCache = new WeakMap<object, Map<string, ClassSpec | null>>();

function classSpec(info: ObjectInfo, classType: string): ClassSpec | undefined {
  let byClass = specCache.get(info);
  if (!byClass) specCache.set(info, (byClass = new Map()));
  let spec = byClass.get(classType);
  if (spec === undefined) {
    spec = Object.hasOwn(info, classType) && isObject(info[classType]) ? parseClass(info[classType] as Record<string, unknown>) : null;
    byClass.set(classType, spec);
  }
  return spec ?? undefined;
}

function parseClass(def: Record<string, unknown>): ClassSpec {
  const inputs = new Map<string, InputSpec>();
  let dynamic = false;
  const input = isObject(def.input) ? def.input : {};
  for (const [section, required] of [['required', true], ['optional', false]] as const) {
    const specs = input[section];
    if (!isObject(specs)) continue;
    for (const [name, raw] of Object.entries(specs)) {
      if (!required && inputs.has(name)) continue; // listed twice: required wins, as in the generated types
      const spec = parseInput(raw, required);
      if (isDynamic(spec.type)) dynamic = true;
      inputs.set(name, spec);
    }
  }
  // Hidden inputs (`prompt`, `unique_id` …) are filled in by the server: giving one is not a mistake.
  if (isObject(input.hidden)) for (const name of Object.keys(input.hidden)) inputs.set(name, { type: '*', required: false, upload: false });
  const outputs = Array.isArray(def.output) ? def.output.map((o) => (typeof o === 'string' ? o : Array.isArray(o) ? 'COMBO' : '*')) : [];
  return { inputs, outputs, isOutput: def.output_node === true, dynamic };
}

function parseInput(raw: unknown, required: boolean): InputSpec {
  const [type, options] = Array.isArray(raw) ? raw : [raw];
  const o = isObject(options) ? options : {};
  const spec: InputSpec = { type: 'COMBO', required, upload: Object.keys(o).some((k) => k.endsWith('_upload') && o[k] === true), ...(o.multiselect === true ? { multiselect: true } : {}) };
  if (Array.isArray(type)) spec.values = type;
  else if (type === 'COMBO') spec.values = o.remote || !Array.isArray(o.options) ? undefined : o.options;
  else spec.type = typeof type === 'string' ? type : '*';
  // A match-type input takes what its template allows.
  if (spec.type === 'COMFY_MATCHTYPE_V3' && isObject(o.template) && typeof o.template.allowed_types === 'string') spec.type = o.template.allowed_types;
  if (spec.values) spec.valueSet = new Set(spec.values);
  if (typeof o.min === 'number') spec.min = o.min;
  if (typeof o.max === 'number') spec.max = o.max;
  return spec;
}

/** Options of {@link validateWorkflow}. */
export interface ValidateOptions {
  /**
   * Judge every node as if an output depended on it: no demotion of the
   * mistakes of unused nodes to warnings, and no `prompt_no_outputs` (for a
   * fragment, such as the node a builder is adding).
   */
  everyNode?: boolean;
  /**
   * What `registry.findMissingPacks(workflow, { objectInfo })` answered for
   * this workflow: each `unknown_class` issue then names the pack to install
   * (`issue.pack`), or says that no pack in the registry provides the class.
   */
  packs?: MissingPacks;
}

const VALIDATE_OPTIONS = { everyNode: 1, packs: 1 } as const satisfies OptionKeys<ValidateOptions>;

/**
 * Checks an API-format workflow against a server's `object_info` and returns
 * every issue at once: errors (the server would reject the workflow, or the
 * job would fail on it) and warnings (it would run, perhaps not as meant).
 * An empty list: all clear. With several outputs, the server still runs the
 * ones whose nodes are sound; an error anywhere an output depends on is an
 * error here all the same.
 *
 * @example
 * ```ts
 * const issues = validateWorkflow(workflow, await cloud.getObjectInfo());
 * for (const i of issues) console.log(i.severity, i.message);
 * // error #3 KSampler "Sampler": sampler_name: must be one of "euler", "euler_cfg_pp", … (59 values), got "eulr" (did you mean "euler"?)
 * ```
 */
export function validateWorkflow(workflow: unknown, objectInfo: ObjectInfo, options: ValidateOptions = {}): WorkflowIssue[] {
  checkOptions(options, VALIDATE_OPTIONS, 'validateWorkflow()', 'options.');
  const issues: WorkflowIssue[] = [];
  if (!isObject(workflow)) {
    return [whole('invalid_prompt', `a workflow must be an object of nodes keyed by id (the API format), got ${describeValue(workflow)}`)];
  }
  if (isEditorFormat(workflow)) {
    return [
      whole(
        'ui_format',
        'this is the editor\'s saved format (with "nodes" and "links" arrays), not the API format: convert it with the server\'s object_info (Workflow.fromEditor(json, objectInfo); cloud.validateWorkflow, submit and run convert it themselves), or export the API format in the editor with "Export (API)"',
      ),
    ];
  }
  const ids = Object.keys(workflow).sort(byId);
  const nodes = new Map<string, { classType: string; title?: string; inputs: Record<string, unknown>; spec?: ClassSpec }>();
  for (const id of ids) {
    const node = workflow[id];
    if (!isObject(node) || typeof node.class_type !== 'string' || !isObject(node.inputs)) {
      const missing = !isObject(node) ? `must be an object with class_type and inputs, got ${describeValue(node)}` : typeof node.class_type !== 'string' ? 'has no class_type' : 'has no inputs object';
      issues.push({ severity: 'error', code: 'invalid_prompt', path: [id], nodeId: id, message: `#${id}: ${missing}` });
      continue;
    }
    const title = titleOf(node);
    const spec = classSpec(objectInfo, node.class_type);
    nodes.set(id, { classType: node.class_type, ...(title !== undefined ? { title } : {}), inputs: node.inputs, ...(spec ? { spec } : {}) });
    if (!spec) issues.push(unknownClass(id, node.class_type, title, objectInfo, options.packs));
  }

  // The server runs only what an output node depends on; mistakes elsewhere cannot fail the run.
  const outputs = ids.filter((id) => nodes.get(id)?.spec?.isOutput);
  const reachable = new Set<string>();
  const stack = [...outputs];
  while (stack.length) {
    const id = stack.pop()!;
    if (reachable.has(id)) continue;
    reachable.add(id);
    for (const v of Object.values(nodes.get(id)?.inputs ?? {})) {
      const link = asLink(v);
      if (link && nodes.has(link[0])) stack.push(link[0]);
    }
  }
  if (!options.everyNode && outputs.length === 0 && nodes.size > 0 && ![...nodes.values()].some((n) => !n.spec)) {
    issues.push(whole('prompt_no_outputs', 'the workflow has no output node (SaveImage, PreviewImage, …): the server would run nothing ("Prompt has no outputs")'));
  }

  for (const [id, node] of nodes) {
    if (node.spec) checkNode(id, node, node.spec, nodes, !options.everyNode && !reachable.has(id) && outputs.length > 0, issues);
  }
  const cycle = findCycle(nodes);
  if (cycle) {
    // A cycle among nodes no output depends on never runs.
    const unused = !options.everyNode && outputs.length > 0 && !cycle.some((id) => reachable.has(id));
    issues.push({
      severity: unused ? 'warning' : 'error',
      code: 'dependency_cycle',
      path: [cycle[0]!],
      nodeId: cycle[0]!,
      given: cycle,
      message: `the links form a cycle: ${cycle.map((n) => `#${n}`).join(' → ')}${unused ? ' (no output depends on these nodes, so the server will not run them)' : ''}`,
    });
  }
  return issues;
}

function checkNode(
  id: string,
  node: { classType: string; title?: string; inputs: Record<string, unknown> },
  spec: ClassSpec,
  nodes: ReadonlyMap<string, { classType: string; spec?: ClassSpec }>,
  unused: boolean,
  out: WorkflowIssue[],
): void {
  const where = label(id, node.classType, node.title);
  const base = at(id, node.classType, node.title);
  const push = (severity: 'error' | 'warning', code: WorkflowIssueCode, input: string, message: string, extra: { given?: unknown; expected?: unknown } = {}) => {
    // The server never runs a node no output depends on: its mistakes cannot fail the run.
    const s = unused && severity === 'error' ? 'warning' : severity;
    const note = unused && severity === 'error' ? ' (no output depends on this node, so the server will not run it)' : '';
    out.push({ ...base, severity: s, code, path: [id, 'inputs', input], input, ...extra, message: `${where}: ${input}: ${message}${note}` });
  };
  for (const [name, input] of spec.inputs) {
    const value = node.inputs[name];
    if (value === undefined) {
      if (input.required && !isDynamic(input.type)) push('error', 'required_input_missing', name, `is required (${kindText(input)})`, { expected: input.type });
      continue;
    }
    // The server reads any list as a link `[nodeId, outputIndex]`.
    if (Array.isArray(value)) {
      const link = asLink(value);
      if (link) checkLink(name, input, link, nodes, push);
      else push('error', 'bad_linked_input', name, `is a list, which the server reads as a link: it must be ["<node id>", <output index>] (the id a string), got ${JSON.stringify(value).slice(0, 60)}`, { given: value });
      continue;
    }
    checkValue(name, input, unwrap(value), push);
  }
  if (spec.dynamic) return; // its inputs expand into names object_info does not list
  const known = [...spec.inputs.keys()];
  for (const name of Object.keys(node.inputs)) {
    if (spec.inputs.has(name)) continue;
    const hint = closest(name, known);
    const suggestion = hint ? ` (did you mean ${JSON.stringify(hint)}?)` : known.length <= 16 ? `; its inputs: ${known.join(', ')}` : '';
    // A plain value there is ignored, but a link is still passed on to the node, whose run then fails.
    if (Array.isArray(node.inputs[name])) push('error', 'unknown_input', name, `${node.classType} has no such input, and a link there fails the run${suggestion}`, { given: node.inputs[name] });
    else push('warning', 'unknown_input', name, `${node.classType} has no such input, so the server ignores it${suggestion}`, { given: node.inputs[name] });
  }
}

type Push = (severity: 'error' | 'warning', code: WorkflowIssueCode, input: string, message: string, extra?: { given?: unknown; expected?: unknown }) => void;

function checkLink(name: string, input: InputSpec, [from, index]: [string, number], nodes: ReadonlyMap<string, { classType: string; spec?: ClassSpec }>, push: Push): void {
  const source = nodes.get(from);
  if (!source) return push('error', 'bad_linked_input', name, `links to node #${from}, which is not in the workflow`, { given: [from, index] });
  if (!source.spec) return; // its unknown class is reported already
  // The server indexes outputs as Python does: -1 is the last.
  const type = source.spec.outputs[index < 0 ? source.spec.outputs.length + index : index];
  if (type === undefined) {
    const n = source.spec.outputs.length;
    return push('error', 'bad_linked_input', name, `links to output ${index} of #${from} ${source.classType}, which has ${outputsText(n)}`, {
      given: [from, index],
      expected: n,
    });
  }
  if (!typesFit(type, input.type)) {
    push('error', 'return_type_mismatch', name, `takes ${input.type}, but output ${index} of #${from} ${source.classType} is ${type}`, { given: type, expected: input.type });
  }
}

/** Whether an output of type `received` may feed an input of type `wanted`, as the server decides: `*` fits anything, comma-separated lists fit when they share a type. */
export function typesFit(received: string, wanted: string): boolean {
  // A dynamic type (a match-type node's output) is only known once the server runs the graph.
  if (received === wanted || received === '*' || wanted === '*' || isDynamic(wanted) || isDynamic(received)) return true;
  const wants = new Set(wanted.split(',').map((t) => t.trim()));
  return received.split(',').some((t) => wants.has(t.trim()));
}

function checkValue(name: string, input: InputSpec, value: unknown, push: Push): void {
  switch (input.type) {
    case 'INT':
    case 'FLOAT': {
      // The server converts with Python's int() / float(): strings it parses are warnings, the rest errors.
      let n: unknown = value;
      if (typeof value === 'string' || typeof value === 'boolean') {
        n = typeof value === 'boolean' ? Number(value) : pythonNumber(value, input.type === 'INT');
        // Not parsed (undefined): the error below.
        if (n !== undefined) push('warning', 'invalid_input_type', name, `is ${describeValue(value)}: the server converts it to ${n}, but send a number`, { given: value, expected: input.type });
      }
      if (typeof n !== 'number' || (Number.isNaN(n) && input.type === 'INT')) {
        return push('error', 'invalid_input_type', name, `must be ${kindText(input)}, got ${describeValue(value)}`, { given: value, expected: input.type });
      }
      let num = n;
      if (input.type === 'INT' && !Number.isInteger(num)) {
        push('warning', 'invalid_input_type', name, `must be an integer, got ${num}: the server truncates it to ${Math.trunc(num)}`, { given: value, expected: 'INT' });
        num = Math.trunc(num); // and checks the range after that
      }
      if (input.min !== undefined && num < input.min) push('error', 'value_smaller_than_min', name, `must be at least ${input.min}${rangeText(input, true)}, got ${num}`, { given: num, expected: input.min });
      else if (input.max !== undefined && num > input.max) push('error', 'value_bigger_than_max', name, `must be at most ${input.max}${rangeText(input, true)}, got ${num}`, { given: num, expected: input.max });
      return;
    }
    case 'STRING':
      if (typeof value === 'string') return;
      // The server applies str() to anything.
      return push('warning', 'invalid_input_type', name, `is ${describeValue(value)}: the server converts it to a string, but send a string`, { given: value, expected: 'STRING' });
    case 'BOOLEAN':
      if (typeof value === 'boolean') return;
      return push('warning', 'invalid_input_type', name, `must be true or false, got ${describeValue(value)}: the server reads it as ${Boolean(value)}`, { given: value, expected: 'BOOLEAN' });
    case 'COMBO': {
      if (!input.valueSet || !input.values) return; // the server fills the list in
      // A multiselect combo takes a list (unwrapped from `{ __value__ }`): each member is one of the values.
      if (input.multiselect && Array.isArray(value)) {
        for (const v of value) checkValue(name, { ...input, multiselect: false }, v, push);
        return;
      }
      if (input.valueSet.has(value)) return;
      const hint = typeof value === 'string' ? closest(value, input.values.filter((x): x is string => typeof x === 'string')) : undefined;
      const allowed = input.values.length === 0 ? 'one of the files or models this server has, and it lists none' : `one of ${listText(input.values)}`;
      const didYouMean = hint ? ` (did you mean ${JSON.stringify(hint)}?)` : '';
      if (input.upload) {
        // A file uploaded after object_info was read is not listed yet.
        push('warning', 'value_not_in_list', name, `${describeValue(value)} is not among the server's files (fine if uploaded since object_info was read)${didYouMean}`, { given: value, expected: input.values });
      } else {
        push('error', 'value_not_in_list', name, `must be ${allowed}, got ${describeValue(value)}${didYouMean}`, { given: value, expected: input.values });
      }
      return;
    }
    default:
      if (input.type === '*' || isDynamic(input.type)) return;
      // IMAGE, MODEL, LATENT …: only an output of another node can provide one.
      push('error', 'invalid_input_type', name, `takes ${input.type}, which only a link to another node's output can provide ([nodeId, outputIndex]), got ${describeValue(value)}`, { given: value, expected: input.type });
  }
}

/** The first cycle among the links, as a list of ids ending where it starts; `undefined` when there is none. */
function findCycle(nodes: ReadonlyMap<string, { inputs: Record<string, unknown> }>): string[] | undefined {
  const state = new Map<string, 1 | 2>(); // 1: on the current path, 2: done
  const path: string[] = [];
  const visit = (id: string): string[] | undefined => {
    state.set(id, 1);
    path.push(id);
    for (const v of Object.values(nodes.get(id)!.inputs)) {
      const link = asLink(v);
      if (!link || !nodes.has(link[0])) continue;
      const s = state.get(link[0]);
      if (s === 1) return [...path.slice(path.indexOf(link[0])), link[0]];
      if (s === undefined) {
        const found = visit(link[0]);
        if (found) return found;
      }
    }
    path.pop();
    state.set(id, 2);
    return undefined;
  };
  for (const id of nodes.keys()) {
    if (state.has(id)) continue;
    const found = visit(id);
    if (found) return found;
  }
  return undefined;
}

/** What Python's int() / float() make of a string, or `undefined` where they raise. */
function pythonNumber(text: string, int: boolean): number | undefined {
  const t = text.trim().replace(/(?<=\d)_(?=\d)/g, '');
  if (int) return /^[+-]?\d+$/.test(t) ? Number(t) : undefined;
  if (/^[+-]?(nan|inf|infinity)$/i.test(t)) return /nan/i.test(t) ? Number.NaN : t.startsWith('-') ? -Infinity : Infinity;
  return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t) ? Number(t) : undefined;
}

/** `{ "__value__": x }` is how the editor wraps a list value; the server unwraps it. */
const unwrap = (v: unknown): unknown => (isObject(v) && Object.keys(v).length === 1 && '__value__' in v ? v.__value__ : v);

/** A type the server's newer node API works out per workflow (`COMFY_AUTOGROW_V3`, `COMFY_MATCHTYPE_V3` …): not judged. */
const isDynamic = (type: string): boolean => /^COMFY_\w+_V3$/.test(type);

const whole = (code: WorkflowIssueCode, message: string): WorkflowIssue => ({ severity: 'error', code, path: [], message });

function kindText(input: InputSpec): string {
  switch (input.type) {
    case 'INT':
      return `an integer${rangeText(input)}`;
    case 'FLOAT':
      return `a number${rangeText(input)}`;
    case 'STRING':
      return 'a string';
    case 'BOOLEAN':
      return 'true or false';
    case 'COMBO':
      return input.values ? `one of ${listText(input.values)}` : 'one of the values the server lists';
    default:
      return `a link to a ${input.type} output`;
  }
}

/** The input's bounds as `explain.ts` words them: ` from 0 to 100`, or ` (from 0 to 100)`. */
function rangeText(input: InputSpec, parenthesised = false): string {
  const text = boundsText(input.min, input.max);
  return parenthesised && text ? ` (${text.slice(1)})` : text;
}

const MAX_LISTED = 8;

function listText(values: readonly unknown[]): string {
  const shown = values.slice(0, MAX_LISTED).map((v) => (typeof v === 'string' ? JSON.stringify(v) : String(v)));
  return `${shown.join(', ')}${values.length > MAX_LISTED ? `, … (${values.length} values)` : ''}`;
}
