/**
 * The job engine of the emulated cloud: per API key a FIFO queue and a
 * parallel limit, jobs simulated node by node with timers, the events of each
 * job in the order the real server sends them (see `fixtures/local-server`),
 * a per-key cache of identical workflows, and failure injection.
 *
 * Event order of a fresh job:
 *
 *     status (submit) · status (start) · execution_start · execution_cached {nodes: []}
 *     per node: progress_state(running) · executing · [per step: progress · progress_state · binary preview · binary text]
 *               · executed (output nodes) · progress_state(finished)
 *     execution_success · status · executing {node: null}
 *
 * A cached rerun: status · status · execution_start · execution_cached {every node}
 * · executed (output nodes, no executing) · progress_state · execution_success · status · executing null;
 * without `executed` and `progress_state` when the personality's `cachedExecuted` is false (the live cloud).
 * A failure replaces the tail by execution_error · status · executing null;
 * a cancel or interrupt by execution_interrupted · status · executing null;
 * a `lost` failure (a worker that died) by nothing at all.
 * Removing a pending job from the queue (the local server's `delete`) sends only `status`.
 *
 * Each job keeps the messages the local server keeps in its history
 * (`execution_start`, `execution_cached`, and the ending one), from which
 * `cloud-records.ts` renders job records and history entries.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { makeGif, makePng } from './cloud-files.ts';
import type { EngineContext, FailSpec, Job, JobStatusValue, NodeOutput, OutputRef } from './cloud-job-types.ts';
import { exceptionMessage, nodeState, previewText, seedOf, sleep, workflowHash } from './cloud-job-steps.ts';
import { HttpError } from './reply.ts';
import { NODE_BEHAVIOUR, type NodeBehaviour, type PromptNode, type ValidatedPrompt } from './cloud-nodes.ts';

// What a job is, importable from here as it always was.
export type { CloudEvent, EngineContext, FailSpec, Job, JobMessage, JobStatusValue, NodeOutput, OutputRef, RawFailure } from './cloud-job-types.ts';

/** The six `exception_type` values of the spec (one list, shared with the SDK's schemas). */
export { EXCEPTION_TYPES } from '../schemas/values.ts';

/** Message types kept in {@link Job.messages} (the local server's history keeps these). */
const KEPT_MESSAGES = new Set(['execution_start', 'execution_cached', 'execution_success', 'execution_error', 'execution_interrupted']);

interface Lane {
  pending: Job[];
  running: Set<Job>;
  failNext: FailSpec[];
  /** Workflow hash → outputs of its last successful run; bounded, oldest first out. */
  cache: Map<string, Record<string, NodeOutput>>;
}

const CACHE_PER_KEY = 100;
const MAX_PENDING_PER_KEY = 10_000;

/** Prompt ids whose submissions are counted ({@link JobEngine.submissions}). */
const MAX_COUNTED_SUBMISSIONS = 100_000;

/** The job engine (`emulator.cloud.engine`): it queues, runs and records the cloud's jobs. */
export class JobEngine {
  /** Every job still remembered (pending, running, and the last `historyLimit` finished). */
  readonly jobs = new Map<string, Job>();
  readonly #ctx: EngineContext;
  readonly #lanes = new Map<string, Lane>();
  readonly #finished: string[] = [];
  readonly #counters = new Map<string, number>();
  #number = 0;
  #closed = false;

  constructor(ctx: EngineContext) {
    this.#ctx = ctx;
  }

  /**
   * How many times each prompt id was accepted (the last
   * {@link MAX_COUNTED_SUBMISSIONS}): a test's proof that no job ran twice.
   */
  readonly submissions = new Map<string, number>();

