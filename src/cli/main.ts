/**
 * `platformui`: the command line of the SDK. Finds the command, takes the
 * global options wherever they stand, parses the command's own options with
 * `node:util` `parseArgs`, runs it, and turns a failure into one line on
 * standard error and an exit code (`errors.ts`). Node only: loaded by the
 * bin (`bin.ts`), never by the SDK's entries.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { version } from '../../package.json';
import { didYouMean } from '../args.ts';
import { parseDuration, UsageError } from './args.ts';
import { commandHelp, GLOBAL_OPTIONS, globalsOf, optionLines, type Command, type CommandArgs, type OptionSpec } from './command.ts';
import { codegen } from './commands/codegen.ts';
import { emulator } from './commands/emulator.ts';
import { example } from './commands/example.ts';
import { job } from './commands/job.ts';
import { jobs } from './commands/jobs.ts';
import { nodesSearch } from './commands/nodes.ts';
import { objectInfo } from './commands/object-info.ts';
import { publishers } from './commands/publishers.ts';
import { queue } from './commands/queue.ts';
import { run } from './commands/run.ts';
import { worker } from './commands/worker.ts';
import { Context, type CliIO, type GlobalOptions } from './context.ts';
import { describeFailure, EXIT, failureJSON, stackOf } from './errors.ts';

/** Every command, in the order `platformui --help` lists them. */
export const COMMANDS: readonly Command[] = [example, run, job, jobs, queue, worker, objectInfo, nodesSearch, publishers, emulator, codegen];

/** The commands that take several --server: a pool. */
const MANY_SERVERS = ['run', 'worker'];

/** The top-level help's examples: a ready-to-run workflow and its input, then the run. */
const FIRST_STEPS = ['platformui example', 'platformui run invert.json --input image=photo.png --out outputs'];

/** `platformui --help`. */
export function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    'Usage: platformui <command> [options]',
    '',
    'Run workflows with live progress, follow jobs, search nodes, start the emulator.',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    'Global options (anywhere on the line):',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Credentials come from the environment (PLATFORMUI_API_KEY, PLATFORMUI_TOKEN) or from',
    '--api-key-file / --token-file, never from the command line (it shows in `ps`).',
    'Exit codes: 0 success, 1 the job failed or was cancelled, 2 usage, 3 authentication,',
    'credits or subscription, 4 the server could not be reached or did not answer in time,',
    '5 the workflow file has problems (not a workflow, or saved in the editor and not',
    'convertible), 130 interrupted, 141 standard output closed while following a job (run stops',
    'its job, as on Ctrl-C). With --json, every failure is also one line on standard output:',
    '{"type":"error","class":…,"code":<exit code>,"status":<HTTP status>?,"message":…,"promptId":…?}.',
    '',
    'Start a server to try it on with `platformui emulator` (it prints the variables to set), then:',
    '',
    'Examples:',
    ...FIRST_STEPS.map((line) => `  ${line}`),
    '',
    '`platformui <command> --help` shows the options and an example of each command.',
    '',
  ].join('\n');
}

/** `platformui nodes --help`: the commands of a group. */
export function groupHelp(group: string, commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  return [
    `Usage: platformui ${group} <command> [options]`,
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    `\`platformui ${group} <command> --help\` shows the options and an example of each command.`,
    '',
  ].join('\n');
}

const processIO = (): CliIO => ({ stdout: process.stdout, stderr: process.stderr, env: process.env });

/** Options that would put a secret on the command line: refused with what to do instead. */
const SECRET_FLAGS = /^--(api-key|token|key|password)(=|$)/;

/** The command line, split: the command, its arguments, the global options. */
interface Parsed {
  command: Command | undefined;
  /** A group named without its command (`nodes`): its commands, for `platformui nodes --help`. */
  group?: { name: string; commands: Command[] };
  help: boolean;
  version: boolean;
  global: GlobalOptions;
  rest: string[];
  /** The first option that is neither global nor known here (`--verison`), for a line without a command. */
  unknown: string | undefined;
}

const SERVER_KINDS = ['auto', 'cloud', 'local', 'v2'] as const;

/** `--server-kind`, else `PLATFORMUI_SERVER_KIND`: one of {@link SERVER_KINDS}, or a usage error naming them. */
function serverKindOf(option: string | undefined): GlobalOptions['serverKind'] {
  const value = option ?? (process.env.PLATFORMUI_SERVER_KIND || undefined);
  if (value === undefined) return undefined;
  if (!(SERVER_KINDS as readonly string[]).includes(value)) {
    throw new UsageError(`${option === undefined ? 'PLATFORMUI_SERVER_KIND' : '--server-kind'}: ${JSON.stringify(value)} is not a kind of server: ${SERVER_KINDS.join(', ')}${didYouMean(value, SERVER_KINDS)}`);
  }
  return value as GlobalOptions['serverKind'];
}

