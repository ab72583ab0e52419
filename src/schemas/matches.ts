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
import { codePoints, isObject, isOptional, isPlainObject, type DataRule, type LeafRule, type Rule } from './rule.ts';

/**
 * `true` when `value` satisfies `rule`.
 *
 * @example
 * ```ts
 * matches({ type: 'object', fields: { id: 'string', size: 'integer?' } }, { id: 'a' }); // true
 * ```
 */
export function matches(rule: Rule, value: unknown): boolean {
  // Optional and nullable wrappers are unwrapped in place: most fields have one or two.
  for (;;) {
    if (typeof rule === 'string') return leaf(rule, value);
    switch (rule.type) {
      case 'object':
        return object(rule, value);
      case 'optional':
        if (value === undefined) return true;
        rule = rule.of;
        continue;
      case 'nullable':
        if (value === null) return true;
        rule = rule.of;
        continue;
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
        // Code points are counted (allocating) only for a minimum over 1: a non-empty string has one.
        return typeof value === 'string' && (rule.min === undefined || (rule.min < 2 ? value.length >= rule.min : codePoints(value) >= rule.min));
      case 'custom':
        return rule.is(value);
    }
  }
}

/** A leaf rule: `'string'`, or `'string?'` for an optional one. */
function leaf(rule: LeafRule, v: unknown): boolean {
  if (v === undefined) return rule === 'unknown' || rule.endsWith('?');
  switch (rule) {
    case 'string':
    case 'string?':
      return typeof v === 'string';
    case 'number':
    case 'number?':
      return Number.isFinite(v);
    case 'integer':
    case 'integer?':
      return Number.isSafeInteger(v);
    case 'boolean':
    case 'boolean?':
      return typeof v === 'boolean';
    case 'null':
    case 'null?':
      return v === null;
  }
  return true; // unknown
}

function object(rule: Extract<DataRule, { type: 'object' }>, v: unknown): boolean {
  if (!isObject(v)) return false;
  const o = v;
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
