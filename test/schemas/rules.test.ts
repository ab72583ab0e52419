// The generated rules (src/schemas/rules.generated.ts) are the SDK's validators at run time:
// they must be what scripts/gen-rules.ts makes of the zod schemas today, and agree with
// zod's safeParse on every value: edge cases, values generated from each schema (mostly
// valid, with a deviation planted here and there) and arbitrary ones. `explain` must agree
// with the fast walk (matches.ts, behind isValid) too: issues exactly when it says no.
// And that proof must be able to fail: rules with a mistake planted are caught.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generate } from '../../scripts/gen-rules.ts';
import * as schemas from '../../src/schemas/index.ts';
import * as rules from '../../src/schemas/rules.generated.ts';
import { explain } from '../../src/schemas/explain.ts';
import {
  ARRAY, CUSTOM, INTEGER, NULLABLE, NUMBER, OBJECT, OPTIONAL, RECORD, STRICT, STRING, UNION, VALUES, isTuple, type Fields, type Rule,
} from '../../src/schemas/rule.ts';
import { isValid, validate } from '../../src/schemas/validate.ts';

type AnySchema = z.core.$ZodType;

const isSchema = (v: unknown): v is AnySchema => typeof v === 'object' && v !== null && '_zod' in v;

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
          fc.nat(9),
        )
        .map(([base, more, undef, dice]) => {
          const o: Record<string, unknown> = { ...more };
          for (const [k, v] of Object.entries(base)) o[k] = v;
          // One object in ten has some keys present but undefined (drawn by fast-check, so a seed replays a run).
          if (dice === 0) for (const k of undef) o[k] = undefined;
          return o;
        });
    }
    default:
      return junk;
  }
}

function safeShow(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x === undefined ? '<undefined>' : typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));
  } catch {
    return String(v);
  }
}


/** Every exported zod schema with its generated rule. */
function pairs(): [string, AnySchema, Rule][] {
  const out: [string, AnySchema, Rule][] = [];
  for (const [name, v] of Object.entries(schemas)) {
    if (!isSchema(v)) continue;
    const rule = (rules as Record<string, unknown>)[name] as Rule | undefined;
    if (rule === undefined) throw new Error(`no rule generated for ${name}`);
    out.push([name, v, rule]);
  }
  return out;
}

function expectAgreement(schema: AnySchema, rule: Rule, value: unknown): void {
  let zodSays: boolean;
  try {
    zodSays = z.safeParse(schema, value).success;
  } catch {
    zodSays = false; // zod throws on a few absurd inputs: it accepted nothing
  }
  const ruleSays = isValid(rule, value);
  if (ruleSays !== zodSays) throw new Error(`disagreement: zod says ${zodSays} for ${safeShow(value)}`);
  const issues = explain(rule, value);
  if ((issues.length === 0) !== ruleSays) throw new Error(`explain gave ${issues.length} issues where the check says ${ruleSays} for ${safeShow(value)}`);
  for (const i of issues) if (typeof i.message !== 'string' || i.message === '') throw new Error(`issue without a message: ${safeShow(i)}`);
}

const PAIRS = pairs();
const FIXTURES = process.env.PLATFORMUI_FIXTURES ?? '/work/shared/fixtures/local-server';

describe('rules.generated.ts', () => {
  it('is what scripts/gen-rules.ts makes of the schemas now (run it after changing a schema)', async () => {
    const file = readFileSync(fileURLToPath(new URL('../../src/schemas/rules.generated.ts', import.meta.url)), 'utf8');
    expect(file).toBe(await generate());
  });

  it('is data only: no code but the predicates of z.custom (src/schemas/predicates.ts)', () => {
    const code: string[] = [];
    const visit = (r: unknown, at: string): void => {
      if (typeof r === 'function') code.push(at);
      if (typeof r !== 'object' || r === null || (Array.isArray(r) && r[0] === CUSTOM)) return;
      for (const [k, v] of Object.entries(r)) visit(v, `${at}.${k}`);
    };
    for (const [name, , rule] of PAIRS) visit(rule, name);
    expect(code).toEqual([]);
    expect(readFileSync(fileURLToPath(new URL('../../src/schemas/rules.generated.ts', import.meta.url)), 'utf8')).not.toMatch(/\bfunction\b|=>/);
  });

  it('covers every exported schema, events included', () => {
    expect(PAIRS.map(([n]) => n)).toEqual(expect.arrayContaining(['ProgressStateData', 'ExecutionErrorData', 'ObjectInfo', 'Node', 'SearchNodesParams', 'RelightParams']));
    expect(Object.keys(rules.EVENT_SCHEMAS)).toEqual([...schemas.EVENT_TYPES]);
  });
});

