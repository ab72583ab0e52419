/**
 * Named inputs: the inputs of a workflow a user changes between runs, by name
 * instead of node id (`workflow.inputs()`, `workflow.with()`,
 * `platformui run --set`).
 *
 * A name is `title.input`, `input` alone when one node has it, or `id.input`.
 * Names are matched whole (titles hold dots and spaces); where an id name and
 * a title name are spelled alike, the id wins, then the title, then the input
 * alone. When the editor's file names its interface (`extra.linearData`), the
 * names are those of its inputs only.
 *
 * @module
 */
import { closest } from '../args.ts';
import { InvalidArgumentError } from '../errors.ts';
import type { ObjectInfo } from '../schemas/cloud.ts';
import { describeValue } from '../schemas/describe.ts';
import { isObject } from '../schemas/rule.ts';
import type { ExposedInput } from './editor.ts';
import type { StoredNode } from './node-handle.ts';
import { asLink, label, titleOf } from './issue.ts';

/** One input of a workflow that can be set by name: what `workflow.inputs()` lists. */
export interface NamedInput {
  /**
   * Every name that designates this input alone, the most telling first:
   * `title.input` (`"Positive prompt.text"`), `input` (`"seed"`, when no other
   * input has that name) and, always, `id.input` (`"6.text"`).
   */
  names: string[];
  /** The node's id (`"6"`, or `"10:2"` inside a subgraph). */
  nodeId: string;
  /** The node's title in the editor (`_meta.title`). */
  title?: string;
  /** The node's class (`KSampler`). */
  classType: string;
  /** The input's name (`seed`). */
  input: string;
  /** `INT`, `FLOAT`, `STRING`, `BOOLEAN`, `COMBO` or another type, as `object_info` says; absent without it. */
  type?: string;
  /** The value the workflow holds now (a copy). */
  value: unknown;
  /** A combo's allowed values (from `object_info`). */
  values?: unknown[];
  /** The smallest value a number takes (from `object_info`). */
  min?: number;
  /** The largest value a number takes (from `object_info`). */
  max?: number;
  /** The editor's increment for a number (from `object_info`): a hint, not a check. */
  step?: number;
  /** The class's default (from `object_info`). */
  default?: unknown;
  /** A file the user uploads (`image_upload` …): set it to what `uploadImage()` answers. */
  upload?: true;
}

/** A workflow's nodes, as `toJSON()` gives them (each with its class). */
type Nodes = Record<string, StoredNode>;

/** Names → the inputs they designate, by kind of name: `[id names, title names, input names]`. */
type Index = Map<string, NamedInput[][]>;

/** The inputs of an interface and how to find one by name. */
interface Named {
  inputs: NamedInput[];
  index: Index;
}

/**
 * The settable inputs of a workflow (in id order; a copy the caller owns: its
 * values are handed out): those `exposed` names when it names any, else every
 * input that holds a value, not a link (with `object_info`, only those its
 * class declares), each with its names.
 */
export function namedInputs(workflow: Nodes, objectInfo: ObjectInfo | undefined, exposed?: readonly ExposedInput[]): NamedInput[] {
  return nameAll(settable(workflow, objectInfo, exposed)).inputs;
}

/**
 * The `[nodeId, input, value]` changes that `values` (by name) make, every
 * name checked before any change is returned: an unknown name, an ambiguous
 * one, or one outside the exposed interface throws {@link InvalidArgumentError}
 * naming the candidates. `undefined` values are skipped.
 */
export function resolveInputs(workflow: Nodes, objectInfo: ObjectInfo | undefined, exposed: readonly ExposedInput[] | undefined, values: unknown): Array<[string, string, unknown]> {
  if (!isObject(values)) throw new InvalidArgumentError(`must be an object of values by input name, like { seed: 42 }, got ${describeValue(values)}`, 'values');
  const shown = nameAll(settable(workflow, objectInfo, exposed));
  const changes: Array<[string, string, unknown]> = [];
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) continue;
    const found = lookup(shown.index, name);
    if (found.length === 1) {
      changes.push([found[0]!.nodeId, found[0]!.input, value]);
      continue;
    }
    if (found.length > 1) {
      const which = found.map((e) => `${JSON.stringify(e.names[0])} (${label(e.nodeId, e.classType, e.title)})`);
      throw new InvalidArgumentError(`names ${found.length} inputs: use ${which.join(' or ')}`, name);
    }
    if (exposed?.length && lookup(nameAll(settable(workflow, objectInfo, undefined)).index, name).length > 0) {
      throw new InvalidArgumentError(`not in this workflow's interface: its editor file exposes only ${list(shown.inputs)}`, name);
    }
    const hint = closest(name, shown.inputs.flatMap((e) => e.names));
    throw new InvalidArgumentError(`no such input${hint ? ` (did you mean ${JSON.stringify(hint)}?)` : ''}; the workflow's inputs: ${list(shown.inputs) || 'none'}`, name);
  }
  return changes;
}

