/**
 * `platformui run`: reads a workflow (the API format, or the editor's saved
 * format converted with the server's object_info), applies `--set`s by input
 * name, uploads each `--input` file into its input, submits, follows the job
 * on the progress display, and downloads every output into `--out`.
 *
 * Everything the command line can get wrong is checked before the first
 * request (exit 2, nothing uploaded), but for a file saved in the editor:
 * its conversion needs the server's object_info, asked for first. Once the
 * job exists it is this command's: Ctrl-C, `--timeout`, a closed standard
 * output (exit 141) or any other way of giving up stops it on the server
 * (only it) before the command exits.
 *
 * @module
 */
import { readFile, stat } from 'node:fs/promises';
import { APIConnectionError, ExecutionError, InvalidArgumentError, JobCancelledError, Workflow, WorkflowValidationError, type CloudClient, type NamedInput, type NodeHandle, type PoolJob, type SocketEvent } from '../../index.ts';
import type { EditorWorkflowJSON } from '../../cloud/client.ts';
import type { ObjectInfo } from '../../schemas/cloud.ts';
import { rangeText } from '../../schemas/describe.ts';
import { isEditorFormat } from '../../workflow/issue.ts';
import { didYouMean } from '../../args.ts';
import { parseAssignment, parseDuration, parseValue, unreadable, UsageError } from '../args.ts';
import type { Command } from '../command.ts';
import type { Context } from '../context.ts';
import { downloadAll, prepareOut } from '../download.ts';
import { EXIT, Interrupted, WorkflowFileError } from '../errors.ts';
import { followerEnds, labelsOf, withDisplay } from '../live.ts';
import { clip, table } from '../format.ts';
import { describeNode, findInput, isLink } from '../targets.ts';
import { DEFAULT_QUEUE, redisUrl } from '../queue-entry.ts';
import { runQueued } from './run-queue.ts';

/** How long Ctrl-C waits for the job to be stopped before exiting anyway (a second Ctrl-C does not wait). */
const STOP_WAIT_MS = 15_000;

/**
 * Reads the workflow file: the API format, or the editor's saved format,
 * converted with the server's object_info (`info`, asked for only then, or
 * when `describe` wants types and ranges). A file that cannot be read is the
 * command line's mistake (exit 2); every problem in the file, a conversion's
 * included (each naming its node), is the file's ({@link WorkflowFileError},
 * exit 5). `saved` is the editor's file as read, when it is one.
 */
async function readWorkflow(file: string, info: () => Promise<ObjectInfo>, describe: boolean, widgetValues: WidgetValues | undefined): Promise<{ wf: Workflow; saved?: EditorWorkflowJSON }> {
  const text = await readFile(file, 'utf8').catch((err: unknown) => {
    throw unreadable('', file, err);
  });
  let saved: EditorWorkflowJSON | undefined;
  try {
    const json: unknown = JSON.parse(text);
    if (isEditorFormat(json)) saved = json as EditorWorkflowJSON;
  } catch {
    // Not JSON: Workflow.from says so.
  }
  const objectInfo = saved || describe ? await info() : undefined;
  try {
    if (!saved) return { wf: Workflow.from(text, objectInfo) };
    return { wf: Workflow.fromEditor(saved, objectInfo!, widgetValues ? { widgetValues } : {}), saved };
  } catch (err) {
    if (!(err instanceof InvalidArgumentError)) throw err;
    const issues = err.issues ?? [];
    throw new WorkflowFileError(issues.length > 1 ? `${file}: ${issues.length} problems:\n${issues.map((i) => `  ${i.message}`).join('\n')}` : `${file}: ${err.message.replace(/^workflow: /, '')}`);
  }
}

/**
 * The server's object_info, to convert an editor file and describe its inputs:
 * one request; with several --server, to the first that answers, in order.
 */
async function objectInfoOf(ctx: Context): Promise<ObjectInfo> {
  if (ctx.global.servers.length <= 1) return (await ctx.cloud()).getObjectInfo();
  const pool = await ctx.pool();
  let failure: unknown;
  for (const server of ctx.global.servers) {
    try {
      return await pool.client(server)!.getObjectInfo();
    } catch (err) {
      failure = err;
    }
  }
  throw failure;
}

