/**
 * The cycles a change to a `Workflow` would close: refused as it is made,
 * with no `object_info` needed (the server refuses such a workflow).
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.ts';
import { asLink, at, firstOf, label, titleOf, type WorkflowIssue } from './issue.ts';
import type { StoredNode } from './node-handle.ts';

/**
 * Throws when a link among the given inputs of `node` would close a cycle:
 * to node `id` itself, or to a node that (through its own links) depends on
 * `id` (among `nodes`, the workflow's). The server refuses such a workflow; no
 * `object_info` is needed to see it.
 *
 * @example
 * ```ts
 * refuseCycles(nodes, '3', { class_type: 'ImageBlur', inputs: { image: ['3', 0] } }, ['image']); // throws: links to #3 itself
 * ```
 */
export function refuseCycles(nodes: ReadonlyMap<string, StoredNode>, id: string, node: StoredNode, inputs: readonly string[]): void {
  const issues: WorkflowIssue[] = [];
  for (const input of inputs) {
    const link = asLink(node.inputs[input]);
    const cycle = link && cycleThrough(nodes, id, link[0]);
    if (!cycle) continue;
    const title = titleOf(node);
    const why = cycle.length === 2 ? `links to #${id} itself` : `links to #${cycle[1]}, which depends on #${id}`;
    issues.push({
      severity: 'error',
      code: 'dependency_cycle',
      path: [id, 'inputs', input],
      ...at(id, node.class_type, title),
      input,
      given: cycle,
      message: `${label(id, node.class_type, title)}: ${input}: ${why}: the links would form a cycle (${cycle.map((n) => `#${n}`).join(' → ')})`,
    });
  }
  if (issues.length > 0) throw new InvalidArgumentError(firstOf(issues), undefined, issues);
}

/** The cycle a link from node `id` to node `from` would close (`[id, from, …, id]`), or `undefined`. */
function cycleThrough(nodes: ReadonlyMap<string, StoredNode>, id: string, from: string): string[] | undefined {
  if (from === id) return [id, id];
  // Depth-first over the links of the stored nodes (no recursion: a long chain must not overflow the stack).
  const parent = new Map<string, string | undefined>([[from, undefined]]);
  const stack = [from];
  while (stack.length > 0) {
    const at = stack.pop()!;
    for (const value of Object.values(nodes.get(at)?.inputs ?? {})) {
      const next = asLink(value)?.[0];
      if (next === undefined) continue;
      if (next === id) {
        const back: string[] = [];
        for (let n: string | undefined = at; n !== undefined; n = parent.get(n)) back.push(n);
        return [id, ...back.reverse(), id];
      }
      if (!parent.has(next)) {
        parent.set(next, at);
        stack.push(next);
      }
    }
  }
  return undefined;
}
