/**
 * `platformui run --queue URL`: the job is added to the Redis queue instead
 * of being submitted to a server; a worker (`platformui worker`) runs it. The
 * command follows its progress and downloads its outputs from the server that
 * ran it (the result names it), with a client made as `--server`'s is (the
 * same key rule). Ctrl-C cancels the queued job (waiting: it never starts;
 * running: stopped on its server, that job only) and exits 130.
 *
 * @module
 */
import { CloudClient, ExecutionError, JobCancelledError, type SocketEvent, type Workflow } from '../../index.ts';
import type { EditorWorkflowJSON } from '../../cloud/client.ts';
import type { Context } from '../context.ts';
import type { Display } from '../display.ts';
import { downloadAll } from '../download.ts';
import { EXIT, Interrupted } from '../errors.ts';
import { labelsOf, withDisplay } from '../live.ts';
import type { QueueJob, QueueNodeEvent } from '../../queue/index.ts';
import { downloadUrl, loadQueue, queueNamed, shownUrl } from '../queue-entry.ts';

/** How long Ctrl-C waits for the cancellation (as run's stop): a second Ctrl-C does not wait. */
const CANCEL_WAIT_MS = 15_000;

/** What `run` hands over once the command line is checked. */
export interface QueuedRun {
  connection: string;
  name: string;
  /** What is added: the editor's file as saved, or the workflow. */
  submitted: Workflow | EditorWorkflowJSON;
  /** For the display's node labels. */
  wf: Workflow;
  /** `{ '10.inputs.image': path }`: read by the queue at add(), uploaded by the worker where the job runs. */
  inputs: Record<string, string>;
  out: string;
  timeout: number | undefined;
  /** `--wait-for-worker`: how long add() waits for a worker that can run the job (`undefined`: refused at once). */
  waitForWorker: number | undefined;
}

const ABORTED = Symbol('aborted');

/** A queued job's node event as the socket message it was (the display reads those, its ending ones included: no follower runs in this process), under the job's id. */
export function socketEventOf(e: QueueNodeEvent, id: string): SocketEvent {
  const at = e.type === 'execution_error' || e.type === 'execution_interrupted' ? 'node_id' : 'node';
  return { type: e.type, data: { prompt_id: id, ...(e.node !== undefined ? { [at]: e.node } : e.type === 'executing' ? { node: null } : {}), ...(e.nodes ? { nodes: e.nodes } : {}) } } as SocketEvent;
}

/**
 * Tells the display how the queued job ended, from its result: an ending the
 * worker's follower found by a poll sends no ending event (the display ends on
 * those it does send: the first end stands).
 */
function endedAs<T>(display: Display, result: Promise<T>): Promise<T> {
  return result.then(
    (r) => (display.ended({ end: 'completed' }), r),
    (err: unknown) => {
      const data = (err as { data?: unknown }).data;
      const details = typeof data === 'object' && data !== null ? { data: data as Record<string, unknown> } : {};
      if (err instanceof ExecutionError) display.ended({ end: 'failed', ...details });
      else if (err instanceof JobCancelledError) display.ended({ end: 'cancelled', ...details });
      throw err;
    },
  );
}

/** `promise`, or a rejection with {@link ABORTED} once `signal` aborts. */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(ABORTED);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Cancels `job`, waiting at most {@link CANCEL_WAIT_MS}; says what went wrong, if anything. */
async function cancel(job: QueueJob): Promise<string | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('no answer from Redis'), CANCEL_WAIT_MS)));
  try {
    return await Promise.race([job.cancel().then(() => undefined, (err: unknown) => (err instanceof Error ? err.message : String(err))), waited]);
  } finally {
    clearTimeout(timer);
  }
}

/** Adds the job to the queue, follows it, downloads its outputs; resolves with the exit code. */
export async function runQueued(ctx: Context, run: QueuedRun): Promise<number> {
  const { JobQueue } = await loadQueue();
  const queue = new JobQueue({ connection: run.connection, name: run.name });
  try {
    return await withDisplay(ctx, labelsOf(run.wf), async (display, interrupt) => {
      const { signal } = interrupt;
      let job: QueueJob | undefined;
      // Whether the job reached an end (then there is nothing to cancel).
      let ended = false;
      try {
        // Not abandoned half-way: once added, a Ctrl-C during add() cancels the job below.
        job = await queue.add(run.submitted, {
          inputs: run.inputs,
          ...(run.timeout !== undefined ? { timeout: run.timeout } : {}),
          ...(run.waitForWorker !== undefined ? { waitForWorker: run.waitForWorker } : {}),
        });
        if (signal.aborted) throw ABORTED;
        const id = job.id;
        interrupt.note = `queued job ${id} may still run (cancel it with JobQueue.job('${id}').cancel())`;
        display.info(`Queued job ${id} on ${queueNamed(run.name)} at ${shownUrl(run.connection)}`);
        // The worker's node events and steps as the display's socket events: every node counts, not only those with steps.
        job.on('node', (e) => display.event(socketEventOf(e, id)));
        job.on('progress', (p) => display.event({ type: 'progress', data: { value: p.value, max: p.max, node: p.node, prompt_id: id } } as SocketEvent));
        // result() settles once the job has ended (done, failed, cancelled, lost): nothing left to cancel then.
        const result = await unlessAborted(endedAs(display, job.result()).finally(() => (ended = true)), signal);
        interrupt.note = undefined;
        const again = result.resubmittedFrom ? ` (again: ${result.resubmittedFrom.server} lost it)` : '';
        display.info(`Ran as job ${result.promptId} on ${result.server}${again}`);
        // A pool's entry for that server: its `id` is the pool's, not a client option.
        const [server] = await ctx.serverOptions([downloadUrl(result)]);
        const { id: _id, ...options } = server!;
        const client = new CloudClient(options);
        try {
          const files = await downloadAll(client, result.files, run.out, signal);
          display.finish({ promptId: result.promptId, files, outputs: result.outputs });
        } finally {
          client.close();
        }
        return EXIT.ok;
      } catch (err) {
        if (!interrupt.interrupted) throw err;
        if (job && !ended && !interrupt.brokenPipe) display.info(`Cancelling queued job ${job.id} (Ctrl-C again to quit without waiting)`);
        const problem = job && !ended ? await cancel(job) : undefined;
        const fate = !job ? 'nothing was queued' : ended ? `queued job ${job.id} had ended` : problem ? `queued job ${job.id} may still run (cancelling failed: ${problem})` : `queued job ${job.id} was cancelled`;
        throw new Interrupted(`${interrupt.brokenPipe ? 'standard output was closed' : 'interrupted'}: ${fate}`, interrupt.brokenPipe ? EXIT.brokenPipe : EXIT.interrupted);
      }
    });
  } finally {
    await queue.close();
  }
}
