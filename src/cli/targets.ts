/**
 * Finds the input a `--set` or `--input` means in a workflow, or says exactly
 * why none (or several) match, naming the nodes to choose from.
 *
 * An input is first looked up by the names `workflow.inputs()` gives it
 * (`title.input`, `input` alone, `id.input`; matched whole, so a title may
 * hold dots); failing that, it is NODE.INPUT. A node is written as its id
 * (`6`), its title (`"Load Photo"`) or its class (`LoadImage`), tried in
 * that order; a title or class must match one node.
 * `--input image=…` without a node means the one node whose `image` input holds
 * a value (not a link): in a workflow with two image loaders it must be told.
 *
 * @module
 */
import type { NodeHandle, Workflow } from '../index.ts';
import { parseTarget, UsageError, type Target } from './args.ts';

/** `#6 CLIPTextEncode "Positive"`: how messages name a node. */
export function describeNode(n: NodeHandle): string {
  return `#${n.id} ${n.classType}${n.title !== undefined ? ` ${JSON.stringify(n.title)}` : ''}`;
}

/** A link (`["4", 0]`): an input fed by another node, not a value to replace. */
export function isLink(value: unknown): boolean {
  return Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'number';
}

/** How to address a node in an option: its title when it has a unique one, else its id. */
function nodeRef(wf: Workflow, n: NodeHandle): string {
  return n.title !== undefined && wf.nodes({ title: n.title }).length === 1 ? JSON.stringify(n.title) : n.id;
}

/** The one node `name` designates: by id, else by title, else by class. */
export function findNode(wf: Workflow, name: string, option: string): NodeHandle {
  const byId = wf.nodes(name);
  if (byId.length === 1) return byId[0]!;
  for (const [kind, found] of [['titled', wf.nodes({ title: name })], ['of class', wf.nodes({ classType: name })]] as const) {
    if (found.length === 1) return found[0]!;
    if (found.length > 1) {
      throw new UsageError(`${option}: ${found.length} nodes ${kind} ${JSON.stringify(name)} (${found.map(describeNode).join(', ')}): name one by id, like ${found[0]!.id}.<input>`);
    }
  }
  const all = wf.nodes();
  const list = all.length <= 20 ? `; the workflow has ${all.map(describeNode).join(', ')}` : '';
  throw new UsageError(`${option}: no node with id, title or class ${JSON.stringify(name)}${list}`);
}

/**
 * The node and input a target designates. A target without a node (only for
 * `--input`) takes the one node whose input of that name holds a value.
 */
export function resolveTarget(wf: Workflow, target: Target, option: string): { node: NodeHandle; input: string } {
  if (target.node !== undefined) return { node: findNode(wf, target.node, option), input: target.input };
  const name = target.input;
  const having = wf.nodes().filter((n) => Object.hasOwn(n.inputs, name));
  const candidates = having.filter((n) => !isLink(n.inputs[name]));
  if (candidates.length === 1) return { node: candidates[0]!, input: name };
  if (candidates.length > 1) {
    const hint = candidates.map((n) => `${option} ${nodeRef(wf, n)}.${name}=…`).join(' or ');
    throw new UsageError(`${option}: ${candidates.length} nodes have an input ${JSON.stringify(name)} (${candidates.map(describeNode).join(', ')}): say which, like ${hint}`);
  }
  const linked = having.length > 0 ? ` (${having.map(describeNode).join(', ')} take it from a link)` : '';
  throw new UsageError(`${option}: no node has an input ${JSON.stringify(name)} holding a value${linked}; name the node: ${option} <node>.${name}=…`);
}

/**
 * The node and input `name` designates: a named input (as `wf.inputs()` names
 * it), else `NODE.INPUT` (or, when `bare`, an input alone) as
 * {@link resolveTarget} reads it.
 */
export function findInput(wf: Workflow, name: string, option: string, bare: boolean): { node: NodeHandle; input: string } {
  const named = wf.inputs().find((i) => i.names.includes(name));
  return named ? { node: wf.node(named.nodeId), input: named.input } : resolveTarget(wf, parseTarget(name, option, bare), option);
}
