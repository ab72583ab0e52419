/**
 * Validation for an asynchronous caller: the rule's check now, and only when it fails the walk that says why
 * (`explain.ts`), loaded then (a file of its own in the browser build, `explain.browser.js`). So a client whose methods
 * are all asynchronous does not carry the walk at start; synchronous callers (a pool's `submit()`,
 * `parseTaskNotification()`) use `validate()` (`validate.ts`).
 *
 * @module
 */
import type { Closest } from './explain.ts';
import type { Typed } from './rule.ts';
import { isValid, type ValidateResult } from './validate.ts';

/**
 * {@link validate} (`validate.ts`), with the explanation of a failure loaded on first use.
 *
 * @example
 * ```ts
 * const r = await validateLater(rules.JobStatus, JSON.parse(text));
 * if (!r.ok) throw new ResponseValidationError('GET', url, r.issues, body);
 * ```
 */
export async function validateLater<T>(rule: Typed<T>, value: unknown, closest?: Closest): Promise<ValidateResult<T>> {
  if (isValid(rule, value)) return { ok: true, value: value as T };
  const { explain } = await import('./explain.ts');
  return { ok: false, issues: explain(rule, value, closest) };
}
