/**
 * `isValid()` and `validate()`: a walk over the rule's data that only says
 * yes or no (`matches.ts`), then, on failure only, the one that says why
 * (`explain.ts`).
 *
 * @module
 */
import type { SchemaIssue } from '../errors.ts';
import { explain, type Closest } from './explain.ts';
import { matches } from './matches.ts';
import type { Typed } from './rule.ts';

/**
 * `true` when `value` satisfies `rule`. It reads the value without copying
 * it or allocating.
 *
 * @example
 * ```ts
 * isValid(rules.FileRef, { filename: 'a.png' }); // true
 * ```
 */
export function isValid<T>(rule: Typed<T>, value: unknown): value is T {
  return matches(rule, value);
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