  /** Queues a validated workflow for `key` and starts it when a slot is free. */
  submit(key: string, valid: ValidatedPrompt, extraData: Record<string, unknown>, partnerKey: string | undefined, promptId: string = randomUUID()): Job {
    const lane = this.#lane(key);
    if (lane.pending.length >= MAX_PENDING_PER_KEY) throw new HttpError(503, `More than ${MAX_PENDING_PER_KEY} pending jobs for this key`, 'queue_full');
    const clientId = extraData.client_id;
    const job: Job = {
      prompt_id: promptId,
      number: this.#number++,
      key,
      prompt: structuredClone(valid.prompt),
      extraData,
      partnerKey,
      order: valid.order,
      outputNodes: valid.outputs,
      status: 'pending',
      outputs: {},
      error: undefined,
      rawStatus: undefined,
      clientId: typeof clientId === 'string' ? clientId : undefined,
      messages: [],
      executed: [],
      created: typeof extraData.create_time === 'number' ? extraData.create_time : Date.now(),
      started: undefined,
      firstNodeAt: undefined,
      ended: undefined,
      cacheKey: workflowHash(valid.prompt),
      fail: undefined,
      controller: undefined,
      currentNode: undefined,
    };
    this.jobs.set(job.prompt_id, job);
    this.submissions.set(job.prompt_id, (this.submissions.get(job.prompt_id) ?? 0) + 1);
    // Bounded like the rest of the emulator's memory: the oldest ids go first.
    if (this.submissions.size > MAX_COUNTED_SUBMISSIONS) this.submissions.delete(this.submissions.keys().next().value!);
    lane.pending.push(job);
    this.#status(key);
    // Started on the next tick, so the submit response can leave first (as on a real server, where it races the events).
    setImmediate(() => this.pump(key));
    return job;
  }

  /** A job of `key`, or undefined (also for another key's job). */
  get(key: string, promptId: string): Job | undefined {
    const job = this.jobs.get(promptId);
    return job && job.key === key ? job : undefined;
  }

  /** Every remembered job of `key`, oldest first. */
  jobsOf(key: string): Job[] {
    return [...this.jobs.values()].filter((j) => j.key === key);
  }

  /** The running (in start order) and pending (in queue order) jobs of `key`. */
  queued(key: string): { running: Job[]; pending: Job[] } {
    const lane = this.#lanes.get(key);
    return { running: lane ? [...lane.running] : [], pending: lane ? [...lane.pending] : [] };
  }

  /** Whether every running slot of `key` is taken (a pending job then waits for one: the live cloud's `queued_limited`). */
  slotsFull(key: string): boolean {
    const lane = this.#lanes.get(key);
    return lane !== undefined && lane.running.size >= Math.max(1, this.#ctx.parallelOf(key));
  }

  /** Pending plus running jobs of `key`. */
  queueRemaining(key: string): number {
    const lane = this.#lanes.get(key);
    return lane ? lane.pending.length + lane.running.size : 0;
  }

  /** Cancels the listed pending or running jobs of `key`; returns the ids cancelled. */
  cancel(key: string, ids: readonly string[]): string[] {
    const out: string[] = [];
    for (const id of ids) {
      const job = this.get(key, id);
      if (job && (job.status === 'pending' || job.status === 'in_progress')) {
        this.#interrupt(job);
        out.push(id);
      }
    }
    return out;
  }

  /**
   * Removes the listed pending jobs of `key` from the queue, like the local
   * server's `delete`: no event but `status`, and the jobs are forgotten (no
   * record, no history). Running and finished jobs are untouched. Returns the ids removed.
   */
  remove(key: string, ids: readonly string[]): string[] {
    const lane = this.#lanes.get(key);
    if (!lane) return [];
    const out: string[] = [];
    for (const id of ids) {
      const at = lane.pending.findIndex((j) => j.prompt_id === id);
      if (at < 0) continue;
      lane.pending.splice(at, 1);
      this.jobs.delete(id);
      out.push(id);
    }
    if (out.length > 0) this.#status(key);
    return out;
  }

  /** Ids of the pending jobs of `key`, in queue order. */
  pendingIds(key: string): string[] {
    return this.#lanes.get(key)?.pending.map((j) => j.prompt_id) ?? [];
  }

  /** Cancels every pending job of `key` (not the running ones). */
  clear(key: string): string[] {
    return this.cancel(key, this.pendingIds(key));
  }

  /** Interrupts the running jobs of `key` (only `promptId` when given). */
  interrupt(key: string, promptId?: string): string[] {
    const lane = this.#lanes.get(key);
    if (!lane) return [];
    const running = [...lane.running].filter((j) => promptId === undefined || j.prompt_id === promptId);
    return this.cancel(key, running.map((j) => j.prompt_id));
  }

  /** Makes the next job of `key` that executes fail (skipping the cache). Calls queue up. */
  failNextWith(key: string, spec: FailSpec): void {
    this.#lane(key).failNext.push(spec);
  }

  /** Starts pending jobs of `key` while it has free slots. */
  pump(key: string): void {
    const lane = this.#lanes.get(key);
    if (!lane || this.#closed) return;
    while (lane.pending.length > 0 && lane.running.size < Math.max(1, this.#ctx.parallelOf(key))) {
      const job = lane.pending.shift()!;
      lane.running.add(job);
      void this.#run(job, lane);
    }
  }

  /** Forgets every job, cache and counter; stops running jobs silently. */
  reset(): void {
    for (const job of this.jobs.values()) job.controller?.abort();
    this.jobs.clear();
    this.#lanes.clear();
    this.#finished.length = 0;
    this.#counters.clear();
  }

  /** Stops every timer for good. */
  close(): void {
    this.#closed = true;
    this.reset();
  }

  // -------------------------------------------------------------------------

  #lane(key: string): Lane {
    let lane = this.#lanes.get(key);
    if (!lane) this.#lanes.set(key, (lane = { pending: [], running: new Set(), failNext: [], cache: new Map() }));
    return lane;
  }

  #emit(job: Job, type: string, data: Record<string, unknown>): void {
    if (this.#closed) return;
    if (KEPT_MESSAGES.has(type)) job.messages.push([type, structuredClone(data)]);
    this.#ctx.emit({ kind: 'json', key: job.key, ...this.#to(job), message: { type, data } });
  }

  /** The `clientId` member of a job's events. */
  #to(job: Job): { clientId?: string } {
    return job.clientId === undefined ? {} : { clientId: job.clientId };
  }

  #status(key: string): void {
    if (!this.#closed) {
      this.#ctx.emit({ kind: 'json', key, message: { type: 'status', data: { status: { exec_info: { queue_remaining: this.queueRemaining(key) } } } } });
    }
  }

