/**
 * `platformui job <prompt_id>`: one job's state, error and output files; with
 * `--follow`, its progress on the display until it ends; with `--out`, its
 * output files downloaded once it has completed. Ctrl-C only stops following:
 * the job was not started here and keeps running.
 *
 * @module
 */
import { Workflow, type CloudClient, type JobRecord, type JobStatusResult, type NodeOutputs } from '../../index.ts';
import {
  APIConnectionError,
  AuthenticationError,
  filesOf,
  InsufficientCreditsError,
  NotFoundError,
  PermissionDeniedError,
  SubscriptionInactiveError,
} from '../../index.ts';
import type { Command } from '../command.ts';
import type { Context } from '../context.ts';
import { oneLine, textsOf } from '../display/render.ts';
import { downloadAll, prepareOut } from '../download.ts';
import { EXIT, Interrupted } from '../errors.ts';
import { formatTime } from '../format.ts';
import { followerEnds, labelsOf, withDisplay } from '../live.ts';

/** What is known of a job: its status (every server has one) and its record (where the server keeps them). */
interface JobView {
  status: JobStatusResult;
  record: JobRecord | undefined;
}

/**
 * The status and, where the server keeps records, the record. The spec's
 * status endpoint carries the outputs itself; a local server answers the
 * status from the record.
 */
async function read(cloud: CloudClient, id: string): Promise<JobView> {
  const status = await Promise.resolve(cloud.getJobStatus(id)).catch((err: unknown) => {
    throw err instanceof NotFoundError ? new Error(`this server has no job ${id} (404): \`platformui jobs\` lists the recent ones`) : err;
  });
  const record = await Promise.resolve(cloud.getJob(id)).catch((err: unknown) => {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  });
  return { status, record };
}

function outputsOf(view: JobView): Record<string, NodeOutputs> {
  const fromStatus = (view.status as { outputs?: unknown }).outputs;
  return (view.record?.outputs ?? (fromStatus && typeof fromStatus === 'object' ? fromStatus : {})) as Record<string, NodeOutputs>;
}

/** The failure of a failed job in one line, from whatever the server kept. */
function errorOf(view: JobView): string | undefined {
  const e = (view.record?.execution_error ?? undefined) as Record<string, unknown> | undefined;
  if (e) return [e.node_type && `${String(e.node_type)} #${String(e.node_id)}`, e.exception_type, e.exception_message].filter(Boolean).join(': ');
  const s = view.status as { error_message?: unknown; error?: unknown };
  if (typeof s.error_message === 'string') return s.error_message;
  if (s.error && typeof s.error === 'object') return JSON.stringify(s.error);
  return undefined;
}

/** Prints the job (or its JSON) and downloads its files when asked; the exit code says how it ended. */
async function show(ctx: Context, cloud: CloudClient, id: string, out: string | undefined): Promise<number> {
  const view = await read(cloud, id);
  const phase = view.status.phase;
  const outputs = outputsOf(view);
  const files = filesOf(outputs);
  const saved = out !== undefined && phase === 'completed' ? await downloadAll(cloud, files, out) : [];
  if (ctx.mode === 'json') {
    ctx.printJSON({ id, phase, status: view.status.status, ...(view.record ? { record: view.record } : {}), files, saved });
  } else {
    const r = view.record;
    ctx.print(`${ctx.style('bold', `job ${id}`)}  ${phase}${view.status.status !== phase ? ` (${view.status.status})` : ''}`);
    if (r?.create_time) ctx.print(`  created   ${formatTime(r.create_time)}`);
    if (r?.execution_start_time) ctx.print(`  started   ${formatTime(r.execution_start_time)}`);
    if (r?.execution_end_time) ctx.print(`  ended     ${formatTime(r.execution_end_time)}`);
    const error = phase === 'failed' ? errorOf(view) : undefined;
    if (error) ctx.print(`  error     ${error}`);
    for (const f of files) {
      // Said when it is not the usual: a key other than images (gifs, latents, …), a type other than output.
      const notes = [f.mediaType !== 'images' && f.mediaType, f.type && f.type !== 'output' && f.type].filter(Boolean);
      ctx.print(`  output    ${f.filename}${notes.length ? ` (${notes.join(', ')})` : ''}`);
    }
    for (const t of textsOf(outputs)) ctx.print(`  text      #${t.nodeId}: ${oneLine(t.text)}`);
    for (const s of saved) ctx.print(`  saved     ${s.path} (${s.bytes} bytes)`);
  }
  return phase === 'failed' || phase === 'cancelled' ? 1 : 0;
}

