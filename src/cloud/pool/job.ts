/**
 * A job handed to the pool: its checked arguments, where it is and has been,
 * and the {@link PoolJob} handle its caller holds.
 *
 * @module
 */
import { InvalidArgumentError } from '../../errors.ts';
import type { Workflow } from '../../schemas/cloud.ts';
import { isObject } from '../../schemas/rule.ts';
import { SubmitOptionsParams } from '../../schemas/rules.generated.ts';
import { checkArgs, checkFunction, checkOptions } from '../../args.ts';
import { checkInterval, checkTimeout } from '../../transport/options.ts';
import { isEditorFormat } from '../../workflow/issue.ts';
import { jsonOf, type EditorWorkflowJSON, type WorkflowInput } from '../client.ts';
import type { Server } from './health.ts';
import type { Converted, Convertible, Judged } from './placement.ts';
import { POOL_RUN_OPTIONS, type PoolJob, type PoolJobResult, type PoolRunOptions } from './types.ts';
import type { InputFile } from './uploads.ts';
import { checkInputs } from '../inputs.ts';

/** A job of the pool, from `submit()` until it settles. */
export interface Entry extends Judged, Convertible {
  readonly priority: number;
  /** As handed over: API format, or the editor's (then converted per server, in `converted`). */
  readonly workflow: Workflow | EditorWorkflowJSON;
  readonly converted: Map<string, Converted>;
  readonly options: PoolRunOptions;
  /** The input paths the pool fills with an upload: their placeholder values are not judged. */
  readonly uploaded: ReadonlySet<string>;
  readonly verdicts: Map<string, string[]>;
  readonly avoid: Map<string, string>;
  /** Its inputs, read and hashed at its first placement. */
  files: Promise<InputFile[]> | undefined;
  state: 'queued' | 'placed' | 'settled';
  server: Server | undefined;
  promptId: string | undefined;
  resubmittedFrom: { server: string; promptId: string | undefined } | undefined;
  /** How many times it changed server (moves and its re-run). */
  moves: number;
  /** Aborts the run on its server: the caller's cancel, or close(). */
  readonly stop: AbortController;
  closing: { cancel: boolean } | undefined;
  readonly result: Promise<PoolJobResult>;
  readonly resolve: (r: PoolJobResult) => void;
  readonly reject: (e: unknown) => void;
  /** Lets go of the caller's signal. */
  done: () => void;
}

/**
 * A new job's entry and its caller's handle, its arguments checked first
 * (including `run()`'s own options: a bad one must fail before any upload).
 * `cancel` is the pool's, for the handle and the caller's signal.
 */
export function newJob(workflow: WorkflowInput, options: PoolRunOptions, cancel: (entry: Entry) => void): { entry: Entry; job: PoolJob } {
  const json = jsonOf(workflow);
  if (!isObject(json)) throw new InvalidArgumentError('must be a workflow: API format (an object of nodes) or as the editor saves it', 'workflow');
  const priority = options.priority ?? 0;
  if (typeof priority !== 'number' || Number.isNaN(priority)) throw new InvalidArgumentError(`must be a number, got ${String(priority)}`, 'priority');
  // The editor's format has its node ids only once converted for a server: its input paths are judged there.
  const uploaded = checkInputs(isEditorFormat(json) ? undefined : json, options.inputs);
  // Here, not on the server it lands on: a bad extraData would otherwise be spread into the saved workflow's.
  checkOptions(options, POOL_RUN_OPTIONS, 'CloudPool.run()');
  checkArgs(SubmitOptionsParams, options, 'options');
  checkFunction(options.onPlaced, 'onPlaced');
  checkFunction(options.beforeSubmit, 'beforeSubmit');
  checkTimeout(options.timeout, 'timeout');
  checkInterval(options.pollInterval, 'pollInterval');
  if (options.serverLostAfter !== Infinity) checkInterval(options.serverLostAfter, 'serverLostAfter', ' or Infinity');
  let resolve!: (r: PoolJobResult) => void;
  let reject!: (e: unknown) => void;
  const result = new Promise<PoolJobResult>((res, rej) => ((resolve = res), (reject = rej)));
  const entry: Entry = {
    priority,
    workflow: structuredClone(json),
    converted: new Map(),
    options,
    uploaded,
    verdicts: new Map(),
    avoid: new Map(),
    files: undefined,
    state: 'queued',
    server: undefined,
    promptId: undefined,
    resubmittedFrom: undefined,
    moves: 0,
    stop: new AbortController(),
    closing: undefined,
    result,
    resolve,
    reject,
    done: () => undefined,
  };
  const stop = () => cancel(entry);
  if (options.signal) {
    const signal = options.signal;
    signal.addEventListener('abort', stop, { once: true });
    entry.done = () => signal.removeEventListener('abort', stop);
  }
  const job: PoolJob = {
    get state() {
      return entry.state;
    },
    get server() {
      return entry.server?.id;
    },
    get promptId() {
      return entry.promptId;
    },
    result,
    cancel: stop,
    then: (onFulfilled, onRejected) => result.then(onFulfilled, onRejected),
  };
  return { entry, job };
}
