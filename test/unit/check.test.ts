// compileCheck must agree with zod's safeParse on every value: the SDK's own
// schemas and a synthetic battery covering every node type and check it models,
// over hand-picked edge cases and fast-check values generated from the schema
// itself (mostly valid, with a deviation planted here and there).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { compileCheck, validate, type AnySchema } from '../../src/schemas/check.ts';
import * as cloudSchemas from '../../src/schemas/cloud.ts';
import * as eventSchemas from '../../src/schemas/events.ts';
import * as proxySchemas from '../../src/schemas/proxy.ts';
import * as registrySchemas from '../../src/schemas/registry.ts';

const isSchema = (v: unknown): v is AnySchema => typeof v === 'object' && v !== null && '_zod' in v;

function sdkSchemas(): [string, AnySchema][] {
  const out: [string, AnySchema][] = [];
  for (const [mod, ns] of Object.entries({ cloud: cloudSchemas, events: eventSchemas, proxy: proxySchemas, registry: registrySchemas })) {
    for (const [name, v] of Object.entries(ns)) if (isSchema(v)) out.push([`${mod}.${name}`, v]);
  }
  return out;
}

// Values that trip validators up: wrong primitives, NaN/Infinity, -0, unsafe integers, odd objects.
const EDGE_VALUES: unknown[] = [
  undefined, null, NaN, Infinity, -Infinity, -0, 0, 1, -1, 1.5, 2 ** 53, -(2 ** 53), 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 1e308, 3.5e38,
  '', 'a', '1', 'ok', '😀', '😀😀', '\ud83d', 'ABC', 'abc', true, false, 10n, Symbol('s'),
  [], [1], ['a'], [undefined], [null], new Array(2), {}, { a: 1 }, Object.create(null), new Date(0), new Date(NaN), new Map(), /x/,
  { __proto__: null, x: 1 }, JSON.parse('{"__proto__": 1}'), { toString: 'x' }, { length: 0 }, { length: 5 }, () => 1, new Uint8Array(2),
];

const junk: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...EDGE_VALUES) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 2, withNullPrototype: true, withSparseArray: true, withDate: true, withBigInt: true, withBoxedValues: true }) },
);

type Def = { type: string; [k: string]: unknown };
const defOf = (s: AnySchema) => s._zod.def as unknown as Def;

/**
 * Values shaped by `schema`: valid most of the time, with `junk` planted at
 * any node with a small probability, so most failures sit deep in the tree.
 */
function arbFor(schema: AnySchema, depth = 0): fc.Arbitrary<unknown> {
  const valid = validArb(schema, depth);
  return fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: junk });
}

function stringArb(def: Def): fc.Arbitrary<string> {
  const checks = [def, ...((def.checks as AnySchema[] | undefined) ?? []).map(defOf)];
  const picks: string[] = [];
  for (const c of checks) {
    if (c.check === 'string_format' && c.format === 'starts_with') picks.push(`${c.prefix as string}x`);
    if (c.check === 'string_format' && c.format === 'ends_with') picks.push(`x${c.suffix as string}`);
    if (c.check === 'string_format' && c.format === 'includes') picks.push(`xx${c.includes as string}`);
  }
  return fc.oneof(fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 6 }), fc.constantFrom('', 'a', 'abcd', '😀a', 'ABC', 'abc', ...picks));
}

