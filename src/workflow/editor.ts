/**
 * The editor's saved workflow format → the API format, as the editor's own
 * graph-to-prompt step does it (`spec/editor-workflow.md`, sections 3–5):
 * widget values named by the class's layout (`editor-widgets.ts`), links
 * resolved through reroutes, primitive nodes, bypassed nodes and subgraph
 * boundaries, muted and virtual nodes dropped, then every link to a node
 * that was not emitted removed.
 *
 * Where the editor is tolerant (a wrong number of widget values, dangling
 * links) this refuses, naming the node: a silent repair would submit
 * something other than what the file shows (section 6).
 *
 * @module
 */
import type { ObjectInfo } from '../schemas/cloud.ts';
import { describeValue } from '../schemas/describe.ts';
import { isObject } from '../schemas/rule.ts';
import { layoutOf, promptNesting, sentValue, type ClassLayout, type WidgetSlot } from './editor-widgets.ts';
import type { WorkflowJSON } from './types.ts';
import { asLink, byId, label, unknownClass, type WorkflowIssue, type WorkflowIssueCode } from './issue.ts';
import type { EditorConversion, EditorOptions, ExposedInput } from './editor-options.ts';
import { savedNode, type SavedInput, type SavedLink, type SavedNode } from './editor-saved.ts';

export { EDITOR_OPTIONS, type EditorConversion, type EditorOptions, type ExposedInput } from './editor-options.ts';

/** A graph: the root, or a subgraph definition (with its boundary: which inner links each input and output holds). */
interface Graph {
  nodes: Map<string, SavedNode>;
  links: Map<string, SavedLink>;
  /** Per subgraph input, the inner links leaving it; per output, the inner link entering it. */
  inputs: string[][];
  outputs: Array<string | undefined>;
  /** Per link id, the inputs it enters (one in a sound file), in node order. */
  targets: Map<string, Array<[SavedNode, SavedInput]>>;
  /** Per subgraph input, its position among the promoted ones (those that reach a widget inside), else undefined. */
  promoted: Array<number | undefined>;
}

/** Where a graph is placed: the root, or inside an instance (by the path of instance ids). */
interface Scope {
  graph: Graph;
  path: string;
  parent?: { scope: Scope; instance: SavedNode };
}

/** The input a link is resolved for: where an error is reported. */
interface Target {
  key: string;
  node: SavedNode;
  input: string;
}

/** What a link resolves to: an output of an emitted (or muted) node, a subgraph input left unconnected, or nothing. */
type Origin = { key: string; slot: number } | { unconnected: Scope; index: number } | undefined;

const VIRTUAL = new Set(['Note', 'MarkdownNote', 'Reroute', 'PrimitiveNode']);
const MUTED = 2;
const BYPASS = 4;
const SUBGRAPH_INPUT = '-10';
/**
 * A chain of reroutes, bypassed nodes and subgraph boundaries longer than this is a loop. Each hop costs
 * stack: 10 000 overflowed it before the loop was seen, 2 000 already do in a test runner.
 */
const MAX_HOPS = 300;
/** `{a|b}` choices nested deeper than this in a dynamic prompt are refused (each level is a recursion). */
const MAX_NESTING = 100;

/**
 * Converts a workflow saved by the editor (schema 0.4 or 1, subgraphs
 * included) into the API format, with the server's `object_info` to name
 * each widget value. Never modifies `saved`. Problems are returned, not
 * thrown: `Workflow.fromEditor` throws them, `validateWorkflow` lists them.
 */
export function convertEditorWorkflow(saved: unknown, objectInfo: ObjectInfo, options: EditorOptions = {}): EditorConversion {
  return new Conversion(objectInfo, options).run(saved);
}

class Conversion {
  readonly #info: ObjectInfo;
  readonly #options: EditorOptions;
  readonly #random: () => number;
  readonly #issues: WorkflowIssue[] = [];
  readonly #out = new Map<string, { inputs: Record<string, unknown>; class_type: string; _meta: { title: string } }>();
  /** Subgraph definitions by id (nested ones too). */
  readonly #defs = new Map<string, Graph>();
  /** Values PrimitiveNodes push into the widgets they feed, per graph and node (5.6). */
  readonly #pushed = new WeakMap<Graph, Map<string, Map<string, unknown>>>();

  constructor(info: ObjectInfo, options: EditorOptions) {
    this.#info = info;
    this.#options = options;
    this.#random = options.random ?? Math.random;
  }

