/**
 * The emulator's command line, shared by the `platformui-emulator` bin
 * (`cli.ts`) and `platformui emulator`: parses the options, starts the
 * emulator, prints its URL and credentials, and runs until SIGINT or SIGTERM,
 * then says it stopped. Its `--help` is rendered as every `platformui`
 * command's, from {@link EMULATOR_HELP}.
 *
 *     platformui-emulator [--port N] [--host H] [--personality cloud|spec|local|v2|v2-real] [--step-ms N]
 *                         [--max-upload-bytes N|Infinity] [--synthetic-output NAME:SIZE]... [--log-level LEVEL]
 *
 * @module
 */
import { version } from '../../package.json';
import { didYouMean } from '../args.ts';
import { commandHelp, type Command } from '../cli/command.ts';
import { commandLog, LOG_LEVELS, type LogLevel } from '../transport/log.ts';
import { EMULATOR_TOKEN, startEmulator } from './index.ts';
import { isPersonalityName, PERSONALITY_CHOICES, type PersonalityName } from './personality.ts';

/**
 * The command's help, in the terms of every `platformui` command's (`commandHelp`
 * renders it, for both bins): its options are also the ones {@link parseArgs} takes.
 */
export const EMULATOR_HELP = {
  name: 'emulator',
  summary: 'start the local emulator of the registry, proxy and cloud (until Ctrl-C)',
  synopsis: '[options]',
  description: [
    'Starts the emulator of the registry, the proxy and the cloud on one port, prints its URL, tokens',
    'and keys and, when its cloud wants a key, the line that points the command line and the SDK at',
    'it from another shell (this one runs the emulator until Ctrl-C).',
  ].join('\n'),
  options: {
    port: { type: 'string', value: 'N', help: 'TCP port (default 0: a free one)' },
    host: { type: 'string', value: 'H', help: 'interface to bind (default 127.0.0.1)' },
    personality: {
      type: 'string',
      value: 'NAME',
      help: 'the cloud server imitated: cloud (default; the live service: raw job states, /api/jobs, late outputs), spec (only what the documents show: no /api/jobs), local (a self-hosted server: no API key, /history, events by client_id), v2 (Comfy API v2 as published: /api/v2/*, Authorization: Bearer <key>) or v2-real (Comfy API v2 as the real local server answers: no key, one job at a time)',
    },
    'step-ms': { type: 'string', value: 'N', help: 'simulated step time of cloud jobs and proxy tasks, ms' },
    'max-upload-bytes': { type: 'string', value: 'N', help: 'largest cloud upload in bytes, or Infinity for no limit (default 100 MiB)' },
    'synthetic-output': { type: 'string', multiple: true, value: 'NAME:SIZE', help: 'register a cloud output of SIZE bytes generated when served (SIZE in bytes, or with a KiB/MiB/GiB suffix)' },
    'log-level': { type: 'string', value: 'LEVEL', help: 'off, error, warn (default), info (the start) or debug (a line per request and socket, secrets redacted), to standard error' },
  },
  // Neither output nor errors of its own to shape: it takes only these.
  globals: ['version', 'help'],
  examples: ['platformui emulator --port 8787', 'platformui emulator --port 8188 --personality local'],
} satisfies Omit<Command, 'run' | 'args' | 'service'>;

const usage = (prog: string) => commandHelp({ ...EMULATOR_HELP, args: { min: 0, max: 0 }, service: 'none', run: () => Promise.resolve(0) }, prog);

interface CliArgs {
  port: number;
  host: string;
  personality: PersonalityName;
  stepMs: number | undefined;
  maxUploadBytes: number | undefined;
  synthetic: Array<{ name: string; size: number }>;
  logLevel: LogLevel;
  help: boolean;
  version: boolean;
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kib: 1024, m: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gib: 1024 ** 3 };