function validArb(schema: AnySchema, depth: number): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  switch (def.type) {
    case 'string':
      return stringArb(def);
    case 'number':
      return fc.oneof(fc.integer({ min: -5, max: 105 }), fc.double({ noNaN: false }), fc.constantFrom(0, 100, 2 ** 31, 2 ** 53, -(2 ** 31), 4294967295, 3.4028234663852886e38, 3.5e38));
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'undefined':
    case 'void':
      return fc.constant(undefined);
    case 'literal':
    case 'enum':
      return fc.constantFrom(...[...(schema._zod.values ?? new Set([undefined]))]);
    case 'optional':
      return fc.oneof(fc.constant(undefined), arbFor(def.innerType as AnySchema, depth));
    case 'nullable':
      return fc.oneof(fc.constant(null), arbFor(def.innerType as AnySchema, depth));
    case 'nonoptional':
    case 'readonly':
      return arbFor(def.innerType as AnySchema, depth);
    case 'lazy':
      return depth > 3 ? junk : arbFor((schema._zod as unknown as { innerType: AnySchema }).innerType, depth + 1);
    case 'array': {
      if (depth > 3) return fc.constant([]);
      return fc.array(arbFor(def.element as AnySchema, depth + 1), { maxLength: 3 });
    }
    case 'union':
      return fc.oneof(...(def.options as AnySchema[]).map((o) => arbFor(o, depth)));
    case 'record': {
      if (depth > 3) return fc.constant({});
      const key = defOf(def.keyType as AnySchema).type === 'string' ? fc.string({ maxLength: 4 }) : (validArb(def.keyType as AnySchema, depth) as fc.Arbitrary<string>);
      return fc.dictionary(key, arbFor(def.valueType as AnySchema, depth + 1), { maxKeys: 3 });
    }
    case 'object': {
      if (depth > 3) return fc.constant({});
      const shape = def.shape as Record<string, AnySchema>;
      const fields: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of Object.entries(shape)) fields[k] = arbFor(s, depth + 1);
      const extra = def.catchall ? arbFor(def.catchall as AnySchema, depth + 1) : junk;
      // Keys absent, present, present-but-undefined; plus stray keys (some named like prototype members).
      return fc
        .tuple(
          fc.record(fields, { requiredKeys: [] }),
          fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('__proto__', 'toString', 'constructor', 'length')), extra, { maxKeys: 2 }),
          fc.subarray(Object.keys(shape)),
        )
        .map(([base, more, undef]) => {
          const o: Record<string, unknown> = { ...more };
          for (const [k, v] of Object.entries(base)) o[k] = v;
          for (const k of undef) if (Math.random() < 0.1) o[k] = undefined;
          return o;
        });
    }
    default:
      return junk;
  }
}

function expectAgreement(schema: AnySchema, value: unknown): void {
  const check = compileCheck(schema);
  let zodSays: boolean;
  try {
    zodSays = z.safeParse(schema, value).success;
  } catch {
    // zod throws on a few absurd inputs (an object `length` that cannot become a number): it accepted nothing.
    zodSays = false;
  }
  if (check(value) !== zodSays) {
    throw new Error(`disagreement: zod says ${zodSays} for ${safeShow(value)}`);
  }
}

function safeShow(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x === undefined ? '<undefined>' : typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));
  } catch {
    return String(v);
  }
}

// Recursive schemas, both styles zod supports.
type Tree = { name: string; children?: Tree[] };
const LazyTree: z.ZodMiniType<Tree> = z.lazy(() => z.object({ name: z.string(), children: z.optional(z.array(LazyTree)) }));
const GetterTree = z.looseObject({
  name: z.string(),
  get children() {
    return z.optional(z.array(GetterTree));
  },
});

