/**
 * Fast structural validation for zod (v4 core) schemas.
 *
 * `z.safeParse` builds a fresh copy of every object and array it accepts and
 * allocates an issue list per node. On the WebSocket hot path, and for large
 * REST bodies such as `object_info`, that copy costs more than `JSON.parse`
 * itself. {@link compileCheck} walks a schema's `_zod.def` once and returns a
 * closure that only answers "valid or not", reading the input without copying
 * or allocating. {@link validate} runs that closure and asks zod for the issues
 * only when the answer is "no", so the error reports stay zod's own.
 *
 * What the compiled check models natively: `string`, `number` (finite only),
 * `boolean`, `null`, `undefined`, `void`, `nan`, `bigint`, `symbol`, `date`,
 * `any`, `unknown`, `never`, `literal`, `enum`, `object` (strip, loose, strict
 * and catchall, with zod's optional-key rules), `record` with string keys,
 * `array`, `optional`, `exactOptional`, `nullable`, `nonoptional`, `union` and
 * `discriminatedUnion`, `lazy` (recursion included), `readonly`, and the
 * checks `gt/gte/lt/lte`, `int`/`int32`/`uint32`/`float32`/`float64`,
 * `minLength/maxLength/length` (strings counted in code points, like zod),
 * `regex`, `startsWith`, `endsWith`, `includes`, `lowercase`, `uppercase`.
 * Any other node (tuple, intersection, pipe, transform, custom refinements,
 * string formats such as `email`, …) is checked by calling `z.safeParse` on
 * that node alone; the rest of the tree stays fast.
 *
 * Limits, all irrelevant to JSON input: symbol keys of an input object are not
 * inspected by `record` checks, and a custom `when` on a length check is
 * ignored.
 *
 * @module
 */
import * as z from 'zod/mini';
import type { SchemaIssue } from '../errors.ts';

/** Any zod v4 schema (classic, mini or core). */
export type AnySchema = z.core.$ZodType;

/** A compiled validity check: `true` when zod would accept `value`. Never throws, never allocates on the native paths. */
export type Check = (value: unknown) => boolean;

/** Result of {@link validate}. */
export type ValidateResult<T> = { ok: true; value: T } | { ok: false; issues: SchemaIssue[] };

interface Compiled {
  /** Set once the node is compiled; read through a trampoline by cyclic references compiled before that. */
  check: Check | undefined;
  /**
   * Whether zod's output equals the input, so {@link validate} may hand the
   * input back. False under transforms, defaults, coercion, pipes and
   * `readonly` (whose output is frozen): there, validate returns zod's output.
   */
  pure: boolean;
}

type Def = {
  type: string;
  checks?: readonly AnySchema[];
  check?: string;
  coerce?: boolean;
  [key: string]: unknown;
};

const compiledCache = new WeakMap<AnySchema, Compiled>();

const NUMBER_FORMAT_RANGES: Record<string, readonly [number, number]> = {
  safeint: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  int32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
  float32: [-3.4028234663852886e38, 3.4028234663852886e38],
  float64: [-Number.MAX_VALUE, Number.MAX_VALUE],
};

// Node types whose zod output is not the input (or not the same object graph).
const IMPURE_TYPES = new Set(['pipe', 'transform', 'default', 'prefault', 'catch', 'success', 'readonly', 'codec']);

// Node types whose zod output is the input value itself (or, for arrays, a copy of the same length),
// so checks may be applied to the input.
const CHECKABLE_TYPES = new Set(['string', 'number', 'boolean', 'bigint', 'array', 'literal', 'enum', 'any', 'unknown']);

const accept: Check = () => true;
const reject: Check = () => false;

/**
 * Compiles `schema` into a fast `(value) => boolean` that agrees with
 * `z.safeParse(schema, value).success`. Compilation walks the schema once and
 * is cached per schema object (a `WeakMap`), so calling this repeatedly is cheap.
 *
 * @example
 * ```ts
 * import * as z from 'zod/mini';
 * const isFileRef = compileCheck(z.looseObject({ filename: z.string(), type: z.optional(z.string()) }));
 * isFileRef({ filename: 'a.png', extra: 1 }); // true
 * isFileRef({ filename: 3 });                  // false
 * ```
 */
export function compileCheck(schema: AnySchema): Check {
  // A finished top-level compile always has its check; only cycles see an unset one, through `child`.
  return compile(schema).check!;
}

