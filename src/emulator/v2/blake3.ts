/**
 * BLAKE3 for the emulator's v2 assets, as `blake3:<hex>`: the library the
 * SDK's client hashes with (`hash-wasm`, `src/cloud/v2/hash.ts`), loaded
 * with `import()` on first use so the emulator's start-up never pays for it.
 *
 * @module
 */

/** An incremental hash: feed bytes, then read `blake3:<hex>` once. */
export interface Blake3Hasher {
  update(bytes: Uint8Array): void;
  /** `blake3:<64 hex digits>`. */
  digest(): `blake3:${string}`;
}

/** A new hasher (each its own WebAssembly instance: concurrent uploads never share one). */
export async function createBlake3(): Promise<Blake3Hasher> {
  const { createBLAKE3 } = await import('hash-wasm');
  const h = (await createBLAKE3()).init();
  return { update: (b) => void h.update(b), digest: () => `blake3:${h.digest('hex')}` };
}

/** `blake3:<hex>` of `bytes` in one call. */
export async function blake3Of(bytes: Uint8Array): Promise<`blake3:${string}`> {
  const h = await createBlake3();
  h.update(bytes);
  return h.digest();
}
