// What the SDK waited for, read from the delays its timers asked for rather than from a clock: a
// loaded machine makes timers late, never their delays different, so assertions on these cannot flake.
import { fileURLToPath } from 'node:url';
import { vi } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/**
 * Records the delay (ms) of every `setTimeout` callback set by the SDK's own
 * code under `src/<under>` (not the runtime's, a library's or the test's) that
 * fires from now until `restore()`, in the order they fire. The timers stay real.
 */
export function recordFiredTimers(under = ''): { fired: number[]; restore: () => void } {
  const from = SRC + under;
  const fired: number[] = [];
  const real = globalThis.setTimeout;
  const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const ours = new Error().stack?.includes(from) ?? false;
    return real(() => {
      if (ours) fired.push(ms ?? 0);
      fn(...args);
    }, ms);
  }) as typeof setTimeout);
  return { fired, restore: () => spy.mockRestore() };
}