/**
 * Validates `value` against `schema` without cloning it. On success the
 * input itself is returned (unless the schema transforms or defaults
 * something, in which case zod's output is); on failure zod's `safeParse`
 * runs once to produce the issues.
 *
 * Unlike `safeParse`, a strip-mode `z.object` does not remove unknown keys
 * from the returned value: the SDK keeps unknown fields (DESIGN §5).
 *
 * @example
 * ```ts
 * const r = validate(JobStatus, JSON.parse(text));
 * if (!r.ok) throw new ResponseValidationError('GET', url, r.issues, body);
 * r.value.status; // typed
 * ```
 */
export function validate<S extends AnySchema>(schema: S, value: unknown): ValidateResult<z.infer<S>> {
  const c = compile(schema);
  const fast = c.check!(value);
  if (fast && c.pure) return { ok: true, value: value as z.infer<S> };
  // Either a failure (zod supplies the issues) or a schema that rewrites values (zod supplies the output).
  // zod is the authority: should the fast check ever be stricter than zod, the value still passes.
  const r = zodIssues(schema, value);
  if (!r.ok) return r;
  return { ok: true, value: (c.pure ? value : r.data) as z.infer<S> };
}

function compile(schema: AnySchema): Compiled {
  const hit = compiledCache.get(schema);
  if (hit) return hit;
  // Registered before the children so a cycle (lazy, or a getter in a shape) finds it and goes through a trampoline.
  const entry: Compiled = { check: undefined, pure: true };
  compiledCache.set(schema, entry);
  const def = schema._zod.def as unknown as Def;
  if (IMPURE_TYPES.has(def.type) || def.coerce === true) entry.pure = false;
  let base = compileType(schema, def, entry);
  if (base === undefined) base = fallback(schema);
  entry.check = withChecks(schema, def, base, entry);
  return entry;
}

/** The child's check, or a trampoline when the child is still being compiled (a cycle). Propagates impurity. */
function child(schema: AnySchema, parent: Compiled): Check {
  const c = compile(schema);
  if (!c.pure) parent.pure = false;
  return c.check ?? ((v) => c.check!(v));
}

function fallback(schema: AnySchema): Check {
  return (v) => {
    try {
      return z.safeParse(schema, v).success;
    } catch {
      // zod throws on a few absurd inputs (a `length` that cannot become a number); a check never throws.
      return false;
    }
  };
}

function zodIssues(schema: AnySchema, value: unknown): { ok: true; data: unknown } | { ok: false; issues: SchemaIssue[] } {
  try {
    const r = z.safeParse(schema, value);
    return r.success ? { ok: true, data: r.data } : { ok: false, issues: r.error.issues as unknown as SchemaIssue[] };
  } catch (err) {
    return { ok: false, issues: [{ code: 'custom', path: [], message: `Validation threw: ${err instanceof Error ? err.message : String(err)}` }] };
  }
}

function compileType(schema: AnySchema, def: Def, entry: Compiled): Check | undefined {
  if (def.coerce === true) return undefined;
  switch (def.type) {
    case 'string':
      return (v) => typeof v === 'string';
    case 'number':
      return (v) => typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return (v) => typeof v === 'boolean';
    case 'bigint':
      return (v) => typeof v === 'bigint';
    case 'symbol':
      return (v) => typeof v === 'symbol';
    case 'null':
      return (v) => v === null;
    case 'undefined':
    case 'void':
      return (v) => v === undefined;
    case 'nan':
      return (v) => typeof v === 'number' && Number.isNaN(v);
    case 'date':
      return (v) => v instanceof Date && !Number.isNaN(v.getTime());
    case 'any':
    case 'unknown':
      return accept;
    case 'never':
      return reject;
    case 'literal':
    case 'enum': {
      const values = schema._zod.values;
      if (!values) return undefined;
      return (v) => values.has(v as never);
    }
    case 'optional': {
      const inner = def.innerType as AnySchema;
      const check = child(inner, entry);
      // exactOptional admits absence only; a present `undefined` goes to the inner type.
      if (schema._zod.traits.has('$ZodExactOptional')) return check;
      // A defaulted inner substitutes a value for undefined: zod's business.
      if (inner._zod.optin === 'defaulted') return undefined;
      return (v) => v === undefined || check(v);
    }
    case 'nullable': {
      const check = child(def.innerType as AnySchema, entry);
      return (v) => v === null || check(v);
    }
    case 'nonoptional': {
      const check = child(def.innerType as AnySchema, entry);
      return (v) => v !== undefined && check(v);
    }
    case 'readonly':
      return child(def.innerType as AnySchema, entry);
    case 'lazy':
      // Resolved now, not on first use, so purity is known before validate() needs it; a recursive
      // reference finds the outer node in the cache and goes through a trampoline.
      return child((schema._zod as unknown as { innerType: AnySchema }).innerType, entry);
    case 'array': {
      const check = child(def.element as AnySchema, entry);
      return (v) => {
        if (!Array.isArray(v)) return false;
        for (let i = 0; i < v.length; i++) if (!check(v[i])) return false;
        return true;
      };
    }
    case 'union': {
      // `z.xor` (exactly one option) is left to zod.
      if (def.inclusive === false) return undefined;
      const options = (def.options as AnySchema[]).map((o) => child(o, entry));
      if (options.length === 1) return options[0];
      return (v) => {
        for (let i = 0; i < options.length; i++) if (options[i]!(v)) return true;
        return false;
      };
    }
    case 'object':
      return compileObject(def, entry);
    case 'record':
      return compileRecord(def, entry);
    default:
      return undefined;
  }
}