describe('each rule agrees with its zod schema', () => {
  for (const [name, schema, rule] of PAIRS) {
    it(`${name}: edge values and generated values`, () => {
      for (const v of EDGE_VALUES) expectAgreement(schema, rule, v);
      fc.assert(
        fc.property(arbFor(schema), (v) => expectAgreement(schema, rule, v)),
        { numRuns: 300 },
      );
    });
  }

  it('on arbitrary values for every schema (no schema guidance)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...PAIRS), junk, ([, schema, rule], v) => expectAgreement(schema, rule, v)),
      { numRuns: 3000 },
    );
  });

  it('on the real object_info of a local server', ({ skip }) => {
    let text: string;
    try {
      text = readFileSync(`${FIXTURES}/object_info.json`, 'utf8');
    } catch {
      return skip(`${FIXTURES}/object_info.json not found`);
    }
    const info = JSON.parse(text) as unknown;
    expect(isValid(rules.ObjectInfo, info)).toBe(true);
    expectAgreement(schemas.ObjectInfo, rules.ObjectInfo, info);
  });

  it('generated values are not trivially all valid or all invalid', () => {
    // Guards the generator: agreement on nothing but rejections would prove little.
    let ok = 0;
    let bad = 0;
    fc.assert(
      fc.property(arbFor(schemas.ProgressStateData), (v) => {
        if (isValid(rules.ProgressStateData, v)) ok++;
        else bad++;
      }),
      { numRuns: 500 },
    );
    expect(ok).toBeGreaterThan(50);
    expect(bad).toBeGreaterThan(50);
  });
});

/** A copy of `rule` with the first node (depth first) that `pick` selects replaced by `change(node)`; undefined when none is. */
function mutate(rule: Rule, pick: (r: Rule) => boolean, change: (r: Rule) => Rule): Rule | undefined {
  let done = false;
  const fields = (f: Fields): Fields => Object.fromEntries(Object.entries(f).map(([k, x]) => [k, visit(x)]));
  const visit = (r: Rule): Rule => {
    if (done) return r;
    if (pick(r)) {
      done = true;
      return change(r);
    }
    if (typeof r === 'string') return r;
    if (!isTuple(r)) return fields(r);
    switch (r[0]) {
      case OPTIONAL:
      case NULLABLE:
      case RECORD:
        return asRule([r[0], visit(r[1])]);
      case ARRAY:
        return asRule([ARRAY, visit(r[1]), ...items(r).slice(2)]);
      case UNION:
        return asRule([UNION, ...(items(r).slice(1) as Rule[]).map(visit)]);
      case STRICT:
        return [STRICT, fields(r[1])];
      case OBJECT:
        return r[2] === undefined ? [OBJECT, fields(r[1])] : [OBJECT, fields(r[1]), visit(r[2])];
      default:
        return r; // values, bounded leaves, custom: no rule inside
    }
  };
  const copy = visit(rule);
  return done ? copy : undefined;
}

/** The fields of an object rule (loose, strict, or with a rule for its other keys); undefined for any other rule. */
const fieldsOf = (r: Rule): Fields | undefined => (typeof r === 'string' ? undefined : !isTuple(r) ? r : r[0] === STRICT || r[0] === OBJECT ? r[1] : undefined);
/** A tuple rule's items, to take apart; and items put together as a rule (a planted mistake need not type-check). */
const items = (r: Rule): readonly unknown[] => r as readonly unknown[];
const asRule = (xs: readonly unknown[]): Rule => xs as unknown as Rule;
/** `r` with its fields replaced, of the same kind of object. */
const withFields = (r: Rule, f: Fields): Rule => (isTuple(r) ? asRule([r[0], f, ...items(r).slice(2)]) : f);
const tagged = (r: Rule, ...tags: number[]): boolean => isTuple(r) && tags.includes(r[0]);

/**
 * Mistakes a walker or a generator could make, each of which the agreement with zod must catch: in what a rule says,
 * and in how it is written (a leaf's `?`, a tuple's tag and positions, an object written as its bare fields).
 */
