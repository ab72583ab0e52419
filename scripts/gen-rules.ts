// Generates src/schemas/rules.generated.ts: every zod schema exported by
// src/schemas/index.ts, as a plain-data Rule (src/schemas/rule.ts), so the
// SDK validates without loading zod (issue 9: bundle size, cold import).
//
//   node --experimental-strip-types scripts/gen-rules.ts          write the file
//   node --experimental-strip-types scripts/gen-rules.ts --check  exit 1 when it is stale
//
// `npm run build` runs it; test/schemas/rules.test.ts fails when the committed
// file differs from what this prints, and proves each rule agrees with zod.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

type Schema = { _zod: { def: Def; values?: Set<unknown> } };
type Def = {
  type: string;
  checks?: Schema[];
  check?: string;
  format?: string;
  value?: unknown;
  inclusive?: boolean;
  minimum?: number;
  shape?: Record<string, Schema>;
  catchall?: Schema;
  element?: Schema;
  keyType?: Schema;
  valueType?: Schema;
  options?: Schema[];
  innerType?: Schema;
  inclusive_?: boolean;
  fn?: unknown;
  [k: string]: unknown;
};

const OUT = fileURLToPath(new URL('../src/schemas/rules.generated.ts', import.meta.url));

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && '_zod' in v;

