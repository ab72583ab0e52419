/**
 * A node of the editor's saved format, as far as the converter (`editor.ts`)
 * reads it: the file's loosely typed node made regular once.
 *
 * @module
 */
import { isObject } from '../schemas/rule.ts';

/** A saved node, as far as the conversion reads it. */
export interface SavedNode {
  id: string;
  type: string;
  mode: number;
  title?: string;
  inputs: SavedInput[];
  outputs: Array<{ type?: unknown }>;
  values: unknown;
}

export interface SavedInput {
  name: string;
  type: string;
  link: string | undefined;
  /** For a widget's socket, the widget's name. */
  widget?: string;
}

export interface SavedLink {
  origin: string;
  slot: number;
}

/**
 * A saved node (`nodes[i]` of the file, or of a subgraph definition) as the converter reads it.
 *
 * @example
 * ```ts
 * savedNode({ id: 3, type: 'KSampler', mode: 0, widgets_values: [42, 'fixed', 20] }).values; // [42, 'fixed', 20]
 * ```
 */
export function savedNode(raw: Record<string, unknown>): SavedNode {
  const inputs = (Array.isArray(raw.inputs) ? raw.inputs : []).filter(isObject).map((i) => ({
    name: typeof i.name === 'string' ? i.name : '',
    type: typeof i.type === 'string' ? i.type : '*',
    link: i.link === null || i.link === undefined ? undefined : String(i.link),
    ...(isObject(i.widget) ? { widget: typeof i.widget.name === 'string' ? i.widget.name : String(i.name) } : {}),
  }));
  return {
    id: String(raw.id),
    type: typeof raw.type === 'string' ? raw.type : '',
    mode: typeof raw.mode === 'number' ? raw.mode : 0,
    ...(typeof raw.title === 'string' && raw.title !== '' ? { title: raw.title } : {}),
    inputs,
    outputs: (Array.isArray(raw.outputs) ? raw.outputs : []).map((o) => (isObject(o) ? o : {})),
    values: raw.widgets_values,
  };
}
