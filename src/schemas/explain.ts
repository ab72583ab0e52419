/**
 * What is wrong with a value, in one line per problem: the slow path of
 * validation, run only once a {@link Rule} has rejected a value.
 *
 * Each issue has zod's shape (`code`, `path`, and `expected`, `minimum`,
 * `values`, `keys`… as zod would set them) and a message that says what was
 * given (short; never the value of a field that holds a secret) and what is
 * allowed (a range, the allowed values, the closest known key for a typo):
 *
 * ```text
 * must be an integer of at least 1, got -1
 * unknown key (did you mean "search"?)
 * must be one of "standard", "darker_but_realistic", …, got "smoth" (did you mean "smooth"?)
 * ```
 *
 * @module
 */
import type { SchemaIssue } from '../errors.ts';
import { article, describeValue, rangeText } from './describe.ts';
import {
  codePoints, isObject, isOptional, isPlainObject, isTuple,
  type BOOLEAN, type Fields, type LeafType, type NULL, type Rule, type STRING, type TupleRule, type UNKNOWN,
} from './rule.ts';

/** An issue as {@link explain} reports it: zod's fields, a message ready to print. */
export interface Issue extends SchemaIssue {
  readonly path: PropertyKey[];
  readonly expected?: string;
  readonly origin?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly inclusive?: boolean;
  readonly values?: readonly unknown[];
  readonly keys?: string[];
}

/** A rule as one tuple, leaves and fields spelled out, so one `switch` covers every kind. */
type Composite = TupleRule | readonly [typeof BOOLEAN | typeof NULL | typeof UNKNOWN];

/**
 * Every reason `value` fails `rule` (none when it passes), in the order zod
 * would list them: fields in the schema's order, unknown keys last.
 *
 * @example
 * ```ts
 * explain(rules.SearchNodesParams, { limit: -1 });
 * // [{ code: 'too_small', path: ['limit'], minimum: 1, message: 'must be an integer of at least 1, got -1', … }]
 * ```
 */
export function explain(rule: Rule, value: unknown, closest?: Closest): Issue[] {
  const ctx: Context = { out: [], closest };
  walk(rule, value, [], ctx);
  return ctx.out;
}

/** The known name a small edit away from what was given (a typo), if any: `args.ts` has one. */
export type Closest = (given: string, candidates: readonly string[]) => string | undefined;

interface Context {
  out: Issue[];
  /** Argument errors suggest the name meant; response errors need not carry the code that does. */
  closest: Closest | undefined;
}

function walk(rule: Rule, v: unknown, path: PropertyKey[], ctx: Context): void {
  const r = node(rule);
  const got = () => `, got ${describeValue(v, path)}`;
  const wrongType = (expected: string) => {
    const what = what1(r);
    ctx.out.push({ code: 'invalid_type', path, expected, message: v === undefined ? `is required (${what})` : `must be ${what}${got()}` });
  };
  switch (r[0]) {
    case 14 /* UNKNOWN */:
      return;
    case 12 /* BOOLEAN */:
      if (typeof v !== 'boolean') wrongType('boolean');
      return;
    case 13 /* NULL */:
      if (v !== null) wrongType('null');
      return;
    case 8 /* INTEGER */:
    case 9 /* NUMBER */: {
      const int = r[0] === 8 /* INTEGER */;
      if (!(int ? Number.isSafeInteger(v) : typeof v === 'number' && Number.isFinite(v))) return wrongType(int ? 'int' : 'number');
      const n = v as number;
      const [, min, max] = r;
      if (min != null && n < min) ctx.out.push({ code: 'too_small', path, origin: 'number', minimum: min, inclusive: true, message: `must be ${what1(r)}${got()}` });
      else if (max !== undefined && n > max) ctx.out.push({ code: 'too_big', path, origin: 'number', maximum: max, inclusive: true, message: `must be ${what1(r)}${got()}` });
      return;
    }
    case 10 /* STRING */: {
      if (typeof v !== 'string') return wrongType('string');
      const min = r[1];
      if (min !== undefined && codePoints(v) < min) ctx.out.push({ code: 'too_small', path, origin: 'string', minimum: min, inclusive: true, message: `${atLeast(min, 'character')}${got()}` });
      return;
    }
    case 2 /* ARRAY */: {
      if (!Array.isArray(v)) return wrongType('array');
      const min = r[2];
      if (min !== undefined && v.length < min) ctx.out.push({ code: 'too_small', path, origin: 'array', minimum: min, inclusive: true, message: `${atLeast(min, 'item')}${got()}` });
      for (let i = 0; i < v.length; i++) walk(r[1], v[i], [...path, i], ctx);
      return;
    }
    case 3 /* RECORD */:
      if (!isPlainObject(v)) return wrongType('record');
      for (const k of Object.keys(v)) if (k !== '__proto__') walk(r[1], v[k], [...path, k], ctx);
      return;
    case 7 /* OBJECT */:
    case 6 /* STRICT */:
      return walkObject(r[1], r[0] === 6 /* STRICT */ ? null : r[2], v, path, ctx, wrongType);
    case 5 /* VALUES */: {
      const values = r.slice(1);
      if (!values.includes(v as never)) {
        ctx.out.push({ code: 'invalid_value', path, values, message: v === undefined ? `is required (${oneOf(values)})` : `must be ${oneOf(values)}${got()}${suggest(ctx, v, values)}` });
      }
      return;
    }
    case 0 /* OPTIONAL */:
      if (v !== undefined) walk(r[1], v, path, ctx);
      return;
    case 1 /* NULLABLE */:
      if (v !== null) walk(r[1], v, path, ctx);
      return;
    case 4 /* UNION */:
      return walkUnion(r.slice(1) as Rule[], v, path, ctx, got);
    case 11 /* CUSTOM */:
      if (!r[1](v)) ctx.out.push({ code: 'custom', path, message: v === undefined ? `is required (${r[2].replace(/^must be /, '')})` : `${r[2]}${got()}` });
      return;
  }
}

