/**
 * `platformui run`: reads an API-format workflow, applies `--set`s, uploads
 * each `--input` file into its input, submits, follows the job on the
 * progress display, and downloads every output into `--out`.
 *
 * Everything the command line can get wrong is checked before the first
 * request (exit 2, nothing uploaded). Once the job exists it is this
 * command's: Ctrl-C, `--timeout`, a closed standard output (exit 141) or any
 * other way of giving up stops it on the server (only it) before the command exits.
 *
 * @module
 */
import { readFile, stat } from 'node:fs/promises';
import { APIConnectionError, ExecutionError, InvalidArgumentError, JobCancelledError, Workflow, WorkflowValidationError, type CloudClient, type PoolJob, type SocketEvent } from '../../index.ts';
import { parseAssignment, parseTarget, parseValue, unreadable, UsageError } from '../args.ts';
import type { Command } from '../command.ts';
import { downloadAll, prepareOut } from '../download.ts';
import { EXIT, Interrupted } from '../errors.ts';
import { labelsOf, withDisplay } from '../live.ts';
import { describeNode, resolveTarget } from '../targets.ts';

/** How long Ctrl-C waits for the job to be stopped before exiting anyway (a second Ctrl-C does not wait). */
const STOP_WAIT_MS = 15_000;

/** Reads the workflow file; every problem is the command line's (exit 2). */
async function readWorkflow(file: string): Promise<Workflow> {
  const text = await readFile(file, 'utf8').catch((err: unknown) => {
    throw unreadable('', file, err);
  });
  try {
    return Workflow.from(text);
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw new UsageError(`${file}: ${err.message.replace(/^workflow: /, '')}`);
    throw err;
  }
}

/** Applies one `--set`, in the words of the option. */
function applySet(wf: Workflow, text: string): void {
  const { left, right } = parseAssignment(text, '--set', 'NODE.INPUT=VALUE, like 6.inputs.text="a cat"');
  const { node, input } = resolveTarget(wf, parseTarget(left, '--set', false), '--set');
  try {
    wf.set(node.id, input, parseValue(right));
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw new UsageError(`--set ${left}: ${err.message}`);
    throw err;
  }
}

/** One `--input`: the file and the input it goes to, checked (the file exists) before anything is uploaded. */
interface Upload {
  file: string;
  nodeId: string;
  input: string;
  label: string;
}

async function planUpload(wf: Workflow, text: string): Promise<Upload> {
  const { left, right } = parseAssignment(text, '--input', '[NODE.]INPUT=FILE, like image=./photo.png');
  const { node, input } = resolveTarget(wf, parseTarget(left, '--input', true), '--input');
  const info = await stat(right).catch((err: unknown) => {
    throw unreadable(`--input ${left}`, right, err);
  });
  if (!info.isFile()) throw new UsageError(`--input ${left}: ${right} is not a file`);
  return { file: right, nodeId: node.id, input, label: `${describeNode(node)}.${input}` };
}