  run(saved: unknown): EditorConversion {
    if (!isObject(saved) || !Array.isArray(saved.nodes) || !Array.isArray(saved.links)) {
      return { workflow: {}, issues: [whole('invalid_prompt', `the editor's saved format has "nodes" and "links" arrays, got ${describeValue(saved)}`)] };
    }
    const extra = isObject(saved.extra) ? saved.extra : {};
    this.#collectDefinitions(saved.definitions);
    const root = this.#graph(saved);
    const scope: Scope = { graph: root, path: '' };
    this.#emitGraph(scope);

    if (this.#issues.some((i) => i.severity === 'error')) return { workflow: {}, issues: this.#issues };
    const workflow: WorkflowJSON = {};
    for (const key of [...this.#out.keys()].sort(byId)) put(workflow, key, this.#out.get(key)!);
    // Clean-up (5.10): a link to a node that was not emitted (a muted one) is deleted, value or not.
    for (const node of Object.values(workflow)) {
      for (const [name, value] of Object.entries(node.inputs)) {
        const link = asLink(value);
        if (link && !Object.hasOwn(workflow, link[0])) delete node.inputs[name];
      }
    }
    const exposed = this.#exposed(extra.linearData, root, workflow);
    return { workflow, issues: this.#issues, ...(exposed ? { exposed } : {}) };
  }

  // ---- Reading the file ----

  #collectDefinitions(definitions: unknown): void {
    const list = isObject(definitions) && Array.isArray(definitions.subgraphs) ? definitions.subgraphs : [];
    for (const def of list) {
      if (!isObject(def) || typeof def.id !== 'string' || this.#defs.has(def.id)) continue;
      this.#defs.set(def.id, this.#graph(def));
      this.#collectDefinitions(def.definitions);
    }
  }

  #graph(source: Record<string, unknown>): Graph {
    const nodes = new Map<string, SavedNode>();
    for (const raw of Array.isArray(source.nodes) ? source.nodes : []) {
      if (!isObject(raw) || (typeof raw.id !== 'number' && typeof raw.id !== 'string')) continue;
      const node = savedNode(raw);
      nodes.set(node.id, node);
    }
    const links = new Map<string, SavedLink>();
    for (const raw of Array.isArray(source.links) ? source.links : []) {
      // Array form `[id, origin, slot, target, slot, type]` (0.4), object form (1, and inside subgraphs) (2.5).
      const [id, origin, slot] = Array.isArray(raw) ? raw : isObject(raw) ? [raw.id, raw.origin_id, raw.origin_slot] : [];
      if (id === undefined || id === null || origin === undefined || origin === null) continue;
      links.set(String(id), { origin: String(origin), slot: Number(slot) });
    }
    const boundary = (list: unknown) => (Array.isArray(list) ? list.map((b) => (isObject(b) && Array.isArray(b.linkIds) ? b.linkIds.map(String) : [])) : []);
    const targets = new Map<string, Array<[SavedNode, SavedInput]>>();
    for (const node of nodes.values()) for (const input of node.inputs) if (input.link !== undefined) targets.set(input.link, [...(targets.get(input.link) ?? []), [node, input]]);
    const inputs = boundary(source.inputs);
    // An instance saves one value per promoted input, in input order (2.8).
    let position = 0;
    const promoted = inputs.map((ids) => (ids.some((link) => targets.get(link)?.some(([, i]) => i.widget !== undefined)) ? position++ : undefined));
    const graph: Graph = { nodes, links, inputs, outputs: boundary(source.outputs).map((ids) => ids[0]), targets, promoted };
    this.#pushed.set(graph, this.#primitivePushes(graph));
    return graph;
  }

  /** What each PrimitiveNode with a connected output writes into the widgets it feeds (5.6). */
  #primitivePushes(graph: Graph): Map<string, Map<string, unknown>> {
    const pushed = new Map<string, Map<string, unknown>>();
    for (const node of graph.nodes.values()) {
      if (node.type !== 'PrimitiveNode' || !Array.isArray(node.values) || node.values.length === 0) continue;
      const links = (node.outputs[0] as { links?: unknown } | undefined)?.links;
      for (const id of Array.isArray(links) ? links : []) {
        const [target, input] = graph.targets.get(String(id))?.at(-1) ?? [];
        // Through a Reroute nothing is pushed: the reroute has no widget.
        if (!target || input?.widget === undefined || target.type === 'Reroute') continue;
        let values = pushed.get(target.id);
        if (!values) pushed.set(target.id, (values = new Map()));
        values.set(input.widget, node.values[0]);
      }
    }
    return pushed;
  }

  // ---- Emitting nodes (5.2) ----

  #emitGraph(scope: Scope): void {
    for (const node of scope.graph.nodes.values()) {
      if (VIRTUAL.has(node.type)) continue;
      const key = scope.path + node.id;
      const def = this.#defs.get(node.type);
      if (def) {
        if (contains(scope, node.type)) {
          this.#error('unsupported_node', key, node, `is an instance of subgraph ${node.type} inside that same subgraph: a subgraph cannot contain itself`);
          continue;
        }
        // The newest editor does not expand a muted or bypassed instance (5.9).
        if (node.mode !== MUTED && node.mode !== BYPASS) this.#emitGraph({ graph: def, path: `${key}:`, parent: { scope, instance: node } });
        continue;
      }
      if (node.mode === MUTED || node.mode === BYPASS) continue;
      if (/^workflow[>/]/.test(node.type)) {
        this.#error('unsupported_node', key, node, 'is a legacy group node, which only the editor expands: convert it to a subgraph in the editor (or export the API format)');
        continue;
      }
      const layout = layoutOf(this.#info, node.type);
      if (!layout) {
        this.#issues.push(unknownClass(key, node.type, node.title, this.#info, this.#options.packs));
        continue;
      }
      if (layout.unsupported) {
        this.#error('unsupported_node', key, node, `cannot be converted as the editor would: ${layout.unsupported}`);
        continue;
      }
      this.#emitNode(scope, node, key, layout);
    }
  }

  #emitNode(scope: Scope, node: SavedNode, key: string, layout: ClassLayout): void {
    const inputs: Record<string, unknown> = {};
    const values = this.#widgetValues(node, key, layout);
    if (!values) return;
    const pushed = this.#pushed.get(scope.graph)?.get(node.id);
    const sent = (slot: WidgetSlot, value: unknown): unknown => {
      if (slot.dynamicPrompts && typeof value === 'string' && promptNesting(value) > MAX_NESTING) {
        this.#error('unsupported_node', key, node, `${slot.name}: its {a|b} choices nest more than ${MAX_NESTING} deep`, { input: slot.name });
        return value;
      }
      return sentValue(slot, copied(value), this.#random);
    };
    layout.slots.forEach((slot, i) => {
      if (!slot.sent) return;
      const value = pushed?.has(slot.name) ? pushed.get(slot.name) : values[i];
      // A preview-only widget sends nothing (its value is undefined, dropped by JSON).
      if (value !== undefined) put(inputs, slot.name, sent(slot, value));
    });
    for (const input of node.inputs) {
      if (input.link === undefined) continue;
      const origin = this.#resolveLink(scope, input.link, input.type, { key, node, input: input.name });
      if (origin && 'key' in origin) put(inputs, input.name, [origin.key, origin.slot]);
      else if (origin && input.widget !== undefined) {
        // A subgraph input left unconnected outside: a promoted widget sends the instance's value (5.9).
        const value = promotedValue(origin.unconnected, origin.index);
        const slot = layout.slots.find((s) => s.sent && s.name === input.name);
        if (value !== undefined && slot) put(inputs, input.name, sent(slot, value));
      }
    }
    const title = node.title || displayName(this.#info, node.type);
    this.#out.set(key, { inputs, class_type: node.type, _meta: { title } });
  }

  /** The node's saved values laid out slot by slot (5.5.1–5.5.3), or `undefined` after an error. */
  #widgetValues(node: SavedNode, key: string, layout: ClassLayout): unknown[] | undefined {
    const { slots } = layout;
    if (isObject(node.values)) {
      // Object form (5.5.2): by widget name; a missing name keeps the widget's initial value.
      const byName = node.values;
      return slots.map((s) => (Object.hasOwn(byName, s.name) ? byName[s.name] : s.initial));
    }
    let values = Array.isArray(node.values) ? node.values : [];
    // Legacy forceInput placeholders (5.5.3): dropped when the list has exactly the old layout's length.
    if (values.length !== slots.length && values.length === layout.legacy.length) values = values.filter((_, i) => !layout.legacy[i]);
    // Trailing nulls beyond the layout are holes of widgets that are not saved.
    let end = values.length;
    while (end > slots.length && values[end - 1] === null) end--;
    if (end === slots.length) return values.slice(0, end);

    const names = slots.map((s) => s.name).join(', ');
    const counted = `widgets_values has ${values.length} value${values.length === 1 ? '' : 's'} for the ${slots.length} widget value${slots.length === 1 ? '' : 's'} this server's ${node.type} has (${names || 'none'})`;
    if (this.#options.widgetValues !== 'editor') {
      this.#error(
        'widget_values_mismatch',
        key,
        node,
        `${counted}: saved against another version of the node? The values would shift into the wrong inputs. Convert it as the editor does (defaults for missing values, extra ones dropped) with { widgetValues: 'editor' }`,
        { given: node.values, expected: slots.map((s) => s.name) },
      );
      return undefined;
    }
    const filled = slots.slice(values.length).filter((s) => s.sent);
    const change = end > slots.length ? `the last ${end - slots.length} dropped` : `${filled.map((s) => `${s.name} = ${JSON.stringify(s.initial)}`).join(', ') || 'companion values'} filled in`;
    this.#issues.push({ ...where(key, node), severity: 'warning', code: 'widget_values_mismatch', path: [key], given: node.values, expected: slots.map((s) => s.name), message: `${label(key, node.type, node.title)}: ${counted}: converted as the editor does, ${change}` });
    return slots.map((s, i) => (i < values.length ? values[i] : s.initial));
  }

  // ---- Resolving links (5.5.5–5.9) ----

  /** Where link `linkId` of `scope` really comes from, for `target`, an input of type `type`. */
  #resolveLink(scope: Scope, linkId: string, type: string, target: Target, hops = 0): Origin {
    const link = scope.graph.links.get(linkId);
    if (!link) return this.#broken(target, `is connected by link ${linkId}, which the file does not have (the editor would drop the connection: reconnect it there)`);
    // Number() of a missing or non-numeric slot is NaN, which the server would get as `null`.
    if (!Number.isInteger(link.slot) || link.slot < 0) return this.#broken(target, `is connected by link ${linkId}, which has no valid origin slot`);
    if (hops > MAX_HOPS) return this.#broken(target, 'is connected through a loop of reroutes or bypassed nodes');
    return this.#resolveOutput(scope, link.origin, link.slot, type, target, hops + 1);
  }

