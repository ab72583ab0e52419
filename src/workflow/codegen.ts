/**
 * `@platformui/sdk/codegen`: `generateTypes()`, a server's `object_info` as
 * one TypeScript file of node types for `Workflow<Nodes>` (what the
 * `platformui-codegen` bin writes). An entry of its own: a build-time tool
 * costs the root's bundle nothing.
 *
 * The file is types only and stable: classes sorted by name, inputs in the
 * server's `input_order` (else its key order), combo values in the server's
 * order; no date, no host. Same `object_info`, same bytes: commit it, and a
 * server's new nodes or models show up as a diff.
 *
 * How inputs are typed:
 *
 * | object_info                          | TypeScript                                   |
 * | ------------------------------------ | -------------------------------------------- |
 * | `INT`, `FLOAT`                       | `number \| Link<'INT'>`                      |
 * | `STRING`, `BOOLEAN`                  | `string \| Link<'STRING'>`, `boolean \| …`   |
 * | a combo (list, or `COMBO` + options) | its values as literals `\| Link<'COMBO'>`    |
 * | a file to upload (`image_upload` …)  | `string \| UploadResponse` (any file name)   |
 * | `IMAGE`, `LATENT`, `IMAGE,MASK` …    | `Link<'IMAGE'>`, `Link<'IMAGE' \| 'MASK'>`   |
 * | `*`                                  | `unknown`                                    |
 * | dynamic inputs (autogrow, dynamic combo) | one key per expanded name (`images.image0`, `resize_type.width`) |
 *
 * A combo whose list is empty (no models installed), filled in by the
 * server (`remote`), or longer than `maxComboValues` is typed `string`.
 * Outputs of type `*`, of a match-type node or of a comma-separated type are
 * typed `'*'`: their link ({@link AnyLink}) fits any input.
 *
 * @module
 */
import { checkOptions, type OptionKeys } from '../args.ts';
import { InvalidArgumentError } from '../errors.ts';
import type { ObjectInfo } from '../schemas/cloud.ts';
import { describeValue } from '../schemas/describe.ts';
import { isObject } from '../schemas/rule.ts';

/** Options of {@link generateTypes}. */
export interface GenerateTypesOptions {
  /** Name of the exported interface. Default `'Nodes'`. */
  typeName?: string;
  /** Module the SDK's types are imported from. Default `'@platformui/sdk'`. */
  importFrom?: string;
  /**
   * Combos with more values than this are typed `string` rather than a union
   * of literals, to keep the compiler fast on servers with thousands of
   * models. Default 1000.
   */
  maxComboValues?: number;
}

const GENERATE_TYPES_OPTIONS = { typeName: 1, importFrom: 1, maxComboValues: 1 } as const satisfies OptionKeys<GenerateTypesOptions>;

/** The longest tooltip kept in a doc comment, in characters. */
const MAX_DOC = 160;

/**
 * Names the exported interface cannot have: JavaScript's reserved words
 * (strict mode and modules included), TypeScript's built-in type names, and
 * the names the file imports.
 */
const RESERVED: ReadonlySet<string> = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally for function if import in instanceof new null ' +
    'return super switch this throw true try typeof var void while with implements interface let package private protected public static yield await ' +
    'any unknown never number string boolean symbol object bigint undefined Link UploadResponse'
  ).split(' '),
);

/**
 * The TypeScript source of a node-types interface for `object_info`: one
 * member per class, with its inputs (what each takes) and its outputs (by
 * index and by name). Types only, no runtime code; compiles under
 * `tsc --strict` (TypeScript 5.7+).
 *
 * @example
 * ```ts
 * import { writeFileSync } from 'node:fs';
 * import { generateTypes } from '@platformui/sdk/codegen';
 * writeFileSync('src/nodes.generated.ts', generateTypes(await cloud.getObjectInfo()));
 * // then: import type { Nodes } from './nodes.generated.ts';
 * //       const wf = new Workflow<Nodes>(objectInfo);
 * ```
 */
