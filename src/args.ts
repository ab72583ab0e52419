/**
 * Argument checks: every method rejects bad input with an
 * {@link InvalidArgumentError} naming the field, before any request is sent.
 *
 * The message says what is wrong in one line, built once here from zod's
 * issue: the field path, what was given (short; never the value of a field
 * that holds a secret) and what is allowed (a range, the allowed values, the
 * closest known key for a typo):
 *
 * ```text
 * params.limit: must be an integer of at least 1, got -1
 * params.serach: unknown key (did you mean "search"?)
 * style: must be one of "standard", "darker_but_realistic", …, got "smoth" (did you mean "smooth"?)
 * ```
 *
 * @module
 */
import * as z from 'zod/mini';
import { InvalidArgumentError, type SchemaIssue } from './errors.ts';
import { redactUrl } from './transport/redact.ts';

/** Throws {@link InvalidArgumentError} when `value` does not satisfy `schema`; returns it typed otherwise. */
export function checkArgs<S extends z.ZodMiniType>(schema: S, value: unknown, name: string): z.infer<S> {
  // zod's own parse, not the fast check: arguments are small and their range checks matter.
  const r = z.safeParse(schema, value);
  if (r.success) return r.data;
  const issues = r.error.issues as unknown as readonly Issue[];
  const { path, message } = describeIssue(issues[0]!, schema, value, []);
  const more = issues.length > 1 ? ` (+${issues.length - 1} more: see err.issues)` : '';
  const field = [name, ...path.map(String)].filter(Boolean).join('.');
  throw new InvalidArgumentError(`${message}${more}`, field || undefined, r.error.issues);
}

/** Throws unless `value` is a non-empty string. */
export function checkId(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw new InvalidArgumentError(`must be a non-empty string, got ${describeValue(value, [name])}`, name);
  return value;
}

// ---------------------------------------------------------------------------
// Describing a zod issue

/** The members of zod's issues that the messages use (zod/mini issues, all codes). */
interface Issue extends SchemaIssue {
  readonly path: PropertyKey[];
  readonly expected?: string;
  readonly origin?: string;
  readonly minimum?: number | bigint;
  readonly maximum?: number | bigint;
  readonly inclusive?: boolean;
  readonly exact?: boolean;
  readonly values?: unknown[];
  readonly keys?: string[];
  readonly errors?: Issue[][];
  readonly options?: unknown[];
  readonly issues?: Issue[];
  readonly format?: string;
  readonly pattern?: string;
  readonly divisor?: number;
}

/** The path (below the argument) and the message of one issue. */
function describeIssue(issue: Issue, root: unknown, value: unknown, prefix: readonly PropertyKey[]): { path: PropertyKey[]; message: string } {
  const path = [...prefix, ...issue.path];
  const given = valueAt(value, path);
  const schema = schemaAt(root, path);
  const got = () => `, got ${describeValue(given, path)}`;
  switch (issue.code) {
    case 'invalid_type': {
      const what = `${article(expectedName(issue.expected))}${rangeText(schema)}`;
      if (given === undefined) return { path, message: `is required (${what})` };
      return { path, message: `must be ${what}${got()}` };
    }
    case 'too_small':
    case 'too_big':
      return { path, message: `${sizeText(issue, schema)}${got()}` };
    case 'invalid_value':
      return { path, message: `${oneOf(issue.values ?? [])}${got()}${suggest(given, issue.values)}` };
    case 'unrecognized_keys': {
      const keys = issue.keys ?? [];
      const known = knownKeys(schema);
      const hint = (k: string) => suggest(k, known);
      if (keys.length === 1) {
        const k = keys[0]!;
        const list = !hint(k) && known.length > 0 && known.length <= 16 ? `; known keys: ${known.join(', ')}` : '';
        return { path: [...path, k], message: `unknown key${hint(k)}${list}` };
      }
      return { path, message: `unknown keys ${keys.map((k) => `${JSON.stringify(k)}${hint(k)}`).join(', ')}` };
    }
    case 'invalid_union':
      return describeUnion(issue, root, value, path, got);
    case 'invalid_format':
      return { path, message: `${issue.format === 'regex' && issue.pattern ? `must match ${issue.pattern}` : `must be a valid ${issue.format ?? 'value'}`}${got()}` };
    case 'not_multiple_of':
      return { path, message: `must be a multiple of ${issue.divisor}${got()}` };
    case 'invalid_key':
    case 'invalid_element': {
      const inner = issue.issues?.[0];
      if (inner) return describeIssue(inner, root, value, path);
      return { path, message: `is not valid${got()}` };
    }
    default: {
      // `custom` and anything newer: the schema's own message, when it has one.
      const own = issue.message && issue.message !== 'Invalid input' ? issue.message : 'is not valid';
      return { path, message: given === undefined ? `is required (${own.replace(/^must be /, '')})` : `${own}${got()}` };
    }
  }
}