  async #run(job: Job, lane: Lane): Promise<void> {
    job.status = 'in_progress';
    job.started = Date.now();
    const controller = (job.controller = new AbortController());
    job.fail = lane.failNext.shift();
    const live = () => job.status === 'in_progress' && !controller.signal.aborted;
    const step = async (ms: number) => (await sleep(ms, controller.signal)) && live();

    this.#status(job.key);
    this.#emit(job, 'execution_start', { prompt_id: job.prompt_id, timestamp: Date.now() });

    const failing = job.fail !== undefined || job.order.some((id) => typeof job.prompt[id]!.inputs.fail_with === 'string');
    const cached = failing ? undefined : lane.cache.get(job.cacheKey);
    if (cached) {
      if (!(await step(0))) return;
      this.#emit(job, 'execution_cached', { nodes: [...job.order], prompt_id: job.prompt_id, timestamp: Date.now() });
      const report = this.#ctx.personality.cachedExecuted;
      const states: Record<string, unknown> = {};
      for (const id of job.outputNodes) {
        const output = cached[id];
        if (!output) continue;
        job.outputs[id] = structuredClone(output);
        if (report) this.#emit(job, 'executed', { node: id, display_node: id, output: structuredClone(output), prompt_id: job.prompt_id });
        states[id] = nodeState(job, id, 1, 1, 'finished');
      }
      if (report) this.#emit(job, 'progress_state', { prompt_id: job.prompt_id, nodes: states });
      this.#succeed(job, lane);
      return;
    }