/** `1073741824`, `1GiB`, `512MiB`, `64k` → bytes. */
function parseSize(value: string, what: string): number {
  const m = /^(\d+)\s*([a-z]*)$/i.exec(value.trim());
  const unit = m ? UNITS[(m[2] ?? '').toLowerCase()] : undefined;
  const n = m && unit !== undefined ? Number(m[1]) * unit : NaN;
  if (!Number.isSafeInteger(n)) throw new Error(`Invalid ${what}: ${value}`);
  return n;
}

/** The options that take a value. */
const OPTIONS = Object.keys(EMULATOR_HELP.options);
const OPTION = new RegExp(`^--(${OPTIONS.join('|')})(?:=(.*))?$`);

/** Parses `--name value` and `--name=value` options, and `--help`. */
function parseArgs(argv: readonly string[]): CliArgs {
  const out: CliArgs = { port: 0, host: '127.0.0.1', personality: 'cloud', stepMs: undefined, maxUploadBytes: undefined, synthetic: [], logLevel: 'warn', help: false, version: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') {
      out.help = true;
      continue;
    }
    // As `platformui --version`: the two spellings of this command take the same options.
    if (arg === '--version' || arg === '-V') {
      out.version = true;
      continue;
    }
    const m = OPTION.exec(arg);
    if (!m) {
      // The command line's suggestion (`--prot` → `--port`), as its other options get it.
      const near = arg.startsWith('--') ? didYouMean(arg.slice(2).replace(/=.*$/s, ''), OPTIONS, '--') : '';
      throw new Error(`Unknown argument: ${arg.replace(/=.*$/s, '=…')}${near}`);
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined || value === '') throw new Error(`--${m[1]} needs a value`);
    switch (m[1]) {
      case 'port': {
        const port = Number(value);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`Invalid port: ${value}`);
        out.port = port;
        break;
      }
      case 'host':
        out.host = value;
        break;
      case 'personality':
        if (!isPersonalityName(value)) throw new Error(`Invalid personality: ${value} (${PERSONALITY_CHOICES})`);
        out.personality = value;
        break;
      case 'step-ms': {
        const ms = Number(value);
        if (!Number.isFinite(ms) || ms < 0) throw new Error(`Invalid step time: ${value}`);
        out.stepMs = ms;
        break;
      }
      case 'log-level':
        if (!LOG_LEVELS.includes(value.toLowerCase() as LogLevel)) throw new Error(`Invalid log level: ${value} (off, error, warn, info or debug)`);
        out.logLevel = value.toLowerCase() as LogLevel;
        break;
      case 'max-upload-bytes':
        out.maxUploadBytes = /^(inf|infinity|none)$/i.test(value) ? Infinity : parseSize(value, 'upload limit');
        break;
      default: {
        const colon = value.lastIndexOf(':');
        const name = colon > 0 ? value.slice(0, colon) : '';
        if (!name) throw new Error(`--synthetic-output needs NAME:SIZE, got ${value}`);
        out.synthetic.push({ name, size: parseSize(value.slice(colon + 1), 'synthetic output size') });
      }
    }
  }
  return out;
}

/**
 * The variables the command line and the clients read (`PLATFORMUI_CLOUD_URL`
 * and `PLATFORMUI_API_KEY` for the cloud, `PLATFORMUI_BASE_URL` and
 * `PLATFORMUI_TOKEN` for the registry and the proxy), ready to paste. Only
 * with a key to give: pointing `PLATFORMUI_CLOUD_URL` at a keyless local
 * server would let a cloud key already in the environment go to it.
 */
function environmentLine(url: string, key: string | undefined, v2: boolean): string {
  if (key === undefined) return v2 ? `For the command line (Comfy API v2, which the clients never guess): platformui --server-kind v2 --server ${url} …\n` : '';
  // 'auto' never picks v2: the kind goes along.
  return `In another shell (this one runs the emulator until Ctrl-C), for the command line and the SDK:\n  export PLATFORMUI_CLOUD_URL=${url} PLATFORMUI_API_KEY=${key}${v2 ? ' PLATFORMUI_SERVER_KIND=v2' : ''} PLATFORMUI_BASE_URL=${url} PLATFORMUI_TOKEN=${EMULATOR_TOKEN}\n`;
}

