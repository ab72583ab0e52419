/**
 * What `submit()` makes of a workflow and its options before this kind of server's backend sends it (`backend.ts`):
 * the API-format prompt (`workflow-source.ts`: the options checked, the editor's format converted), checked against
 * the rules and, with `validate: true`, against `object_info`; the job's id; and `extra_data`, with the partner key
 * under the name this kind of server reads it by. The submission itself loads on first use.
 *
 * @module
 */
import { checkArgsLater } from '../args.ts';
import { InvalidArgumentError } from '../errors.ts';
import type { SubmissionResponse } from '../schemas/cloud.ts';
import * as rules from '../schemas/rules.generated.ts';
import { requestOptionsOf } from '../transport/options.ts';
import type { WithResponse } from '../transport/promise.ts';
import type { Transport } from '../transport/transport.ts';
import { WorkflowValidationError } from '../workflow/errors.ts';
import type { Backend } from './backend.ts';
import type { SubmitOptions, WorkflowInput } from './client-options.ts';
import { randomUuid } from './uuid.ts';
import type { WorkflowSource } from './workflow-source.ts';

/**
 * `submit()` once its options are known: the workflow prepared, then sent by `backend`; what the checks find is
 * thrown before anything is submitted.
 *
 * @example
 * ```ts
 * const { data } = await prepareAndSubmit(workflows, transport, backend, workflow, { partnerApiKey: true });
 * ```
 */
export async function prepareAndSubmit(workflows: WorkflowSource, transport: Transport, backend: Backend, workflow: WorkflowInput, options: SubmitOptions): Promise<WithResponse<SubmissionResponse & { prompt_id: string }>> {
  const converted = await workflows.prompt(workflow, options);
  const prompt = await checkArgsLater(rules.Workflow, converted.prompt, 'workflow');
  if (Object.keys(prompt).length === 0) throw new InvalidArgumentError('has no nodes', 'workflow');
  const id = options.promptId ?? randomUuid();
  if (options.validate) {
    // object_info is fetched with the submission's request options.
    const issues = await workflows.validate(prompt, requestOptionsOf(options));
    if (issues.some((i) => i.severity === 'error')) throw new WorkflowValidationError(issues);
  }
  const extra: Record<string, unknown> = { ...(converted.extraData ?? options.extraData) };
  if (options.partnerApiKey !== undefined) {
    const name = backend.partnerKey;
    extra[name] = options.partnerApiKey === true ? await transport.credential() : options.partnerApiKey;
    transport.rememberSecret(extra[name] as string);
  }
  return backend.submit(prompt, extra, id, options);
}
