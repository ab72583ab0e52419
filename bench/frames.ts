// Binary preview frames: decodeFrame must not copy the payload.
// (a) decodeFrame on a 16 MiB frame vs a naive decoder that copies the image
//     out (ArrayBuffer.slice). Target: ≥ 20× faster.
// (b) decodeFrame per-frame cost on a 16 MiB frame vs a 16-byte one (types 1
//     and 4). Target: within 2×.
// Timings are medians of several batches, batches of both sides interleaved.
// Erasable TS only: run by `node --experimental-strip-types`.
import { decodeFrame, encodeFrame, type PreviewFrame } from '../src/cloud/frames.ts';

const BIG = 16 * 1024 * 1024;
const BATCHES = 9;
const COPY_TARGET = 20;
const SIZE_TARGET = 2;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Time per call (ns), the median of `BATCHES` batches of `n` calls. */
function perCall(fn: () => unknown, n: number, out: number[]): void {
  const t = performance.now();
  for (let i = 0; i < n; i++) fn();
  out.push(((performance.now() - t) * 1e6) / n);
}

// What a decoder that copies does: the same header reads, then slice() the image out.
function naiveDecode(buf: ArrayBuffer): { type: string; imageType: number; image: Uint8Array } {
  const view = new DataView(buf);
  if (view.getUint32(0) !== 1) throw new Error('not a preview');
  return { type: 'preview_image', imageType: view.getUint32(4), image: new Uint8Array(buf.slice(8)) };
}

function png(size: number): Uint8Array {
  const img = new Uint8Array(size);
  img.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].slice(0, size));
  return img;
}

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'decodeFrame: zero-copy on 16 MiB previews';
  const bigImage = png(BIG - 8);
  const big1 = encodeFrame({ type: 'preview_image', imageType: 2, image: bigImage });
  const small1 = encodeFrame({ type: 'preview_image', imageType: 2, image: png(8) }); // 16 bytes in all
  const metadata = { node_id: '6', prompt_id: '14be957c-c4b1-4e28-b8b5-cb4c710312bc', display_node_id: '6', parent_node_id: null, real_node_id: '6', image_type: 'image/png' };
  const big4 = encodeFrame({ type: 'preview_image_with_metadata', metadata, image: bigImage });
  const small4 = encodeFrame({ type: 'preview_image_with_metadata', metadata, image: png(8) });
  const big1Buf = big1.buffer as ArrayBuffer;

  let sink = 0;
  const use = (f: PreviewFrame) => {
    if (f.type === 'preview_image' || f.type === 'preview_image_with_metadata') sink += f.image.byteLength;
  };
  const dBig1 = () => use(decodeFrame(big1Buf));
  const dSmall1 = () => use(decodeFrame(small1.buffer as ArrayBuffer));
  const dBig4 = () => use(decodeFrame(big4));
  const dSmall4 = () => use(decodeFrame(small4));
  const naive = () => (sink += naiveDecode(big1Buf).image.byteLength);

  // Both decoders must agree on what they decode.
  const check = decodeFrame(big1Buf);
  if (check.type !== 'preview_image' || check.image.byteLength !== naiveDecode(big1Buf).image.byteLength || check.image.buffer !== big1Buf) {
    throw new Error('decodeFrame did not return a view over the input');
  }

  for (let i = 0; i < 20_000; i++) dBig1(), dSmall1(), dBig4(), dSmall4(); // warm-up
  for (let i = 0; i < 5; i++) naive();

  const tNaive: number[] = [];
  const tBig1: number[] = [];
  const tSmall1: number[] = [];
  const tBig4: number[] = [];
  const tSmall4: number[] = [];
  const N = 100_000;
  for (let b = 0; b < BATCHES; b++) {
    perCall(naive, 20, tNaive);
    perCall(dBig1, N, tBig1);
    perCall(dSmall1, N, tSmall1);
    perCall(dBig4, N / 10, tBig4);
    perCall(dSmall4, N / 10, tSmall4);
  }
  const naiveNs = median(tNaive);
  const big1Ns = median(tBig1);
  const small1Ns = median(tSmall1);
  const big4Ns = median(tBig4);
  const small4Ns = median(tSmall4);
  const speedup = naiveNs / big1Ns;
  // Symmetric: either size may come out slower by noise; what matters is that neither is 2× the other.
  const spread1 = Math.max(big1Ns, small1Ns) / Math.min(big1Ns, small1Ns);
  const spread4 = Math.max(big4Ns, small4Ns) / Math.min(big4Ns, small4Ns);
  const okCopy = speedup >= COPY_TARGET;
  const ok1 = spread1 <= SIZE_TARGET;
  const ok4 = spread4 <= SIZE_TARGET;
  const f = (ns: number) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`);
  return {
    name,
    ok: okCopy && ok1 && ok4,
    lines: [
      `(a) type 1, 16 MiB: decodeFrame ${f(big1Ns)} vs copying decoder ${f(naiveNs)}: ${speedup.toFixed(0)}× faster (target ≥ ${COPY_TARGET}×) ${okCopy ? 'PASS' : 'FAIL'}`,
      `(b) type 1: 16 MiB ${f(big1Ns)} vs 16 B ${f(small1Ns)}: ${spread1.toFixed(2)}× apart (target ≤ ${SIZE_TARGET}×) ${ok1 ? 'PASS' : 'FAIL'}`,
      `(b) type 4 (with JSON metadata): 16 MiB ${f(big4Ns)} vs ${small4.byteLength} B ${f(small4Ns)}: ${spread4.toFixed(2)}× apart (target ≤ ${SIZE_TARGET}×) ${ok4 ? 'PASS' : 'FAIL'}`,
      `(sink ${sink})`,
    ],
  };
}
