/**
 * What the editor-format converter takes and gives (`editor.ts`): apart from
 * it, so that what names its options (`Workflow.fromEditor`'s check of them,
 * the clients' types) does not load the converter.
 *
 * @module
 */
import type { OptionKeys } from '../args.ts';
import type { MissingPacks } from '../registry/missing-packs.ts';
import type { WorkflowJSON } from './types.ts';
import type { WorkflowIssue } from './issue.ts';

/** Options of `Workflow.fromEditor` (and of the clients, for a workflow in the editor's format). */
export interface EditorOptions {
  /**
   * What to do with a node whose `widgets_values` has fewer or more values
   * than its class has widgets (a file saved against another version of the
   * node). `'strict'` (default): an error naming the node, since values after
   * an inserted widget would shift into the wrong inputs. `'editor'`: convert
   * as the editor does (defaults for missing values, extra ones dropped), with
   * a warning per node changed.
   */
  widgetValues?: 'strict' | 'editor';
  /**
   * What `registry.findMissingPacks(saved, { objectInfo })` answered: an
   * unknown class then names the pack that provides it.
   */
  packs?: MissingPacks;
  /** Random numbers for dynamic prompts (`{a|b|c}` in a text with `dynamicPrompts`), as `Math.random` gives them (the default). */
  random?: () => number;
}

/** The keys of {@link EditorOptions}. */
export const EDITOR_OPTIONS = { widgetValues: 1, packs: 1, random: 1 } as const satisfies OptionKeys<EditorOptions>;

/** One input the saved file names as the workflow's interface (its app mode's `extra.linearData.inputs`). */
export interface ExposedInput {
  /** The API node id (`"5"`, or `"10:2"` inside a subgraph). */
  nodeId: string;
  /** The input's name. */
  input: string;
}

/** What {@link convertEditorWorkflow} makes of a saved file. */
export interface EditorConversion {
  /** The API-format workflow the editor would submit (empty when `issues` has errors). */
  workflow: WorkflowJSON;
  /** Why it could not be converted (`severity: 'error'`), and what `widgetValues: 'editor'` changed (warnings). */
  issues: WorkflowIssue[];
  /** The inputs the file exposes as its interface (`extra.linearData.inputs`), when it lists any. */
  exposed?: ExposedInput[];
}
