// The error a call throws, which must be an InvalidArgumentError: for tests of what the SDK refuses.
import { expect } from 'vitest';
import { InvalidArgumentError } from '../../src/index.ts';

/** The error `fn` throws, which must be an InvalidArgumentError. */
export function refusal(fn: () => unknown): InvalidArgumentError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidArgumentError);
    return err as InvalidArgumentError;
  }
  throw new Error('expected an InvalidArgumentError, nothing was thrown');
}