export function generateTypes(objectInfo: ObjectInfo, options: GenerateTypesOptions = {}): string {
  checkOptions(options, GENERATE_TYPES_OPTIONS, 'generateTypes()', 'options.');
  const typeName = options.typeName ?? 'Nodes';
  const ctx: Context = { maxCombo: options.maxComboValues ?? 1000, used: new Set() };
  if (!isObject(objectInfo)) throw new InvalidArgumentError(`must be the server's object_info (an object of node classes), got ${describeValue(objectInfo)}`, 'objectInfo');
  if (typeof typeName !== 'string' || !/^[A-Za-z_$][\w$]*$/.test(typeName)) throw new InvalidArgumentError(`must be an identifier, got ${describeValue(typeName)}`, 'options.typeName');
  if (RESERVED.has(typeName)) {
    const why = typeName === 'Link' || typeName === 'UploadResponse' ? 'a name the generated file imports' : 'a reserved word or a built-in type name';
    throw new InvalidArgumentError(`must be an identifier an interface can have, got ${describeValue(typeName)}: ${why}`, 'options.typeName');
  }
  const importFrom = options.importFrom ?? '@platformui/sdk';
  // `from ''` would not compile, and a line break would end the import.
  if (typeof importFrom !== 'string' || importFrom.trim() === '' || /[\r\n]/.test(importFrom)) {
    throw new InvalidArgumentError(`must be a module specifier ('@platformui/sdk', a path), got ${describeValue(importFrom)}`, 'options.importFrom');
  }
  // Only entries that are objects are node classes: anything else is skipped, and not counted.
  const classes = Object.keys(objectInfo)
    .filter((name) => isObject(objectInfo[name]))
    .sort(byCodePoint);
  const out: string[] = [`/** The node classes of the server, for \`Workflow<${typeName}>\`. */`, `export interface ${typeName} {`];
  for (const name of classes) {
    const def = objectInfo[name] as Record<string, unknown>;
    const doc = classDoc(name, def);
    if (doc) out.push(`  /** ${doc} */`);
    out.push(`  ${key(name)}: {`, '    inputs: {');
    for (const line of inputLines(def, ctx)) out.push(`      ${line}`);
    out.push('    };', `    outputs: ${outputsType(def)};`, '  };');
  }
  out.push('}', '');
  // Only the names used: a consumer's `noUnusedLocals` must not trip on the import.
  const used = [...ctx.used].sort(byCodePoint);
  const header = [
    `// Node types generated by platformui-codegen from a server's object_info (${classes.length} classes). Do not edit:`,
    '// regenerate with `npx platformui-codegen --url <server> --out <this file>` (or --file object_info.json).',
    ...(used.length ? [`import type { ${used.join(', ')} } from ${literal(importFrom)};`] : []),
    '',
  ];
  return [...header, ...out].join('\n');
}

/** What generation carries along: the combo cap, and which SDK types the file uses (to import only those). */
interface Context {
  maxCombo: number;
  used: Set<'Link' | 'UploadResponse'>;
}

/** One member of an `inputs` type: its name (what makes two members the same), whether it is required, its lines (a doc line, the member). */
interface Member {
  name: string;
  required: boolean;
  lines: string[];
}

/**
 * One line (or a doc line and a member line) per input, required ones first.
 * A name is written once (a duplicate does not compile): an input listed as
 * both required and optional, an autogrow name given twice, a dynamic input's
 * sub-input that repeats another input. Required wins; else the first.
 */
function inputLines(def: Record<string, unknown>, ctx: Context): string[] {
  const input = isObject(def.input) ? def.input : {};
  const order = isObject(def.input_order) ? def.input_order : {};
  const all: Member[] = [];
  for (const section of ['required', 'optional'] as const) {
    const specs = input[section];
    if (!isObject(specs)) continue;
    // input_order is the server's order of the widgets; object keys are the fallback.
    const listed = Array.isArray(order[section]) ? (order[section] as unknown[]).filter((n): n is string => typeof n === 'string' && Object.hasOwn(specs, n)) : [];
    const names = [...new Set(listed), ...Object.keys(specs).filter((n) => !listed.includes(n))];
    for (const name of names) all.push(...members(name, specs[name], section === 'required', ctx));
  }
  const chosen = new Map<string, Member>();
  for (const m of all) {
    const before = chosen.get(m.name);
    if (!before || (m.required && !before.required)) chosen.set(m.name, m);
  }
  return all.filter((m) => chosen.get(m.name) === m).flatMap((m) => m.lines);
}

