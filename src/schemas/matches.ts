/**
 * "Valid or not" over a rule's data, without saying why: the success path
 * of validation (`isValid()`, `validate()`), run on every response and
 * socket message. It allocates nothing and creates no closure, so a valid
 * value costs a few reads per field; `explain.ts` walks the same data again,
 * with paths and messages, only once this has said no. Both accept exactly
 * what zod accepts (test/schemas/rules.test.ts).
 *
 * @module
 */
import { isOptional, isPlainObject, type DataRule, type Rule } from './rule.ts';

/**
 * `true` when `value` satisfies `rule`.
 *
 * @example
 * ```ts
 * matches({ type: 'object', fields: { id: 'string', size: 'integer?' } }, { id: 'a' }); // true
 * ```
 */
export function matches(rule: Rule, value: unknown): boolean {
  if (typeof rule === 'string') return leaf(rule, value);
  switch (rule.type) {
    case 'object':
      return object(rule, value);
    case 'optional':
      return value === undefined || matches(rule.of, value);
    case 'nullable':
      return value === null || matches(rule.of, value);
    case 'array': {
      if (!Array.isArray(value) || (rule.min !== undefined && value.length < rule.min)) return false;
      const of = rule.of;
      if (of === 'unknown') return true;
      for (let i = 0; i < value.length; i++) if (!matches(of, value[i])) return false;
      return true;
    }
    case 'record': {
      if (!isPlainObject(value)) return false;
      const of = rule.of;
      if (of === 'unknown') return true;
      // Own keys only, `__proto__` skipped, as zod's record.
      for (const k in value) if (Object.hasOwn(value, k) && k !== '__proto__' && !matches(of, value[k])) return false;
      return true;
    }
    case 'values':
      return rule.values.includes(value as never);
    case 'union': {
      const of = rule.of;
      for (let i = 0; i < of.length; i++) if (matches(of[i]!, value)) return true;
      return false;
    }
    case 'number':
      if (!(rule.int === true ? Number.isSafeInteger(value) : Number.isFinite(value))) return false;
      return (rule.min === undefined || (value as number) >= rule.min) && (rule.max === undefined || (value as number) <= rule.max);
    case 'string':
      return typeof value === 'string' && (rule.min === undefined || longEnough(value, rule.min));
    case 'custom':
      return rule.is(value);
  }
}

/** A leaf: the commonest first (most fields are optional strings). */
function leaf(rule: string, v: unknown): boolean {
  switch (rule) {
    case 'string?':
      return v === undefined || typeof v === 'string';
    case 'string':
      return typeof v === 'string';
    case 'unknown':
    case 'unknown?':
      return true;
    case 'number':
      return Number.isFinite(v);
    case 'integer':
      return Number.isSafeInteger(v);
    case 'integer?':
      return v === undefined || Number.isSafeInteger(v);
    case 'number?':
      return v === undefined || Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'boolean?':
      return v === undefined || typeof v === 'boolean';
    case 'null':
      return v === null;
    case 'null?':
      return v === undefined || v === null;
    default:
      throw new TypeError(`not a rule: ${JSON.stringify(rule)}`);
  }
}

function object(rule: Extract<DataRule, { type: 'object' }>, v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  const fields = rule.fields;
  for (const k in fields) {
    const field = fields[k]!;
    const x = o[k];
    if (x === undefined) {
      // An optional rule takes undefined. Any other needs the key, even when it takes anything (`'unknown'`: zod 4).
      if (isOptional(field)) continue;
      if (!(k in o)) return false;
    }
    if (!matches(field, x)) return false;
  }
  const rest = rule.rest;
  if (rest === undefined) return true;
  // zod checks inherited enumerable keys too, and skips `__proto__` unless the object is strict.
  if (rest === 'reject') {
    for (const k in o) if (!Object.hasOwn(fields, k)) return false;
  } else {
    for (const k in o) if (!Object.hasOwn(fields, k) && k !== '__proto__' && !matches(rest, o[k])) return false;
  }
  return true;
}

/** At least `min` code points, as zod counts them, without spreading the string into an array. */
function longEnough(s: string, min: number): boolean {
  if (s.length < min) return false;
  // Every code point is one or two UTF-16 units.
  if (s.length >= 2 * min) return true;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    if (++n >= min) return true;
  }
  return false;
}