function compileObject(def: Def, entry: Compiled): Check | undefined {
  const shape = def.shape as Record<string, AnySchema>;
  if (Object.getOwnPropertySymbols(shape).length) return undefined;
  const keys: string[] = [];
  const checks: Check[] = [];
  // How an absent key is judged, per zod's handlePropertyResult: 0 required, 1 skip, 2 run the check on undefined.
  const absent: number[] = [];
  for (const key of Object.keys(shape)) {
    // zod never reads a declared __proto__ (it would replace the output's prototype).
    if (key === '__proto__') continue;
    const s = shape[key]!;
    const { optin, optout } = s._zod;
    keys.push(key);
    checks.push(child(s, entry));
    absent.push(optin === undefined ? 0 : optout === 'optional' ? 1 : 2);
    if (optin === 'defaulted') entry.pure = false;
  }
  const known = new Set(Object.keys(shape));
  const catchall = def.catchall as AnySchema | undefined;
  const catchallType = catchall?._zod.def.type;
  const n = keys.length;
  const shapeOk = (o: Record<string, unknown>): boolean => {
    for (let i = 0; i < n; i++) {
      const key = keys[i]!;
      const value = o[key];
      // Presence is `in`, like zod (an inherited property counts); asked only when the read gave undefined.
      if (value !== undefined || key in o) {
        if (!checks[i]!(value)) return false;
      } else {
        const mode = absent[i]!;
        if (mode === 0 || (mode === 2 && !checks[i]!(undefined))) return false;
      }
    }
    return true;
  };
  // Strip and loose objects accept any extra key: the for-in walk is skipped entirely.
  if (!catchall || catchallType === 'unknown' || catchallType === 'any') {
    return (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && shapeOk(v as Record<string, unknown>);
  }
  if (catchallType === 'never') {
    return (v) => {
      if (typeof v !== 'object' || v === null || Array.isArray(v) || !shapeOk(v as Record<string, unknown>)) return false;
      for (const key in v) if (!known.has(key)) return false;
      return true;
    };
  }
  const rest = child(catchall, entry);
  return (v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
    const o = v as Record<string, unknown>;
    if (!shapeOk(o)) return false;
    for (const key in o) {
      if (known.has(key) || key === '__proto__') continue;
      // A key reached by for-in is present, so even an optional catchall forgives nothing here.
      if (!rest(o[key])) return false;
    }
    return true;
  };
}

function compileRecord(def: Def, entry: Compiled): Check | undefined {
  const keyType = def.keyType as AnySchema;
  const keyDef = keyType._zod.def as unknown as Def;
  // Only plain string keys are modelled; enum/literal keys (exhaustive records) and refined keys go to zod.
  if (keyDef.type !== 'string' || keyDef.coerce === true || keyDef.check !== undefined || (keyDef.checks?.length ?? 0) > 0) return undefined;
  const value = child(def.valueType as AnySchema, entry);
  return (v) => {
    if (!isPlainObject(v)) return false;
    const o = v as Record<string, unknown>;
    for (const key in o) {
      if (key === '__proto__' || !Object.prototype.hasOwnProperty.call(o, key)) continue;
      if (!value(o[key])) return false;
    }
    return true;
  };
}

// zod's util.isPlainObject, verbatim in behaviour.
function isPlainObject(o: unknown): boolean {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return false;
  const ctor = (o as { constructor?: unknown }).constructor;
  if (ctor === undefined || typeof ctor !== 'function') return true;
  const prot = (ctor as { prototype?: unknown }).prototype;
  if (typeof prot !== 'object' || prot === null || Array.isArray(prot)) return false;
  return Object.prototype.hasOwnProperty.call(prot, 'isPrototypeOf');
}

/** Combines the node's own check (formats like `z.int()` are themselves checks) and `def.checks` with its type check. */
function withChecks(schema: AnySchema, def: Def, base: Check, entry: Compiled): Check {
  const all: AnySchema[] = [];
  if (schema._zod.traits.has('$ZodCheck')) all.push(schema);
  if (def.checks) all.push(...def.checks);
  if (all.length === 0) return base;
  // zod runs checks on its output, and an object's output is a rebuilt copy (stripped, with only
  // enumerable keys): checks there see a different value than ours would. Left to zod.
  if (!CHECKABLE_TYPES.has(def.type)) return fallback(schema);
  const compiled: Check[] = [];
  for (const c of all) {
    const checkDef = c._zod.def as unknown as Def;
    // `z.trim()`, `z.toLowerCase()`, … rewrite the value: validate() must return zod's output.
    if (checkDef.check === 'overwrite') entry.pure = false;
    const one = compileRefinement(checkDef);
    // One check zod alone understands: the whole node goes to zod (checks see the parsed value, not ours).
    if (one === undefined) return fallback(schema);
    compiled.push(one);
  }
  const n = compiled.length;
  return (v) => {
    if (!base(v)) return false;
    for (let i = 0; i < n; i++) if (!compiled[i]!(v)) return false;
    return true;
  };
}

function compileRefinement(def: Def): Check | undefined {
  switch (def.check) {
    case 'greater_than': {
      const { value, inclusive } = def as unknown as { value: unknown; inclusive: boolean };
      if (typeof value !== 'number') return undefined;
      return inclusive ? (v) => (v as number) >= value : (v) => (v as number) > value;
    }
    case 'less_than': {
      const { value, inclusive } = def as unknown as { value: unknown; inclusive: boolean };
      if (typeof value !== 'number') return undefined;
      return inclusive ? (v) => (v as number) <= value : (v) => (v as number) < value;
    }
    case 'number_format': {
      const format = (def.format as string | undefined) ?? 'float64';
      const range = NUMBER_FORMAT_RANGES[format];
      if (!range) return undefined;
      const [min, max] = range;
      // Written as zod writes it (`!(v < min)`), so NaN and non-numbers compare exactly as there.
      if (format.includes('int')) return (v) => Number.isSafeInteger(v) && !((v as number) < min) && !((v as number) > max);
      return (v) => !((v as number) < min) && !((v as number) > max);
    }
    case 'min_length': {
      const min = def.minimum as number;
      return (v) => {
        const len = lengthOf(v);
        return len === undefined || atLeast(len, min);
      };
    }
    case 'max_length': {
      const max = def.maximum as number;
      return (v) => {
        const len = lengthOf(v);
        return len === undefined || atMost(len, max);
      };
    }
    case 'length_equals': {
      const len = def.length as number;
      return (v) => {
        const n = lengthOf(v);
        return n === undefined || n === len;
      };
    }
    case 'string_format':
      return compileStringFormat(def);
    default:
      return undefined;
  }
}

function compileStringFormat(def: Def): Check | undefined {
  switch (def.format) {
    case 'regex':
    case 'lowercase':
    case 'uppercase': {
      const pattern = def.pattern;
      if (!(pattern instanceof RegExp)) return undefined;
      return (v) => {
        pattern.lastIndex = 0;
        return pattern.test(v as string);
      };
    }
    case 'starts_with': {
      const prefix = def.prefix as string;
      return (v) => (v as string).startsWith(prefix);
    }
    case 'ends_with': {
      const suffix = def.suffix as string;
      return (v) => (v as string).endsWith(suffix);
    }
    case 'includes': {
      const sub = def.includes as string;
      const position = def.position as number | undefined;
      return (v) => (v as string).includes(sub, position);
    }
    default:
      return undefined;
  }
}

// A non-number `length` (only an odd object has one) is compared with JS coercion, as zod does;
// where the coercion throws (zod would throw too) the value is simply not accepted.
function atLeast(len: number, min: number): boolean {
  if (typeof len === 'number') return len >= min;
  try {
    return len >= min;
  } catch {
    return false;
  }
}

function atMost(len: number, max: number): boolean {
  if (typeof len === 'number') return len <= max;
  try {
    return len <= max;
  } catch {
    return false;
  }
}

// zod measures strings in code points (a surrogate pair counts once), anything else by its
// `length`; a value without one (undefined) skips the check, as zod's default `when` does.
function lengthOf(v: unknown): number | undefined {
  if (typeof v !== 'string') return v === null || v === undefined ? undefined : (v as { length?: number }).length;
  let count = v.length;
  for (let i = 0; i < v.length - 1; i++) {
    if ((v.charCodeAt(i) & 0xfc00) === 0xd800 && (v.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}
