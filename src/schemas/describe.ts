/**
 * How an error message names a value and a bound: `-1`, `"smoth"`, `an array of 3`, `a Blob` (never the value of a
 * field that holds a secret), ` from 0 to 100`, `an integer`. Small and loaded at start: argument checks that throw
 * synchronously word their messages with it; the walk that says why a value fails a rule (`explain.ts`) loads on first
 * failure where the caller is asynchronous.
 *
 * @module
 */
import { clip, redactUrl } from '../transport/redact.ts';

/** ` from 0 to 100`, ` of at least 1`, … for a bounded number; `''` otherwise. */
export function rangeText(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`;
  if (min !== undefined) return ` of at least ${min}`;
  if (max !== undefined) return ` of at most ${max}`;
  return '';
}

/** `a token`, `an apiKey`: the article by the sound that follows (none before `null`, `undefined`, `never`). */
export function article(noun: string): string {
  if (noun === 'null' || noun === 'undefined' || noun === 'never') return noun;
  return `${/^[aeiou]/i.test(noun) ? 'an' : 'a'} ${noun}`;
}

// ---------------------------------------------------------------------------
// What was given, briefly and without secrets

/** Field names whose values are never shown: tokens, keys, passwords, secrets. */
const SECRET_FIELD = /api_?key|token|passw(or)?d|secret|credential|authorization|^auth$|cookie|signature|^sig$|key$/i;
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
      return JSON.stringify(clip(text, MAX_SHOWN));
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