/** Stops a job this command gave up on, waiting at most {@link STOP_WAIT_MS}; says whether it is stopped. */
async function stop(cloud: CloudClient, promptId: string): Promise<string | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('no answer'), STOP_WAIT_MS)));
  try {
    return await Promise.race([cloud.stopJob(promptId, { retry: { limit: 3, allowPost: true } }).then(() => undefined, (err: unknown) => (err instanceof Error ? err.message : String(err))), waited]);
  } finally {
    clearTimeout(timer);
  }
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** `platformui run`. */
export const run: Command = {
  name: 'run',
  summary: 'run a workflow: upload inputs, follow its progress, download its outputs',
  synopsis: '<workflow.json> [options]',
  description: [
    'Runs an API-format workflow (the editor\'s "Export (API)"): applies each --set, uploads each',
    '--input file and puts its name into that input, submits, follows the job, downloads every output',
    'file into --out and prints their paths. Ctrl-C stops this job on the server (only this one) and',
    'exits 130; a second Ctrl-C exits at once.',
    '',
    'A NODE is a node id (6), a title ("Load Photo", quoted when it has dots or spaces) or a class',
    '(LoadImage), and must match one node. --input image=FILE without a node goes to the one node',
    'whose "image" input holds a value (not a link); with several, name it: --input 10.image=FILE.',
    'A --set VALUE is JSON when it parses (42, true, ["4", 0], "007" for a string of digits), else text.',
    '',
    '--timeout DURATION (90s, 10m, 1h) also stops the job when it sends nothing for that long.',
    '',
    'With several --server, the job goes to the one that has its nodes and models and the least work',
    '(a CloudPool): the --input files are uploaded there, and a server that never got the job hands',
    'it to another: platformui run invert.json --server http://gpu-a:8188 --server http://gpu-b:8188',
  ].join('\n'),
  options: {
    set: { type: 'string', multiple: true, value: 'NODE.INPUT=VALUE', help: 'set an input (6.inputs.text="a cat", KSampler.seed=42)' },
    input: { type: 'string', multiple: true, value: '[NODE.]INPUT=FILE', help: 'upload FILE and put its name into that input (image=./photo.png)' },
    out: { type: 'string', value: 'DIR', help: 'where the outputs go (default: .; created if missing; existing files are kept)' },
    validate: { type: 'boolean', help: "check the workflow against the server's object_info first (nothing is submitted if it has errors)" },
  },
  args: { min: 1, max: 1 },
  service: 'cloud',
  // Each runs as written where `platformui example` ran, against the server of PLATFORMUI_CLOUD_URL.
  examples: [
    'platformui run invert.json --input image=photo.png --out outputs',
    'platformui run invert.json --input image=photo.png --set SaveImage.filename_prefix=night --validate --timeout 10m',
  ],
  async run(ctx, { values, positionals }) {
    // The command line, checked whole before the first request.
    const file = positionals[0]!;
    const wf = await readWorkflow(file);
    for (const s of strings(values.set)) applySet(wf, s);
    const uploads: Upload[] = [];
    for (const i of strings(values.input)) uploads.push(await planUpload(wf, i));
    // The global --timeout: each request's (the clients have it), and the job's silence deadline.
    const timeout = ctx.global.timeout;
    const out = typeof values.out === 'string' ? values.out : '.';
    // Before any request: a job whose outputs cannot be saved is credits spent for nothing.
    await prepareOut(out);
    // Several --server: a pool places the job, uploads the inputs where it runs, and moves it off a dead server.
    const pool = ctx.global.servers.length > 1 ? await ctx.pool() : undefined;
    const cloud = pool ? undefined : await ctx.cloud();

    return withDisplay(ctx, labelsOf(wf), async (display, interrupt) => {
      const { signal } = interrupt;
      let promptId: string | undefined;
      // The client of the server that holds the job (with a pool: known once it is placed).
      let holder = cloud;
      // Whether the job reached an end on the server (then there is nothing to stop).
      let ended = false;
      try {
        // Checked before the uploads, so an invalid workflow costs none; the inputs about to be
        // uploaded still hold placeholders, which only the check after the uploads (run's) can judge.
        // (A pool checks each server's classes and models itself before placing the job.)
        if (values.validate && cloud) {
          const uploading = new Set(uploads.map((u) => `${u.nodeId}.${u.input}`));
          const issues = (await cloud.validateWorkflow(wf, { signal })).filter((i) => !uploading.has(`${i.nodeId}.${i.input}`));
          for (const issue of issues) if (issue.severity === 'warning') display.info(`Warning: ${issue.message}`);
          if (issues.some((i) => i.severity === 'error')) throw new WorkflowValidationError(issues);
        }
        if (cloud) {
          for (const u of uploads) {
            const uploaded = await cloud.uploadImage(u.file, { signal });
            wf.set(u.nodeId, u.input, uploaded);
            display.info(`Uploaded ${u.file} as ${uploaded.name} for ${u.label}`);
          }
        }
        let placed: PoolJob | undefined;
        // The job's id, chosen before its submission: a second Ctrl-C while the answer is slow or lost can still name it.
        const chosen = crypto.randomUUID();
        interrupt.note = `job ${chosen} may exist (see platformui job ${chosen})`;
        const options = {
          promptId: chosen,
          signal,
          // Stopped here, awaited: the SDK's own stop runs in the background, and this process exits right after.
          stopOnAbort: false,
          ...(values.validate ? { validate: true } : {}),
          ...(timeout !== undefined ? { timeout } : {}),
          onSubmitted: (id: string) => {
            promptId = id;
            if (pool && placed?.server) {
              holder = pool.client(placed.server);
              display.info(`Placed on ${placed.server}`);
            }
            interrupt.note = `job ${id} may still be running (see platformui job ${id}${pool ? ` --server ${placed?.server}` : ''})`;
            display.submitted(id);
          },
          onEvent: (e: SocketEvent) => display.event(e),
        };
        const result = pool
          ? await (placed = pool.submit(wf, { ...options, inputs: Object.fromEntries(uploads.map((u) => [`${u.nodeId}.inputs.${u.input}`, u.file])) })).result
          : await cloud!.run(wf, options);
        ended = true;
        interrupt.note = undefined;
        const files = await downloadAll(holder!, result.files, out, signal);
        display.finish({ promptId: result.promptId, files });
        return 0;
      } catch (err) {
        if (err instanceof ExecutionError || err instanceof JobCancelledError) ended = true;
        // A submission whose answer was lost names the job it may have made: Ctrl-C stops that one too
        // (without Ctrl-C it is left as the error says: it may exist, and `platformui job` tells).
        if (interrupt.interrupted && promptId === undefined && err instanceof APIConnectionError && err.sent === 'maybe') promptId = err.promptId;
        if (interrupt.interrupted && !interrupt.brokenPipe && promptId !== undefined && !ended) display.info(`Stopping job ${promptId} (Ctrl-C again to quit without waiting)`);
        const problem = promptId !== undefined && !ended && holder ? await stop(holder, promptId) : undefined;
        const unanswered = err instanceof APIConnectionError && err.sent === 'maybe';
        const fate = promptId === undefined ? (unanswered ? 'its submission got no answer: a job may exist' : 'nothing was submitted') : ended ? `job ${promptId} had ended` : problem ? `job ${promptId} may still be running (stopping it failed: ${problem})` : `job ${promptId} was stopped`;
        if (interrupt.brokenPipe) throw new Interrupted(`standard output was closed: ${fate}`, EXIT.brokenPipe);
        if (interrupt.interrupted) throw new Interrupted(`interrupted: ${fate}`);
        throw err;
      }
    });
  },
};
