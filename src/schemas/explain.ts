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
import { codePoints, isObject, isOptional, isPlainObject, type LeafType, type Rule } from './rule.ts';

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

/** A rule with leaves spelled out as objects, so one `switch` covers every kind. */
type Composite = Extract<Rule, { type: string }> | { readonly type: 'boolean' | 'null' | 'unknown' };

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

function walk(rule: Rule | Composite, v: unknown, path: PropertyKey[], ctx: Context): void {
  const r = node(rule);
  const got = () => `, got ${describeValue(v, path)}`;
  const wrongType = (expected: string) => {
    const what = what1(r);
    ctx.out.push({ code: 'invalid_type', path, expected, message: v === undefined ? `is required (${what})` : `must be ${what}${got()}` });
  };
  switch (r.type) {
    case 'unknown':
      return;
    case 'boolean':
      if (typeof v !== 'boolean') wrongType('boolean');
      return;
    case 'null':
      if (v !== null) wrongType('null');
      return;
    case 'number': {
      const int = r.int === true;
      if (!(int ? Number.isSafeInteger(v) : typeof v === 'number' && Number.isFinite(v))) return wrongType(int ? 'int' : 'number');
      const n = v as number;
      if (r.min !== undefined && n < r.min) ctx.out.push({ code: 'too_small', path, origin: 'number', minimum: r.min, inclusive: true, message: `must be ${what1(r)}${got()}` });
      else if (r.max !== undefined && n > r.max) ctx.out.push({ code: 'too_big', path, origin: 'number', maximum: r.max, inclusive: true, message: `must be ${what1(r)}${got()}` });
      return;
    }
    case 'string':
      if (typeof v !== 'string') return wrongType('string');
      if (r.min !== undefined && codePoints(v) < r.min) ctx.out.push({ code: 'too_small', path, origin: 'string', minimum: r.min, inclusive: true, message: `${atLeast(r.min, 'character')}${got()}` });
      return;
    case 'array':
      if (!Array.isArray(v)) return wrongType('array');
      if (r.min !== undefined && v.length < r.min) ctx.out.push({ code: 'too_small', path, origin: 'array', minimum: r.min, inclusive: true, message: `${atLeast(r.min, 'item')}${got()}` });
      for (let i = 0; i < v.length; i++) walk(r.of, v[i], [...path, i], ctx);
      return;
    case 'record':
      if (!isPlainObject(v)) return wrongType('record');
      for (const k of Object.keys(v)) if (k !== '__proto__') walk(r.of, v[k], [...path, k], ctx);
      return;
    case 'object':
      return walkObject(r, v, path, ctx, wrongType);
    case 'values':
      if (!r.values.includes(v as never)) {
        ctx.out.push({ code: 'invalid_value', path, values: r.values, message: v === undefined ? `is required (${oneOf(r.values)})` : `must be ${oneOf(r.values)}${got()}${suggest(ctx, v, r.values)}` });
      }
      return;
    case 'optional':
      if (v !== undefined) walk(r.of, v, path, ctx);
      return;
    case 'nullable':
      if (v !== null) walk(r.of, v, path, ctx);
      return;
    case 'union':
      return walkUnion(r, v, path, ctx, got);
    case 'custom':
      if (!r.is(v)) ctx.out.push({ code: 'custom', path, message: v === undefined ? `is required (${r.message.replace(/^must be /, '')})` : `${r.message}${got()}` });
      return;
  }
}

function walkObject(r: Extract<Rule, { type: 'object' }>, v: unknown, path: PropertyKey[], ctx: Context, wrongType: (e: string) => void): void {
  if (!isObject(v)) return wrongType('object');
  for (const [k, field] of Object.entries(r.fields)) {
    if (v[k] === undefined && !(k in v) && !isOptional(field)) {
      ctx.out.push({ code: 'invalid_type', path: [...path, k], expected: 'nonoptional', message: `is required (${what1(node(field))})` });
    } else walk(field, v[k], [...path, k], ctx);
  }
  if (r.rest === undefined) return;
  const unknown: string[] = [];
  for (const k in v) if (!Object.hasOwn(r.fields, k)) unknown.push(k);
  if (r.rest !== 'reject') {
    for (const k of unknown) if (k !== '__proto__') walk(r.rest, v[k], [...path, k], ctx);
    return;
  }
  if (unknown.length === 0) return;
  const known = Object.keys(r.fields);
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
function walkUnion(r: Extract<Rule, { type: 'union' }>, v: unknown, path: PropertyKey[], ctx: Context, got: () => string): void {
  const tries = r.of.map((o) => {
    const attempt: Context = { out: [], closest: ctx.closest };
    walk(o, v, path, attempt);
    return attempt.out;
  });
  if (tries.some((issues) => issues.length === 0)) return;
  const options = r.of.map(node);
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
  const types = [...new Set(options.filter((o) => o.type !== 'values').map(what1))];
  // An open enum (known values or any string) takes every string: its values are not listed.
  const values = types.includes('a string') ? [] : options.flatMap((o) => (o.type === 'values' ? o.values : []));
  const parts = [...types, ...values.map(show)];
  ctx.out.push({ code: 'invalid_union', path, message: v === undefined ? `is required (${orList(parts)})` : `must be ${orList(parts)}${got()}${suggest(ctx, v, values)}` });
}

const depth = (issues: Issue[]) => Math.max(...issues.map((i) => i.path.length));

/** Whether the value is of the option's outer kind (an object for an object, an array for an array). */
function sameShape(o: Composite, v: unknown): boolean {
  switch (o.type) {
    case 'object':
    case 'record':
      return isPlainObject(v);
    case 'array':
      return Array.isArray(v);
    case 'number':
      return typeof v === 'number';
    case 'string':
      return typeof v === 'string';
    case 'optional':
    case 'nullable':
      return sameShape(node(o.of), v);
    default:
      return false;
  }
}

/** The rule with a leaf spelled out (`'integer?'` is an optional `{ type: 'number', int: true }`). */
function node(rule: Rule | Composite): Composite {
  if (typeof rule !== 'string') return rule;
  if (rule.endsWith('?')) return { type: 'optional', of: rule.slice(0, -1) as LeafType };
  return rule === 'integer' ? { type: 'number', int: true } : { type: rule as Exclude<LeafType, 'integer'> };
}

/** What a rule takes, as a noun phrase: `an integer of at least 1`, `a string`, `an object`. */
function what1(r: Composite): string {
  switch (r.type) {
    case 'number':
      return `${article(r.int ? 'integer' : 'number')}${rangeText(r.min, r.max)}`;
    case 'record':
      return 'an object';
    case 'values':
      return oneOf(r.values);
    case 'unknown':
      return 'a value';
    case 'optional':
      return what1(node(r.of));
    case 'nullable':
      return `${what1(node(r.of))} or null`;
    case 'union':
      return orList(r.of.map((o) => what1(node(o))));
    case 'custom':
      return r.message.replace(/^must be /, '');
    default:
      return article(r.type);
  }
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
