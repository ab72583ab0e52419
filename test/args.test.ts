// checkArgs() (synchronous: a pool's submit(), Workflow) and checkArgsLater() (the clients' asynchronous methods,
// whose explanation loads on the first failure, issue 34) must refuse the same values with the same error: the same
// class, message, field and issues. A table of values over rules of every shape.
import { describe, expect, it } from 'vitest';
import { checkArgs, checkArgsLater } from '../src/args.ts';
import { InvalidArgumentError } from '../src/errors.ts';
import * as rules from '../src/schemas/rules.generated.ts';
import { validate } from '../src/schemas/validate.ts';
import { validateLater } from '../src/schemas/validate-later.ts';

const CASES: Array<[string, unknown, unknown]> = [ // [rule name, value, rule]
  ['SearchNodesParams', { limit: -1 }, rules.SearchNodesParams],
  ['SearchNodesParams', { serach: 'upscale' }, rules.SearchNodesParams],
  ['SearchNodesParams', { limit: 'ten', page: 0 }, rules.SearchNodesParams],
  ['RelightParams', { image: 'x', style: 'smoth' }, rules.RelightParams],
  ['RelightParams', { image: 'x', light_transfer_strength: 150 }, rules.RelightParams],
  ['SubmitOptionsParams', { widgetValues: 'lenient', partnerApiKey: '' }, rules.SubmitOptionsParams],
  ['PromptIds', [], rules.PromptIds],
  ['FileRef', { subfolder: 3 }, rules.FileRef],
  ['Workflow', { '1': { class_type: 'KSampler' } }, rules.Workflow],
];

/** What an error says, as a plain object (its class, message, field and issues). */
const said = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    const e = err as InvalidArgumentError;
    return { cls: e.constructor, message: e.message, field: e.field, issues: e.issues };
  }
  return undefined;
};

describe('checkArgsLater() and checkArgs(): the same refusal', () => {
  it.each(CASES)('%s %j', async (_name, value, rule) => {
    const now = said(() => checkArgs(rule as never, value, 'params'));
    expect(now?.cls).toBe(InvalidArgumentError);
    const later = await checkArgsLater(rule as never, value, 'params').then(
      () => undefined,
      (err: InvalidArgumentError) => ({ cls: err.constructor, message: err.message, field: err.field, issues: err.issues }),
    );
    expect(later).toEqual(now);
  });

  it('a valid value: both return it, the same object', async () => {
    const params = { search: 'upscale', limit: 5 };
    expect(checkArgs(rules.SearchNodesParams, params, 'params')).toBe(params);
    expect(await checkArgsLater(rules.SearchNodesParams, params, 'params')).toBe(params);
  });

  it('validateLater() answers what validate() does, pass or fail', async () => {
    for (const [, value, rule] of CASES) expect(await validateLater(rule as never, value)).toEqual(validate(rule as never, value));
    expect(await validateLater(rules.FileRef, { filename: 'a.png' })).toEqual({ ok: true, value: { filename: 'a.png' } });
  });
});
