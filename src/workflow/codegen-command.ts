/**
 * The `platformui-codegen` command (Node only): reads a server's
 * `object_info` (over HTTP with the client's credentials, or from a file),
 * writes its node types with {@link generateTypes}, prints one line.
 * `codegen-cli.ts` runs it; tests call {@link runCodegen} directly.
 *
 * @module
 */
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { CloudClient } from '../cloud/client.ts';
import type { ObjectInfo } from '../schemas/cloud.ts';
import { fromEnv } from '../transport/options.ts';
import { redactUrl } from '../transport/redact.ts';
import { generateTypes, type GenerateTypesOptions } from './codegen.ts';

/** What `--help` prints. */
export const USAGE = `Usage: platformui-codegen [--url <server> | --file <object_info.json>] [--out <file.ts>] [options]

Writes the TypeScript node types of a server (from its object_info) for Workflow<Nodes>.

  --url <server>          server to read GET /api/object_info from (default: PLATFORMUI_CLOUD_URL)
  --api-key <key>         the cloud's API key (default: PLATFORMUI_API_KEY; a loopback server needs none)
  --file <path>           read object_info from a JSON file instead of a server
  --out <path>            file to write (default: standard output)
  --name <TypeName>       name of the exported interface (default: Nodes)
  --import-from <module>  module the SDK's types are imported from (default: @platformui/sdk)
  --max-combo-values <n>  type a combo with more values than this as string (default: 1000)
  -h, --help              print this help

Examples:
  platformui-codegen --url http://127.0.0.1:8188 --out src/nodes.generated.ts
  PLATFORMUI_API_KEY=… platformui-codegen --url https://cloud.example.com --out src/nodes.generated.ts
  platformui-codegen --file object_info.json --out src/nodes.generated.ts
`;

/** Where the command writes: standard output and standard error, or a test's buffers. */
export interface CommandIO {
  stdout(text: string): void;
  stderr(text: string): void;
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
    const { objectInfo, source } = command.file !== undefined ? await fromFile(command.file) : await fromServer(command.url, command.apiKey);
    const code = generateTypes(objectInfo, command.options);
    const what = `${Object.keys(objectInfo).length} node classes (${Math.round(Buffer.byteLength(code) / 1024)} KB) from ${source}`;
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
    io.stderr(`platformui-codegen: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

interface Command {
  help: boolean;
  url?: string;
  apiKey?: string;
  file?: string;
  out?: string;
  options: GenerateTypesOptions;
}

/** The command line, checked; throws with what is wrong. */
function parseCommand(argv: readonly string[]): Command {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      url: { type: 'string' },
      'api-key': { type: 'string' },
      file: { type: 'string' },
      out: { type: 'string' },
      name: { type: 'string' },
      'import-from': { type: 'string' },
      'max-combo-values': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const { url, file, out, name, help = false } = values;
  const apiKey = values['api-key'];
  const importFrom = values['import-from'];
  const max = values['max-combo-values'];
  if (!help) {
    if (url !== undefined && file !== undefined) throw new Error('give --url or --file, not both');
    if (url === undefined && file === undefined && !fromEnv('PLATFORMUI_CLOUD_URL')) throw new Error('give --url <server> or --file <object_info.json> (or set PLATFORMUI_CLOUD_URL)');
    if (apiKey !== undefined && file !== undefined) throw new Error('--api-key goes with --url: a file needs none');
  }
  const maxComboValues = max === undefined ? undefined : Number(max);
  if (maxComboValues !== undefined && !(Number.isSafeInteger(maxComboValues) && maxComboValues >= 0)) throw new Error(`--max-combo-values must be a whole number, got ${max}`);
  return {
    help,
    ...(url !== undefined ? { url } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
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

/** `GET /api/object_info` with the client's defaults: `PLATFORMUI_CLOUD_URL`, `PLATFORMUI_API_KEY`, keyless on a loopback server. */
async function fromServer(url: string | undefined, apiKey: string | undefined): Promise<{ objectInfo: ObjectInfo; source: string }> {
  const cloud = new CloudClient({ ...(url !== undefined ? { baseUrl: url } : {}), ...(apiKey !== undefined ? { apiKey } : {}) });
  try {
    return { objectInfo: await cloud.getObjectInfo(), source: redactUrl(url ?? fromEnv('PLATFORMUI_CLOUD_URL') ?? '') };
  } finally {
    cloud.close();
  }
}
