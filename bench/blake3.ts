// BLAKE3 benchmark (issue 33): the two maintained libraries the v2 asset hash
// could load, weighed by speed and by what a browser bundle pulls in.
//   node --experimental-strip-types --no-warnings bench/blake3.ts [--mb 100] [--chunk-mb 1,4] [--sdk]
// Speed: a 100 MB buffer hashed in one call, and a 100 MB file streamed in
// 1 and 4 MB chunks (fs read stream, as src/cloud/v2/hash.ts reads a path).
// Weight: `esbuild --bundle --minify --format=esm --platform=browser` of a
// one-line entry that imports the hash, then gzip -9 of the output.
// `--sdk` adds a row for the SDK's own blake3() (src/cloud/v2/hash.ts).
// Erasable TS only: run by `node --experimental-strip-types`.
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
};
const MB = Number(arg('mb', '100'));
const CHUNKS = arg('chunk-mb', '1,4').split(',').map(Number);
const SIZE = MB * 1_000_000;

/** One library behind the same two operations. */
interface Lib {
  name: string;
  entry: string;
  oneShot(data: Uint8Array): Promise<string>;
  streamer(): Promise<{ update(c: Uint8Array): void; hex(): string }>;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

const libs: Lib[] = [
  {
    name: '@noble/hashes 2.4.0',
    entry: "import { blake3 } from '@noble/hashes/blake3.js'; export const h = (d) => blake3.create().update(d).digest();",
    async oneShot(d) {
      const { blake3 } = await import('@noble/hashes/blake3.js');
      return hex(blake3(d));
    },
    async streamer() {
      const { blake3 } = await import('@noble/hashes/blake3.js');
      const h = blake3.create();
      return { update: (c) => h.update(c), hex: () => hex(h.digest()) };
    },
  },
  {
    name: 'hash-wasm 4.13.0',
    entry: "import { createBLAKE3 } from 'hash-wasm'; export const h = async (d) => (await createBLAKE3()).init().update(d).digest();",
    async oneShot(d) {
      const { createBLAKE3 } = await import('hash-wasm');
      return (await createBLAKE3()).init().update(d).digest('hex');
    },
    async streamer() {
      const { createBLAKE3 } = await import('hash-wasm');
      const h = (await createBLAKE3()).init();
      return { update: (c) => h.update(c), hex: () => h.digest('hex') };
    },
  },
];

async function weightKB(entry: string): Promise<{ min: number; gz: number }> {
  const out = await esbuild.build({
    stdin: { contents: entry, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
  });
  const code = out.outputFiles[0]!.contents;
  return { min: code.byteLength / 1024, gz: gzipSync(code, { level: 9 }).byteLength / 1024 };
}

const mbps = (bytes: number, ms: number) => bytes / 1_000_000 / (ms / 1000);

async function streamFile(lib: Lib, file: string, chunk: number): Promise<{ ms: number; hex: string }> {
  const t0 = performance.now();
  const h = await lib.streamer();
  for await (const c of createReadStream(file, { highWaterMark: chunk })) h.update(c as Uint8Array);
  const out = h.hex();
  return { ms: performance.now() - t0, hex: out };
}

async function main(): Promise<void> {
  const data = new Uint8Array(SIZE);
  // Incompressible and deterministic: a counter through a cheap mixer (the hash's speed does not depend on content).
  for (let i = 0, x = 0x9e3779b9; i < SIZE; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    data[i] = x & 0xff;
  }
  const dir = mkdtempSync(join(tmpdir(), 'blake3-bench-'));
  const file = join(dir, 'data.bin');
  writeFileSync(file, data);
  try {
    console.log(`Node ${process.versions.node}, ${MB} MB; best of 3 (after one warm-up)`);
    console.log('| library | buffer MB/s | ' + CHUNKS.map((c) => `file ${c} MB chunks MB/s`).join(' | ') + ' | min KB | min+gz KB |');
    console.log('| --- | --- | ' + CHUNKS.map(() => '---').join(' | ') + ' | --- | --- |');
    const digests = new Set<string>();
    for (const lib of libs) {
      await lib.oneShot(data.subarray(0, 1024));
      let best = Infinity;
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        digests.add(await lib.oneShot(data));
        best = Math.min(best, performance.now() - t0);
      }
      const files: string[] = [];
      for (const c of CHUNKS) {
        let fbest = Infinity;
        for (let i = 0; i < 3; i++) {
          const r = await streamFile(lib, file, c * 1024 * 1024);
          digests.add(r.hex);
          fbest = Math.min(fbest, r.ms);
        }
        files.push(mbps(SIZE, fbest).toFixed(0));
      }
      const w = await weightKB(lib.entry);
      console.log(`| ${lib.name} | ${mbps(SIZE, best).toFixed(0)} | ${files.join(' | ')} | ${w.min.toFixed(1)} | ${w.gz.toFixed(1)} |`);
    }
    if (process.argv.includes('--sdk')) {
      const { blake3 } = await import('../src/cloud/v2/hash.ts');
      let best = Infinity;
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        digests.add((await blake3(file)).hash.slice('blake3:'.length));
        best = Math.min(best, performance.now() - t0);
      }
      console.log(`| SDK blake3(path) | | ${mbps(SIZE, best).toFixed(0)} (its own chunking) | | |`);
    }
    console.log(digests.size === 1 ? `all digests agree: ${[...digests][0]}` : `DIGESTS DIFFER: ${[...digests].join(', ')}`);
    if (digests.size !== 1) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