/**
 * Whether `--set` `text` names an input the workflow does not hold (a typo, or
 * one not set yet): only the server's object_info can tell which, so the
 * workflow is then read with it, and `set()` refuses an input its class does
 * not have, with the closest name, as for `--list-inputs`.
 */
function namesNewInput(wf: Workflow, text: string): boolean {
  const at = text.indexOf('=');
  try {
    const { node, input } = findInput(wf, at > 0 ? text.slice(0, at) : text, '--set', false);
    return node.inputs[input] === undefined;
  } catch (err) {
    if (err instanceof UsageError) return false;
    throw err;
  }
}

/**
 * Applies one `--set NAME=VALUE`: a named input through `with()` (which keeps
 * to the interface an editor file exposes); `NODE.INPUT` for an input fed by a
 * link or not set yet through `set()`. Returns the workflow to go on with.
 */
function applySet(wf: Workflow, text: string): Workflow {
  const { left, right } = parseAssignment(text, '--set', 'NAME=VALUE, like seed=42 or "Positive prompt.text=a cat"');
  const value = parseValue(right);
  let target: { node: NodeHandle; input: string } | undefined;
  try {
    target = findInput(wf, left, '--set', false);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    // Neither a name nor NODE.INPUT: with() says why, with the closest name.
  }
  try {
    if (!target) return wf.with({ [left]: value });
    const held = target.node.inputs[target.input];
    return held === undefined || isLink(held) ? wf.set(target.node.id, target.input, value) : wf.with({ [`${target.node.id}.${target.input}`]: value });
  } catch (err) {
    if (!(err instanceof InvalidArgumentError)) throw err;
    const message = err.field !== undefined && err.message.startsWith(`${err.field}: `) ? err.message.slice(err.field.length + 2) : err.message;
    throw new UsageError(`--set ${left}: ${message}`);
  }
}

/** `--list-inputs`: the inputs --set can name, with their types, values and what they allow. */
function listInputs(ctx: Context, wf: Workflow): number {
  const inputs = wf.inputs();
  if (ctx.mode === 'json') {
    for (const i of inputs) ctx.printJSON(i);
    return 0;
  }
  const allowed = (i: NamedInput) =>
    [
      // An upload's values are the server's files so far: what to pass is a file of one's own.
      i.upload ? 'a file: --input NAME=FILE uploads one' : i.values && `${clip(i.values.map((v) => JSON.stringify(v)).join(', '), 48)}${i.values.length > 1 ? ` (${i.values.length} values)` : ''}`,
      rangeText(i.min, i.max).trim(),
      i.step !== undefined && `step ${i.step}`,
      i.default !== undefined && `default ${JSON.stringify(i.default)}`,
    ]
      .filter(Boolean)
      .join(', ');
  const rows = inputs.map((i) => [i.names[0]!, `#${i.nodeId} ${i.classType}`, i.type ?? '-', clip(JSON.stringify(i.value) ?? '-', 40), allowed(i)]);
  for (const line of table([['NAME', 'NODE', 'TYPE', 'VALUE', 'ALLOWED'], ...rows])) ctx.print(line);
  const first = inputs[0]?.names.at(-1);
  ctx.print(`${inputs.length} input${inputs.length === 1 ? '' : 's'}${first ? `: set one with --set NAME=VALUE (or ID.INPUT, like ${first}=…)` : ''}`);
  return 0;
}

/** One `--input`: the file and the input it goes to, checked (the file exists) before anything is uploaded. */
interface Upload {
  file: string;
  nodeId: string;
  input: string;
  label: string;
}

