/**
 * Submission to the cloud and a local server: `POST /api/prompt` under the
 * job's id chosen before the request (`submission.ts`: never sent twice on
 * its own; a lost answer looked up by the id), and what a refusal becomes: a
 * rejected workflow is a {@link SubmissionError}; credentials, credits,
 * subscription and server failures keep their own classes. (Comfy API v2:
 * `v2/submit.ts`.)
 *
 * @module
 */
import { APIError } from '../errors.ts';
import { blamesRequest } from '../transport/blame.ts';
import { SubmissionError } from './submission-errors.ts';
import type { SubmissionResponse, Workflow } from '../schemas/cloud.ts';
import * as rules from '../schemas/rules.generated.ts';
import type { WithResponse } from '../transport/promise.ts';
import { scrub } from '../transport/redact.ts';
import type { Transport } from '../transport/transport.ts';
import type { SubmitOptions } from './client-options.ts';
import type { ServerProtocol } from './protocol/types.ts';
import { submitWithId } from './submission.ts';


/** What a submission needs of its client. */
export interface SubmitTarget {
  transport: Transport;
  protocol: ServerProtocol;
  /** Whether this server uses the job ids it is sent; `undefined` until it has answered a submission (per client). */
  honoursIds: { value: boolean | undefined };
}

/**
 * Sends `prompt` as job `id` with its `extra_data`; resolves with the
 * server's answer, `prompt_id` checked.
 *
 * @example
 * ```ts
 * const { data } = await submitPrompt({ transport, protocol, honoursIds: { value: undefined } }, prompt, {}, randomUuid(), {});
 * ```
 */
export async function submitPrompt(target: SubmitTarget, prompt: Workflow, extra: Record<string, unknown>, id: string, options: SubmitOptions): Promise<WithResponse<SubmissionResponse & { prompt_id: string }>> {
  const body: Record<string, unknown> = { prompt };
  if (Object.keys(extra).length) body.extra_data = extra;
  if (options.clientId) body.client_id = options.clientId;
  const t = target.transport;
  let r: WithResponse<SubmissionResponse>;
  try {
    r = await submitWithId(
      {
        send: (json) => t.request<SubmissionResponse>({ method: 'POST', path: 'api/prompt', json, auth: true, schema: rules.SubmissionResponse, options, paid: true }),
        lookup: (promptId, timeout) => target.protocol.status(promptId, { headers: options.headers, signal: options.signal, timeout: Math.min(timeout, 10_000), retry: { limit: 0 } }),
        log: t.log,
        honoursIds: target.honoursIds,
      },
      body,
      id,
      options,
    );
  } catch (err) {
    const b = err instanceof APIError && blamesRequest(err.status) ? err.body : undefined;
    if (b !== null && typeof b === 'object' && 'error' in b) throw new SubmissionError((err as APIError).status, b as Record<string, unknown>, id);
    throw err;
  }
  if (r.data?.error != null || typeof r.data?.prompt_id !== 'string') {
    // A 2xx body is not scrubbed by the transport; this one becomes an error, so scrub it here.
    throw new SubmissionError(r.response.status, scrub(r.data ?? { error: 'no prompt_id in the response' }, t.secrets) as Record<string, unknown>, id);
  }
  return r as WithResponse<SubmissionResponse & { prompt_id: string }>;
}