    this.#emit(job, 'execution_cached', { nodes: [], prompt_id: job.prompt_id, timestamp: Date.now() });
    const states: Record<string, unknown> = {};
    for (const id of job.order) {
      const node = job.prompt[id]!;
      const behaviour = NODE_BEHAVIOUR[node.class_type] ?? { progress: false };
      const { stepMs, progressSteps } = this.#ctx.timing();
      const steps = behaviour.progress ? Math.max(1, progressSteps) : 1;
      job.currentNode = id;
      job.firstNodeAt ??= Date.now();
      states[id] = nodeState(job, id, 0, steps, 'running');
      this.#emit(job, 'progress_state', { prompt_id: job.prompt_id, nodes: { ...states } });
      this.#emit(job, 'executing', { node: id, display_node: id, prompt_id: job.prompt_id });
      const failure = this.#failureAt(job, id, node);
      for (let i = 1; i <= steps; i++) {
        if (!(await step(stepMs))) return;
        if (failure) {
          this.#fail(job, lane, id, failure);
          return;
        }
        if (!behaviour.progress) continue;
        this.#emit(job, 'progress', { value: i, max: steps, prompt_id: job.prompt_id, node: id });
        states[id] = nodeState(job, id, i, steps, 'running');
        this.#emit(job, 'progress_state', { prompt_id: job.prompt_id, nodes: { ...states } });
        const image = makePng(8, 8, seedOf(`${job.prompt_id}/${id}/${i}`));
        this.#ctx.emit({ kind: 'preview', key: job.key, ...this.#to(job), promptId: job.prompt_id, nodeId: id, displayNodeId: id, image, mime: 'image/png' });
        this.#ctx.emit({ kind: 'text', key: job.key, ...this.#to(job), promptId: job.prompt_id, nodeId: id, text: `${node.class_type}: step ${i}/${steps}` });
      }
      const output = this.#output(job, id, node, behaviour);
      if (output) {
        job.outputs[id] = output;
        this.#emit(job, 'executed', { node: id, display_node: id, output: structuredClone(output), prompt_id: job.prompt_id });
      }
      states[id] = nodeState(job, id, steps, steps, 'finished');
      this.#emit(job, 'progress_state', { prompt_id: job.prompt_id, nodes: { ...states } });
      job.executed.push(id);
    }
    lane.cache.delete(job.cacheKey);
    lane.cache.set(job.cacheKey, structuredClone(job.outputs));
    if (lane.cache.size > CACHE_PER_KEY) lane.cache.delete(lane.cache.keys().next().value!);
    this.#succeed(job, lane);
  }

  /** Whether (and how) node `id` fails: its own `fail_with`, the key's queued failure, or its partner key's state. */
  #failureAt(job: Job, id: string, node: PromptNode): FailSpec | undefined {
    const own = node.inputs.fail_with;
    if (typeof own === 'string') {
      const message = node.inputs.fail_message;
      return { exceptionType: own, ...(typeof message === 'string' ? { message } : {}) };
    }
    if (job.fail && (job.fail.nodeId === undefined || job.fail.nodeId === id)) return job.fail;
    if (NODE_BEHAVIOUR[node.class_type]?.partner) {
      const mode = job.partnerKey === undefined ? undefined : this.#ctx.modeOf(job.partnerKey);
      if (mode === 'insufficient_credits') return { exceptionType: 'InsufficientFundsError', message: `Insufficient balance to run ${node.class_type}` };
      if (mode === 'inactive') return { exceptionType: 'InactiveSubscriptionError', message: `The subscription of the partner API key is not active (${node.class_type})` };
      if (mode !== 'ok') return { exceptionType: 'ValidationError', message: `The partner API key is not valid (${node.class_type})` };
    }
    return undefined;
  }

  /** What node `id` shows in `executed` (and its record), files written; undefined for a node that shows nothing. */
  #output(job: Job, id: string, node: PromptNode, behaviour: NodeBehaviour): NodeOutput | undefined {
    if (behaviour.output === 'text') return { text: [previewText(node.inputs.source, job.prompt)] };
    if (!behaviour.save) return undefined;
    if (behaviour.output === 'gifs') {
      const ref = this.#save(job, id, node, node.inputs.save_output === false ? 'temp' : 'output', 'gif');
      return { gifs: [{ ...ref, format: 'image/gif', frame_rate: typeof node.inputs.frame_rate === 'number' ? node.inputs.frame_rate : 8 }] };
    }
    const images = [this.#save(job, id, node, behaviour.save)];
    return behaviour.output === 'animated' ? { images, animated: [true] } : { images };
  }

  #save(job: Job, id: string, node: PromptNode, kind: 'output' | 'temp', format: 'png' | 'gif' = 'png'): OutputRef {
    let prefix: string;
    if (kind === 'output') {
      const raw = typeof node.inputs.filename_prefix === 'string' && node.inputs.filename_prefix ? node.inputs.filename_prefix : 'PlatformUI';
      // Flat namespace: a prefix's folders become part of the name.
      prefix = raw.replace(/[\\/]+/g, '_').replace(/[^\w.-]/g, '_');
    } else {
      prefix = `PlatformUI_temp_${Array.from({ length: 5 }, (_, i) => 'abcdefghijklmnopqrstuvwxyz'[seedOf(`${job.prompt_id}${id}${i}`) % 26]).join('')}`;
    }
    const counterKey = `${kind}/${prefix}`;
    const n = (this.#counters.get(counterKey) ?? 0) + 1;
    this.#counters.set(counterKey, n);
    const filename = `${prefix}_${String(n).padStart(5, '0')}_.${format}`;
    const seed = seedOf(`${job.prompt_id}/${id}`);
    const data = format === 'gif' ? makeGif(seed) : makePng(16, 16, seed);
    this.#ctx.files.put({ name: filename, type: kind, size: data.length, contentType: `image/${format}`, data, created: Date.now() });
    return { filename, subfolder: '', type: kind };
  }

  #succeed(job: Job, lane: Lane): void {
    this.#end(job, lane, 'completed');
    this.#emit(job, 'execution_success', { prompt_id: job.prompt_id, timestamp: Date.now() });
    this.#status(job.key);
    this.#emit(job, 'executing', { node: null, prompt_id: job.prompt_id });
    this.pump(job.key);
  }

  #fail(job: Job, lane: Lane, id: string, spec: FailSpec): void {
    const node = job.prompt[id]!;
    job.rawStatus = spec.rawStatus ?? 'error';
    if (spec.rawStatus === 'lost') {
      // The worker died: the job ends without a word, on the socket or in its record.
      this.#end(job, lane, 'failed');
      this.pump(job.key);
      return;
    }
    const message = spec.message ?? exceptionMessage(spec.exceptionType);
    job.error = { exception_type: spec.exceptionType, exception_message: message, node_id: id, node_type: node.class_type };
    this.#end(job, lane, 'failed');
    const currentInputs: Record<string, unknown[]> = {};
    for (const [k, v] of Object.entries(node.inputs)) if (!Array.isArray(v)) currentInputs[k] = [v];
    this.#emit(job, 'execution_error', {
      prompt_id: job.prompt_id,
      node_id: id,
      node_type: node.class_type,
      executed: [...job.executed],
      exception_message: message,
      exception_type: spec.exceptionType,
      traceback: [
        '  File "/app/execution.py", line 518, in execute\n    output_data, output_ui = await get_output_data(prompt_id, unique_id, obj, input_data_all)\n',
        `  File "/app/nodes.py", line 1664, in ${node.class_type.toLowerCase()}\n    raise ${spec.exceptionType}(msg)\n`,
      ],
      current_inputs: currentInputs,
      current_outputs: [...job.order],
      timestamp: Date.now(),
    });
    this.#status(job.key);
    this.#emit(job, 'executing', { node: null, prompt_id: job.prompt_id });
    this.pump(job.key);
  }

  /** Cancels a pending or running job now, events included (the runner then finds it no longer live). */
  #interrupt(job: Job): void {
    const lane = this.#lane(job.key);
    const wasRunning = job.status === 'in_progress';
    job.controller?.abort();
    this.#end(job, lane, 'cancelled');
    const node = job.currentNode === undefined ? undefined : job.prompt[job.currentNode];
    this.#emit(job, 'execution_interrupted', {
      prompt_id: job.prompt_id,
      node_id: wasRunning ? (job.currentNode ?? null) : null,
      node_type: wasRunning ? (node?.class_type ?? null) : null,
      executed: [...job.executed],
      timestamp: Date.now(),
    });
    this.#status(job.key);
    if (wasRunning) this.#emit(job, 'executing', { node: null, prompt_id: job.prompt_id });
    this.pump(job.key);
  }

  #end(job: Job, lane: Lane, status: JobStatusValue): void {
    job.status = status;
    job.ended = Date.now();
    job.currentNode = status === 'cancelled' ? job.currentNode : undefined;
    job.controller = undefined;
    lane.running.delete(job);
    const at = lane.pending.indexOf(job);
    if (at >= 0) lane.pending.splice(at, 1);
    // Bounded history: the oldest finished jobs are forgotten.
    this.#finished.push(job.prompt_id);
    while (this.#finished.length > this.#ctx.historyLimit) this.jobs.delete(this.#finished.shift()!);
  }
}