async function planUpload(wf: Workflow, text: string): Promise<Upload> {
  const { left, right } = parseAssignment(text, '--input', 'NAME=FILE, like image=./photo.png');
  const { node, input } = findInput(wf, left, '--input', true);
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

type WidgetValues = 'strict' | 'editor';
const WIDGET_VALUES: readonly WidgetValues[] = ['strict', 'editor'];

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** `platformui run`. */
export const run: Command = {
  name: 'run',
  summary: 'run a workflow: upload inputs, follow its progress, download its outputs',
  synopsis: '<workflow.json> [options]',
  description: [
    'Runs a workflow as the editor saved it (converted with the server\'s object_info: one request) or',
    'as its "Export (API)" wrote it: applies each --set, uploads each --input file and puts its name',
    'into that input, submits, follows the job, downloads every output file into --out and prints',
    'their paths. Ctrl-C stops this job on the server (only this one) and exits 130; a second Ctrl-C',
    'exits at once.',
    '',
    'A NAME is an input as --list-inputs shows it: TITLE.INPUT ("Positive prompt.text"; a title may',
    'hold dots and spaces), INPUT alone where one node has it (seed), or ID.INPUT (3.steps). When the',
    'editor\'s file names the inputs of its app mode, those are the names --set takes. A node is also',
    'its class (KSampler.seed), and ID.inputs.INPUT reaches an input fed by a link or not set yet.',
    '--input image=FILE goes to the one node whose "image" input holds a value (not a link); with',
    'several, name it: --input 10.image=FILE.',
    'A --set VALUE is JSON when it parses (42, true, ["4", 0], "007" for a string of digits), else text.',
    'A --set of an input the file does not hold (a typo, or one not set yet) is checked against the',
    "server's object_info (one request): an input the node's class lacks is refused, with the closest.",
    'A file that is not a workflow, or saved in the editor and not convertible, exits 5 (fix the file).',
    '',
    '--timeout DURATION (90s, 10m, 1h) also stops the job when it sends nothing for that long.',
    '',
    'With several --server, the job goes to the one that has its nodes and models and the least work',
    '(a CloudPool): the --input files are uploaded there, and a server that never got the job hands',
    'it to another: platformui run invert.json --server http://gpu-a:8188 --server http://gpu-b:8188',
    'A file saved in the editor is checked with the object_info of the first that answers; run as',
    'saved, each server converts it with its own.',
    '',
    'With --queue URL, the job goes to a Redis queue instead, and a worker runs it (platformui worker):',
    'this command follows it and downloads its outputs from the server that ran it (--server, or the',
    'environment, gives that server\'s key as for any server). Ctrl-C cancels it wherever it is.',
    'A job no running worker can take is refused at once; --wait-for-worker 5m waits that long for one',
    'to start (workers down for a deploy, started on demand) before refusing it.',
    'Needs bullmq and ioredis (npm install bullmq ioredis): README "Many processes and machines".',
  ].join('\n'),
  options: {
    set: { type: 'string', multiple: true, value: 'NAME=VALUE', help: 'set an input ("Positive prompt.text=a cat", seed=42, 3.steps=20)' },
    input: { type: 'string', multiple: true, value: 'NAME=FILE', help: 'upload FILE and put its name into that input (image=./photo.png)' },
    out: { type: 'string', value: 'DIR', help: 'where the outputs go (default: .; created if missing; existing files are kept)' },
    validate: { type: 'boolean', help: "check the workflow against the server's object_info first (nothing is submitted if it has errors)" },
    'widget-values': { type: 'string', value: 'strict|editor', help: "an editor file's node whose saved values do not fit its class: refuse (strict, the default), or convert as the editor does and say what changed" },
    'list-inputs': { type: 'boolean', help: 'list the inputs --set can name (type, value, allowed values, range, default), after any --set; run nothing' },
    queue: { type: 'string', value: 'URL', help: 'add the job to the Redis queue at URL (redis://host:6379) for a worker to run, instead of submitting it' },
    'queue-name': { type: 'string', value: 'NAME', help: `with --queue: the queue's name (default ${DEFAULT_QUEUE})` },
    'wait-for-worker': { type: 'string', value: 'DURATION', help: 'with --queue: wait that long (30s, 10m) for a worker that can run the job, instead of refusing it at once' },
  },
  args: { min: 1, max: 1 },
  service: 'cloud',
  // Each runs as written where `platformui example` ran, against the server of PLATFORMUI_CLOUD_URL.
  examples: [
    'platformui run invert.json --input image=photo.png --out outputs',
    'platformui run invert.json --list-inputs',
    "platformui run invert.json --input image=photo.png --set 'Save Inverted.filename_prefix=night' --validate --timeout 10m",
    'platformui run invert.json --input image=photo.png --queue redis://localhost:6379 --out outputs   # needs Redis and a worker',
  ],
  async run(ctx, { values, positionals }) {
    // The command line, checked whole before the first request.
    const file = positionals[0]!;
    const widgetValues = values['widget-values'] as WidgetValues | undefined;
    if (widgetValues !== undefined && !WIDGET_VALUES.includes(widgetValues)) {
      throw new UsageError(`--widget-values: must be strict or editor, got ${JSON.stringify(widgetValues)}${didYouMean(widgetValues, WIDGET_VALUES)}`);
    }
    const queue = typeof values.queue === 'string' ? redisUrl(values.queue, '--queue', ctx.io.env) : undefined;
    if (queue === undefined && values['queue-name'] !== undefined) throw new UsageError('--queue-name: the name of a Redis queue, with --queue');
    if (queue === undefined && values['wait-for-worker'] !== undefined) throw new UsageError('--wait-for-worker: how long a job added to a Redis queue waits for a worker, with --queue');
    const waitForWorker = typeof values['wait-for-worker'] === 'string' ? parseDuration(values['wait-for-worker'], '--wait-for-worker') : undefined;
    // The workers' servers judge the workflow when it is added (a PlacementError with their reasons): no --validate of one server's.
    if (queue !== undefined && values.validate) throw new UsageError('--validate: with --queue, the queue checks the workflow against the workers\' servers when it is added');
    const info = () => objectInfoOf(ctx);
    let read = await readWorkflow(file, info, values['list-inputs'] === true, widgetValues);
    if (!read.wf.objectInfo && strings(values.set).some((s) => namesNewInput(read.wf, s))) read = await readWorkflow(file, info, true, widgetValues);
    for (const w of read.wf.warnings) ctx.warn(`Warning: ${w.message}`);
    let wf = read.wf;
    for (const s of strings(values.set)) wf = applySet(wf, s);
    if (values['list-inputs']) return listInputs(ctx, wf);
    const uploads: Upload[] = [];
    for (const i of strings(values.input)) uploads.push(await planUpload(wf, i));
    // An editor file run as saved goes as it is: the SDK converts it (a pool for each server) and sends
    // the saved graph along, as the editor does, so the outputs open in the editor as that graph. Once
    // --set or --input changed a value (or --widget-values editor filled some in), the graph would say
    // otherwise: the converted workflow goes alone.
    const asSaved = read.saved && strings(values.set).length === 0 && uploads.length === 0 && wf.warnings.length === 0;
    const submitted = asSaved ? read.saved! : wf;
    // The global --timeout: each request's (the clients have it), and the job's silence deadline.
    const timeout = ctx.global.timeout;
    const out = typeof values.out === 'string' ? values.out : '.';
    // Before any request: a job whose outputs cannot be saved is credits spent for nothing.
    await prepareOut(out);
    if (queue !== undefined) {
      const inputs = Object.fromEntries(uploads.map((u) => [`${u.nodeId}.inputs.${u.input}`, u.file]));
      const name = typeof values['queue-name'] === 'string' ? values['queue-name'] : DEFAULT_QUEUE;
      return runQueued(ctx, { connection: queue, name, submitted, wf, inputs, out, timeout, waitForWorker });
    }
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
          // The job's end, as the follower decides it (an ending found by a poll included).
          ...followerEnds(display),
        };
        const result = pool
          ? await (placed = pool.submit(submitted, { ...options, inputs: Object.fromEntries(uploads.map((u) => [`${u.nodeId}.inputs.${u.input}`, u.file])) })).result
          : await cloud!.run(submitted, options);
        ended = true;
        interrupt.note = undefined;
        const files = await downloadAll(holder!, result.files, out, signal);
        display.finish({ promptId: result.promptId, files, outputs: result.outputs });
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
        if (interrupt.brokenPipe) throw new Interrupted(`standard output was closed: ${fate}`, EXIT.brokenPipe, promptId);
        if (interrupt.interrupted) throw new Interrupted(`interrupted: ${fate}`, EXIT.interrupted, promptId);
        throw err;
      }
    }, 'follower');
  },
};