/** A union: what any option would have taken (`a string or a number`), or the closest option's own complaint. */
function describeUnion(issue: Issue, root: unknown, value: unknown, path: PropertyKey[], got: () => string): { path: PropertyKey[]; message: string } {
  if (issue.options?.length) return { path, message: `${oneOf(issue.options)}${got()}${suggest(valueAt(value, path), issue.options)}` };
  const firsts = (issue.errors ?? []).map((branch) => branch[0]).filter((i): i is Issue => i !== undefined);
  const shallow = firsts.filter((i) => i.path.length === 0 && (i.code === 'invalid_type' || i.code === 'invalid_value'));
  if (shallow.length > 0 && shallow.length === firsts.length) {
    const types = [...new Set(shallow.filter((i) => i.code === 'invalid_type').map((i) => article(expectedName(i.expected))))];
    // An open enum (a union of known values and any string) takes every string: the values are only a hint.
    const values = types.includes('a string') ? [] : shallow.flatMap((i) => (i.code === 'invalid_value' ? (i.values ?? []) : []));
    const parts = [...types, ...values.map(show)];
    const given = valueAt(value, path);
    if (given === undefined) return { path, message: `is required (${orList(parts)})` };
    return { path, message: `must be ${orList(parts)}${got()}${suggest(given, values)}` };
  }
  // Objects and other composite options: the option that got furthest names the deepest field.
  const deepest = firsts.reduce<Issue | undefined>((best, i) => (best === undefined || i.path.length > best.path.length ? i : best), undefined);
  if (deepest) return describeIssue(deepest, root, value, path);
  return { path, message: `is not valid${got()}` };
}

function sizeText(issue: Issue, schema: unknown): string {
  const small = issue.code === 'too_small';
  const bound = Number(small ? issue.minimum : issue.maximum);
  const origin = issue.origin ?? 'number';
  if (origin === 'number' || origin === 'int' || origin === 'bigint') {
    const range = rangeText(schema);
    if (range) return `must be ${article(numberKind(schema, origin))}${range}`;
    return `must be ${boundText(small, bound, issue.inclusive !== false)}`;
  }
  if (origin === 'string' || origin === 'array' || origin === 'set' || origin === 'file') {
    const unit = origin === 'string' ? 'character' : origin === 'file' ? 'byte' : 'item';
    const n = `${bound} ${unit}${bound === 1 ? '' : 's'}`;
    if (issue.exact) return `must have exactly ${n}`;
    if (small && bound === 1 && issue.inclusive !== false) return 'must not be empty';
    return `must have ${small ? 'at least' : 'at most'} ${n}`;
  }
  return `must be ${boundText(small, bound, issue.inclusive !== false)}`;
}

function boundText(small: boolean, bound: number, inclusive: boolean): string {
  if (small) return inclusive ? `at least ${bound}` : `greater than ${bound}`;
  return inclusive ? `at most ${bound}` : `less than ${bound}`;
}

/** ` from 0 to 100`, ` of at least 1`, … for a number schema with bounds; `''` otherwise. */
function rangeText(schema: unknown): string {
  const def = defOf(schema);
  if (def?.type !== 'number' && def?.type !== 'bigint') return '';
  let min: { value: number; inclusive: boolean } | undefined;
  let max: { value: number; inclusive: boolean } | undefined;
  for (const check of (def.checks ?? []) as Array<{ _zod?: { def?: { check?: string; value?: unknown; inclusive?: boolean } } }>) {
    const c = check._zod?.def;
    if (c?.check === 'greater_than') min = { value: Number(c.value), inclusive: c.inclusive !== false };
    if (c?.check === 'less_than') max = { value: Number(c.value), inclusive: c.inclusive !== false };
  }
  if (min && max && min.inclusive && max.inclusive) return ` from ${min.value} to ${max.value}`;
  const parts = [min && boundText(true, min.value, min.inclusive), max && boundText(false, max.value, max.inclusive)].filter(Boolean);
  return parts.length ? ` of ${parts.join(' and ')}` : '';
}

function numberKind(schema: unknown, origin: string): string {
  const format = defOf(schema)?.format;
  return origin === 'int' || (typeof format === 'string' && /int/.test(format)) ? 'integer' : origin === 'bigint' ? 'bigint' : 'number';
}

function expectedName(expected: string | undefined): string {
  switch (expected) {
    case 'int':
      return 'integer';
    case 'record':
      return 'object';
    case 'nonoptional':
      return 'value';
    case undefined:
      return 'value';
    default:
      return expected;
  }
}

/** `a string`, `an integer`, `null`. */
/** `a token`, `an apiKey`: the article by the sound that follows (none before `null`, `undefined`, `never`). */
export function article(noun: string): string {
  if (noun === 'null' || noun === 'undefined' || noun === 'never') return noun;
  return `${/^[aeiou]/i.test(noun) ? 'an' : 'a'} ${noun}`;
}

const MAX_VALUES_SHOWN = 20;

function oneOf(values: readonly unknown[]): string {
  if (values.length === 1) return `must be ${show(values[0])}`;
  const shown = values.slice(0, MAX_VALUES_SHOWN).map(show).join(', ');
  return `must be one of ${shown}${values.length > MAX_VALUES_SHOWN ? `, … (${values.length} values)` : ''}`;
}

