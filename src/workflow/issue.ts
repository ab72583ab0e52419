/**
 * A workflow's issues and the small helpers every part of the SDK that reads
 * a workflow shares (its links, its ids, how a node is named in a message):
 * apart from the validator (`validate.ts`), so that what only needs these
 * (the `Workflow` builder's structure, the clients' checks of a workflow's
 * format) does not load the validator with them.
 *
 * @module
 */
import { closest } from '../args.ts';
import type { MissingPacks } from '../registry/missing-packs.ts';
import type { ObjectInfo } from '../schemas/cloud.ts';
import { isObject } from '../schemas/rule.ts';

/** What kind of problem an issue is. Where the server has a name for it, this is that name. */
export type WorkflowIssueCode =
  /** The UI's saved format (`nodes`/`links` arrays) instead of the API format. */
  | 'ui_format'
  /** Not an object of nodes, or a node without `class_type` / `inputs`. */
  | 'invalid_prompt'
  /** A `class_type` the server does not have. */
  | 'unknown_class'
  | 'required_input_missing'
  /** An input the class does not have (a warning: servers ignore it). */
  | 'unknown_input'
  /** A value of the wrong kind (INT, FLOAT, STRING, BOOLEAN), or a literal where only a link can provide the type. */
  | 'invalid_input_type'
  | 'value_smaller_than_min'
  | 'value_bigger_than_max'
  | 'value_not_in_list'
  /** A link to a node that does not exist, or to an output index its class does not have. */
  | 'bad_linked_input'
  | 'return_type_mismatch'
  | 'dependency_cycle'
  | 'prompt_no_outputs'
  /** A saved (editor-format) node whose `widgets_values` do not fit its class's widgets: an error, or with `widgetValues: 'editor'` a warning saying what was filled or dropped. */
  | 'widget_values_mismatch'
  /** A saved (editor-format) link that the file does not have, or that comes from a node it does not have. */
  | 'broken_link'
  /** A saved (editor-format) node the SDK cannot convert as the editor would: a legacy group node, a frontend-only node of a custom pack. */
  | 'unsupported_node';

/** One problem of a workflow. */
export interface WorkflowIssue {
  /** `error`: the server would reject the workflow; `warning`: it would run, perhaps not as meant. */
  severity: 'error' | 'warning';
  code: WorkflowIssueCode;
  /** Where: `[nodeId]` or `[nodeId, 'inputs', input]` (the paths `Workflow.set` takes); `[]` for the whole workflow. */
  path: string[];
  /** The node at fault, when there is one. */
  nodeId?: string;
  classType?: string;
  /** The node's `_meta.title`, when it has one. */
  title?: string;
  /** The input at fault, when there is one. */
  input?: string;
  /** What was given: the value, the link, or the linked output's type. */
  given?: unknown;
  /** What is allowed: the type, the bound (`min`/`max`), the allowed values, or the number of outputs. */
  expected?: unknown;
  /**
   * For an `unknown_class` issue, when the packs were given
   * ({@link ValidateOptions.packs}): the registry pack that provides the
   * class, with its latest version.
   */
  pack?: { id: string; version: string | undefined };
  /** One line: the node, the input, what was given and what is allowed. */
  message: string;
}

/** Whether `value` is a workflow in the editor's saved format (`nodes` and `links` arrays), not the API format. */
export function isEditorFormat(value: unknown): value is { nodes: unknown[]; links: unknown[] } {
  return isObject(value) && Array.isArray(value.nodes) && Array.isArray(value.links);
}

/** A link `[nodeId, outputIndex]` as the server resolves it (the id a string: node ids are the workflow's keys), or `undefined`. */
export function asLink(v: unknown): [string, number] | undefined {
  if (!Array.isArray(v) || v.length !== 2) return undefined;
  const [id, index] = v as [unknown, unknown];
  if (typeof id !== 'string' || typeof index !== 'number' || !Number.isInteger(index)) return undefined;
  return [id, index];
}

/** A numeric node id. */
export const DIGITS = /^\d+$/;

/** Node ids the way people number them: `2` before `10` (and `5:10` after `5:2`). */
export function byId(a: string, b: string): number {
  // localeCompare is slow enough to dominate a large workflow: only ids that are not digits (or subgraph paths of digits) need it.
  if (DIGITS.test(a) && DIGITS.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  if (PATH.test(a) && PATH.test(b)) {
    const [x, y] = [a.split(':'), b.split(':')];
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const order = byId(x[i]!, y[i]!);
      if (order !== 0) return order;
    }
    return x.length - y.length;
  }
  return a.localeCompare(b, 'en', { numeric: true });
}
/** A subgraph node's id: the instance ids on its path and its own, joined by `:` (`10:2:1`). */
const PATH = /^\d+(:\d+)+$|^\d+$/;

/** The first issue's message, and how many more there are. */
export function firstOf(issues: readonly WorkflowIssue[]): string {
  const more = issues.length > 1 ? ` (+${issues.length - 1} more: see err.issues)` : '';
  return `${issues[0]!.message}${more}`;
}

/** What `n` outputs are, as a message says it: `no outputs`, `only output 0`, `outputs 0 to 2`. */
export const outputsText = (n: number): string => (n === 0 ? 'no outputs' : n === 1 ? 'only output 0' : `outputs 0 to ${n - 1}`);

/** A node's title in the editor (`_meta.title`), when it is a string. */
export function titleOf(node: { _meta?: unknown }): string | undefined {
  const title = (node._meta as { title?: unknown } | null | undefined)?.title;
  return typeof title === 'string' ? title : undefined;
}

/** The members of an issue that name its node. */
export function at(id: string, classType: string, title: string | undefined): Pick<WorkflowIssue, 'nodeId' | 'classType' | 'title'> {
  return { nodeId: id, classType, ...(title !== undefined ? { title } : {}) };
}

/** A class the server lacks: named by the registry when `packs` says which pack provides it, else the nearest known name. */
export function unknownClass(id: string, classType: string, title: string | undefined, objectInfo: ObjectInfo, packs: MissingPacks | undefined): WorkflowIssue {
  const pack = packs?.packs.find((p) => p.classTypes.includes(classType));
  const hint = pack ? undefined : closest(classType, Object.keys(objectInfo));
  const why = pack
    ? `: install the pack ${JSON.stringify(pack.id)}${pack.version ? ` (${pack.version})` : ''} from the registry`
    : hint
      ? ` (did you mean ${JSON.stringify(hint)}?)`
      : packs?.unknown.includes(classType)
        ? ' (no pack in the registry provides it)'
        : ' (a custom node that is not installed?)';
  return {
    ...at(id, classType, title),
    severity: 'error',
    code: 'unknown_class',
    path: [id],
    given: classType,
    ...(pack ? { pack: { id: pack.id, version: pack.version } } : {}),
    message: `${label(id, classType, title)}: this server has no node class ${JSON.stringify(classType)}${why}`,
  };
}

/** `#6 CLIPTextEncode "Positive"`: a node as the SDK's messages name it (the title when it is not the class). */
export function label(id: string, classType: string, title?: string): string {
  return `#${id} ${classType}${title !== undefined && title !== classType ? ` ${JSON.stringify(title)}` : ''}`;
}