/** The members one input contributes: itself, or the names a dynamic input expands into. */
function members(name: string, raw: unknown, required: boolean, ctx: Context): Member[] {
  const [type, options] = Array.isArray(raw) ? raw : [raw];
  const o = isObject(options) ? options : {};
  const member = (n: string, t: string, req: boolean, doc?: string): Member[] => [{ name: n, required: req, lines: [...(doc ? [`/** ${doc} */`] : []), `${key(n)}${req ? '' : '?'}: ${t};`] }];
  const template = isObject(o.template) ? o.template : {};
  if (type === 'COMFY_AUTOGROW_V3') {
    // `images` with prefix `image`: inputs `images.image0` … `images.image{max-1}`, the first `min` required.
    const inner = firstInput(template.input);
    const names = Array.isArray(template.names)
      ? [...new Set(template.names.filter((n): n is string => typeof n === 'string'))]
      : Array.from({ length: Math.min(100, num(template.max, 10)) }, (_, i) => `${typeof template.prefix === 'string' ? template.prefix : ''}${i}`);
    const min = num(template.min, 1);
    const t = inner ? valueType(inner[0], inner[1], ctx) : 'unknown';
    return names.flatMap((n, i) => member(`${name}.${n}`, t, required && i < min));
  }
  if (type === 'COMFY_DYNAMICCOMBO_V3' && Array.isArray(o.options)) {
    // The choice, and every choice's own inputs (`resize_type.width`), optional: which apply depends on the choice.
    const choices = o.options.filter(isObject);
    const keys = choices.map((c) => c.key).filter((k) => typeof k === 'string' || typeof k === 'number');
    const lines = member(name, keys.length ? keys.map(literal).join(' | ') : 'string', required, docOf(o));
    const seen = new Set<string>();
    for (const choice of choices) {
      const inputs = isObject(choice.inputs) ? choice.inputs : {};
      for (const section of ['required', 'optional']) {
        const specs = isObject(inputs[section]) ? (inputs[section] as Record<string, unknown>) : {};
        for (const [sub, spec] of Object.entries(specs)) {
          if (seen.has(sub)) continue;
          seen.add(sub);
          lines.push(...members(`${name}.${sub}`, spec, false, ctx));
        }
      }
    }
    return lines;
  }
  if (typeof type === 'string' && /^COMFY_\w+_V3$/.test(type) && type !== 'COMFY_MATCHTYPE_V3') {
    // A dynamic input of a kind this generator does not know: any value, any sub-input.
    const pattern = `[input: \`${name.replace(/[`\\$]/g, '\\$&')}.\${string}\`]: unknown;`;
    return [...member(name, 'unknown', required), { name: pattern, required: false, lines: [pattern] }];
  }
  return member(name, valueType(type, o, ctx), required, docOf(o));
}

/** The TypeScript type of one input's value. */
function valueType(type: unknown, o: Record<string, unknown>, ctx: Context): string {
  if (Array.isArray(type)) return comboType(type, o, ctx);
  switch (type) {
    case 'INT':
    case 'FLOAT':
      return `number | ${linkType(type, ctx)}`;
    case 'STRING':
      return `string | ${linkType(type, ctx)}`;
    case 'BOOLEAN':
      return `boolean | ${linkType(type, ctx)}`;
    case 'COMBO':
      return comboType(Array.isArray(o.options) ? o.options : [], o, ctx);
    case 'COMFY_MATCHTYPE_V3': {
      const allowed = isObject(o.template) ? o.template.allowed_types : undefined;
      return typeof allowed === 'string' ? linkType(allowed, ctx) : 'unknown';
    }
    default:
      return typeof type === 'string' ? linkType(type, ctx) : 'unknown';
  }
}

/** `Link<'IMAGE'>`, `Link<'IMAGE' | 'MASK'>` for `IMAGE,MASK`; `unknown` for `*` (anything fits). */
function linkType(type: string, ctx: Context): string {
  const types = [...new Set(type.split(',').map((t) => t.trim()).filter(Boolean))];
  if (types.length === 0 || types.includes('*')) return 'unknown';
  ctx.used.add('Link');
  return `Link<${types.map(literal).join(' | ')}>`;
}