const SYNTHETIC: [string, AnySchema][] = [
  ['string', z.string()],
  ['number', z.number()],
  ['int', z.int()],
  ['int32', z.int32()],
  ['uint32', z.uint32()],
  ['float32', z.float32()],
  ['float64', z.float64()],
  ['int >= 1', z.int().check(z.gte(1))],
  ['0 <= n <= 100', z.number().check(z.gte(0), z.lte(100))],
  ['0 < n < 1', z.number().check(z.gt(0), z.lt(1))],
  ['boolean', z.boolean()],
  ['null', z.null()],
  ['undefined', z.undefined()],
  ['void', z.void()],
  ['nan', z.nan()],
  ['bigint', z.bigint()],
  ['symbol', z.symbol()],
  ['date', z.date()],
  ['any', z.any()],
  ['unknown', z.unknown()],
  ['never', z.never()],
  ['literal', z.literal('a')],
  ['literals', z.literal(['a', 1, true, null])],
  ['enum', z.enum(['x', 'y'])],
  ['min 2', z.string().check(z.minLength(2))],
  ['max 2', z.string().check(z.maxLength(2))],
  ['length 2', z.string().check(z.length(2))],
  ['regex', z.string().check(z.regex(/^a+$/g))],
  ['lowercase', z.string().check(z.lowercase())],
  ['uppercase', z.string().check(z.uppercase())],
  ['startsWith', z.string().check(z.startsWith('ab'))],
  ['endsWith', z.string().check(z.endsWith('cd'))],
  ['includes', z.string().check(z.includes('x', { position: 1 }))],
  ['email (fallback)', z.email()],
  ['array', z.array(z.number())],
  ['array min 1', z.array(z.string()).check(z.minLength(1))],
  ['array max 2', z.array(z.unknown()).check(z.maxLength(2))],
  ['optional', z.optional(z.string())],
  ['exactOptional in object', z.object({ a: z.exactOptional(z.string()) })],
  ['nullable', z.nullable(z.number())],
  ['nullish', z.nullish(z.number())],
  ['nonoptional', z.nonoptional(z.optional(z.string()))],
  ['readonly', z.readonly(z.object({ a: z.string() }))],
  ['union', z.union([z.string(), z.number(), z.null()])],
  ['union of objects', z.union([z.object({ k: z.literal('a'), a: z.string() }), z.object({ k: z.literal('b'), b: z.number() })])],
  ['discriminatedUnion', z.discriminatedUnion('k', [z.object({ k: z.literal('a'), a: z.string() }), z.looseObject({ k: z.literal('b'), b: z.optional(z.number()) })])],
  ['xor (fallback)', z.xor([z.string(), z.string().check(z.minLength(3))])],
  ['object (strip)', z.object({ a: z.string(), b: z.optional(z.number()) })],
  ['looseObject', z.looseObject({ a: z.string(), b: z.nullable(z.number()) })],
  ['strictObject', z.strictObject({ a: z.string(), b: z.optional(z.boolean()) })],
  ['catchall', z.catchall(z.object({ a: z.string() }), z.number())],
  ['catchall optional', z.catchall(z.object({ a: z.optional(z.string()) }), z.optional(z.number()))],
  ['object of unknown (required)', z.object({ u: z.unknown(), n: z.any() })],
  ['object of prototype-named keys', z.object({ toString: z.optional(z.string()), constructor: z.optional(z.unknown()) })],
  ['object with __proto__ key', z.object({ __proto__: z.optional(z.string()), a: z.optional(z.number()) })],
  ['object with default (fallback)', z.object({ a: z._default(z.string(), 'x') })],
  ['object with checks', z.looseObject({ a: z.optional(z.string()) }).check(z.minLength(1))],
  ['record', z.record(z.string(), z.number())],
  ['record of objects', z.record(z.string(), z.looseObject({ v: z.number() }))],
  ['record with enum keys (fallback)', z.record(z.enum(['a', 'b']), z.number())],
  ['looseRecord', z.looseRecord(z.string().check(z.minLength(2)), z.number())],
  ['partialRecord', z.partialRecord(z.enum(['a', 'b']), z.string())],
  ['tuple (fallback)', z.tuple([z.string(), z.number()])],
  ['intersection (fallback)', z.intersection(z.object({ a: z.string() }), z.object({ b: z.number() }))],
  ['custom (fallback)', z.custom<string>((v) => typeof v === 'string' && v.length > 1)],
  ['refine (fallback)', z.string().check(z.refine((s) => s !== 'bad'))],
  ['pipe+transform (fallback)', z.pipe(z.string(), z.transform((s) => s.length))],
  ['trim (overwrite)', z.string().check(z.trim())],
  ['lazy tree', LazyTree],
  ['getter tree', GetterTree],
  ['deep', z.looseObject({ a: z.array(z.record(z.string(), z.union([z.nullable(z.string()), z.array(z.int())]))) })],
];

const ALL = [...SYNTHETIC, ...sdkSchemas()];

describe('compileCheck agrees with zod safeParse', () => {
  it('covers the SDK schemas', () => {
    const names = sdkSchemas().map(([n]) => n);
    expect(names).toEqual(expect.arrayContaining(['events.ProgressStateData', 'events.ExecutionErrorData', 'cloud.ObjectInfo', 'registry.Node']));
  });

  for (const [name, schema] of ALL) {
    it(`${name}: edge values and generated values`, () => {
      for (const v of EDGE_VALUES) expectAgreement(schema, v);
      fc.assert(
        fc.property(arbFor(schema), (v) => expectAgreement(schema, v)),
        { numRuns: 300 },
      );
    });
  }

  it('agrees on arbitrary values for every schema (no schema guidance)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ALL), junk, ([, schema], v) => expectAgreement(schema, v)),
      { numRuns: 3000 },
    );
  });

  it('generated values are not trivially all valid or all invalid', () => {
    // Guards the generator: agreement on nothing but rejections would prove little.
    let ok = 0;
    let bad = 0;
    const schema = eventSchemas.ProgressStateData;
    fc.assert(
      fc.property(arbFor(schema), (v) => {
        if (compileCheck(schema)(v)) ok++;
        else bad++;
      }),
      { numRuns: 500 },
    );
    expect(ok).toBeGreaterThan(50);
    expect(bad).toBeGreaterThan(50);
  });
});

