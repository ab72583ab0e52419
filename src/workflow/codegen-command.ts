/**
 * The `platformui-codegen` command (Node only): reads a server's
 * `object_info` (over HTTP with the client's credentials, or from a file),
 * writes its node types with {@link generateTypes}, prints one line. The API
 * key comes from the environment (`PLATFORMUI_API_KEY`) or a file
 * (`--api-key-file`), never from the command line, where `ps` shows it.
 * `codegen-cli.ts` runs it; tests call {@link runCodegen} directly.
 *
 * @module
 */
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { CloudClient } from '../cloud/client.ts';
import type { ObjectInfo } from '../schemas/cloud.ts';
import { fromEnv } from '../transport/options.ts';
import { describeValue } from '../schemas/explain.ts';
import { isObject } from '../schemas/rule.ts';
import { redactUrl } from '../transport/redact.ts';
import { commandLog } from '../transport/log.ts';
import { generateTypes, type GenerateTypesOptions } from './codegen.ts';

/** What `--help` prints. */
export const USAGE = `Usage: platformui-codegen [--url <server> | --file <object_info.json>] [--out <file.ts>] [options]

Writes the TypeScript node types of a server (from its object_info) for Workflow<Nodes>.

  --url <server>          server to read GET /api/object_info from (default: PLATFORMUI_CLOUD_URL)
  --api-key-file <path>   read the cloud's API key from a file (default: PLATFORMUI_API_KEY;
                          a loopback server needs none); never a key on the command line
  --file <path>           read object_info from a JSON file instead of a server
  --out <path>            file to write (default: standard output)
  --name <TypeName>       name of the exported interface (default: Nodes)
  --import-from <module>  module the SDK's types are imported from (default: @platformui/sdk)
  --max-combo-values <n>  type a combo with more values than this as string (default: 1000)
  -h, --help              print this help

Examples:
  platformui-codegen --url http://127.0.0.1:8188 --out src/nodes.generated.ts
  PLATFORMUI_API_KEY=… platformui-codegen --url https://cloud.example.com --out src/nodes.generated.ts
  platformui-codegen --url https://cloud.example.com --api-key-file ~/.platformui-key --out src/nodes.generated.ts
  platformui-codegen --file object_info.json --out src/nodes.generated.ts
`;

/** Where the command writes: standard output and standard error, or a test's buffers. */
export interface CommandIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /**
   * When true, a failure after the command line was parsed (the server, the
   * key, the file) is thrown instead of printed and returned as exit 1: for a
   * caller with its own error reporting (`platformui codegen`).
   */
  rethrow?: boolean;
}

const processIO: CommandIO = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

/**
 * Runs `platformui-codegen` with `argv` (without `node` and the script) and
 * returns its exit code: 0 done, 1 failed (the server, the file), 2 wrong usage.
 *
 * @example
 * ```ts
 * const code = await runCodegen(['--file', 'object_info.json', '--out', 'src/nodes.generated.ts']);
 * // Wrote src/nodes.generated.ts: 440 node classes (225 KB) from object_info.json in 31 ms
 * ```
 */
