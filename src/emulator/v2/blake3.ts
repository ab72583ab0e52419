/**
 * BLAKE3 for the emulator's v2 assets, as `blake3:<hex>`: `@noble/hashes`
 * when installed (the library the SDK's client hashes with), else the
 * emulator's own implementation (`blake3-fallback.ts`, checked against the
 * reference vectors; ~45 MB/s). Loaded with `import()` on first use, so the
 * emulator's start-up never pays for it.
 *
 * @module
 */
import { Blake3 } from './blake3-fallback.ts';

/** An incremental hash: feed bytes, then read `blake3:<hex>` once. */
export interface Blake3Hasher {
  update(bytes: Uint8Array): void;
  /** `blake3:<64 hex digits>`. */
  digest(): `blake3:${string}`;
}

type Factory = () => Blake3Hasher;

let loading: Promise<{ name: string; create: Factory }> | undefined;

const hex = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');

/** Imports a module by a name the type checker and bundlers do not resolve (it may be absent). */
const optional = (name: string): Promise<Record<string, unknown>> => import(/* @vite-ignore */ name) as Promise<Record<string, unknown>>;

async function load(): Promise<{ name: string; create: Factory }> {
  try {
    const noble = (await optional('@noble/hashes/blake3.js')) as { blake3: { create(): { update(b: Uint8Array): unknown; digest(): Uint8Array } } };
    if (typeof noble.blake3?.create === 'function') {
      return {
        name: '@noble/hashes',
        create: () => {
          const h = noble.blake3.create();
          return { update: (b) => void h.update(b), digest: () => `blake3:${hex(h.digest())}` };
        },
      };
    }
  } catch {
    // not installed
  }
  return { name: 'built-in', create: () => {
    const h = new Blake3();
    return { update: (b) => void h.update(b), digest: () => `blake3:${hex(h.digest())}` };
  } };
}

/** A new hasher; the library is chosen (and imported) once, on the first call. */
export async function createBlake3(): Promise<Blake3Hasher> {
  loading ??= load();
  return (await loading).create();
}

/** Which implementation hashes (`@noble/hashes` or `built-in`), once loaded. */
export async function blake3Implementation(): Promise<string> {
  loading ??= load();
  return (await loading).name;
}

/** `blake3:<hex>` of `bytes` in one call. */
export async function blake3Of(bytes: Uint8Array): Promise<`blake3:${string}`> {
  const h = await createBlake3();
  h.update(bytes);
  return h.digest();
}