function comboType(values: readonly unknown[], o: Record<string, unknown>, ctx: Context): string {
  const upload = Object.keys(o).some((k) => k.endsWith('_upload') && o[k] === true) || o.image_folder !== undefined;
  const literals = [...new Set(values.filter((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'))];
  // A file the user uploads may have any name: uploaded after this file was generated.
  const one = upload ? 'string | UploadResponse' : o.remote !== undefined || literals.length === 0 || literals.length > ctx.maxCombo ? 'string' : literals.map(literal).join(' | ');
  if (upload) ctx.used.add('UploadResponse');
  const link = linkType('COMBO', ctx);
  // A list value travels wrapped, `{ __value__: [...] }`: a bare list is a link to the server.
  return o.multiselect === true ? `{ readonly __value__: readonly (${one})[] } | ${link}` : `${one} | ${link}`;
}

/** Outputs by index and by name: `{ 0: 'IMAGE'; 1: 'MASK'; IMAGE: 'IMAGE'; MASK: 'MASK' }`. */
function outputsType(def: Record<string, unknown>): string {
  const types = Array.isArray(def.output) ? def.output : [];
  const names = Array.isArray(def.output_name) ? def.output_name : [];
  const typeOf = (t: unknown) => (typeof t === 'string' && !t.includes(',') && !/^COMFY_\w+_V3$/.test(t) ? literal(t) : Array.isArray(t) ? "'COMBO'" : "'*'");
  const members = types.map((t, i) => `${i}: ${typeOf(t)}`);
  // A name two outputs share, or one that looks like an index, could only mislead: index those.
  const counts = new Map<unknown, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  names.forEach((n, i) => {
    if (typeof n === 'string' && counts.get(n) === 1 && !/^\d+$/.test(n) && i < types.length) members.push(`${key(n)}: ${typeOf(types[i])}`);
  });
  return members.length ? `{ ${members.join('; ')} }` : '{}';
}

/** The inner input of an autogrow template: `[type, options]`. */
function firstInput(input: unknown): [unknown, Record<string, unknown>] | undefined {
  if (!isObject(input)) return undefined;
  for (const section of ['required', 'optional']) {
    const specs = input[section];
    if (!isObject(specs)) continue;
    const spec = Object.values(specs)[0];
    if (spec === undefined) continue;
    const [type, options] = Array.isArray(spec) ? spec : [spec];
    return [type, isObject(options) ? options : {}];
  }
  return undefined;
}

/**
 * `Save Image: Saves the input images… Category: image; an output node.`:
 * display name, description, category, whether it is an output node; each
 * sentence ended once, nothing for a class with nothing to say.
 */
function classDoc(name: string, def: Record<string, unknown>): string {
  const display = typeof def.display_name === 'string' && def.display_name.trim() !== name ? def.display_name.trim() : '';
  const description = typeof def.description === 'string' ? def.description.trim() : '';
  const category = typeof def.category === 'string' ? def.category.trim() : '';
  const about = [display, description].filter(Boolean).join(': ') || name.trim();
  const facts = [category && `Category: ${category}`, def.output_node === true && (category ? 'an output node' : 'An output node')].filter(Boolean).join('; ');
  return docText([about, facts].filter(Boolean).map(sentence).join(' '));
}

/** `text` ended with a full stop, unless it ends with one (or `!`, `?`, `…`) already. */
function sentence(text: string): string {
  return /[.!?…]$/.test(text) ? text : `${text}.`;
}

/** `The random seed… (0 to 100, default 20)`: tooltip, range, default. */
function docOf(o: Record<string, unknown>): string {
  const parts: string[] = [];
  if (typeof o.min === 'number' && typeof o.max === 'number') parts.push(`${o.min} to ${o.max}`);
  else if (typeof o.min === 'number') parts.push(`at least ${o.min}`);
  else if (typeof o.max === 'number') parts.push(`at most ${o.max}`);
  if (o.default !== undefined && (typeof o.default !== 'string' || o.default.length <= 40)) parts.push(`default ${JSON.stringify(o.default)}`);
  const tooltip = typeof o.tooltip === 'string' ? o.tooltip : '';
  return docText(`${tooltip}${parts.length ? `${tooltip ? ' ' : ''}(${parts.join(', ')})` : ''}`);
}

/** One line of a doc comment: whitespace collapsed, `*\/` broken, long text cut. */
function docText(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim().replace(/\*\//g, '*\\/');
  return one.length > MAX_DOC ? `${one.slice(0, MAX_DOC - 1)}…` : one;
}

/** A member name: bare when it is an identifier, quoted otherwise (`'Epsilon Scaling'`, `'images.image0'`). */
function key(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : literal(name);
}

/** A literal type: `'IMAGE'`, `"it's"`, `3`, `true`. */
function literal(value: unknown): string {
  if (typeof value !== 'string') return String(value);
  const json = JSON.stringify(value);
  return value.includes("'") ? json : `'${json.slice(1, -1).replace(/\\"/g, '"')}'`;
}

function num(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback;
}

/** Code-point order: the same on every machine (no locale). */
function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
