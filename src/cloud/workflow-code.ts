/**
 * The doors to the workflow code a client or a pool loads on first use: the validator and the editor-format
 * converter, each imported once per process whoever asks first (a client's `validateWorkflow()`, a pool when it is
 * made or meets an editor file). Each is a file of its own in the browser build.
 *
 * @module
 */
import { onFirstUse } from '../on-first-use.ts';

/**
 * The workflow validator (`workflow/validate.ts`), with a client's check of a workflow input (`validation.ts`), loaded
 * on first use.
 *
 * @example
 * ```ts
 * const issues = (await validator()).validateWorkflow(prompt, objectInfo);
 * ```
 */
export const validator = /* @__PURE__ */ onFirstUse(() => import('./validation.ts'));

/** The editor-format converter, loaded on first use: the door `Workflow.fromEditor()` reads too. */
export { loadConverter as editorConverter } from '../workflow/editor-code.ts';
