/**
 * Argument checks: every method rejects bad input with an
 * {@link InvalidArgumentError} naming the field, before any request is sent.
 *
 * @module
 */
import * as z from 'zod/mini';
import { InvalidArgumentError } from './errors.ts';

/** Throws {@link InvalidArgumentError} when `value` does not satisfy `schema`; returns it typed otherwise. */
export function checkArgs<S extends z.ZodMiniType>(schema: S, value: unknown, name: string): z.infer<S> {
  // zod's own parse, not the fast check: arguments are small and their range checks matter.
  const r = z.safeParse(schema, value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = [name, ...issue.path.map(String)].filter(Boolean).join('.');
  throw new InvalidArgumentError(issue.message, field, r.error.issues);
}

/** Throws unless `value` is a non-empty string. */
export function checkId(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw new InvalidArgumentError('must be a non-empty string', name);
  return value;
}
