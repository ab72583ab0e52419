/**
 * What a command is (its options, arguments, help and run function) and how
 * its `--help` is written, so every command's help reads the same.
 *
 * @module
 */
import type { Context } from './context.ts';

/** One option of a command, in `node:util` `parseArgs` terms plus its help. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  /** The value's placeholder in the help (`DIR`, `DURATION`). */
  value?: string;
  /** Another spelling of `--server` (codegen's `--url`): its value is taken as `--server`'s. */
  server?: true;
  help: string;
}

/** The parsed command line of one command. */
export interface CommandArgs {
  /** Option values by name (`--out` → `values.out`); repeatable ones are arrays. */
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  /** The arguments as given after the command name, globals removed (for commands that parse their own). */
  raw: string[];
}

/** A command of `platformui`. */
export interface Command {
  /** As typed: `run`, `nodes search`. */
  name: string;
  /** One line for `platformui --help`. */
  summary: string;
  /** The arguments after the name in the usage line: `<workflow.json> [options]`. */
  synopsis: string;
  /** What it does, a few lines. */
  description: string;
  options: Record<string, OptionSpec>;
  /** Positional arguments: at least `min`, at most `max`. */
  args: { min: number; max: number };
  /** Commands with one example each at least. */
  examples: string[];
  /** Which service it talks to: names the right variables in errors. */
  service: 'cloud' | 'registry' | 'none';
  /** Whether the command parses its own arguments (`raw`): options are not checked here. */
  passthrough?: boolean;
  /**
   * The global options it takes, when not all of them (those of a server
   * excepted for `service: 'none'`): its help lists only these, and the
   * others are refused rather than ignored.
   */
  globals?: readonly string[];
  /** Runs the command; resolves with the exit code. Throws what `errors.ts` reports. */
  run(ctx: Context, args: CommandArgs): Promise<number>;
}

/** The options every command takes, in `parseArgs` terms. */
export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  server: { type: 'string', multiple: true, value: 'URL', help: 'the server (default: PLATFORMUI_CLOUD_URL, or PLATFORMUI_BASE_URL for registry commands); run takes several: a pool' },
  'server-kind': { type: 'string', value: 'KIND', help: "what the cloud commands' servers speak: auto (default), cloud, local or v2 (Comfy API v2); default PLATFORMUI_SERVER_KIND" },
  'api-key-file': { type: 'string', value: 'FILE', help: 'read the cloud API key from FILE (default: PLATFORMUI_API_KEY); never a key on the command line' },
  'token-file': { type: 'string', value: 'FILE', help: 'read the registry token from FILE (default: PLATFORMUI_TOKEN)' },
  timeout: { type: 'string', value: 'DURATION', help: 'the longest wait for an answer from the server: 90s, 10m, 1h or ms (default 60s); run: also the longest a job may send nothing' },
  json: { type: 'boolean', help: 'machine output: one JSON object per line' },
  verbose: { type: 'boolean', help: 'show the stack of an error' },
  'no-color': { type: 'boolean', help: 'no colours (also NO_COLOR=1; colours only ever on a terminal)' },
  version: { type: 'boolean', short: 'V', help: 'print the version' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

/** Global options that only mean something to a command that talks to a server. */
export const SERVER_OPTIONS = ['server', 'server-kind', 'api-key-file', 'token-file', 'timeout'];

/** Option lines, aligned: `  --out DIR    where to write …`. */
export function optionLines(options: Record<string, OptionSpec>): string[] {
  const left = Object.entries(options).map(([name, o]) => `${o.short ? `-${o.short}, ` : ''}--${name}${o.value ? ` ${o.value}` : ''}${o.multiple ? '…' : ''}`);
  const width = Math.max(0, ...left.map((l) => l.length)) + 2;
  return Object.values(options).map((o, i) => `  ${left[i]!.padEnd(width)}${o.help}`);
}

/** The names of the global options `c` takes. */
export function globalsOf(c: Pick<Command, 'service' | 'globals'>): string[] {
  return Object.keys(GLOBAL_OPTIONS).filter((name) => (c.globals ? c.globals.includes(name) : c.service !== 'none' || !SERVER_OPTIONS.includes(name)));
}

/**
 * The `--help` of a command. `prog` is how it is called when not
 * `platformui <name>` (the `platformui-emulator` bin): its usage line and
 * examples say that instead.
 */
export function commandHelp(c: Command, prog = `platformui ${c.name}`): string {
  const own = Object.keys(c.options).length ? ['', 'Options:', ...optionLines(c.options)] : [];
  const global = Object.fromEntries(globalsOf(c).map((name) => [name, GLOBAL_OPTIONS[name]!]));
  const as = (line: string) => (line.startsWith(`platformui ${c.name}`) ? `${prog}${line.slice(`platformui ${c.name}`.length)}` : line);
  return [
    `Usage: ${prog}${c.synopsis ? ` ${c.synopsis}` : ''}`,
    '',
    c.description,
    ...own,
    '',
    'Global options:',
    ...optionLines(global),
    '',
    c.examples.length > 1 ? 'Examples:' : 'Example:',
    ...c.examples.map((e) => `  ${as(e)}`),
    '',
  ].join('\n');
}
