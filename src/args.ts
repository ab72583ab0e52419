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
import { InvalidArgumentError } from './errors.ts';
import { describeValue } from './schemas/explain.ts';
import type { Typed } from './schemas/rule.ts';
import { validate } from './schemas/validate.ts';

/** Throws {@link InvalidArgumentError} when `value` does not satisfy `rule`; returns it typed otherwise. */
export function checkArgs<T>(rule: Typed<T>, value: unknown, name: string): T {
  const r = validate(rule, value);
  if (r.ok) return r.value;
  const [first, ...rest] = r.issues;
  const more = rest.length > 0 ? ` (+${rest.length} more: see err.issues)` : '';
  const field = [name, ...first!.path.map(String)].filter(Boolean).join('.');
  throw new InvalidArgumentError(`${first!.message}${more}`, field || undefined, r.issues);
}

/** Throws unless `value` is a non-empty string. */
export function checkId(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw new InvalidArgumentError(`must be a non-empty string, got ${describeValue(value, [name])}`, name);
  return value;
}