/** An object: its fields, then its unknown keys, kept (`rest` undefined), refused (`null`), or each checked. */
function walkObject(fields: Fields, rest: Rule | null | undefined, v: unknown, path: PropertyKey[], ctx: Context, wrongType: (e: string) => void): void {
  if (!isObject(v)) return wrongType('object');
  for (const [k, field] of Object.entries(fields)) {
    if (v[k] === undefined && !(k in v) && !isOptional(field)) {
      ctx.out.push({ code: 'invalid_type', path: [...path, k], expected: 'nonoptional', message: `is required (${what1(node(field))})` });
    } else walk(field, v[k], [...path, k], ctx);
  }
  if (rest === undefined) return;
  const unknown: string[] = [];
  for (const k in v) if (!Object.hasOwn(fields, k)) unknown.push(k);
  if (rest !== null) {
    for (const k of unknown) if (k !== '__proto__') walk(rest, v[k], [...path, k], ctx);
    return;
  }
  if (unknown.length === 0) return;
  const known = Object.keys(fields);
  const hint = (k: string) => suggest(ctx, k, known);
  if (unknown.length === 1) {
    const k = unknown[0]!;
    const list = !hint(k) && known.length > 0 && known.length <= 16 ? `; known keys: ${known.join(', ')}` : '';
    ctx.out.push({ code: 'unrecognized_keys', path: [...path, k], keys: unknown, message: `unknown key${hint(k)}${list}` });
  } else {
    ctx.out.push({ code: 'unrecognized_keys', path, keys: unknown, message: `unknown keys ${unknown.map((k) => `${JSON.stringify(k)}${hint(k)}`).join(', ')}` });
  }
}

/** A union: the option shaped like the value says what is wrong inside it; otherwise, what any option would take. */
function walkUnion(of: Rule[], v: unknown, path: PropertyKey[], ctx: Context, got: () => string): void {
  const tries = of.map((o) => {
    const attempt: Context = { out: [], closest: ctx.closest };
    walk(o, v, path, attempt);
    return attempt.out;
  });
  if (tries.some((issues) => issues.length === 0)) return;
  const options = of.map(node);
  let best: Issue[] | undefined;
  for (const [i, o] of options.entries()) {
    if (!sameShape(o, v)) continue;
    const issues = tries[i]!;
    // The option that got furthest (the deepest path) is the one the caller meant.
    if (!best || depth(issues) > depth(best)) best = issues;
  }
  if (best) {
    ctx.out.push(...best);
    return;
  }
  const types = [...new Set(options.filter((o) => o[0] !== 5 /* VALUES */).map(what1))];
  // An open enum (known values or any string) takes every string: its values are not listed.
  const values = types.includes('a string') ? [] : options.flatMap((o) => (o[0] === 5 /* VALUES */ ? o.slice(1) : []));
  const parts = [...types, ...values.map(show)];
  ctx.out.push({ code: 'invalid_union', path, message: v === undefined ? `is required (${orList(parts)})` : `must be ${orList(parts)}${got()}${suggest(ctx, v, values)}` });
}

