/**
 * BLAKE3 (the reference algorithm, 32-byte output, no key), incremental, in
 * plain TypeScript: what the emulator hashes v2 assets with when no BLAKE3
 * library is installed (`blake3.ts` prefers `@noble/hashes`, then
 * `hash-wasm`). Correct, not fast (tens of MB/s): the emulator's uploads are
 * test inputs.
 *
 * @module
 */

const IV = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
const PERMUTATION = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8];
const CHUNK_START = 1;
const CHUNK_END = 2;
const PARENT = 4;
const ROOT = 8;
const BLOCK = 64;
const CHUNK = 1024;

const state = new Uint32Array(16);
const msg = new Uint32Array(16);

/** The compression function, on local variables (the message permuted by index); returns a shared 16-word state. */
function compress(cv: Uint32Array, block: Uint32Array, counter: number, blockLen: number, flags: number): Uint32Array {
  const m = msg;
  m.set(block);
  let v0 = cv[0]!, v1 = cv[1]!, v2 = cv[2]!, v3 = cv[3]!, v4 = cv[4]!, v5 = cv[5]!, v6 = cv[6]!, v7 = cv[7]!;
  let v8 = IV[0]!, v9 = IV[1]!, v10 = IV[2]!, v11 = IV[3]!;
  let v12 = counter >>> 0, v13 = Math.floor(counter / 0x1_0000_0000) >>> 0, v14 = blockLen, v15 = flags;
  let t: number;
  const p = ORDER;
  for (let r = 0, o = 0; r < 7; r++, o += 16) {
    // g(a, b, c, d, x, y), eight times per round, inlined.
    v0 = (v0 + v4 + m[p[o]!]!) | 0; t = v12 ^ v0; v12 = (t >>> 16) | (t << 16); v8 = (v8 + v12) | 0; t = v4 ^ v8; v4 = (t >>> 12) | (t << 20);
    v0 = (v0 + v4 + m[p[o + 1]!]!) | 0; t = v12 ^ v0; v12 = (t >>> 8) | (t << 24); v8 = (v8 + v12) | 0; t = v4 ^ v8; v4 = (t >>> 7) | (t << 25);
    v1 = (v1 + v5 + m[p[o + 2]!]!) | 0; t = v13 ^ v1; v13 = (t >>> 16) | (t << 16); v9 = (v9 + v13) | 0; t = v5 ^ v9; v5 = (t >>> 12) | (t << 20);
    v1 = (v1 + v5 + m[p[o + 3]!]!) | 0; t = v13 ^ v1; v13 = (t >>> 8) | (t << 24); v9 = (v9 + v13) | 0; t = v5 ^ v9; v5 = (t >>> 7) | (t << 25);
    v2 = (v2 + v6 + m[p[o + 4]!]!) | 0; t = v14 ^ v2; v14 = (t >>> 16) | (t << 16); v10 = (v10 + v14) | 0; t = v6 ^ v10; v6 = (t >>> 12) | (t << 20);
    v2 = (v2 + v6 + m[p[o + 5]!]!) | 0; t = v14 ^ v2; v14 = (t >>> 8) | (t << 24); v10 = (v10 + v14) | 0; t = v6 ^ v10; v6 = (t >>> 7) | (t << 25);
    v3 = (v3 + v7 + m[p[o + 6]!]!) | 0; t = v15 ^ v3; v15 = (t >>> 16) | (t << 16); v11 = (v11 + v15) | 0; t = v7 ^ v11; v7 = (t >>> 12) | (t << 20);
    v3 = (v3 + v7 + m[p[o + 7]!]!) | 0; t = v15 ^ v3; v15 = (t >>> 8) | (t << 24); v11 = (v11 + v15) | 0; t = v7 ^ v11; v7 = (t >>> 7) | (t << 25);
    v0 = (v0 + v5 + m[p[o + 8]!]!) | 0; t = v15 ^ v0; v15 = (t >>> 16) | (t << 16); v10 = (v10 + v15) | 0; t = v5 ^ v10; v5 = (t >>> 12) | (t << 20);
    v0 = (v0 + v5 + m[p[o + 9]!]!) | 0; t = v15 ^ v0; v15 = (t >>> 8) | (t << 24); v10 = (v10 + v15) | 0; t = v5 ^ v10; v5 = (t >>> 7) | (t << 25);
    v1 = (v1 + v6 + m[p[o + 10]!]!) | 0; t = v12 ^ v1; v12 = (t >>> 16) | (t << 16); v11 = (v11 + v12) | 0; t = v6 ^ v11; v6 = (t >>> 12) | (t << 20);
    v1 = (v1 + v6 + m[p[o + 11]!]!) | 0; t = v12 ^ v1; v12 = (t >>> 8) | (t << 24); v11 = (v11 + v12) | 0; t = v6 ^ v11; v6 = (t >>> 7) | (t << 25);
    v2 = (v2 + v7 + m[p[o + 12]!]!) | 0; t = v13 ^ v2; v13 = (t >>> 16) | (t << 16); v8 = (v8 + v13) | 0; t = v7 ^ v8; v7 = (t >>> 12) | (t << 20);
    v2 = (v2 + v7 + m[p[o + 13]!]!) | 0; t = v13 ^ v2; v13 = (t >>> 8) | (t << 24); v8 = (v8 + v13) | 0; t = v7 ^ v8; v7 = (t >>> 7) | (t << 25);
    v3 = (v3 + v4 + m[p[o + 14]!]!) | 0; t = v14 ^ v3; v14 = (t >>> 16) | (t << 16); v9 = (v9 + v14) | 0; t = v4 ^ v9; v4 = (t >>> 12) | (t << 20);
    v3 = (v3 + v4 + m[p[o + 15]!]!) | 0; t = v14 ^ v3; v14 = (t >>> 8) | (t << 24); v9 = (v9 + v14) | 0; t = v4 ^ v9; v4 = (t >>> 7) | (t << 25);
  }
  const s = state;
  s[0] = v0 ^ v8; s[1] = v1 ^ v9; s[2] = v2 ^ v10; s[3] = v3 ^ v11; s[4] = v4 ^ v12; s[5] = v5 ^ v13; s[6] = v6 ^ v14; s[7] = v7 ^ v15;
  s[8] = v8 ^ cv[0]!; s[9] = v9 ^ cv[1]!; s[10] = v10 ^ cv[2]!; s[11] = v11 ^ cv[3]!; s[12] = v12 ^ cv[4]!; s[13] = v13 ^ cv[5]!; s[14] = v14 ^ cv[6]!; s[15] = v15 ^ cv[7]!;
  return s;
}

