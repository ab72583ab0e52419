// matches(): the yes-or-no walk behind isValid(). Its agreement with zod on every generated rule is proved in
// rules.test.ts; these are the rule kinds and corners a hand-written rule can reach, one assertion each.
import { describe, expect, it } from 'vitest';
import { matches } from '../../src/schemas/matches.ts';
import { ARRAY, CUSTOM, INTEGER, NULLABLE, NUMBER, OBJECT, OPTIONAL, RECORD, STRICT, STRING, UNION, VALUES, type Fields, type Rule } from '../../src/schemas/rule.ts';

const table = (rule: Rule, cases: [unknown, boolean][]) => expect(cases.map(([v]) => matches(rule, v))).toEqual(cases.map(([, ok]) => ok));

describe('matches', () => {
  it('leaves, optional leaves included', () => {
    table('string', [['', true], [undefined, false], [1, false]]);
    table('string?', [[undefined, true], ['a', true], [null, false]]);
    table('number', [[1.5, true], [NaN, false], [Infinity, false], ['1', false]]);
    table('integer?', [[undefined, true], [2 ** 53 - 1, true], [2 ** 53, false], [1.5, false]]);
    table('boolean', [[false, true], [0, false]]);
    table('null', [[null, true], [undefined, false]]);
    table('null?', [[null, true], [undefined, true], [0, false]]);
    table('unknown', [[undefined, true], [Symbol('s'), true]]);
  });

  it('numbers with bounds, strings with a minimum in code points', () => {
    table([INTEGER, 1, 3], [[1, true], [3, true], [0, false], [4, false], [2.5, false]]);
    table([NUMBER, 0], [[0.5, true], [-0.5, false]]);
    table([STRING, 2], [['😀', false], ['😀😀', true], ['ab', true], ['a', false], ['\ud83d\ud83d', true]]);
    table([STRING, 1], [['', false], ['x', true]]);
  });

  it('objects: required keys (even `unknown` ones, inherited ones count), optional and nullable fields', () => {
    const rule: Rule = { a: 'string', b: 'unknown', c: [NULLABLE, 'integer?'] };
    table(rule, [[{ a: 'x', b: 1 }, true], [{ a: 'x' }, false], [{ a: 'x', b: undefined, c: null }, true], [{ a: 'x', b: 1, c: 1.5 }, false], [{ b: 1 }, false], [['x'], false], [null, false]]);
    table({ ['toString' as string]: 'unknown' }, [[{}, true], [Object.create(null), false]]);
  });

  it("objects' unknown keys: kept, rejected (strict), or each checked (`__proto__` skipped unless strict)", () => {
    const fields: Fields = { a: 'string?' };
    table(fields, [[{ z: 1 }, true]]);
    table([STRICT, fields], [[{ a: 'x' }, true], [{ z: 1 }, false], [JSON.parse('{"__proto__": 1}'), false], [Object.create({ inherited: 1 }), false]]);
    table([OBJECT, fields, 'number'], [[{ a: 'x', z: 1 }, true], [{ z: 'no' }, false], [JSON.parse('{"__proto__": "no"}'), true]]);
  });

  it('arrays (holes are undefined), records of plain objects only', () => {
    table([ARRAY, 'string', 1], [[['a'], true], [[], false], [[1], false], [new Array(1), false], [{ length: 0 }, false]]);
    table([ARRAY, 'unknown'], [[[1, 'x'], true], ['ab', false]]);
    const record: Rule = [RECORD, 'integer'];
    table(record, [[{ a: 1 }, true], [{ a: 'x' }, false], [Object.create(null), true], [new Date(0), false], [[], false], [Object.create({ a: 'x' }), true], [JSON.parse('{"__proto__": "x"}'), true]]);
  });

  it('unions, enumerated values, optional and nullable wrappers, custom predicates', () => {
    table([UNION, 'integer', [VALUES, 'auto']], [[3, true], ['auto', true], ['x', false]]);
    table([VALUES, 'a', 1, true, null], [['a', true], [1, true], [true, true], [null, true], ['b', false], [undefined, false]]);
    table([OPTIONAL, [NULLABLE, 'string']], [[undefined, true], [null, true], ['a', true], [0, false]]);
    table([CUSTOM, (v) => v instanceof Uint8Array, 'must be bytes'], [[new Uint8Array(1), true], [[1], false]]);
  });
});