/** Takes the command name(s) and the global options out of `argv`, wherever they stand. */
function split(argv: readonly string[]): Parsed {
  const secret = argv.find((a) => SECRET_FLAGS.test(a));
  if (secret) {
    const name = secret.replace(/=.*$/, '');
    const [variable, file] = name === '--token' ? ['PLATFORMUI_TOKEN', '--token-file'] : ['PLATFORMUI_API_KEY', '--api-key-file'];
    throw new UsageError(`${name}: a secret on the command line shows in \`ps\` and in shell history: set ${variable} or pass ${file} FILE`);
  }
  const globalConfig = Object.fromEntries(Object.entries(GLOBAL_OPTIONS).map(([k, o]) => [k, { type: o.type, ...(o.short ? { short: o.short } : {}) }]));
  const { tokens } = parseArgs({ args: [...argv], options: globalConfig, strict: false, allowPositionals: true, tokens: true });
  const drop = new Set<number>();
  const values: Record<string, string | boolean | string[]> = {};
  // The command's words: `run`, or a group's and its command's (`nodes search`); `help run` is `run --help`.
  const name: string[] = [];
  let helpWord = false;
  let terminated = false;
  let unknown: string | undefined;
  for (const t of tokens) {
    if (t.kind === 'option-terminator') terminated = true;
    if (terminated) continue;
    if (t.kind === 'option' && !Object.hasOwn(GLOBAL_OPTIONS, t.name)) unknown ??= t.rawName;
    if (t.kind === 'option' && Object.hasOwn(GLOBAL_OPTIONS, t.name)) {
      const spec = GLOBAL_OPTIONS[t.name]!;
      if (spec.type === 'string' && typeof t.value !== 'string') throw new UsageError(`--${t.name} needs a value`);
      if (spec.type === 'boolean' && t.value !== undefined) throw new UsageError(`--${t.name} takes no value`);
      // A repeated --server makes a pool (run); other options keep their last value.
      if (spec.multiple) values[t.name] = [...((values[t.name] as string[] | undefined) ?? []), t.value as string];
      else values[t.name] = t.value ?? true;
      drop.add(t.index);
      if (t.value !== undefined && !t.inlineValue) drop.add(t.index + 1);
    } else if (t.kind === 'positional') {
      const first = name.length === 0;
      const groupMember = name.length === 1 && !COMMANDS.some((c) => c.name === name[0]) && COMMANDS.some((c) => c.name === `${name[0]} ${t.value}`);
      if (first && t.value === 'help' && !helpWord) helpWord = true;
      else if (first || groupMember) name.push(t.value);
      else continue;
      drop.add(t.index);
    }
  }
  const help = helpWord || values.help === true;
  const joined = name.join(' ');
  const command = COMMANDS.find((c) => c.name === joined);
  let groupOf: Parsed['group'];
  if (name.length > 0 && !command) {
    const members = COMMANDS.filter((c) => c.name.startsWith(`${name[0]} `));
    const group = members.map((c) => c.name);
    // `platformui nodes --help` (or `help nodes`): the group's commands, not an error.
    if (help && name.length === 1 && members.length) groupOf = { name: name[0]!, commands: members };
    else {
      const names = COMMANDS.map((c) => c.name);
      throw new UsageError(
        group.length
          ? `${name[0]}: which one? ${group.map((g) => `platformui ${g}`).join(', ')}`
          : `unknown command ${JSON.stringify(joined)}${didYouMean(joined, names)}: the commands are ${names.join(', ')}`,
      );
    }
  }
  return {
    command,
    ...(groupOf ? { group: groupOf } : {}),
    help,
    version: values.version === true,
    unknown,
    global: {
      server: (values.server as string[] | undefined)?.at(-1),
      servers: (values.server as string[] | undefined) ?? [],
      serverKind: serverKindOf(values['server-kind'] as string | undefined),
      apiKeyFile: values['api-key-file'] as string | undefined,
      tokenFile: values['token-file'] as string | undefined,
      timeout: typeof values.timeout === 'string' ? parseDuration(values.timeout, '--timeout') : undefined,
      json: values.json === true,
      verbose: values.verbose === true,
      noColor: values['no-color'] === true,
    },
    rest: argv.filter((_, i) => !drop.has(i)),
  };
}

