/**
 * `validate()`: the fast check, then (on failure only) the explanation.
 *
 * @module
 */
import type { SchemaIssue } from '../errors.ts';
import { explain } from './explain.ts';
import { isValid, type Typed } from './rule.ts';

/** Result of {@link validate}. */
export type ValidateResult<T> = { ok: true; value: T } | { ok: false; issues: SchemaIssue[] };

/**
 * Validates `value` against `rule`: on success the input itself (unknown
 * fields kept, DESIGN §5); on failure every issue, each with its path and a
 * one-line message (`must be a number, got "3"`).
 *
 * @example
 * ```ts
 * const r = validate(rules.JobStatus, JSON.parse(text));
 * if (!r.ok) throw new ResponseValidationError('GET', url, r.issues, body);
 * r.value.status; // typed
 * ```
 */
export function validate<T>(rule: Typed<T>, value: unknown): ValidateResult<T> {
  if (isValid(rule, value)) return { ok: true, value: value as T };
  return { ok: false, issues: explain(rule, value) };
}