  #broken(target: Target, message: string): undefined {
    this.#error('broken_link', target.key, target.node, `${target.input}: ${message}`, { input: target.input });
    return undefined;
  }

  #resolveOutput(scope: Scope, originId: string, slot: number, type: string, target: Target, hops: number): Origin {
    if (originId === SUBGRAPH_INPUT) {
      // Into a subgraph: continue outside, from what feeds the instance's input (5.9).
      const parent = scope.parent;
      const input = parent?.instance.inputs[slot];
      if (!parent) return undefined;
      return input?.link === undefined ? { unconnected: scope, index: slot } : this.#resolveLink(parent.scope, input.link, input.type, target, hops);
    }
    const origin = scope.graph.nodes.get(originId);
    if (!origin) return this.#broken(target, `is connected to node ${originId}, which the file does not have`);
    const onward = (input: SavedInput | undefined): Origin => (input?.link === undefined ? undefined : this.#resolveLink(scope, input.link, type, target, hops));
    if (origin.type === 'Reroute') return onward(origin.inputs[0]);
    if (VIRTUAL.has(origin.type)) return undefined; // a PrimitiveNode pushed its value instead
    const def = this.#defs.get(origin.type);
    if (origin.mode === BYPASS) {
      // Resolved again from the chosen input, as that input: the next bypassed node matches its type, not the target's.
      const input = this.#bypassInput(origin, slot, type, def);
      return input?.link === undefined ? undefined : this.#resolveLink(scope, input.link, input.type, target, hops);
    }
    const originKey = scope.path + origin.id;
    // A muted node (or instance) resolves to itself: the clean-up then removes the input (5.7).
    if (origin.mode === MUTED || !def) return { key: originKey, slot };
    const inner = def.outputs[slot];
    if (inner === undefined) return undefined;
    return this.#resolveLink({ graph: def, path: `${originKey}:`, parent: { scope, instance: origin } }, inner, type, target, hops);
  }

  /** The input of a bypassed node that its output `k` passes through to an input of type `type` (5.8). */
  #bypassInput(node: SavedNode, k: number, type: string, def: Graph | undefined): SavedInput | undefined {
    const layout = def ? undefined : layoutOf(this.#info, node.type);
    // Run-time inputs: the class's sockets, then its widgets' sockets, then the file's extra inputs (2.3); an instance's are its own.
    const known = layout?.runtime ?? node.inputs.map((i) => ({ name: i.name, type: i.type }));
    const saved = new Map(node.inputs.map((i) => [i.name, i]));
    const runtime = [...known.map((r) => ({ name: r.name, type: r.type, link: saved.get(r.name)?.link })), ...node.inputs.filter((i) => !known.some((r) => r.name === i.name))];
    const output = layout?.outputs[k] ?? (typeof node.outputs[k]?.type === 'string' ? (node.outputs[k]!.type as string) : '*');
    const chosen =
      type === '*' || type === ''
        ? (runtime[k] ?? runtime[0])
        : runtime[k] && compatible(runtime[k]!.type, output) && compatible(runtime[k]!.type, type)
          ? runtime[k]
          : (runtime.find((i) => i.type === type) ?? runtime.find((i) => compatible(i.type, output) && compatible(i.type, type)));
    return chosen && { name: chosen.name, type: chosen.type, link: chosen.link };
  }

  /** `extra.linearData.inputs` as API ids: a root node's input, or the inner input a subgraph instance promotes. */
  #exposed(linear: unknown, root: Graph, workflow: WorkflowJSON): ExposedInput[] | undefined {
    const list = isObject(linear) && Array.isArray(linear.inputs) ? linear.inputs : [];
    const exposed: ExposedInput[] = [];
    for (const entry of list) {
      if (!Array.isArray(entry) || (typeof entry[0] !== 'number' && typeof entry[0] !== 'string') || typeof entry[1] !== 'string') continue;
      const [id, input] = [String(entry[0]), entry[1] as string];
      const node = root.nodes.get(id);
      const def = node && this.#defs.get(node.type);
      const found = def ? promotedTarget(this.#defs, def, node!, input, `${id}:`) : { nodeId: id, input };
      if (found && Object.hasOwn(workflow, found.nodeId)) exposed.push(found);
    }
    return exposed.length > 0 ? exposed : undefined;
  }

  #error(code: WorkflowIssueCode, key: string, node: SavedNode, message: string, extra: Pick<WorkflowIssue, 'given' | 'expected' | 'input'> = {}): void {
    const path = extra.input === undefined ? [key] : [key, 'inputs', extra.input];
    this.#issues.push({ ...where(key, node), severity: 'error', code, path, ...extra, message: `${label(key, node.type, node.title)}: ${message}` });
  }
}

