/**
 * `platformui object-info [class]`: the server's node classes. Without a
 * class: how many and which; with one: its inputs (type, default, range,
 * choices) and outputs, readable. `--json` gives the server's JSON as is (the
 * whole of it is what `platformui codegen --file` reads).
 *
 * @module
 */
import { didYouMean } from '../../args.ts';
import { nonEmpty } from '../args.ts';
import type { Command } from '../command.ts';
import type { Context } from '../context.ts';
import { clip, table } from '../format.ts';

type Def = Record<string, unknown>;
const MAX_CHOICES = 6;

const asObject = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** One input spec as words: `INT  default 20, 1..10000`, `COMBO  euler | euler_a | … (+20)`. */
export function describeInput(spec: unknown): [type: string, detail: string] {
  const [type, rawOptions] = Array.isArray(spec) ? spec : [spec, undefined];
  const options = asObject(rawOptions);
  // A combo: a list of choices, or the newer `["COMBO", { options: [...] }]`.
  const choices = Array.isArray(type) ? type : type === 'COMBO' && Array.isArray(options.options) ? options.options : undefined;
  const parts: string[] = [];
  if (choices) {
    const shown = choices.slice(0, MAX_CHOICES).map((c) => (typeof c === 'string' ? c : JSON.stringify(c)));
    parts.push(choices.length === 0 ? 'no choices' : `${shown.join(' | ')}${choices.length > MAX_CHOICES ? ` | … (${choices.length} in all)` : ''}`);
  }
  if (options.default !== undefined) parts.push(`default ${JSON.stringify(options.default)}`);
  if (options.min !== undefined || options.max !== undefined) parts.push(`${options.min ?? ''}..${options.max ?? ''}`);
  for (const flag of ['multiline', 'image_upload', 'forceInput']) if (options[flag] === true) parts.push(flag);
  return [choices ? 'COMBO' : typeof type === 'string' ? type : JSON.stringify(type), parts.join(', ')];
}

function printClass(ctx: Context, name: string, def: Def): void {
  const display = typeof def.display_name === 'string' && def.display_name !== name ? ` (${def.display_name})` : '';
  const category = typeof def.category === 'string' && def.category ? `  ${ctx.style('dim', def.category)}` : '';
  ctx.print(`${ctx.style('bold', name)}${display}${category}${def.output_node === true ? '  [output node]' : ''}`);
  if (typeof def.description === 'string' && def.description.trim()) ctx.print(`  ${clip(def.description.trim().replace(/\s+/g, ' '), 200)}`);
  const input = asObject(def.input);
  for (const [title, group] of [['Inputs', 'required'], ['Optional inputs', 'optional']] as const) {
    const entries = Object.entries(asObject(input[group]));
    if (entries.length === 0) continue;
    ctx.print(`${title}:`);
    for (const line of table(entries.map(([n, spec]) => [n, ...describeInput(spec)]))) ctx.print(`  ${line}`);
  }
  const types = Array.isArray(def.output) ? def.output.map(String) : [];
  const names = Array.isArray(def.output_name) ? def.output_name.map(String) : types;
  ctx.print(types.length ? 'Outputs:' : 'Outputs: none');
  for (const line of table(types.map((t, i) => [String(i), names[i] ?? t, t]))) ctx.print(`  ${line}`);
}

/** `platformui object-info`. */
export const objectInfo: Command = {
  name: 'object-info',
  summary: "the server's node classes, or one class's inputs and outputs",
  synopsis: '[class]',
  description: "Without a class: how many node classes the server has, and each one's name and category.\nWith one: its inputs (type, default, range, choices) and outputs. --json prints the server's JSON.",
  options: {},
  args: { min: 0, max: 1 },
  service: 'cloud',
  examples: ['platformui object-info ImageBlur', 'platformui object-info --json > object_info.json'],
  async run(ctx, { positionals }) {
    const wanted = positionals[0] === undefined ? undefined : nonEmpty(positionals[0], 'the node class');
    const cloud = await ctx.cloud();
    // A Comfy API v2 server serves no object_info: the ComfyUI behind it does (said before any request).
    if (cloud.server === 'v2') throw new Error('a Comfy API v2 server serves no object_info: ask the server behind it (for comfy-api-proxy, the ComfyUI it fronts) with `platformui object-info --server URL --server-kind local`');
    const info = (await cloud.getObjectInfo()) as Record<string, Def>;
    if (wanted === undefined) {
      if (ctx.mode === 'json') {
        ctx.printJSON(info);
        return 0;
      }
      const names = Object.keys(info).sort((a, b) => a.localeCompare(b));
      ctx.print(`${names.length} node classes`);
      for (const line of table(names.map((n) => [n, typeof info[n]!.category === 'string' ? (info[n]!.category as string) : '']))) ctx.print(`  ${line}`);
      return 0;
    }
    const def = Object.hasOwn(info, wanted) ? info[wanted] : undefined;
    if (!def) {
      // A typo first (the SDK's rule, as workflow validation says it); else the classes whose names hold it.
      const names = Object.keys(info);
      const typo = didYouMean(wanted, names);
      const lower = wanted.toLowerCase();
      const similar = typo ? [] : names.filter((n) => n.toLowerCase().includes(lower) || lower.includes(n.toLowerCase())).slice(0, 8);
      throw new Error(`no node class ${JSON.stringify(wanted)} on this server${typo}${similar.length ? `; similar: ${similar.join(', ')}` : typo ? '' : ' (platformui object-info lists them)'}`);
    }
    if (ctx.mode === 'json') ctx.printJSON(def);
    else printClass(ctx, wanted, def);
    return 0;
  },
};