/** The file's text, from the schemas as they are now. */
export async function generate(): Promise<string> {
  const schemas = (await import('../src/schemas/index.ts')) as Record<string, unknown>;
  const predicates = (await import('../src/schemas/predicates.ts')) as Record<string, readonly unknown[]>;

  const names = new Map<Schema, string>();
  const maps = new Map<string, Record<string, Schema>>();
  for (const [name, value] of Object.entries(schemas)) {
    if (isSchema(value)) {
      if (!names.has(value)) names.set(value, name);
    } else if (value && typeof value === 'object' && !Array.isArray(value) && Object.values(value).length > 0 && Object.values(value).every(isSchema)) {
      maps.set(name, value as Record<string, Schema>); // a record of schemas (EVENT_SCHEMAS)
    }
  }
  const predicateNames = new Map<unknown, string>(Object.entries(predicates).map(([n, p]) => [p[1], n]));
  const usedPredicates = new Set<string>();

  /** The rule of `s` as a value to print; `self` is the export being written (never referenced by name). */
  function rule(s: Schema, where: string, self: Schema, deps: Set<string>): Value {
    const named = names.get(s);
    if (named && s !== self) {
      deps.add(named);
      return new Ref(named);
    }
    const d = s._zod.def;
    const at = (k: string | number) => `${where}.${k}`;
    switch (d.type) {
      case 'string': {
        const min = lengthMin(d, where);
        return min === undefined ? 'string' : { type: 'string', min };
      }
      case 'number': {
        const { int, min, max } = numberChecks(d, where);
        if (min === undefined && max === undefined) return int ? 'integer' : 'number';
        return { type: 'number', ...(int ? { int } : {}), ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
      }
      case 'boolean':
      case 'null':
      case 'unknown':
        return d.type;
      case 'any':
        return 'unknown';
      case 'enum':
      case 'literal':
        return { type: 'values', values: [...s._zod.values!] as Value[] };
      case 'optional':
        return { type: 'optional', of: rule(d.innerType!, where, self, deps) };
      case 'nullable':
        return { type: 'nullable', of: rule(d.innerType!, where, self, deps) };
      case 'array': {
        const min = lengthMin(d, where);
        return { type: 'array', of: rule(d.element!, at('[]'), self, deps), ...(min !== undefined ? { min } : {}) };
      }
      case 'record':
        if (d.keyType!._zod.def.type !== 'string' || d.keyType!._zod.def.checks?.length) throw new Error(`${where}: only records with plain string keys are supported`);
        return { type: 'record', of: rule(d.valueType!, at('{}'), self, deps) };
      case 'object': {
        const fields = Object.fromEntries(Object.entries(d.shape!).map(([k, v]) => [k, rule(v, at(k), self, deps)]));
        for (const [k, r] of Object.entries(fields)) {
          // zod lets such a key be absent; rule.ts's isOptional would not (only `'unknown'` is required and takes anything).
          if (r !== 'unknown' && acceptsUndefined(r) && !isOptionalValue(r)) throw new Error(`${at(k)}: a required field whose rule takes undefined is not supported`);
        }
        const c = d.catchall?._zod.def.type;
        // Loose and strip objects alike keep unknown keys (DESIGN §5); strict ones reject them.
        if (c === undefined || c === 'unknown' || c === 'any') return { type: 'object', fields };
        return { type: 'object', fields, rest: c === 'never' ? 'reject' : rule(d.catchall!, at('*'), self, deps) };
      }
      case 'union': {
        if (d.inclusive === false) throw new Error(`${where}: z.xor is not supported`);
        let options = d.options!;
        // An open enum (known values or any string) is just a string to a validator.
        if (options.some((o) => o._zod.def.type === 'string' && !o._zod.def.checks?.length)) {
          options = options.filter((o) => !(o._zod.def.type === 'enum' && [...o._zod.values!].every((v) => typeof v === 'string')));
        }
        if (options.length === 1) return rule(options[0]!, where, self, deps);
        return { type: 'union', of: options.map((o, i) => rule(o, at(`|${i}`), self, deps)) };
      }
      case 'custom': {
        const name = predicateNames.get(d.fn);
        if (!name) throw new Error(`${where}: z.custom must use a predicate of src/schemas/predicates.ts (its rule's second item)`);
        usedPredicates.add(name);
        return new Ref(name);
      }
      default:
        throw new Error(`${where}: zod type "${d.type}" has no rule; add it to src/schemas/rule.ts, explain.ts and this generator`);
    }
  }

  // Each export after the ones it references (a const must exist before an object literal reads it).
  const bodies = new Map<string, { value: Value; deps: Set<string> }>();
  for (const [s, name] of names) {
    const deps = new Set<string>();
    bodies.set(name, { value: rule(s, name, s, deps), deps });
  }
  // A reference to an export that is a leaf (an open enum: `'string'`) is written as the leaf: an optional one is `'string?'`.
  const inline = (r: Value): Value => {
    if (r instanceof Ref) {
      const target = bodies.get(r.name)?.value;
      return typeof target === 'string' ? target : r;
    }
    if (r === null || typeof r !== 'object') return r;
    if (Array.isArray(r)) return r.map(inline);
    return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, inline(v)]));
  };
  for (const body of bodies.values()) body.value = encode(inline(body.value));
  const order: string[] = [];
  const visit = (name: string, stack: string[]) => {
    if (order.includes(name)) return;
    if (stack.includes(name)) throw new Error(`cycle: ${[...stack, name].join(' → ')}`);
    for (const dep of bodies.get(name)!.deps) visit(dep, [...stack, name]);
    order.push(name);
  };
  for (const name of [...bodies.keys()].sort()) visit(name, []);

  const lines = [
    '// Generated by scripts/gen-rules.ts from the zod schemas of this folder: do not edit.',
    '// `npm run build` regenerates it; test/schemas/rules.test.ts fails when it is stale.',
    "import type * as z from 'zod/mini';",
    "import type * as S from './index.ts';",
    `import { ${[...usedPredicates].sort().join(', ')} } from './predicates.ts';`,
    "import type { Typed } from './rule.ts';",
    '',
    `// A tuple's first item is its tag (rule.ts): ${Object.entries(TAGS).filter(([k]) => /^[A-Z]+$/.test(k)).sort(([, a], [, b]) => a - b).map(([k, n]) => `${n} ${k}`).join(', ')}.`,
  ];
  for (const name of order) {
    const head = `export const ${name}: Typed<z.output<typeof S.${name}>> = `;
    lines.push(`${head}${print(bodies.get(name)!.value, '', head.length)};`);
  }
  for (const [name, map] of maps) {
    const members = Object.entries(map).map(([k, s]) => {
      const n = names.get(s);
      if (!n) throw new Error(`${name}.${k}: not an exported schema`);
      return `  ${k}: ${n},`;
    });
    lines.push('', `export const ${name} = {`, ...members, '} as const;');
  }
  return `${lines.join('\n')}\n`;
}

// As rule.ts `isOptional`: a nullable optional may be absent too.
const isOptionalValue = (r: Value): boolean => {
  if (r instanceof Ref || r === null || typeof r !== 'object') return false;
  const o = r as Record<string, Value>;
  return o.type === 'optional' || (o.type === 'nullable' && isOptionalValue(o.of!));
};
const acceptsUndefined = (r: Value): boolean =>
  isOptionalValue(r) || r === 'unknown' || (typeof r === 'object' && r !== null && !(r instanceof Ref) && (r as Record<string, Value>).type === 'union' && ((r as Record<string, Value>).of as Value[]).some(acceptsUndefined));

/** A tuple's tag, as the number itself (rule.ts's constants, which a bundle would keep as variables: see there). */
const tag = (name: keyof typeof TAGS) => TAGS[name] as number;
const TAGS = (await import('../src/schemas/rule.ts')) as unknown as Record<'OPTIONAL' | 'NULLABLE' | 'ARRAY' | 'RECORD' | 'UNION' | 'VALUES' | 'STRICT' | 'OBJECT' | 'INTEGER' | 'NUMBER' | 'STRING', number>;

