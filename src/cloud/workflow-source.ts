/**
 * A client's workflows before they are sent: the API-format prompt of a
 * workflow input (the editor's saved format converted with `object_info`, by
 * a converter loaded on first use), `object_info` itself (from this server,
 * another one, or the `objectInfo` option; fetched once and kept), and the
 * door to the checks against it (`validateWorkflow`, `validate: true`:
 * `validation.ts`, loaded on first use).
 *
 * @module
 */
import { checkArgsLater, checkFunction } from '../args.ts';
import { InvalidArgumentError, UnsupportedError } from '../errors.ts';
import type { ObjectInfo, Workflow } from '../schemas/cloud.ts';
import * as rules from '../schemas/rules.generated.ts';
import { requestOptionsOf, type RequestOptions } from '../transport/options.ts';
import type { APIPromise, WithResponse } from '../transport/promise.ts';
import type { Transport } from '../transport/transport.ts';
import { firstOf, isEditorFormat, type WorkflowIssue } from '../workflow/issue.ts';
import { jsonOf, withSavedWorkflow, type SubmitOptions, type ValidateWorkflowOptions, type WorkflowInput } from './client-options.ts';
import type { ServerKind } from './protocol/types.ts';
import type { V2Backend } from './v2/backend.ts';
import { editorConverter, validator } from './workflow-code.ts';

/**
 * `object_info` and the workflows converted and checked with it, for one client.
 *
 * @example
 * ```ts
 * const workflows = new WorkflowSource(transport, 'cloud', undefined, undefined, (o) => client.getObjectInfo(o));
 * const { prompt } = await workflows.prompt(editorJson, {});
 * ```
 */
export class WorkflowSource {
  readonly #transport: Transport;
  readonly #server: ServerKind;
  readonly #source: ObjectInfo | string | undefined;
  readonly #v2: (() => Promise<V2Backend>) | undefined;
  /** The client's own `getObjectInfo()`, which fetches (and keeps) with {@link fetch}. */
  readonly #get: (options: RequestOptions) => APIPromise<ObjectInfo>;
  #cached: Promise<ObjectInfo> | undefined;

  constructor(transport: Transport, server: ServerKind, source: ObjectInfo | string | undefined, v2: (() => Promise<V2Backend>) | undefined, get: (options: RequestOptions) => APIPromise<ObjectInfo>) {
    this.#transport = transport;
    this.#server = server;
    this.#source = source;
    this.#v2 = v2;
    this.#get = get;
  }

  /**
   * `object_info` from where the options say: the object itself, another server's `/api/object_info`, or this
   * server's; kept for the checks that follow. Beside it, the editor converter, which `Workflow.fromEditor()` needs
   * loaded in a browser (in Node it is): every conversion needs an `object_info`, so an app that has one can convert.
   */
  async fetch(options: RequestOptions | undefined): Promise<WithResponse<ObjectInfo>> {
    const [answer] = await Promise.all([this.#fetch(options), editorConverter().catch(() => undefined)]);
    this.#cached = Promise.resolve(answer.data);
    return answer;
  }

  async #fetch(options: RequestOptions | undefined): Promise<WithResponse<ObjectInfo>> {
    const source = this.#source;
    if (typeof source === 'object') return { data: source, response: new Response(null, { status: 200 }) };
    if (typeof source === 'string') {
      // Another server (the one behind a v2 proxy): nothing of this client goes there.
      const response = await this.#transport.fetchElsewhere(new URL('api/object_info', source.endsWith('/') ? source : `${source}/`), options);
      return { data: (await response.json()) as ObjectInfo, response };
    }
    if (this.#server === 'v2') throw new UnsupportedError('v2', 'getObjectInfo()', 'pass the objectInfo option');
    return this.#transport.request<ObjectInfo>({ method: 'GET', path: 'api/object_info', auth: true, schema: rules.ObjectInfo, options });
  }

  /** `object_info`, fetched on first use (or with `refresh`) and kept; a failed fetch is not kept. */
  objectInfo(request: RequestOptions, refresh?: boolean): Promise<ObjectInfo> {
    // v2 serves none: the chunk says what to pass instead, before any request.
    if (this.#v2 && this.#source === undefined) return this.#v2().then((b) => Promise.reject(b.noObjectInfo()));
    if (refresh || !this.#cached) {
      const fetching = Promise.resolve(this.#get(request));
      this.#cached = fetching;
      fetching.catch(() => {
        if (this.#cached === fetching) this.#cached = undefined;
      });
    }
    return this.#cached!;
  }

  /** See `CloudClient.validateWorkflow`: with the validator, loaded on first use (`validation.ts`). */
  async validate(workflow: WorkflowInput, options: ValidateWorkflowOptions): Promise<WorkflowIssue[]> {
    return (await validator()).validateInput(this, workflow, options);
  }

  /**
   * The API-format prompt of a workflow input, for `submit()` and `run()`, once their submission options pass their
   * rules: before the conversion fetches `object_info` (a run's submission checks them again, only after that request).
   * The editor's saved format is converted with this server's `object_info` (the converter loads on first use: an app
   * that never passes one never downloads it), and `extraData` then carries the saved workflow, as the editor sends it.
   */
  async prompt(workflow: WorkflowInput, options: SubmitOptions): Promise<{ prompt: Workflow; extraData?: Record<string, unknown> }> {
    await checkArgsLater(rules.SubmitOptionsParams, options, 'options');
    checkFunction(options.beforeSubmit, 'beforeSubmit');
    const json = jsonOf(workflow);
    if (!isEditorFormat(json)) return { prompt: json };
    const info = await this.objectInfo(requestOptionsOf(options));
    const { workflow: prompt, issues } = (await editorConverter()).convertEditorWorkflow(json, info, options.widgetValues ? { widgetValues: options.widgetValues } : {});
    const errors = issues.filter((i) => i.severity === 'error');
    if (errors.length > 0) throw new InvalidArgumentError(firstOf(errors), 'workflow', errors);
    for (const w of issues) this.#transport.log.warn?.(w.message, { nodeId: w.nodeId, code: w.code });
    // v2 takes no extra_pnginfo (the real server refuses unknown extra_data keys).
    return { prompt, ...(this.#server === 'v2' ? (options.extraData ? { extraData: options.extraData } : {}) : { extraData: withSavedWorkflow(json, options.extraData) }) };
  }
}
