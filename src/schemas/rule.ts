/**
 * Validation without zod at run time: what a rule is.
 *
 * The zod schemas of this folder are the single source of truth, but zod is
 * heavy to load (≈ 7 KB min+gz in a browser, most of the SDK's cold import in
 * Node) and `safeParse` copies every object it accepts. So
 * `scripts/gen-rules.ts` turns each schema into a {@link Rule}: plain data
 * (`rules.generated.ts`, tree-shakeable like any object literal), read by two
 * walks: `matches.ts` answers "valid or not" without copying or allocating,
 * and `explain.ts`, run only once that said no, says what is wrong and where.
 * The rules carry no code of their own (but for `z.custom`'s predicates): a
 * check generated as code per schema read a large response 1.4–10× faster
 * (bench/validation.ts), but cost a browser app 0.7 KB min+gz at start with
 * `CloudClient` and 2.4 KB with the whole SDK, net of this walk.
 * A test proves both walks agree with zod on every exported schema.
 *
 * @module
 */

/** A JSON type (`integer`: a safe integer), or anything at all. */
export type LeafType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'unknown';
/** A leaf rule: a {@link LeafType}, or `'string?'` for an optional one (most fields are). */
export type LeafRule = LeafType | `${LeafType}?`;

/**
 * What a zod schema checks, as data. Unknown keys of an object are kept
 * unless `rest` says otherwise.
 */
export type Rule = LeafRule | CustomRule | DataRule;

/** The composite rules, as data. */
export type DataRule =
  | { readonly type: 'number'; readonly int?: true; readonly min?: number; readonly max?: number }
  | { readonly type: 'string'; readonly min?: number }
  | {
      readonly type: 'object';
      readonly fields: { readonly [key: string]: Rule };
      /** Unknown keys: kept when absent, an error with `'reject'` (a strict object), else each checked against this rule. */
      readonly rest?: Rule | 'reject';
    }
  | { readonly type: 'array'; readonly of: Rule; readonly min?: number }
  | { readonly type: 'record'; readonly of: Rule }
  | { readonly type: 'union'; readonly of: readonly Rule[] }
  | { readonly type: 'values'; readonly values: readonly (string | number | boolean | null)[] }
  | { readonly type: 'optional'; readonly of: Rule }
  | { readonly type: 'nullable'; readonly of: Rule };

/** A check zod cannot describe as data (`z.custom`): a predicate and what it wants, as a message (`must be …`). */
export interface CustomRule {
  readonly type: 'custom';
  readonly is: (value: unknown) => boolean;
  readonly message: string;
}

declare const valueType: unique symbol;
/** A rule that validates a `T` (the type is carried for the compiler only). */
export type Typed<T> = Rule & { readonly [valueType]?: T };

/** What zod takes for an object: not null, not an array. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What zod takes for a record: an object made by `{}` or `Object.create(null)`, not a `Date` or a boxed `Number`. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (!isObject(v)) return false;
  const ctor = v.constructor;
  if (typeof ctor !== 'function') return true;
  const proto: unknown = ctor.prototype;
  return isObject(proto) && Object.hasOwn(proto, 'isPrototypeOf');
}

/** `undefined` or a string: what most optional fields take. */
export const optString = (v: unknown): boolean => v === undefined || typeof v === 'string';

/** Whether an object may lack the key this rule checks. */
export const isOptional = (rule: Rule): boolean =>
  typeof rule === 'string' ? rule.endsWith('?') : rule.type === 'optional' || (rule.type === 'nullable' && isOptional(rule.of));

/** Characters counted in code points, as zod counts them. */
export const codePoints = (s: string): number => (s.length < 2 ? s.length : [...s].length);