/** The command's own options and arguments, checked. */
function parseCommand(command: Command, rest: string[]): CommandArgs {
  if (command.passthrough) return { values: {}, positionals: [], raw: rest };
  const options = Object.fromEntries(
    Object.entries(command.options).map(([k, o]: [string, OptionSpec]) => [k, { type: o.type, ...(o.multiple ? { multiple: true } : {}), ...(o.short ? { short: o.short } : {}) }]),
  );
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
  } catch (err) {
    // Node's first sentence says it (`Unknown option '--x'`); the rest suggests `--`, which is no help here.
    const first = (err as Error).message.split('. ')[0]!;
    const option = /^Unknown option '--([^']+)'/.exec(first)?.[1];
    throw new UsageError(option === undefined ? first : `${first}${didYouMean(option, [...Object.keys(command.options), ...Object.keys(GLOBAL_OPTIONS)], '--')}`);
  }
  const { positionals } = parsed;
  const usage = `platformui ${command.name}${command.synopsis ? ` ${command.synopsis}` : ''}`;
  if (positionals.length < command.args.min) throw new UsageError(`missing argument: ${usage}`);
  if (positionals.length > command.args.max) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[command.args.max])}: ${usage}`);
  return { values: parsed.values as CommandArgs['values'], positionals, raw: rest };
}

/** Takes a command's other spellings of `--server` (codegen's `--url`) as `--server`. */
function serverAliases(command: Command, values: CommandArgs['values'], global: GlobalOptions): GlobalOptions {
  for (const [name, spec] of Object.entries(command.options)) {
    const value = values[name];
    if (!spec.server || typeof value !== 'string') continue;
    if (global.server !== undefined && global.server !== value) throw new UsageError(`--${name} and --server name different servers: give one`);
    global = { ...global, server: value, servers: [value] };
  }
  return global;
}

/**
 * Runs `platformui` with `argv` (without `node` and the script) and resolves
 * with the exit code; writes to `io` (the process's streams by default).
 *
 * @example
 * ```ts
 * process.exitCode = await main(['run', 'workflow.json', '--out', 'outputs']);
 * ```
 */
export async function main(argv: readonly string[], io: CliIO = processIO()): Promise<number> {
  let parsed: Parsed;
  let args: CommandArgs;
  // Once the command is known, its parse errors name it and its help.
  let named = '';
  try {
    parsed = split(argv);
    if (parsed.version) {
      io.stdout.write(`${version}\n`);
      return EXIT.ok;
    }
    if (!parsed.command && parsed.group) {
      io.stdout.write(groupHelp(parsed.group.name, parsed.group.commands));
      return EXIT.ok;
    }
    if (!parsed.command && parsed.unknown !== undefined && !parsed.help) {
      const name = parsed.unknown.replace(/^--?/, '');
      throw new UsageError(`Unknown option '${parsed.unknown}'${parsed.unknown.startsWith('--') ? didYouMean(name, Object.keys(GLOBAL_OPTIONS), '--') : ''}`);
    }
    if (!parsed.command) {
      // Bare `platformui` is a usage error; `platformui --help` is not.
      (parsed.help ? io.stdout : io.stderr).write(mainHelp());
      return parsed.help ? EXIT.ok : EXIT.usage;
    }
    if (parsed.help && !parsed.command.passthrough) {
      io.stdout.write(commandHelp(parsed.command));
      return EXIT.ok;
    }
    named = ` ${parsed.command.name}`;
    if (parsed.global.servers.length > 1 && !MANY_SERVERS.includes(parsed.command.name)) throw new UsageError('--server: only run and worker take several servers (a pool)');
    if (parsed.command.service === 'none') {
      // Ignored silently, they would look as if they had been obeyed.
      const { server, apiKeyFile, tokenFile, timeout } = parsed.global;
      const given = Object.entries({ server, 'api-key-file': apiKeyFile, 'token-file': tokenFile, timeout }).find(([, v]) => v !== undefined)?.[0];
      if (given) throw new UsageError(`--${given}: platformui ${parsed.command.name} talks to no server`);
    }
    if (parsed.command.globals) {
      const { json, verbose, noColor } = parsed.global;
      const taken = globalsOf(parsed.command);
      // Refused rather than ignored: an ignored --json would leave a script reading text.
      const given = Object.entries({ json, verbose, 'no-color': noColor }).find(([name, v]) => v && !taken.includes(name))?.[0];
      if (given) throw new UsageError(`--${given}: platformui ${parsed.command.name} does not take it`);
    }
    args = parseCommand(parsed.command, parsed.help ? ['--help'] : parsed.rest);
    parsed.global = serverAliases(parsed.command, args.values, parsed.global);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // --json may be what could not be parsed: as written, it still asks for the error as JSON.
    if (argv.includes('--json')) io.stdout.write(`${JSON.stringify(failureJSON(err, { code: EXIT.usage, lines: [message] }))}\n`);
    io.stderr.write(`platformui${named}: ${message}\n(see platformui${named} --help)\n`);
    return EXIT.usage;
  }
  const { command, global } = parsed;
  const ctx = new Context(global, io);
  try {
    return await command.run(ctx, args);
  } catch (err) {
    const failure = describeFailure(err, ctx.failureContext(command.service === 'registry' ? 'registry' : 'cloud'));
    // A script reads the error from standard output (its last line); a person still gets it on standard error.
    // Not once standard output is closed: nobody reads it.
    if (global.json && failure.code !== EXIT.brokenPipe) ctx.printJSON(failureJSON(err, failure));
    // The display wrote it to the terminal already: standard error gets it only when it goes elsewhere.
    const seen = ctx.failureShown && io.stdout.isTTY === true && io.stderr.isTTY === true;
    // Through the context's streams: on a terminal they erase the "waiting for …" line first.
    if (!seen) for (const line of failure.lines) ctx.io.stderr.write(`platformui ${command.name}: ${line}\n`);
    if (failure.code === EXIT.usage) ctx.io.stderr.write(`(see platformui ${command.name} --help)\n`);
    if (global.verbose) ctx.io.stderr.write(`${stackOf(err)}\n`);
    return failure.code;
  } finally {
    ctx.close();
  }
}
