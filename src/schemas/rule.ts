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
 * What a zod schema checks, as data: a {@link LeafRule}, an object's fields (an object that keeps unknown keys), or
 * a tuple tagged by its first item ({@link TupleRule}): gzip takes them for less than `{ type: …, of: … }` objects
 * (issue 34).
 */
export type Rule = LeafRule | Fields | TupleRule;

/** An object's fields, each with its rule: as a rule, an object that keeps unknown keys. */
export interface Fields {
  readonly [key: string]: Rule;
}

// The first item of a tuple rule: a number, one or two characters in a bundle, and a walk's `switch` on it is a jump
// table. The generated rules and the walks write the numbers themselves (`case 0 /* OPTIONAL */:`): a bundle keeps
// each of these constants a variable (tsup's build is not minified, and an app's bundler does not inline a `var`), so
// names would cost every rule a reference, every bundle their declarations, and every `switch` a comparison per case.
/** `[OPTIONAL, rule]`: absent (`undefined`), or what `rule` takes. */
export const OPTIONAL = 0;
/** `[NULLABLE, rule]`: `null`, or what `rule` takes. */
export const NULLABLE = 1;
/** `[ARRAY, rule, min?]`: an array of at least `min` items that `rule` takes. */
export const ARRAY = 2;
/** `[RECORD, rule]`: a plain object whose every own value `rule` takes. */
export const RECORD = 3;
/** `[UNION, …rules]`: what any of the rules takes. */
export const UNION = 4;
/** `[VALUES, …values]`: one of the values. */
export const VALUES = 5;
/** `[STRICT, fields]`: an object with these fields and no other key. */
export const STRICT = 6;
/** `[OBJECT, fields, rest?]`: an object with these fields, whose other keys `rest` takes (kept unchecked without). */
export const OBJECT = 7;
/** `[INTEGER, min, max?]`: a safe integer in range (`min` `null`: no lower bound). */
export const INTEGER = 8;
/** `[NUMBER, min, max?]`: a finite number in range (`min` `null`: no lower bound). */
export const NUMBER = 9;
/** `[STRING, min?]`: a string of at least `min` characters (code points). */
export const STRING = 10;
/** `[CUSTOM, is, message]`: see {@link CustomRule}. */
export const CUSTOM = 11;
// Leaves spelled as tuples, by `explain.ts` only (a rule writes them as a word: `'boolean'`).
/** `[BOOLEAN]`: `true` or `false`. */
export const BOOLEAN = 12;
/** `[NULL]`: `null`. */
export const NULL = 13;
/** `[UNKNOWN]`: anything, `undefined` included. */
export const UNKNOWN = 14;

/** The composite rules, as tuples tagged by their first item. */
export type TupleRule =
  | readonly [typeof OPTIONAL, Rule]
  | readonly [typeof NULLABLE, Rule]
  | readonly [typeof ARRAY, Rule, number?]
  | readonly [typeof RECORD, Rule]
  | readonly [typeof UNION, ...Rule[]]
  | readonly [typeof VALUES, ...(string | number | boolean | null)[]]
  | readonly [typeof STRICT, Fields]
  | readonly [typeof OBJECT, Fields, Rule?]
  | readonly [typeof INTEGER | typeof NUMBER, (number | null)?, number?]
  | readonly [typeof STRING, number?]
  | CustomRule;

/** A check zod cannot describe as data (`z.custom`): a predicate and what it wants, as a message (`must be …`). */
export type CustomRule = readonly [typeof CUSTOM, (value: unknown) => boolean, string];

declare const valueType: unique symbol;
/** A rule that validates a `T` (the type is carried for the compiler only). */
export type Typed<T> = Rule & { readonly [valueType]?: T };

/** Whether a rule is a tuple (not a shorthand, not an object's fields). */
export const isTuple = (rule: Rule): rule is TupleRule => Array.isArray(rule);

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
  typeof rule === 'string' ? rule.endsWith('?') : isTuple(rule) && (rule[0] === 0 /* OPTIONAL */ || (rule[0] === 1 /* NULLABLE */ && isOptional(rule[1])));

/** Characters counted in code points, as zod counts them. */
export const codePoints = (s: string): number => (s.length < 2 ? s.length : [...s].length);
