/**
 * `platformui codegen` (and its alias `platformui-codegen`, the same
 * command): writes the TypeScript node types of a server (from its
 * `object_info`) for `Workflow<Nodes>`. The server and its key come as for
 * every command (`--server`, which codegen also spells `--url`;
 * `--api-key-file` or the environment); or `--file` reads a saved
 * `object_info`. Writes only when the types changed.
 *
 * @module
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { InvalidArgumentError, type ObjectInfo } from '../../index.ts';
import { describeValue } from '../../schemas/describe.ts';
import { isObject } from '../../schemas/rule.ts';
import { fromEnv } from '../../transport/options.ts';
import { generateTypes, type GenerateTypesOptions } from '../../workflow/codegen.ts';
import { unreadable, UsageError } from '../args.ts';
import type { Command } from '../command.ts';
import type { Context } from '../context.ts';

/** Reads `object_info` from a JSON file; every problem with the file is the command line's (exit 2). */
async function fromFile(path: string): Promise<{ objectInfo: ObjectInfo; source: string }> {
  const text = await readFile(path, 'utf8').catch((err: unknown) => {
    throw unreadable('--file', path, err);
  });
  try {
    return { objectInfo: JSON.parse(text) as ObjectInfo, source: path };
  } catch (err) {
    throw new UsageError(`--file: ${path} is not JSON: ${(err as Error).message}`);
  }
}

/** `GET /api/object_info` with the command's cloud client (its server, key, timeout and log). */
async function fromServer(ctx: Context): Promise<{ objectInfo: ObjectInfo; source: string }> {
  const cloud = await ctx.cloud();
  return { objectInfo: await cloud.getObjectInfo(), source: cloud.baseUrl };
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

/** `--max-combo-values`: a whole number, 0 included. */
function parseMaxCombo(text: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw new UsageError(`--max-combo-values must be a whole number, got ${JSON.stringify(text)}`);
  return n;
}

/** `platformui codegen`. */
export const codegen: Command = {
  name: 'codegen',
  summary: "write TypeScript node types from a server's object_info (for Workflow<Nodes>)",
  synopsis: '[--server URL | --file object_info.json] [--out file.ts] [options]',
  description: [
    "Writes the TypeScript node types of a server (its object_info, over --server or PLATFORMUI_CLOUD_URL,",
    'or from a file) for Workflow<Nodes>. Writes only when the types changed. Also `platformui-codegen`.',
  ].join('\n'),
  options: {
    url: { type: 'string', value: 'URL', server: true, help: 'the same as --server: the server to read object_info from' },
    file: { type: 'string', value: 'PATH', help: 'read object_info from a JSON file instead of the server (platformui object-info --json writes one)' },
    out: { type: 'string', value: 'PATH', help: 'file to write (default: standard output; its folder is created if missing)' },
    name: { type: 'string', value: 'TypeName', help: 'name of the exported interface (default: Nodes)' },
    'import-from': { type: 'string', value: 'MODULE', help: "module the SDK's types are imported from (default: @platformui/sdk)" },
    'max-combo-values': { type: 'string', value: 'N', help: 'type a combo with more values than this as string (default: 1000)' },
  },
  args: { min: 0, max: 0 },
  service: 'cloud',
  examples: ['platformui codegen --out nodes.generated.ts', 'platformui codegen --file object_info.json --out nodes.generated.ts'],
  async run(ctx, { values }) {
    const str = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
    const file = str('file');
    const out = str('out');
    const max = str('max-combo-values');
    // Checked whole before the first request.
    if (file !== undefined) {
      if (ctx.global.server !== undefined) throw new UsageError('give --server (or --url) or --file, not both');
      if (ctx.global.apiKeyFile !== undefined) throw new UsageError('--api-key-file goes with --server: a file needs no key');
    } else if (ctx.global.server === undefined && !fromEnv('PLATFORMUI_CLOUD_URL')) {
      throw new UsageError('give --server URL (or --url) or --file object_info.json, or set PLATFORMUI_CLOUD_URL');
    }
    const options: GenerateTypesOptions = {
      ...(str('name') !== undefined ? { typeName: str('name')! } : {}),
      ...(str('import-from') !== undefined ? { importFrom: str('import-from')! } : {}),
      ...(max !== undefined ? { maxComboValues: parseMaxCombo(max) } : {}),
    };
    // --name and --import-from by generateTypes' own rule, on no classes: an invalid one costs no request.
    try {
      generateTypes({}, options);
    } catch (err) {
      if (!(err instanceof InvalidArgumentError)) throw err;
      throw new UsageError(`${err.field === 'options.importFrom' ? '--import-from' : '--name'}: ${err.message.slice(`${err.field}: `.length)}`);
    }
    const started = performance.now();
    const { objectInfo, source } = file !== undefined ? await fromFile(file) : await fromServer(ctx);
    checkNodeDefinitions(objectInfo, source);
    const code = generateTypes(objectInfo, options);
    // The classes written: entries that are not objects are skipped (and the file's header does not count them either).
    const classes = Object.values(objectInfo).filter(isObject).length;
    const what = `${classes} node classes (${Math.round(Buffer.byteLength(code) / 1024)} KB) from ${source}`;
    const took = `in ${Math.round(performance.now() - started)} ms`;
    if (out === undefined) {
      ctx.io.stdout.write(code);
      ctx.warn(`Generated ${what} ${took}`);
      return 0;
    }
    // An unchanged file is not rewritten: its timestamp stays, so watchers and builds stay idle.
    const before = await readFile(out, 'utf8').catch(() => undefined);
    if (before !== code) {
      await mkdir(dirname(out), { recursive: true });
      await writeFile(out, code);
    }
    ctx.print(`${before === code ? `${out} is up to date` : `Wrote ${out}`}: ${what} ${took}`);
    return 0;
  },
};