/**
 * `r` (a rule as `{ type, … }`, as zod describes it) in rule.ts's compact form: a leaf as a word (`'string?'`), an
 * object that keeps unknown keys as its fields, anything else as a tuple tagged by its first item.
 */
function encode(r: Value): Value {
  if (typeof r === 'string' || r instanceof Ref) return r;
  const o = r as Record<string, Value>;
  switch (o.type) {
    case 'optional': {
      // An optional leaf is written `'string?'`: most fields are one.
      const of = encode(o.of!);
      if (typeof of === 'string') return of.endsWith('?') ? of : `${of}?`;
      return [tag('OPTIONAL'), of];
    }
    case 'nullable':
      return [tag('NULLABLE'), encode(o.of!)];
    case 'array':
      return o.min === undefined ? [tag('ARRAY'), encode(o.of!)] : [tag('ARRAY'), encode(o.of!), o.min!];
    case 'record':
      return [tag('RECORD'), encode(o.of!)];
    case 'union':
      return [tag('UNION'), ...(o.of as Value[]).map(encode)];
    case 'values':
      return [tag('VALUES'), ...(o.values as Value[])];
    case 'number':
      return o.max === undefined ? [tag(o.int ? 'INTEGER' : 'NUMBER'), o.min ?? null] : [tag(o.int ? 'INTEGER' : 'NUMBER'), o.min ?? null, o.max!];
    case 'string':
      return [tag('STRING'), o.min!];
    case 'object': {
      const fields = Object.fromEntries(Object.entries(o.fields as Record<string, Value>).map(([k, f]) => [k, encode(f)]));
      if (o.rest === undefined) return fields;
      return o.rest === 'reject' ? [tag('STRICT'), fields] : [tag('OBJECT'), fields, encode(o.rest)];
    }
  }
  throw new Error(`no encoding for rule type ${String(o.type)}`);
}

/** A reference to another export (or a predicate) by name. */
class Ref {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}
type Value = string | number | boolean | null | Ref | Value[] | { [k: string]: Value };

const WIDTH = 120;

/** Source text of `v`: on one line when it fits in {@link WIDTH}, else one member per line. */
function print(v: Value, indent: string, used: number): string {
  const flat = printFlat(v);
  if (used + flat.length <= WIDTH || v === null || typeof v !== 'object' || v instanceof Ref) return flat;
  const inner = `${indent}  `;
  if (Array.isArray(v)) return `[\n${v.map((x) => `${inner}${print(x, inner, inner.length)},`).join('\n')}\n${indent}]`;
  const entries = Object.entries(v).map(([k, x]) => {
    const head = `${inner}${key(k)}: `;
    return `${head}${print(x, inner, head.length)},`;
  });
  return `{\n${entries.join('\n')}\n${indent}}`;
}

function printFlat(v: Value): string {
  if (v instanceof Ref) return v.name;
  if (typeof v === 'string') return `'${v.replace(/[\\']/g, (c) => `\\${c}`)}'`;
  if (v === null || typeof v !== 'object') return String(v);
  if (Array.isArray(v)) return `[${v.map(printFlat).join(', ')}]`;
  return `{ ${Object.entries(v).map(([k, x]) => `${key(k)}: ${printFlat(x)}`).join(', ')} }`;
}

const key = (k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : `'${k}'`);

function lengthMin(d: Def, where: string): number | undefined {
  let min: number | undefined;
  for (const c of d.checks ?? []) {
    const cd = c._zod.def;
    if (cd.check !== 'min_length') throw new Error(`${where}: check "${cd.check}" has no rule`);
    min = cd.minimum;
  }
  return min;
}

function numberChecks(d: Def, where: string): { int: boolean; min?: number; max?: number } {
  const out: { int: boolean; min?: number; max?: number } = { int: false };
  for (const cd of [d, ...(d.checks ?? []).map((c) => c._zod.def)]) {
    if (cd.check === undefined) continue;
    if (cd.check === 'number_format' && cd.format === 'safeint') out.int = true;
    else if ((cd.check === 'greater_than' || cd.check === 'less_than') && cd.inclusive === true && typeof cd.value === 'number') out[cd.check === 'greater_than' ? 'min' : 'max'] = cd.value;
    else throw new Error(`${where}: number check "${cd.check}${cd.format ? `:${cd.format}` : ''}" has no rule`);
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = await generate();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(OUT, 'utf8');
    } catch {}
    if (current !== text) {
      console.error('src/schemas/rules.generated.ts is stale: run `node --experimental-strip-types scripts/gen-rules.ts`');
      process.exit(1);
    }
  } else {
    writeFileSync(OUT, text);
    console.log(`wrote ${OUT}`);
  }
}