/** Whether `scope` lies inside an instance of subgraph `type` (at any depth). */
function contains(scope: Scope, type: string): boolean {
  for (let s: Scope | undefined = scope; s?.parent; s = s.parent.scope) if (s.parent.instance.type === type) return true;
  return false;
}

/** The value an instance holds for its `index`-th input when that input is a promoted widget (2.8), else `undefined`. */
function promotedValue(scope: Scope, index: number): unknown {
  const instance = scope.parent?.instance;
  if (!instance || !Array.isArray(instance.values)) return undefined;
  const position = scope.graph.promoted[index];
  return position === undefined ? undefined : instance.values[position];
}

/**
 * The inner input that an instance's promoted widget `name` sets, as an API id and input name; through
 * nested instances to the node that holds the widget (`defs` has them; the conversion refused self-nesting).
 */
function promotedTarget(defs: ReadonlyMap<string, Graph>, def: Graph, instance: SavedNode, name: string, path: string): ExposedInput | undefined {
  const index = instance.inputs.findIndex((i) => i.name === name);
  for (const link of def.inputs[index] ?? []) {
    for (const [node, input] of def.targets.get(link) ?? []) {
      const inner = defs.get(node.type);
      if (inner) return promotedTarget(defs, inner, node, input.name, `${path}${node.id}:`);
      if (input.widget !== undefined) return { nodeId: path + node.id, input: input.widget };
    }
  }
  return undefined;
}