describe('compileCheck specifics', () => {
  it('rejects NaN, Infinity and unsafe integers where zod does', () => {
    const n = compileCheck(z.number());
    expect([n(NaN), n(Infinity), n(-Infinity), n(1e308), n('1')]).toEqual([false, false, false, true, false]);
    const i = compileCheck(z.int());
    expect([i(1), i(1.5), i(2 ** 53), i(2 ** 53 - 1), i(-0)]).toEqual([true, false, false, true, true]);
  });

  it('counts string lengths in code points, like zod', () => {
    const c = compileCheck(z.string().check(z.maxLength(1)));
    expect([c('😀'), c('😀😀'), c('ab'), c('\ud83d')]).toEqual([true, false, false, true]);
  });

  it('keeps unknown keys in loose objects and rejects them in strict ones', () => {
    expect(compileCheck(z.looseObject({ a: z.string() }))({ a: 'x', extra: 1 })).toBe(true);
    expect(compileCheck(z.strictObject({ a: z.string() }))({ a: 'x', extra: 1 })).toBe(false);
  });

  it('requires keys whose schema is not optional, even unknown ones (zod 4 semantics)', () => {
    expect(compileCheck(z.object({ a: z.unknown() }))({})).toBe(false);
    expect(compileCheck(z.object({ a: z.optional(z.unknown()) }))({})).toBe(true);
  });

  it('follows recursion through lazy and shape getters', () => {
    const deep = { name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] };
    expect(compileCheck(LazyTree)(deep)).toBe(true);
    expect(compileCheck(GetterTree)(deep)).toBe(true);
    expect(compileCheck(GetterTree)({ name: 'a', children: [{ name: 1 }] })).toBe(false);
  });

  it('compiles each schema once', () => {
    const s = z.looseObject({ a: z.string() });
    expect(compileCheck(s)).toBe(compileCheck(s));
  });

  it('validates a 388 KB object_info-sized payload faster than safeParse', () => {
    const info: Record<string, unknown> = {};
    for (let i = 0; i < 440; i++) {
      info[`Node${i}`] = { input: { required: { image: ['IMAGE'], width: ['INT', { default: 512, min: 1 }] }, optional: {} }, output: ['IMAGE'], name: `Node${i}`, category: 'image' };
    }
    const check = compileCheck(cloudSchemas.ObjectInfo);
    const time = (fn: () => unknown) => {
      const t = performance.now();
      for (let i = 0; i < 50; i++) fn();
      return performance.now() - t;
    };
    time(() => check(info)), time(() => z.safeParse(cloudSchemas.ObjectInfo, info));
    expect(check(info)).toBe(true);
    expect(time(() => check(info))).toBeLessThan(time(() => z.safeParse(cloudSchemas.ObjectInfo, info)));
  });
});

describe('validate', () => {
  it('returns the input itself on success (no clone)', () => {
    const input = { prompt_id: 'p', nodes: ['1'], extra: { deep: true } };
    const r = validate(eventSchemas.ExecutionCachedData, input);
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.value).toBe(input);
      expect(r.value.nodes).toEqual(['1']);
    }
  });

  it('does not strip unknown keys of strip-mode objects (the SDK keeps unknown fields)', () => {
    const input = { a: 'x', extra: 1 };
    const r = validate(z.object({ a: z.string() }), input);
    expect(r.ok && r.value).toBe(input);
  });

  it("returns zod's issues on failure", () => {
    const schema = eventSchemas.ProgressData;
    const bad = { value: '3', max: 20, prompt_id: 'p' };
    const r = validate(schema, bad);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.issues).toEqual(z.safeParse(schema, bad).error!.issues);
      expect(r.issues[0]!.path).toEqual(['value']);
    }
  });

  it("returns zod's output where the schema rewrites the value (transform, default, overwrite)", () => {
    expect(validate(z.pipe(z.string(), z.transform((s) => s.length)), 'abc')).toEqual({ ok: true, value: 3 });
    expect(validate(z.object({ a: z._default(z.string(), 'd') }), {})).toEqual({ ok: true, value: { a: 'd' } });
    expect(validate(z.string().check(z.trim()), '  x ')).toEqual({ ok: true, value: 'x' });
    expect(validate(z.looseObject({ n: z.optional(z.pipe(z.string(), z.transform(Number))) }), { n: '4' })).toEqual({ ok: true, value: { n: 4 } });
  });

  it('agrees with safeParse on success and on the issue list, for generated values', () => {
    const schema = eventSchemas.ExecutionErrorData;
    fc.assert(
      fc.property(arbFor(schema), (v) => {
        const r = validate(schema, v);
        const zr = z.safeParse(schema, v);
        expect(r.ok).toBe(zr.success);
        if (!r.ok) expect(r.issues).toEqual(zr.error!.issues);
      }),
      { numRuns: 300 },
    );
  });
});
