/**
 * A workflow found wrong against the server's `object_info` before anything
 * was sent. It lives with the validation (whose issues it carries); the root
 * entry exports it under the same name.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.ts';
import type { WorkflowIssue } from './validate.ts';

/**
 * A workflow has errors that the server's `object_info` reveals, found
 * before anything was sent (`submit(workflow, { validate: true })`, `run`
 * likewise). `issues` holds every one, warnings included; the message names
 * the first errors:
 * `workflow: 2 errors: #3 KSampler: sampler_name: must be one of "euler", …, got "eulr" (did you mean "euler"?); #9 SaveImage: filename_prefix: is required (a string)`.
 */
export class WorkflowValidationError extends InvalidArgumentError {
  static override name = 'WorkflowValidationError';
  /** Every issue found: errors and warnings, each naming its node and input. */
  override readonly issues: readonly WorkflowIssue[];
  constructor(issues: readonly WorkflowIssue[]) {
    const errors = issues.filter((i) => i.severity === 'error');
    const shown = errors.slice(0, 3).map((i) => i.message);
    const more = errors.length > shown.length ? `; … (+${errors.length - shown.length} more: see err.issues)` : '';
    super(`${errors.length} error${errors.length === 1 ? '' : 's'}: ${shown.join('; ')}${more}`, 'workflow', issues);
    this.issues = issues;
  }
}
