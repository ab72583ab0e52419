/**
 * Validation without zod at run time.
 *
 * The zod schemas of this folder are the single source of truth, but zod is
 * heavy to load (≈ 7 KB min+gz in a browser, most of the SDK's cold import in
 * Node) and `safeParse` copies every object it accepts. So
 * `scripts/gen-rules.ts` turns each schema into a {@link Rule}: plain data
 * (`rules.generated.ts`, tree-shakeable like any object literal) that this
 * module compiles, on first use, into a closure answering "valid or not"
 * without copying or allocating. Only a failure goes further: `explain.ts`
 * walks the same rule to say what is wrong and where (`validate.ts` joins
 * the two). A test proves every generated rule agrees with its zod schema.
 *
 * @module
 */

/** A JSON type (`integer`: a safe integer), or anything at all. */
export type LeafType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'unknown';
/** A leaf rule: a {@link LeafType}, or `'string?'` for an optional one (most fields are). */
export type LeafRule = LeafType | `${LeafType}?`;

/** What a zod schema checks, as data. Unknown keys of an object are kept unless `rest` says otherwise. */
export type Rule =
  | LeafRule
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
  | { readonly type: 'nullable'; readonly of: Rule }
  | CustomRule;

/** A check zod cannot describe as data (`z.custom`): a predicate and what it wants, as a message (`must be …`). */
export interface CustomRule {
  readonly type: 'custom';
  readonly is: (value: unknown) => boolean;
  readonly message: string;
}

declare const valueType: unique symbol;
/** A rule that validates a `T` (the type is carried for the compiler only). */
export type Typed<T> = Rule & { readonly [valueType]?: T };

type Check = (value: unknown) => boolean;

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

const LEAVES: Record<LeafType, Check> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => Number.isSafeInteger(v),
  boolean: (v) => typeof v === 'boolean',
  null: (v) => v === null,
  unknown: () => true,
};

const OPTIONAL_LEAVES = Object.fromEntries(
  Object.entries(LEAVES).map(([name, check]) => [`${name}?`, (v: unknown) => v === undefined || check(v)]),
) as Record<string, Check>;

const compiled = new WeakMap<object, Check>();

/** The compiled check of `rule` (built once per rule object). */
function checkOf(rule: Rule): Check {
  if (typeof rule === 'string') return LEAVES[rule as LeafType] ?? OPTIONAL_LEAVES[rule as LeafType];
  let c = compiled.get(rule);
  if (!c) {
    c = compile(rule);
    compiled.set(rule, c);
  }
  return c;
}

/** Whether an object may lack the key this rule checks. */
export const isOptional = (rule: Rule): boolean => (typeof rule === 'string' ? rule.endsWith('?') : rule.type === 'optional');

/** Characters counted in code points, as zod counts them. */
const length = (s: string): number => (s.length < 2 ? s.length : [...s].length);

function compile(rule: Exclude<Rule, LeafRule>): Check {
  switch (rule.type) {
    case 'number': {
      const { int, min = -Infinity, max = Infinity } = rule;
      const base = int ? LEAVES.integer : LEAVES.number;
      return (v) => base(v) && (v as number) >= min && (v as number) <= max;
    }
    case 'string': {
      const min = rule.min ?? 0;
      return (v) => typeof v === 'string' && (min === 0 || length(v) >= min);
    }
    case 'object': {
      const entries = Object.entries(rule.fields).map(([k, r]) => [k, checkOf(r), isOptional(r)] as const);
      const { fields, rest } = rule;
      const restCheck = rest === undefined || rest === 'reject' ? undefined : checkOf(rest);
      return (v) => {
        if (!isObject(v)) return false;
        for (const [k, c, optional] of entries) {
          const x = v[k];
          // As in zod 4, a required key must be there, even when its rule takes anything.
          if (x === undefined ? !optional && (!(k in v) || !c(x)) : !c(x)) return false;
        }
        if (rest === undefined) return true;
        for (const k in v) {
          if (Object.hasOwn(fields, k)) continue;
          if (!restCheck) return false;
          // zod skips `__proto__` unless the object is strict.
          if (k !== '__proto__' && !restCheck(v[k])) return false;
        }
        return true;
      };
    }
    case 'array': {
      const item = checkOf(rule.of);
      const min = rule.min ?? 0;
      return (v) => {
        if (!Array.isArray(v) || v.length < min) return false;
        for (let i = 0; i < v.length; i++) if (!item(v[i])) return false;
        return true;
      };
    }
    case 'record': {
      const item = checkOf(rule.of);
      return (v) => {
        if (!isPlainObject(v)) return false;
        for (const k in v) if (Object.hasOwn(v, k) && k !== '__proto__' && !item(v[k])) return false;
        return true;
      };
    }
    case 'union': {
      const options = rule.of.map(checkOf);
      return (v) => options.some((c) => c(v));
    }
    case 'values': {
      const values = new Set<unknown>(rule.values);
      return (v) => values.has(v);
    }
    case 'optional': {
      const inner = checkOf(rule.of);
      return (v) => v === undefined || inner(v);
    }
    case 'nullable': {
      const inner = checkOf(rule.of);
      return (v) => v === null || inner(v);
    }
    case 'custom':
      return (v) => rule.is(v);
  }
}

/**
 * `true` when `value` satisfies `rule`. Reads the value without copying it;
 * the first call compiles the rule.
 *
 * @example
 * ```ts
 * isValid(rules.FileRef, { filename: 'a.png' }); // true
 * ```
 */
export function isValid<T>(rule: Typed<T>, value: unknown): value is T {
  return checkOf(rule)(value);
}