/** `"a", "b", … (30 in all)`: the inputs by their first names. */
function list(inputs: readonly NamedInput[]): string {
  const shown = inputs.slice(0, 12).map((e) => JSON.stringify(e.names[0]));
  return shown.join(', ') + (inputs.length > shown.length ? `, … (${inputs.length} in all)` : '');
}

/** The inputs named by `exposed`, else every value (not a link) that `object_info`, when given, knows as an input of its class. */
function settable(workflow: Nodes, objectInfo: ObjectInfo | undefined, exposed: readonly ExposedInput[] | undefined): NamedInput[] {
  const pairs = exposed?.length
    ? exposed.filter((e) => Object.hasOwn(workflow, e.nodeId))
    : Object.entries(workflow).flatMap(([nodeId, node]) => Object.keys(node.inputs).map((input) => ({ nodeId, input })));
  const out: NamedInput[] = [];
  for (const { nodeId, input } of pairs) {
    const node = workflow[nodeId]!;
    const value = node.inputs[input];
    const cls: unknown = objectInfo && Object.hasOwn(objectInfo, node.class_type) ? objectInfo[node.class_type] : undefined;
    const def = isObject(cls) && isObject(cls.input) ? cls.input : undefined;
    const declared = [def?.required, def?.optional].find((s) => isObject(s) && Object.hasOwn(s, input)) as Record<string, unknown> | undefined;
    if (!exposed?.length && (asLink(value) || (def && !declared))) continue;
    const title = titleOf(node);
    const entry: NamedInput = { names: [], nodeId, ...(title !== undefined ? { title } : {}), classType: node.class_type, input, value };
    if (declared) describe(entry, declared[input]);
    out.push(entry);
  }
  return out;
}

/** Adds what `object_info` says of an input (`[type, options]`): its type, allowed values, range and default. */
function describe(entry: NamedInput, spec: unknown): void {
  const [type, options] = Array.isArray(spec) ? spec : [spec];
  const o = isObject(options) ? options : {};
  entry.type = Array.isArray(type) ? 'COMBO' : String(type);
  const values = Array.isArray(type) ? type : type === 'COMBO' && Array.isArray(o.options) ? o.options : undefined;
  if (values) entry.values = [...values];
  for (const k of ['min', 'max', 'step'] as const) if (typeof o[k] === 'number') entry[k] = o[k];
  if (o.default !== undefined) entry.default = o.default;
  if (Object.keys(o).some((k) => k.endsWith('_upload') && o[k] === true)) entry.upload = true;
}

/** Gives each input its names: the ones that designate it alone (`id.input` always). */
function nameAll(inputs: NamedInput[]): Named {
  const index: Index = new Map();
  const spell = (e: NamedInput) => [`${e.nodeId}.${e.input}`, e.title !== undefined ? `${e.title}.${e.input}` : undefined, e.input];
  for (const e of inputs) {
    spell(e).forEach((name, kind) => {
      if (name === undefined) return;
      const kinds = index.get(name) ?? [];
      (kinds[kind] ??= []).push(e);
      index.set(name, kinds);
    });
  }
  for (const e of inputs) {
    const [id, ...others] = spell(e);
    const alone = others.filter((n): n is string => n !== undefined && lookup(index, n).length === 1 && lookup(index, n)[0] === e);
    e.names = [...new Set([...alone, id!])];
  }
  return { inputs, index };
}

/** The inputs `name` designates: by id if any, else by title, else by input alone. */
function lookup(index: Index, name: string): NamedInput[] {
  return index.get(name)?.find((k) => k?.length) ?? [];
}
