// The socket's reconnect policy (src/cloud/socket/reconnect.ts), without a socket: which close codes
// refuse, how a connection's end counts, how long each attempt waits, when it gives up and when a run
// of failures is worth a warning. The socket over real connections: test/integration/socket-faults.test.ts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isRefusal, Reconnects, STABLE_AFTER_MS } from '../../../src/cloud/socket/reconnect.ts';

afterEach(() => void vi.restoreAllMocks());

describe('the reconnect policy', () => {
  it.each([
    [1000, false],
    [1006, false],
    [1008, true],
    [1011, false],
    [3999, false],
    [4000, true],
    [4401, true],
    [4999, true],
    [5000, false],
  ])('close code %i is a refusal: %s', (code, refused) => {
    expect(isRefusal(code)).toBe(refused);
  });

  // Math.random() 0 gives the shortest wait (half the step), 1 the longest (the step).
  it.each([
    [0, [250, 500, 1000, 2000, 4000, 5000, 5000]],
    [1, [500, 1000, 2000, 4000, 8000, 10_000, 10_000]],
  ])('with random() %s, attempts wait %j ms (between half and all of min(10000, 500·2^(n-1)))', (random, waits) => {
    vi.spyOn(Math, 'random').mockReturnValue(random);
    const r = new Reconnects();
    expect(waits.map(() => r.next())).toEqual(waits.map((delay) => ({ delay })));
    expect(r.attempt).toBe(waits.length);
  });

  it('names its parameters: baseDelay, maxDelay, and gives up after maxAttempts with the last failure', () => {
    vi.spyOn(Math, 'random').mockReturnValue(1);
    const r = new Reconnects();
    r.failing(undefined);
    expect([r.next({ baseDelay: 5, maxDelay: 12, maxAttempts: 3 }), r.next({ baseDelay: 5, maxDelay: 12, maxAttempts: 3 }), r.next({ baseDelay: 5, maxDelay: 12, maxAttempts: 3 })]).toEqual([{ delay: 5 }, { delay: 10 }, { delay: 12 }]);
    const gaveUp = r.next({ baseDelay: 5, maxDelay: 12, maxAttempts: 3 });
    expect(gaveUp).toMatchObject({ maxAttempts: 3 });
    expect('error' in gaveUp && gaveUp.error.message).toBe('Gave up reconnecting after 3 attempts (the last: the connection or the upgrade failed)');
  });

  it('a connection that lasted starts the count over; one that closed at once after a retry is a failure to connect', () => {
    const r = new Reconnects();
    r.ended(100, 1006, undefined); // a first short drop is ordinary
    expect(r.failure).toBeUndefined();
    r.next();
    r.ended(100, 1006, undefined);
    expect(r.failure).toBe('the server closed it 100 ms after opening (code 1006)');
    r.next();
    r.ended(STABLE_AFTER_MS, 1006, undefined);
    expect([r.attempt, r.failure]).toEqual([0, undefined]);
    r.ended(undefined, undefined, 'closed with code 1011'); // never opened
    expect(r.failure).toBe('closed with code 1011');
  });

  it('warns once per run of failures, again after a connection that lasted', () => {
    const r = new Reconnects();
    expect(r.warnNow()).toBeUndefined(); // nothing failed
    r.failing('refused');
    expect([r.warnNow(), r.warnNow()]).toEqual(['refused', undefined]);
    r.ended(STABLE_AFTER_MS + 1, 1006, undefined);
    r.failing('refused again');
    expect(r.warnNow()).toBe('refused again');
  });
});