/** The message word each position of each of the 7 rounds reads: the permutation applied round after round. */
const ORDER = (() => {
  const out: number[] = [];
  let idx = Array.from({ length: 16 }, (_, i) => i);
  for (let r = 0; r < 7; r++) {
    out.push(...idx);
    idx = PERMUTATION.map((p) => idx[p]!);
  }
  return Uint8Array.from(out);
})();

function wordsOf(bytes: Uint8Array, len: number, out: Uint32Array): Uint32Array {
  if (len === BLOCK) {
    for (let w = 0, i = 0; w < 16; w++, i += 4) out[w] = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    return out;
  }
  out.fill(0);
  for (let i = 0; i < len; i++) out[i >> 2] = out[i >> 2]! | (bytes[i]! << ((i & 3) * 8));
  return out;
}

/** An incremental BLAKE3 hash: `update()` any number of times, then `digest()` (32 bytes). */
export class Blake3 {
  readonly #stack: Uint32Array[] = [];
  #cv = IV.slice();
  #chunkCounter = 0;
  #chunkLen = 0;
  #blocksDone = 0;
  readonly #buf = new Uint8Array(BLOCK);
  #bufLen = 0;
  readonly #words = new Uint32Array(16);

  /** Feeds bytes. */
  update(input: Uint8Array): this {
    let i = 0;
    while (i < input.length) {
      if (this.#chunkLen === CHUNK) this.#endChunk();
      if (this.#bufLen === BLOCK) {
        const flags = this.#blocksDone === 0 ? CHUNK_START : 0;
        this.#cv.set(compress(this.#cv, wordsOf(this.#buf, BLOCK, this.#words), this.#chunkCounter, BLOCK, flags).subarray(0, 8));
        this.#blocksDone++;
        this.#bufLen = 0;
      }
      const take = Math.min(BLOCK - this.#bufLen, CHUNK - this.#chunkLen, input.length - i);
      this.#buf.set(input.subarray(i, i + take), this.#bufLen);
      this.#bufLen += take;
      this.#chunkLen += take;
      i += take;
    }
    return this;
  }

  /** The 32-byte hash of everything fed so far. */
  digest(): Uint8Array {
    let cv = this.#cv;
    let block = wordsOf(this.#buf, this.#bufLen, new Uint32Array(16));
    let blockLen = this.#bufLen;
    let counter = this.#chunkCounter;
    let flags = (this.#blocksDone === 0 ? CHUNK_START : 0) | CHUNK_END;
    for (let n = this.#stack.length - 1; n >= 0; n--) {
      const right = compress(cv, block, counter, blockLen, flags).slice(0, 8);
      block = new Uint32Array(16);
      block.set(this.#stack[n]!, 0);
      block.set(right, 8);
      cv = IV;
      counter = 0;
      blockLen = BLOCK;
      flags = PARENT;
    }
    const out = compress(cv, block, counter, blockLen, flags | ROOT);
    const bytes = new Uint8Array(32);
    for (let i = 0; i < 32; i++) bytes[i] = (out[i >> 2]! >>> ((i & 3) * 8)) & 0xff;
    return bytes;
  }

  #endChunk(): void {
    const flags = (this.#blocksDone === 0 ? CHUNK_START : 0) | CHUNK_END;
    let cv = compress(this.#cv, wordsOf(this.#buf, this.#bufLen, this.#words), this.#chunkCounter, this.#bufLen, flags).slice(0, 8);
    let total = ++this.#chunkCounter;
    while ((total & 1) === 0) {
      const block = new Uint32Array(16);
      block.set(this.#stack.pop()!, 0);
      block.set(cv, 8);
      cv = compress(IV, block, 0, BLOCK, PARENT).slice(0, 8);
      total = Math.floor(total / 2);
    }
    this.#stack.push(cv);
    this.#cv = IV.slice();
    this.#chunkLen = 0;
    this.#blocksDone = 0;
    this.#bufLen = 0;
  }
}
