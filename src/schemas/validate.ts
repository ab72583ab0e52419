/**
 * `isValid()` and `validate()`: the rule's check as code, then (on failure
 * only) the walk over its data that says why.
 *
 * @module
 */
import type { SchemaIssue } from '../errors.ts';
import { explain, type Closest } from './explain.ts';
import { isInteger, isNumber, isString, type LeafRule, type Typed } from './rule.ts';

const LEAVES: Record<string, (v: unknown) => boolean> = {
  string: isString,
  number: isNumber,
  integer: isInteger,
  boolean: (v) => typeof v === 'boolean',
  null: (v) => v === null,
  unknown: () => true,
};

/**
 * `true` when `value` satisfies `rule`. A generated rule runs its code,
 * which reads the value without copying it; a hand-written one is walked.
 *
 * @example
 * ```ts
 * isValid(rules.FileRef, { filename: 'a.png' }); // true
 * ```
 */
export function isValid<T>(rule: Typed<T>, value: unknown): value is T {
  if (typeof rule === 'string') {
    const leaf = rule as LeafRule;
    return leaf.endsWith('?') ? value === undefined || LEAVES[leaf.slice(0, -1)]!(value) : LEAVES[leaf]!(value);
  }
  return rule.is ? rule.is(value) : explain(rule, value).length === 0;
}

/** Result of {@link validate}. */
export type ValidateResult<T> = { ok: true; value: T } | { ok: false; issues: SchemaIssue[] };

/**
 * Validates `value` against `rule`: on success the input itself (unknown
 * fields kept, DESIGN §5); on failure every issue, each with its path and a
 * one-line message (`must be a number, got "3"`). With `closest`, a typo in
 * a key or an allowed value gets a suggestion (`did you mean "search"?`).
 *
 * @example
 * ```ts
 * const r = validate(rules.JobStatus, JSON.parse(text));
 * if (!r.ok) throw new ResponseValidationError('GET', url, r.issues, body);
 * r.value.status; // typed
 * ```
 */
export function validate<T>(rule: Typed<T>, value: unknown, closest?: Closest): ValidateResult<T> {
  if (isValid(rule, value)) return { ok: true, value: value as T };
  return { ok: false, issues: explain(rule, value, closest) };
}