/** Where the command writes, and the name it calls itself in its usage. */
export interface EmulatorCommandIO {
  prog?: string;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
}

/**
 * Runs the emulator command with `argv` (without `node` and the script).
 * Resolves with the exit code: 0 after `--help`, or once SIGINT/SIGTERM has
 * closed the emulator; 2 for wrong usage; 1 when the emulator fails to start
 * (or to close).
 */
export async function runEmulatorCommand(argv: readonly string[], io: EmulatorCommandIO = {}): Promise<number> {
  const prog = io.prog ?? 'platformui-emulator';
  const stdout = io.stdout ?? ((text: string) => void process.stdout.write(text));
  const stderr = io.stderr ?? ((text: string) => void process.stderr.write(text));
  let args: CliArgs;
  try {
    args = parseArgs(argv);
  } catch (err) {
    stderr(`${(err as Error).message}\n${usage(prog)}`);
    return 2;
  }
  if (args.help) {
    stdout(usage(prog));
    return 0;
  }
  if (args.version) {
    stdout(`${version}\n`);
    return 0;
  }
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  try {
    emulator = await startEmulator({
      ...commandLog(args.logLevel, stderr),
      port: args.port,
      host: args.host,
      personality: args.personality,
      cloud: {
        ...(args.stepMs !== undefined ? { stepMs: args.stepMs } : {}),
        ...(args.maxUploadBytes !== undefined ? { maxUploadBytes: args.maxUploadBytes } : {}),
      },
      ...(args.stepMs !== undefined ? { proxy: { stepMs: args.stepMs } } : {}),
    });
  } catch (err) {
    stderr(`${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const outputs = args.synthetic.map(({ name, size }) => {
    const ref = emulator.cloud.addSyntheticOutput(name, size);
    return `  ${JSON.stringify(ref)} (${size} bytes)`;
  });
  const tokens = [...emulator.registry.tokens].map(([token, ids]) => `  ${token} -> ${[...ids].join(', ')}`);
  const keys = [...emulator.cloud.keys.keys()];
  const v2 = emulator.cloud.personality.v2 !== undefined;
  const cloudKey = emulator.cloud.personality.requireKey
    ? `Cloud API key (${v2 ? 'Authorization: Bearer' : 'X-API-Key'}): ${keys.join(', ')}`
    : v2
      ? 'Cloud API key: none needed (Comfy API v2 as the real local server: a Bearer token is ignored)'
      : 'Cloud API key: none needed (local server: X-API-Key and the socket token are ignored; routes also without /api)';
  // Runs until a signal: the caller exits with the code this resolves to. Listened for before the banner is
  // printed: a signal sent as soon as the banner is read (a script, a loaded machine) must not find none.
  const stopped = new Promise<string>((resolve) => {
    const on = (name: string) => () => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(name);
    };
    const onInt = on('SIGINT');
    const onTerm = on('SIGTERM');
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
  });
  stdout(
    `platformui emulator listening on ${emulator.url}\nBearer tokens:\n${tokens.join('\n')}\n` +
      `Cloud personality: ${emulator.cloud.personality.name}\n${cloudKey}\n` +
      (outputs.length ? `Synthetic outputs:\n${outputs.join('\n')}\n` : '') +
      environmentLine(emulator.url, emulator.cloud.personality.requireKey ? keys[0] : undefined, v2),
  );

  const signal = await stopped;
  stdout(`\n${signal}: stopping\n`);
  return emulator.close().then(
    () => {
      stdout(`Emulator stopped: ${emulator.url} no longer answers\n`);
      return 0;
    },
    (err: unknown) => {
      stderr(`The emulator did not close cleanly: ${err instanceof Error ? err.message : String(err)}\n`);
      return 1;
    },
  );
}