export async function runCodegen(argv: readonly string[], io: CommandIO = processIO): Promise<number> {
  let command: Command;
  try {
    command = parseCommand(argv);
  } catch (err) {
    io.stderr(`platformui-codegen: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (command.help) {
    io.stdout(USAGE);
    return 0;
  }
  const started = performance.now();
  try {
    const { objectInfo, source } = command.file !== undefined ? await fromFile(command.file) : await fromServer(command.url, command.apiKeyFile, io.stderr);
    checkNodeDefinitions(objectInfo, source);
    const code = generateTypes(objectInfo, command.options);
    // The classes written: entries that are not objects are skipped (and the file's header does not count them either).
    const classes = Object.values(objectInfo).filter(isObject).length;
    const what = `${classes} node classes (${Math.round(Buffer.byteLength(code) / 1024)} KB) from ${source}`;
    const took = `in ${Math.round(performance.now() - started)} ms`;
    if (command.out === undefined) {
      io.stdout(code);
      io.stderr(`Generated ${what} ${took}\n`);
      return 0;
    }
    // An unchanged file is not rewritten: its timestamp stays, so watchers and builds stay idle.
    const before = await readFile(command.out, 'utf8').catch(() => undefined);
    if (before !== code) await writeFile(command.out, code);
    io.stdout(`${before === code ? `${command.out} is up to date` : `Wrote ${command.out}`}: ${what} ${took}\n`);
    return 0;
  } catch (err) {
    if (io.rethrow) throw err;
    io.stderr(`platformui-codegen: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

interface Command {
  help: boolean;
  url?: string;
  apiKeyFile?: string;
  file?: string;
  out?: string;
  options: GenerateTypesOptions;
}

/** The command line, checked; throws with what is wrong. */
function parseCommand(argv: readonly string[]): Command {
  // Before parsing: the parser's own message would repeat the argument, and with it the key.
  if (argv.some((a) => a === '--api-key' || a.startsWith('--api-key='))) {
    throw new Error('--api-key is not taken (a key on the command line shows in `ps` and in shell history): set PLATFORMUI_API_KEY, or pass --api-key-file <path>');
  }
  const { values } = parseArgs({
    args: [...argv],
    options: {
      url: { type: 'string' },
      'api-key-file': { type: 'string' },
      file: { type: 'string' },
      out: { type: 'string' },
      name: { type: 'string' },
      'import-from': { type: 'string' },
      'max-combo-values': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const { url, file, out, name, help = false } = values;
  const apiKeyFile = values['api-key-file'];
  const importFrom = values['import-from'];
  const max = values['max-combo-values'];
  if (!help) {
    if (url !== undefined && file !== undefined) throw new Error('give --url or --file, not both');
    if (url === undefined && file === undefined && !fromEnv('PLATFORMUI_CLOUD_URL')) throw new Error('give --url <server> or --file <object_info.json> (or set PLATFORMUI_CLOUD_URL)');
    if (apiKeyFile !== undefined && file !== undefined) throw new Error('--api-key-file goes with --url: a file needs no key');
  }
  const maxComboValues = max === undefined ? undefined : Number(max);
  if (maxComboValues !== undefined && !(Number.isSafeInteger(maxComboValues) && maxComboValues >= 0)) throw new Error(`--max-combo-values must be a whole number, got ${max}`);
  return {
    help,
    ...(url !== undefined ? { url } : {}),
    ...(apiKeyFile !== undefined ? { apiKeyFile } : {}),
    ...(file !== undefined ? { file } : {}),
    ...(out !== undefined ? { out } : {}),
    options: {
      ...(name !== undefined ? { typeName: name } : {}),
      ...(importFrom !== undefined ? { importFrom } : {}),
      ...(maxComboValues !== undefined ? { maxComboValues } : {}),
    },
  };
}

async function fromFile(path: string): Promise<{ objectInfo: ObjectInfo; source: string }> {
  const text = await readFile(path, 'utf8');
  try {
    return { objectInfo: JSON.parse(text) as ObjectInfo, source: path };
  } catch (err) {
    throw new Error(`${path} is not JSON: ${(err as Error).message}`);
  }
}

/**
 * Refuses what is not a server's `object_info` (a `package.json`, a workflow…):
 * most of its entries must be node definitions (objects with `input` or
 * `output`). Says what it found instead. What is not an object at all is left
 * to {@link generateTypes}, which says so.
 */
function checkNodeDefinitions(objectInfo: unknown, source: string): void {
  if (!isObject(objectInfo)) return;
  const entries = Object.entries(objectInfo);
  const isDefinition = (v: unknown) => isObject(v) && (Object.hasOwn(v, 'input') || Object.hasOwn(v, 'output'));
  const definitions = entries.filter(([, v]) => isDefinition(v)).length;
  if (entries.length > 0 && definitions * 2 > entries.length) return;
  const others = entries.filter(([, v]) => !isDefinition(v));
  const shown = others.slice(0, 4).map(([k, v]) => `${JSON.stringify(k)} (${describeValue(v, [k])})`);
  const found = entries.length === 0 ? 'it is an empty object' : `${definitions === 0 ? `none of its ${entries.length} entries is` : `only ${definitions} of its ${entries.length} entries are`} a node definition (an object with "input" or "output"); it has ${shown.join(', ')}${others.length > shown.length ? `, … (${others.length - shown.length} more)` : ''}`;
  throw new Error(`${source} is not a server's object_info (node class → definition): ${found}`);
}

/** A credential file's content, trimmed; never shown. */
async function readKeyFile(path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`--api-key-file: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const key = text.trim();
  if (key === '') throw new Error(`--api-key-file: ${path} is empty`);
  return key;
}

/** `GET /api/object_info` with the client's defaults: `PLATFORMUI_CLOUD_URL`, `PLATFORMUI_API_KEY` (or the key in `keyFile`), keyless on a loopback server. */
async function fromServer(url: string | undefined, keyFile: string | undefined, stderr: (text: string) => void): Promise<{ objectInfo: ObjectInfo; source: string }> {
  const apiKey = keyFile === undefined ? undefined : await readKeyFile(keyFile);
  const cloud = new CloudClient({ ...commandLog(fromEnv('PLATFORMUI_LOG'), stderr), ...(url !== undefined ? { baseUrl: url } : {}), ...(apiKey !== undefined ? { apiKey } : {}) });
  try {
    return { objectInfo: await cloud.getObjectInfo(), source: redactUrl(url ?? fromEnv('PLATFORMUI_CLOUD_URL') ?? '') };
  } finally {
    cloud.close();
  }
}