const MISTAKES: [string, (r: Rule) => boolean, (r: Rule) => Rule][] = [
  ['a required field taken for optional', (r) => Object.values(fieldsOf(r) ?? {}).includes('string'), (r) => {
    const f = fieldsOf(r)!;
    const k = Object.keys(f).find((x) => f[x] === 'string')!;
    return withFields(r, { ...f, [k]: 'string?' });
  }],
  ['an optional leaf taken for a required one (its `?` not read)', (r) => Object.values(fieldsOf(r) ?? {}).includes('string?'), (r) => {
    const f = fieldsOf(r)!;
    const k = Object.keys(f).find((x) => f[x] === 'string?')!;
    return withFields(r, { ...f, [k]: 'string' });
  }],
  ['an optional wrapper not read', (r) => tagged(r, OPTIONAL), (r) => items(r)[1] as Rule],
  ['a nullable wrapper not read', (r) => tagged(r, NULLABLE), (r) => items(r)[1] as Rule],
  ['a strict object taken for a loose one (its fields alone)', (r) => tagged(r, STRICT), (r) => fieldsOf(r)!],
  ["an object's rule for its other keys not read", (r) => tagged(r, OBJECT) && items(r)[2] !== undefined, (r) => fieldsOf(r)!],
  ['an integer taken for any number', (r) => r === 'integer', () => 'number'],
  ['a bounded integer taken for any number (its tag)', (r) => tagged(r, INTEGER), (r) => asRule([NUMBER, ...items(r).slice(1)])],
  ['a lower bound not read (its position)', (r) => tagged(r, INTEGER) && items(r)[1] != null, (r) => asRule([items(r)[0], null, ...items(r).slice(2)])],
  ['an upper bound not read (its position)', (r) => tagged(r, INTEGER, NUMBER) && items(r)[2] !== undefined, (r) => asRule(items(r).slice(0, 2))],
  ['a minimum length ignored', (r) => tagged(r, STRING), () => 'string'],
  ['a minimum number of items ignored', (r) => tagged(r, ARRAY) && items(r)[2] !== undefined, (r) => asRule(items(r).slice(0, 2))],
  ['a record taken for an array (its tag)', (r) => tagged(r, RECORD) && items(r)[1] !== 'unknown', (r) => asRule([ARRAY, items(r)[1]])],
  ['null let through', (r) => fieldsOf(r) !== undefined, (r) => [NULLABLE, r]],
  ['a union missing an option', (r) => tagged(r, UNION) && items(r).length > 2, (r) => asRule([UNION, ...items(r).slice(2)])],
  ['a value of an enum forgotten', (r) => tagged(r, VALUES) && items(r).length > 2, (r) => asRule([VALUES, ...items(r).slice(2)])],
];

describe('the agreement with zod can fail', () => {
  for (const [mistake, pick, change] of MISTAKES) {
    it(`catches ${mistake}`, () => {
      // The first exports in which the mistake can be made; a fixed seed, so that this proof of the proof is the same every run.
      const caught: string[] = [];
      const tried: string[] = [];
      for (const [name, schema, rule] of PAIRS) {
        const wrong = mutate(rule, pick, change);
        if (!wrong || tried.length >= 4) continue;
        tried.push(name);
        const disagrees = (v: unknown) => {
          try {
            expectAgreement(schema, wrong, v);
            return false;
          } catch (err) {
            if (/disagreement/.test(String(err))) return true;
            throw err;
          }
        };
        const found = EDGE_VALUES.some(disagrees) || fc.check(fc.property(arbFor(schema), (v) => !disagrees(v)), { numRuns: 3000, seed: 34 }).failed;
        if (found) caught.push(name);
      }
      expect(tried.length, 'no export where this mistake can be made').toBeGreaterThan(0);
      expect(caught, `tried ${tried.join(', ')}`).toEqual(tried);
    });
  }
});

describe('validate', () => {
  it('returns the input itself on success (no clone, unknown keys kept)', () => {
    const input = { prompt_id: 'p', nodes: ['1'], extra: { deep: true } };
    const r = validate(rules.ExecutionCachedData, input);
    expect(r.ok && r.value).toBe(input);
  });

  it('rejects NaN, Infinity and unsafe integers, and counts string lengths in code points, like zod', () => {
    expect([NaN, Infinity, 1e308, '1'].map((v) => isValid('number', v))).toEqual([false, false, true, false]);
    expect([1, 1.5, 2 ** 53, 2 ** 53 - 1, -0].map((v) => isValid('integer', v))).toEqual([true, false, false, true, true]);
    expect(['😀', '😀😀', 'ab'].map((v) => isValid([STRING, 2], v))).toEqual([false, true, true]);
  });

  it('requires keys whose rule is not optional, even `unknown` ones (zod 4 semantics)', () => {
    expect(isValid({ a: 'unknown' }, {})).toBe(false);
    expect(isValid({ a: 'unknown' }, { a: undefined })).toBe(true);
    expect(explain({ a: 'unknown' }, {})).toMatchObject([{ code: 'invalid_type', path: ['a'], message: 'is required (a value)' }]);
  });

  it('a nullable optional field may be absent, in both walks and zod alike', () => {
    const rule: Rule = { a: [NULLABLE, 'string?'] };
    const schema = z.object({ a: z.nullable(z.optional(z.string())) });
    for (const v of [{}, { a: null }, { a: 'x' }, { a: 1 }]) expectAgreement(schema, rule, v);
    expect(explain(rule, {})).toEqual([]);
  });

  it('explains every problem with its path, in the order zod lists them', () => {
    const r = validate(rules.ProgressData, { value: '3', max: 20 });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.issues.map((i) => [i.code, i.path, i.message])).toEqual([
        ['invalid_type', ['value'], 'must be a number, got "3"'],
        ['invalid_type', ['prompt_id'], 'is required (a string)'],
      ]);
      expect(r.issues.map((i) => i.path)).toEqual(z.safeParse(schemas.ProgressData, { value: '3', max: 20 }).error!.issues.map((i) => i.path));
    }
  });

  it('never shows the value of a secret field', () => {
    const issues = explain({ api_key: 'integer' }, { api_key: 'sk-SECRET' });
    expect(issues[0]!.message).toBe('must be an integer, got a string (not shown)');
  });
});