function orList(parts: readonly string[]): string {
  if (parts.length <= 1) return parts[0] ?? 'a valid value';
  return `${parts.slice(0, -1).join(', ')} or ${parts[parts.length - 1]}`;
}

const show = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : typeof v === 'bigint' ? `${v}n` : String(v));

/** ` (did you mean "search"?)` when a known value is a small edit away from the given string; `''` otherwise. */
function suggest(given: unknown, candidates: readonly unknown[] | undefined): string {
  if (typeof given !== 'string' || !candidates) return '';
  const best = closest(given, candidates.filter((c): c is string => typeof c === 'string'));
  return best === undefined ? '' : ` (did you mean ${JSON.stringify(best)}?)`;
}

// ---------------------------------------------------------------------------
// The value and the schema at a path

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let v = value;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

interface Def {
  type?: string;
  innerType?: unknown;
  shape?: Record<string, unknown>;
  catchall?: unknown;
  element?: unknown;
  valueType?: unknown;
  options?: unknown[];
  in?: unknown;
  checks?: unknown[];
  format?: unknown;
}

function defOf(schema: unknown): Def | undefined {
  let def = (schema as { _zod?: { def?: Def } } | undefined)?._zod?.def;
  // optional, nullable, default, readonly, … all wrap `innerType`; a pipe's input decides what is accepted.
  for (let i = 0; def && i < 16; i++) {
    const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
    if (inner === undefined) break;
    def = (inner as { _zod?: { def?: Def } })._zod?.def;
  }
  return def;
}

function schemaAt(schema: unknown, path: readonly PropertyKey[]): unknown {
  let s = schema;
  for (const k of path) {
    const def = defOf(s);
    if (!def) return undefined;
    if (def.type === 'object') s = def.shape?.[String(k)] ?? (defOf(def.catchall)?.type === 'never' ? undefined : def.catchall);
    else if (def.type === 'array' || def.type === 'set') s = def.element;
    else if (def.type === 'record') s = def.valueType;
    else if (def.type === 'union') s = def.options?.map((o) => schemaAt(o, [k])).find((x) => x !== undefined);
    else return undefined;
    if (s === undefined) return undefined;
  }
  return s;
}

function knownKeys(schema: unknown): string[] {
  const def = defOf(schema);
  return def?.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

// ---------------------------------------------------------------------------
// What was given, briefly and without secrets

/** Field names whose values are never shown: tokens, keys, passwords, secrets. */
const SECRET_FIELD = /api_?key|token|passw(or)?d|secret|credential|authorization|cookie|key$/i;
const MAX_SHOWN = 40;

/**
 * A short description of a value for an error message: `-1`, `"smoth"`,
 * `an array of 3`, `a Blob`. A value under a field named like a secret is
 * described by its type only; a URL is shown with its secrets redacted.
 */
export function describeValue(value: unknown, path: readonly PropertyKey[] = []): string {
  const secret = path.some((k) => typeof k === 'string' && SECRET_FIELD.test(k));
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string': {
      if (secret) return value === '' ? 'an empty string' : 'a string (not shown)';
      const text = /^[a-z][a-z\d+.-]*:\/\//i.test(value) && URL.canParse(value) ? redactUrl(value) : value;
      return JSON.stringify(text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN - 1)}…` : text);
    }
    case 'number':
    case 'boolean':
    case 'bigint':
      return secret ? `a ${typeof value} (not shown)` : typeof value === 'bigint' ? `${value}n` : String(value);
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    default:
      break;
  }
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : `an array of ${value.length}`;
  const ctor = (value as object).constructor;
  const kind = ctor && ctor !== Object && typeof ctor.name === 'string' && ctor.name ? ctor.name : 'object';
  return article(kind);
}

// ---------------------------------------------------------------------------
// The closest known name

const normalize = (s: string) => s.toLowerCase().replace(/[_\-\s]/g, '');

/**
 * The candidate a small edit away from `input` (case, `_` and `-` ignored;
 * a transposition counts as one edit; a word of a snake_case candidate counts
 * too, so `strenght` finds `light_transfer_strength`), or `undefined`.
 */
export function closest(input: string, candidates: readonly string[]): string | undefined {
  const a = normalize(input);
  if (a === '') return undefined;
  const limit = Math.max(1, Math.floor(a.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    if (c === input) continue;
    const words = [c, ...c.split(/[_\-\s]+|(?<=[a-z])(?=[A-Z])/).filter((w) => w.length >= 4 && w !== c)];
    for (const w of words) {
      const b = normalize(w);
      const d = distance(a, b, limit);
      if (d <= limit && d < b.length && d < bestDistance) {
        best = c;
        bestDistance = d;
      }
    }
  }
  return best;
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions), giving up above `limit`. */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return Infinity;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > limit) return Infinity;
    prev2 = prev;
    prev = row;
  }
  return prev[b.length]!;
}
