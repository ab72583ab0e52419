/**
 * The emulator's one seeded PRNG: seed data, fault dice and socket drops
 * repeat from run to run.
 *
 * @module
 */

/**
 * mulberry32: a small seeded PRNG, good enough for test data and fault dice.
 * Returns a function yielding floats in [0, 1).
 */
export function createRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
