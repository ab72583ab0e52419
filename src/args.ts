/**
 * Argument checks: every method rejects bad input with an
 * {@link InvalidArgumentError} naming the field, before any request is sent.
 * The message is the first issue's, from `schemas/explain.ts`:
 *
 * ```text
 * params.limit: must be an integer of at least 1, got -1
 * params.serach: unknown key (did you mean "search"?)
 * style: must be one of "standard", "darker_but_realistic", …, got "smoth" (did you mean "smooth"?)
 * ```
 *
 * @module
 */
import { InvalidArgumentError, type SchemaIssue } from './errors.ts';
import { describeValue } from './schemas/describe.ts';
import type { Typed } from './schemas/rule.ts';
import { validate } from './schemas/validate.ts';
import { validateLater } from './schemas/validate-later.ts';

/** Throws {@link InvalidArgumentError} when `value` does not satisfy `rule`; returns it typed otherwise. */
export function checkArgs<T>(rule: Typed<T>, value: unknown, name: string): T {
  const r = validate(rule, value, closest);
  if (r.ok) return r.value;
  throw argumentError(r.issues, name);
}

/**
 * {@link checkArgs} for an asynchronous caller (every method of the clients): the same error, worded by the walk
 * that loads on the first failure (`schemas/validate-later.ts`), so a client does not carry it at start.
 *
 * @example
 * ```ts
 * const p = await checkArgsLater(rules.SearchNodesParams, params, 'params');
 * ```
 */
export async function checkArgsLater<T>(rule: Typed<T>, value: unknown, name: string): Promise<T> {
  const r = await validateLater(rule, value, closest);
  if (r.ok) return r.value;
  throw argumentError(r.issues, name);
}

/** The first issue's message, naming its field (`params.limit`), with every issue in `issues`. */
function argumentError(issues: SchemaIssue[], name: string): InvalidArgumentError {
  const [first, ...rest] = issues;
  const more = rest.length > 0 ? ` (+${rest.length} more: see err.issues)` : '';
  const field = [name, ...first!.path.map(String)].filter(Boolean).join('.');
  return new InvalidArgumentError(`${first!.message}${more}`, field || undefined, issues);
}

/** Throws unless `value` is a non-empty string, and not `.` or `..` (which no path segment can carry). */
export function checkId(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw new InvalidArgumentError(`must be a non-empty string, got ${describeValue(value, [name])}`, name);
  // URL parsing resolves these segments away, even percent-encoded: the request would name another resource.
  if (value === '.' || value === '..') throw new InvalidArgumentError(`cannot be "${value}": it cannot be sent as a path segment`, name);
  return value;
}

/** Throws {@link InvalidArgumentError} naming `name` unless `value` is a function or absent (a callback option). */
export function checkFunction(value: unknown, name: string): void {
  if (value !== undefined && typeof value !== 'function') throw new InvalidArgumentError('must be a function', name);
}

/**
 * The options an options type takes, listed once beside it: `{ baseUrl: 1, … } satisfies OptionKeys<T>`
 * makes the compiler refuse a list that misses one of `T`'s keys or names one it does not have.
 */
export type OptionKeys<T> = { readonly [K in keyof Required<T>]: 1 };

/**
 * Two key lists as one: `/* @__PURE__ *\/ joinKeys(CLIENT_OPTIONS, { token: 1 })`. A call marked pure, not an
 * object spread (which a bundler must keep for its getters), so that a list nobody checks against is dropped
 * from an app's bundle.
 */
export const joinKeys = <A extends object, B extends object>(a: A, b: B): A & B => Object.assign({}, a, b);

/**
 * Throws {@link InvalidArgumentError} when `options` has a key `known` does not
 * list, naming the closest known one (else listing them all), so a misspelt
 * option fails before any request instead of being ignored (TypeScript refuses
 * it at compile time; plain JavaScript did not). A key whose value is
 * `undefined` is refused too: `{ apikey: process.env.KEY }` is the same typo.
 * Not an object: left to the caller's own checks.
 *
 * @param where What takes the options, for the message (`CloudClient`, `run()`).
 * @param path The field's prefix for a nested bag (`retry.`).
 *
 * @example
 * ```ts
 * checkOptions({ apikey: 'k' }, CLOUD_CLIENT_OPTIONS, 'CloudClient');
 * // InvalidArgumentError: apikey: unknown option of CloudClient (did you mean "apiKey"?)
 * ```
 */
export function checkOptions(options: unknown, known: Readonly<Record<string, 1>>, where: string, path = ''): void {
  if (typeof options !== 'object' || options === null) return;
  for (const key of Object.keys(options)) {
    if (Object.hasOwn(known, key)) continue;
    const names = Object.keys(known);
    const near = closest(key, names);
    throw new InvalidArgumentError(`unknown option of ${where}${near ? ` (did you mean "${near}"?)` : `; the options are ${names.join(', ')}`}`, path + key);
  }
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

/**
 * ` (did you mean --input?)` when a known name is a small edit away from
 * `given`, `''` otherwise: the SDK's own suggestion rule ({@link closest}).
 *
 * @example
 * ```ts
 * didYouMean('inptu', ['input', 'out'], '--'); // ' (did you mean --input?)'
 * ```
 */
export function didYouMean(given: string, known: readonly string[], prefix = ''): string {
  const best = closest(given, known);
  return best === undefined ? '' : ` (did you mean ${prefix}${best}?)`;
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