/** `target[key] = value` as an own member, even for `"__proto__"` (which assignment would take as the prototype). */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** A saved value the workflow may keep: lists and objects copied, so it shares nothing with the caller's file. */
const copied = (value: unknown): unknown => (typeof value === 'object' && value !== null ? structuredClone(value) : value);

/** The editor's slot-type test (LG): `*`, `""` and 0 match all; else case-insensitive equality or a shared member of comma lists. */
function compatible(a: string, b: string): boolean {
  if (!a || !b || a === '*' || b === '*') return true;
  const left = a.toLowerCase().split(',');
  const right = b.toLowerCase().split(',');
  return left.some((x) => right.includes(x));
}

/** The class's default title: `display_name`, else the class name (5.4). */
function displayName(info: ObjectInfo, classType: string): string {
  const name = (info[classType] as { display_name?: unknown } | undefined)?.display_name;
  return typeof name === 'string' && name !== '' ? name : classType;
}

function where(key: string, node: SavedNode): Pick<WorkflowIssue, 'nodeId' | 'classType' | 'title'> {
  return { nodeId: key, classType: node.type, ...(node.title !== undefined ? { title: node.title } : {}) };
}

const whole = (code: WorkflowIssueCode, message: string): WorkflowIssue => ({ severity: 'error', code, path: [], message });