/** `platformui job`. */
export const job: Command = {
  name: 'job',
  summary: "a job's state and outputs; --follow its progress until it ends",
  synopsis: '<prompt_id> [--follow] [--out DIR]',
  description: [
    "Shows a job's state, its error if it failed, and its output files; with --out, downloads them",
    '(once it has completed). --follow shows its progress until it ends, then downloads its outputs',
    'into --out (default: ., as run does). Ctrl-C stops following; the job keeps running.',
    'Exit code 1 if the job failed or was cancelled.',
  ].join('\n'),
  options: {
    follow: { type: 'boolean', short: 'f', help: 'follow the job until it ends, with live progress' },
    out: { type: 'string', value: 'DIR', help: 'download its outputs into DIR (with --follow: default .; created if missing; existing files are kept)' },
  },
  args: { min: 1, max: 1 },
  service: 'cloud',
  // The newest job's id from `platformui jobs`: each line runs as written once a job has run.
  examples: ['platformui job "$(platformui jobs --limit 1 --quiet)"', 'platformui job "$(platformui jobs --limit 1 --quiet)" --follow --out outputs'],
  async run(ctx, { values, positionals }) {
    const id = positionals[0]!;
    const out = typeof values.out === 'string' ? values.out : undefined;
    // Before any request, as run does: following a job to its end only to fail saving its outputs helps no one.
    if (out !== undefined || values.follow) await prepareOut(out ?? '.');
    const cloud = await ctx.cloud();
    if (!values.follow) return show(ctx, cloud, id, out);
    // Labels for the display from the job's own workflow, when the server keeps it. A refused key,
    // credits or an unreachable server end it here, before the socket is opened: following with a
    // key the server refuses must fail at once (exit 3), not wait on a socket that cannot open.
    const record = await Promise.resolve(cloud.getJob(id)).catch((err: unknown) => {
      const fatal = [AuthenticationError, PermissionDeniedError, InsufficientCreditsError, SubscriptionInactiveError, APIConnectionError].some((E) => err instanceof E);
      if (fatal) throw err;
      return undefined;
    });
    const prompt = (record?.workflow as { prompt?: unknown } | undefined)?.prompt;
    let wf: Workflow | undefined;
    try {
      wf = prompt && typeof prompt === 'object' ? Workflow.from(prompt) : undefined;
    } catch {
      wf = undefined;
    }
    return withDisplay(ctx, labelsOf(wf), async (display, interrupt) => {
      display.info(`Following job ${id}`);
      try {
        const result = await cloud.follow(id, { signal: interrupt.signal, onEvent: (e) => display.event(e), ...followerEnds(display) });
        const files = await downloadAll(cloud, result.files, out ?? '.', interrupt.signal);
        display.finish({ promptId: id, files, outputs: result.outputs });
        return 0;
      } catch (err) {
        if (interrupt.brokenPipe) throw new Interrupted(`standard output was closed: stopped following job ${id} (it keeps running)`, EXIT.brokenPipe, id);
        if (interrupt.interrupted) throw new Interrupted(`interrupted: stopped following job ${id} (it keeps running)`, EXIT.interrupted, id);
        if (err instanceof NotFoundError) throw new Error(`this server has no job ${id} (404): \`platformui jobs\` lists the recent ones`);
        throw err;
      }
    }, 'follower');
  },
};
