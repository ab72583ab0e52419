/**
 * What a client's first `validateWorkflow()` (so its first `submit()` or
 * `run()` with `validate: true`) and a pool when it is made load
 * (`workflow-code.ts`' `validator()`): the workflow validator, and a client's
 * check of a workflow input against `object_info`. A file of its own in the
 * browser build (`validate.browser.js`).
 *
 * @module
 */
import { checkArgsLater } from '../args.ts';
import type { Workflow } from '../schemas/cloud.ts';
import * as rules from '../schemas/rules.generated.ts';
import { isEditorFormat, type WorkflowIssue } from '../workflow/issue.ts';
import { validateWorkflow } from '../workflow/validate.ts';
import { jsonOf, type ValidateWorkflowOptions, type WorkflowInput } from './client-options.ts';
import type { WorkflowSource } from './workflow-source.ts';
import { editorConverter } from './workflow-code.ts';

export { validateWorkflow };

/**
 * `CloudClient.validateWorkflow()`: every issue of `workflow` against the `object_info` of `source` (fetched once and
 * kept); an editor file's conversion issues first, and only when none stops it, the converted prompt's.
 *
 * @example
 * ```ts
 * const issues = await (await validator()).validateInput(workflows, json, {});
 * ```
 */
export async function validateInput(source: WorkflowSource, workflow: WorkflowInput, options: ValidateWorkflowOptions): Promise<WorkflowIssue[]> {
  // The one option read here that the submission's rules also check: the same words, before object_info is fetched.
  await checkArgsLater(rules.SubmitOptionsParams, { widgetValues: options.widgetValues }, 'options');
  const { refresh, registry, widgetValues, ...request } = options;
  const json = jsonOf(workflow);
  const objectInfo = await source.objectInfo(request, refresh);
  const packs = registry && (await registry.findMissingPacks(json as Workflow, { objectInfo, ...(request.signal ? { signal: request.signal } : {}) }));
  if (!isEditorFormat(json)) return validateWorkflow(json, objectInfo, packs ? { packs } : {});
  // The editor's format: what stops its conversion, else what it changed and what the server would refuse.
  const { workflow: prompt, issues } = (await editorConverter()).convertEditorWorkflow(json, objectInfo, { ...(packs ? { packs } : {}), ...(widgetValues ? { widgetValues } : {}) });
  return issues.some((i) => i.severity === 'error') ? issues : [...issues, ...validateWorkflow(prompt, objectInfo, packs ? { packs } : {})];
}
