import { describe, expect, it } from 'vitest';
import { backoff, type BackoffOptions } from '../../src/transport/backoff.js';

const lowest = () => 0;
const highest = () => 0.999999;

describe('backoff()', () => {
  // [attempt, options, with random() at 0, with random() at 1]
  const table: Array<[number, BackoffOptions, number, number]> = [
    [0, { first: 500, max: 8000 }, 500, 500],
    [1, { first: 500, max: 8000 }, 1000, 1000],
    [4, { first: 500, max: 8000 }, 8000, 8000],
    [30, { first: 500, max: 8000 }, 8000, 8000],
    [-1, { first: 500, max: 8000 }, 500, 500],
    [0, { first: 500, max: 8000, jitter: 'full' }, 0, 500],
    [3, { first: 500, max: 8000, jitter: 'full' }, 0, 4000],
    [10, { first: 500, max: 8000, jitter: 'full' }, 0, 8000],
    [0, { first: 500, max: 30_000, jitter: 'half' }, 250, 500],
    [2, { first: 500, max: 30_000, jitter: 'half' }, 1000, 2000],
    [20, { first: 500, max: 30_000, jitter: 'half' }, 15_000, 30_000],
    [0, { first: 1000, max: 10_000, factor: 1.5, jitter: 0.2 }, 800, 1200],
    [2, { first: 1000, max: 10_000, factor: 1.5, jitter: 0.2 }, 1800, 2700],
    [9, { first: 1000, max: 10_000, factor: 1.5, jitter: 0.2 }, 8000, 10_000],
    [3, { first: 20, max: 1000 }, 160, 160],
    [6, { first: 20, max: 1000 }, 1000, 1000],
  ];
  it.each(table)('attempt %i of %j waits from %i to %i ms', (attempt, options, low, high) => {
    expect(backoff(attempt, options, lowest)).toBe(low);
    expect(backoff(attempt, options, highest)).toBe(high);
  });

  it('never waits longer than max, whatever random() gives', () => {
    for (const jitter of ['none', 'full', 'half', 0.5] as const)
      for (let attempt = 0; attempt < 40; attempt++) expect(backoff(attempt, { first: 300, max: 5000, jitter })).toBeLessThanOrEqual(5000);
  });
});