const depth = (issues: Issue[]) => Math.max(...issues.map((i) => i.path.length));

/** Whether the value is of the option's outer kind (an object for an object, an array for an array). */
function sameShape(o: Composite, v: unknown): boolean {
  switch (o[0]) {
    case 7 /* OBJECT */:
    case 6 /* STRICT */:
    case 3 /* RECORD */:
      return isPlainObject(v);
    case 2 /* ARRAY */:
      return Array.isArray(v);
    case 8 /* INTEGER */:
    case 9 /* NUMBER */:
      return typeof v === 'number';
    case 10 /* STRING */:
      return typeof v === 'string';
    case 0 /* OPTIONAL */:
    case 1 /* NULLABLE */:
      return sameShape(node(o[1]), v);
    default:
      return false;
  }
}

/**
 * The noun of each kind of rule, by tag: what a message calls it (`an array`, `an object`), and for a leaf the word
 * that writes it in a rule (`'integer'`), so that the tag of a leaf is its index here.
 */
const NOUNS = ['', '', 'array', 'object', '', '', 'object', 'object', 'integer', 'number', 'string', '', 'boolean', 'null', 'unknown'];

/** The rule as a tuple: a leaf as its tag (`'integer?'`: `[OPTIONAL, 'integer']`, then `[INTEGER]`), an object's fields as `[OBJECT, fields]`. */
function node(rule: Rule): Composite {
  if (typeof rule !== 'string') return isTuple(rule) ? rule : [7 /* OBJECT */, rule];
  if (rule.endsWith('?')) return [0 /* OPTIONAL */, rule.slice(0, -1) as LeafType];
  return [NOUNS.indexOf(rule) as typeof STRING];
}

/** What a rule takes, as a noun phrase: `an integer of at least 1`, `a string`, `an object`. */
function what1(r: Composite): string {
  switch (r[0]) {
    case 8 /* INTEGER */:
    case 9 /* NUMBER */:
      return `${article(NOUNS[r[0]]!)}${rangeText(r[1] ?? undefined, r[2])}`;
    case 5 /* VALUES */:
      return oneOf(r.slice(1));
    case 14 /* UNKNOWN */:
      return 'a value';
    case 0 /* OPTIONAL */:
      return what1(node(r[1]));
    case 1 /* NULLABLE */:
      return `${what1(node(r[1]))} or null`;
    case 4 /* UNION */:
      return orList(r.slice(1).map((o) => what1(node(o as Rule))));
    case 11 /* CUSTOM */:
      return r[2].replace(/^must be /, '');
  }
  return article(NOUNS[r[0]]!);
}

function atLeast(n: number, unit: string): string {
  return n === 1 ? 'must not be empty' : `must have at least ${n} ${unit}s`;
}


// ---------------------------------------------------------------------------
// Words

const MAX_VALUES_SHOWN = 20;

/** `"a"`, or `one of "a", "b", …`. */
function oneOf(values: readonly unknown[]): string {
  if (values.length === 1) return show(values[0]);
  const shown = values.slice(0, MAX_VALUES_SHOWN).map(show).join(', ');
  return `one of ${shown}${values.length > MAX_VALUES_SHOWN ? `, … (${values.length} values)` : ''}`;
}

function orList(parts: readonly string[]): string {
  if (parts.length <= 1) return parts[0] ?? 'a valid value';
  return `${parts.slice(0, -1).join(', ')} or ${parts[parts.length - 1]}`;
}

const show = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : String(v));

/** ` (did you mean "search"?)` when a known value is a small edit away from the given string; `''` otherwise. */
function suggest(ctx: Context, given: unknown, candidates: readonly unknown[]): string {
  if (typeof given !== 'string' || !ctx.closest) return '';
  const best = ctx.closest(given, candidates.filter((c): c is string => typeof c === 'string'));
  return best === undefined ? '' : ` (did you mean ${JSON.stringify(best)}?)`;
}
