/**
 * Finding a `Workflow`'s nodes by selector (an id, `{ title }`,
 * `{ classType }` or both), and saying, when none or several match, which
 * one was likely meant.
 *
 * @module
 */
import { closest } from '../args.ts';
import { InvalidArgumentError } from '../errors.ts';
import { describeValue } from '../schemas/describe.ts';
import { isObject } from '../schemas/rule.ts';
import { byId, titleOf } from './issue.ts';
import type { StoredNode } from './node-handle.ts';
import type { NodeSelector } from './types.ts';

/**
 * The nodes `selector` matches (all for `undefined`), in id order.
 *
 * @example
 * ```ts
 * matchNodes(nodes, { classType: 'KSampler' }); // [['3', { class_type: 'KSampler', inputs: {…} }]]
 * ```
 */
export function matchNodes(nodes: ReadonlyMap<string, StoredNode>, selector: NodeSelector | undefined): Array<[string, StoredNode]> {
  if (typeof selector === 'string') {
    const node = nodes.get(selector);
    return node ? [[selector, node]] : [];
  }
  const sorted = [...nodes].sort(([a], [b]) => byId(a, b));
  if (selector === undefined) return sorted;
  const { title, classType } = selectorParts(selector);
  return sorted.filter(([, n]) => (title === undefined || n._meta?.title === title) && (classType === undefined || n.class_type === classType));
}

/**
 * The one node `selector` matches; otherwise throws why not, with the closest id, title or class.
 *
 * @example
 * ```ts
 * oneNode(nodes, { title: 'Positve' }); // InvalidArgumentError: no node titled "Positve" (did you mean "Positive"?)
 * ```
 */
export function oneNode(all: ReadonlyMap<string, StoredNode>, selector: NodeSelector): [string, StoredNode] {
  const found = matchNodes(all, selector);
  if (found.length === 1) return found[0]!;
  const { title, classType } = typeof selector === 'string' ? {} : selectorParts(selector);
  const what = typeof selector === 'string' ? `with id ${JSON.stringify(selector)}` : [title !== undefined && `titled ${JSON.stringify(title)}`, classType !== undefined && `of class ${JSON.stringify(classType)}`].filter(Boolean).join(' ');
  if (found.length > 1) {
    throw new InvalidArgumentError(`${found.length} nodes ${what} (${found.map(([id]) => `#${id}`).join(', ')}): choose one by id`, 'node');
  }
  const nodes = [...all.values()];
  const titles = (of: readonly StoredNode[]) => of.flatMap((n) => titleOf(n) ?? []);
  // What to suggest: the closest id, class or title; for a title and a class, the closest class when none has it, else the closest title among that class's nodes.
  const ofClass = classType === undefined ? nodes : nodes.filter((n) => n.class_type === classType);
  const [given, known, prefix] =
    typeof selector === 'string'
      ? [selector, [...all.keys()], '']
      : classType !== undefined && (title === undefined || ofClass.length === 0)
        ? [classType, nodes.map((n) => n.class_type), title === undefined ? '' : 'class ']
        : [title!, titles(ofClass), ''];
  const unique = [...new Set(known)].sort(byId);
  const hint = closest(given, unique);
  const where = prefix ? "the workflow's classes are" : title !== undefined && classType !== undefined ? `its nodes of class ${JSON.stringify(classType)} are titled` : 'the workflow has';
  const list = hint ? ` (did you mean ${prefix}${JSON.stringify(hint)}?)` : unique.length === 0 ? '' : unique.length <= 16 ? `; ${where} ${unique.map((k) => JSON.stringify(k)).join(', ')}` : '';
  throw new InvalidArgumentError(`no node ${what}${list}`, 'node');
}

/** A selector's title and class, each a string when given; throws for anything else. */
function selectorParts(selector: unknown): { title?: string; classType?: string } {
  const { title, classType } = (isObject(selector) ? selector : {}) as { title?: unknown; classType?: unknown };
  if ((title === undefined && classType === undefined) || (title !== undefined && typeof title !== 'string') || (classType !== undefined && typeof classType !== 'string')) {
    throw new InvalidArgumentError(`must be a node id, { title }, { classType } or both, got ${describeValue(selector)}`, 'node');
  }
  return { title, classType } as { title?: string; classType?: string };
}
