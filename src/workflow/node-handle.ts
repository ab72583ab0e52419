/**
 * `NodeHandle`: one node of a `Workflow`, as `add()`, `node()` and `nodes()`
 * return it: reads the node, sets its inputs through the workflow (so they
 * are checked), and links its outputs by index or `output_name`.
 *
 * @module
 */
import { closest } from '../args.ts';
import { InvalidArgumentError } from '../errors.ts';
import type { ObjectInfo } from '../schemas/cloud.ts';
import { describeValue } from '../schemas/describe.ts';
import type { InputsOf, NodeTypes, OutputLink, OutputOf, Untyped } from './types.ts';
import { label, outputsText, titleOf } from './issue.ts';
import type { Workflow } from './workflow.ts';

/**
 * Makes Node's `console.log` and `util.inspect` show `target` as `show`
 * returns (Node's key, read without importing `node:util`: this runs in a
 * browser too; Node hands its own `inspect` in). Set on each object, not in a
 * class body, where a computed key keeps the class in every bundle (bundlers
 * cannot prove `Symbol.for()` free of side effects).
 *
 * @internal
 */
export function inspectAs(target: object, show: (depth: number, options: object, inspect: (value: unknown, options: object) => string) => string): void {
  Object.defineProperty(target, Symbol.for('nodejs.util.inspect.custom'), { value: show });
}

/** A node as stored: its JSON, owned by the workflow (never an object the caller still holds). */
export interface StoredNode {
  class_type: string;
  inputs: Record<string, unknown>;
  _meta?: Record<string, unknown>;
  [member: string]: unknown;
}

/**
 * A node of a {@link Workflow}: what `add()`, `node()` and `nodes()` return.
 * Reads and changes the workflow's node, and links its outputs into other
 * nodes' inputs with {@link out}.
 *
 * @example
 * ```ts
 * const load = wf.add('LoadImage', { image: 'cat.png' });
 * wf.add('ImageInvert', { image: load.out('IMAGE') });
 * load.set('image', await cloud.uploadImage('./dog.png'));
 * ```
 */
export class NodeHandle<N extends NodeTypes<N> = Untyped, C extends string = string> {
  /** The node's id: the key of the workflow's JSON. */
  readonly id: string;
  readonly #workflow: Workflow<N>;
  readonly #node: StoredNode;

  /** Made by a {@link Workflow}: `wf.add()`, `wf.node()`, `wf.nodes()`. */
  constructor(workflow: Workflow<N>, id: string, node: StoredNode) {
    this.#workflow = workflow;
    this.id = id;
    this.#node = node;
    // console.log(wf.outputNodes()) shows [ #4 SaveImage ]: the node as the SDK's messages name it.
    inspectAs(this, () => label(id, node.class_type, titleOf(node)));
  }

  /** The node's class (`class_type`). */
  get classType(): C {
    return this.#node.class_type as C;
  }

  /** The node's title in the editor (`_meta.title`), if it has one. */
  get title(): string | undefined {
    return titleOf(this.#node);
  }

  /**
   * The node's inputs as they are now (literals, and links as `[nodeId, outputIndex]`): a deep copy; change them with {@link set}.
   *
   * @example
   * ```ts
   * console.log(wf.node({ title: 'Positive' }).inputs.text);
   * ```
   */
  get inputs(): Readonly<Record<string, unknown>> {
    return copyJSON(this.#node.inputs, 'inputs');
  }

  /**
   * A link to one of the node's outputs, by index (`0`) or by name
   * (`'IMAGE'`, the class's `output_name`: naming needs the workflow's
   * `object_info`). With generated types the link carries the output's type,
   * so linking it into an input of another type does not compile.
   *
   * @example
   * ```ts
   * const ckpt = wf.add('CheckpointLoaderSimple', { ckpt_name: 'sd15.safetensors' });
   * wf.add('CLIPTextEncode', { clip: ckpt.out('CLIP'), text: 'a cat' });
   * wf.add('VAEDecode', { samples: sampler.out(0), vae: ckpt.out(2) });
   * ```
   */
  out<O extends OutputOf<N, C>>(output: O): OutputLink<N, C, O> {
    return [this.id, outputIndex(this.#workflow.objectInfo, this.id, this.#node.class_type, output)] as unknown as OutputLink<N, C, O>;
  }

  /**
   * Sets one of the node's inputs, as `Workflow.set` does (checked against `object_info`; `undefined` removes it).
   *
   * @example
   * ```ts
   * wf.node({ classType: 'KSampler' }).set('steps', 30).set('cfg', 6.5);
   * ```
   */
  set<K extends keyof InputsOf<N, C> & string>(input: K, value: InputsOf<N, C>[K]): this {
    this.#workflow.set(this.id, input, value);
    return this;
  }
}

/** The index of `output` (an index or an `output_name`) of node `id`, checked against `object_info` when there is one. */
function outputIndex(info: ObjectInfo | undefined, id: string, classType: string, output: unknown): number {
  const def = info?.[classType] as Record<string, unknown> | undefined;
  const names = def && Array.isArray(def.output_name) ? (def.output_name as unknown[]) : def && Array.isArray(def.output) ? (def.output as unknown[]) : undefined;
  const where = label(id, classType);
  if (typeof output !== 'string') {
    if (typeof output !== 'number' || !Number.isInteger(output) || output < 0) throw new InvalidArgumentError(`must be an output index (0, 1, …) or name, got ${describeValue(output)}`, 'output');
    if (names && output >= names.length) {
      throw new InvalidArgumentError(`${where} has ${outputsText(names.length)}, got ${output}`, 'output');
    }
    return output;
  }
  if (!info) throw new InvalidArgumentError(`naming an output ("${output}") needs the server's object_info (new Workflow(objectInfo)); or give its index: out(0)`, 'output');
  if (!names) throw new InvalidArgumentError(`${where}: object_info has no class ${JSON.stringify(classType)}, so its outputs have no names; give the index: out(0)`, 'output');
  const index = names.indexOf(output);
  if (index >= 0) return index;
  const known = names.filter((n): n is string => typeof n === 'string');
  const hint = closest(output, known);
  throw new InvalidArgumentError(`${where} has no output ${JSON.stringify(output)}${hint ? ` (did you mean ${JSON.stringify(hint)}?)` : known.length ? `; its outputs: ${known.join(', ')}` : '; it has no outputs'}`, 'output');
}

/**
 * A deep copy of JSON data (a node, its inputs, a value), so that the
 * workflow and its caller never share an object or array, however nested.
 * What cannot be copied (a function, a symbol) throws
 * {@link InvalidArgumentError} naming `field`: it is not JSON either.
 */
export function copyJSON<T>(value: T, field: string): T {
  if (typeof value !== 'object' || value === null) {
    if (typeof value === 'function' || typeof value === 'symbol') throw new InvalidArgumentError(`must be JSON data, got ${describeValue(value)}`, field);
    return value;
  }
  try {
    // Own `__proto__` members stay own members (structured clone defines properties, it does not assign them).
    return structuredClone(value);
  } catch (err) {
    throw new InvalidArgumentError(`must be JSON data (strings, numbers, booleans, null, arrays and objects): it holds something that cannot be copied (a function or a symbol)`, field, undefined, { cause: err });
  }
}

/** `target[key] = value` as an own property, even for `"__proto__"` (which assignment would take as the prototype). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}
