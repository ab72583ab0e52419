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
import {
  codePoints, isObject, isOptional, isPlainObject, isTuple, type Fields, type LeafRule, type Rule,
} from './rule.ts';

/**
 * `true` when `value` satisfies `rule`.
 *
 * @example
 * ```ts
 * matches({ id: 'string', size: 'integer?' }, { id: 'a' }); // true
 * ```
 */
export function matches(rule: Rule, value: unknown): boolean {
  // Optional and nullable wrappers are unwrapped in place: most fields have one or two.
  for (;;) {
    if (typeof rule === 'string') return leaf(rule, value);
    if (!isTuple(rule)) return object(rule, value, undefined);
    switch (rule[0]) {
      case 0 /* OPTIONAL */:
        if (value === undefined) return true;
        rule = rule[1];
        continue;
      case 1 /* NULLABLE */:
        if (value === null) return true;
        rule = rule[1];
        continue;
      case 2 /* ARRAY */: {
        if (!Array.isArray(value) || value.length < (rule[2] ?? 0)) return false;
        const of = rule[1];
        if (of === 'unknown') return true;
        for (let i = 0; i < value.length; i++) if (!matches(of, value[i])) return false;
        return true;
      }
      case 3 /* RECORD */: {
        if (!isPlainObject(value)) return false;
        const of = rule[1];
        if (of === 'unknown') return true;
        // Own keys only, `__proto__` skipped, as zod's record.
        for (const k in value) if (Object.hasOwn(value, k) && k !== '__proto__' && !matches(of, value[k])) return false;
        return true;
      }
      case 5 /* VALUES */:
        for (let i = 1; i < rule.length; i++) if (rule[i] === value) return true;
        return false;
      case 4 /* UNION */:
        for (let i = 1; i < rule.length; i++) if (matches(rule[i] as Rule, value)) return true;
        return false;
      case 8 /* INTEGER */:
      case 9 /* NUMBER */: {
        if (!(rule[0] === 8 /* INTEGER */ ? Number.isSafeInteger(value) : Number.isFinite(value))) return false;
        const min = rule[1];
        const max = rule[2];
        return (min == null || (value as number) >= min) && (max === undefined || (value as number) <= max);
      }
      case 10 /* STRING */: {
        // Code points are counted (allocating) only for a minimum over 1: a non-empty string has one.
        const min = rule[1] ?? 0;
        return typeof value === 'string' && (min < 2 ? value.length >= min : codePoints(value) >= min);
      }
      case 6 /* STRICT */:
      case 7 /* OBJECT */:
        return object(rule[1], value, rule[0] === 6 /* STRICT */ ? null : rule[2]);
      case 11 /* CUSTOM */:
        return rule[1](value);
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

/** An object with these fields; its other keys kept (`rest` undefined), refused (`null`), or each checked. */
function object(fields: Fields, v: unknown, rest: Rule | null | undefined): boolean {
  if (!isObject(v)) return false;
  const o = v;
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
  if (rest === undefined) return true;
  // zod checks inherited enumerable keys too, and skips `__proto__` unless the object is strict.
  if (rest === null) {
    for (const k in o) if (!Object.hasOwn(fields, k)) return false;
  } else {
    for (const k in o) if (!Object.hasOwn(fields, k) && k !== '__proto__' && !matches(rest, o[k])) return false;
  }
  return true;
}
