// BLAKE3 of src/cloud/v2/hash.ts: known vectors, every input kind agrees, a file is
// streamed (the process's RSS bound, in a child process), abort and bad input are typed errors.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, openSync, ftruncateSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { blake3, isBlake3Hash } from '../../../src/cloud/v2/hash.ts';
import { APIUserAbortError, InvalidArgumentError } from '../../../src/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'v2-hash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The official test-vector input: bytes 0..250 repeating. */
const vectorInput = (n: number) => Uint8Array.from({ length: n }, (_, i) => i % 251);

const b3sum = (() => {
  try {
    execFileSync('b3sum', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('blake3()', () => {
  it('matches the known vectors (BLAKE3 test_vectors.json, unkeyed)', async () => {
    expect(await blake3(new Uint8Array())).toEqual({ hash: 'blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262', size: 0 });
    expect((await blake3(vectorInput(1))).hash).toBe('blake3:2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213');
    expect((await blake3(vectorInput(1024))).hash).toBe('blake3:42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7');
    expect((await blake3(vectorInput(1025))).hash).toBe('blake3:d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444');
  });

  it('gives the same hash for bytes, an ArrayBuffer, a Blob and a path', async () => {
    const bytes = vectorInput(300_000);
    const file = join(dir, 'same.bin');
    writeFileSync(file, bytes);
    const want = await blake3(bytes);
    expect(want.size).toBe(300_000);
    expect(await blake3(bytes.buffer)).toEqual(want);
    expect(await blake3(new Blob([bytes]))).toEqual(want);
    expect(await blake3(file)).toEqual(want);
    expect(isBlake3Hash(want.hash)).toBe(true);
  });

  it.skipIf(!b3sum)('agrees with b3sum on a 5 MB file', async () => {
    const file = join(dir, 'b3.bin');
    writeFileSync(file, vectorInput(5_000_000));
    const hex = execFileSync('b3sum', ['--no-names', file], { encoding: 'utf8' }).trim();
    expect((await blake3(file)).hash).toBe(`blake3:${hex}`);
  });

  it('refuses a missing path, a directory and other inputs with InvalidArgumentError', async () => {
    await expect(blake3(join(dir, 'nope.bin'))).rejects.toThrow(InvalidArgumentError);
    await expect(blake3(dir)).rejects.toThrow(/it is a directory/);
    await expect(blake3(42 as unknown as string)).rejects.toThrow(InvalidArgumentError);
  });

  it('stops on abort with APIUserAbortError', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(blake3(new Uint8Array(10), ac.signal)).rejects.toThrow(APIUserAbortError);
    const later = new AbortController();
    const p = blake3(new Blob([new Uint8Array(20_000_000)]), later.signal);
    later.abort();
    await expect(p).rejects.toThrow(APIUserAbortError);
    const file = join(dir, 'abort.bin');
    writeFileSync(file, new Uint8Array(20_000_000));
    const onPath = new AbortController();
    const q = blake3(file, onPath.signal);
    setTimeout(() => onPath.abort(), 1);
    await expect(q).rejects.toThrow(APIUserAbortError);
  });

  it('isBlake3Hash takes only "blake3:" and 64 lowercase hex digits', () => {
    expect(isBlake3Hash(`blake3:${'a'.repeat(64)}`)).toBe(true);
    expect(isBlake3Hash('a'.repeat(64))).toBe(false);
    expect(isBlake3Hash(`blake3:${'A'.repeat(64)}`)).toBe(false);
    expect(isBlake3Hash(`blake3:${'a'.repeat(63)}`)).toBe(false);
  });
});

// A large file is hashed in a child process (this one holds vitest), which reports its peak RSS: the whole
// process's, as the issue bounds it (≤ 64 MiB for 1 GiB). The child runs hash.ts bundled to plain JS, as the
// package ships it: under --experimental-strip-types Node alone is ~80 MiB here, plain ~46 MiB.
// 256 MiB by default (~1 s here); PLATFORMUI_HASH_RSS_MB=1024 runs the 1 GiB case of the issue.
const RSS_MB = Number(process.env.PLATFORMUI_HASH_RSS_MB ?? 256);
describe('blake3() of a large file', () => {
  it(`hashes a ${RSS_MB} MiB file with the process's RSS ≤ 64 MiB`, { timeout: 120_000 }, async () => {
    const file = join(dir, 'large.bin');
    // Sparse: no disk, no write time; reading it still goes through every byte (zeros).
    const fd = openSync(file, 'w');
    ftruncateSync(fd, RSS_MB * 1024 * 1024);
    closeSync(fd);
    const bundle = join(dir, 'hash.mjs');
    await esbuild.build({ entryPoints: [new URL('../../../src/cloud/v2/hash.ts', import.meta.url).pathname], outfile: bundle, bundle: true, platform: 'node', format: 'esm', target: 'node22', logLevel: 'silent' });
    const script = `
      const { blake3 } = await import(${JSON.stringify(pathToFileURL(bundle).href)});
      await blake3(new Uint8Array()); // the library loaded: the baseline is the process ready to hash
      const base = process.memoryUsage().rss;
      let peak = base;
      const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 5);
      const t0 = performance.now();
      const r = await blake3(${JSON.stringify(file)});
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage().rss);
      process.stdout.write(JSON.stringify({ ...r, base, peak, ms: performance.now() - t0 }));
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    const out = JSON.parse(child.stdout) as { hash: string; size: number; base: number; peak: number; ms: number };
    expect(out.size).toBe(RSS_MB * 1024 * 1024);
    expect(isBlake3Hash(out.hash)).toBe(true);
    const mib = (n: number) => (n / 2 ** 20).toFixed(1);
    const figures = `RSS ${mib(out.base)} → ${mib(out.peak)} MiB, ${(out.ms / 1000).toFixed(1)} s, ${(out.size / 1e6 / (out.ms / 1000)).toFixed(0)} MB/s`;
    // Measured (1 GiB, Node 22, plain JS): 46 → 59 MiB; the +13 are mostly once per process (libuv's threads,
    // fs/promises), not per file. Reading through a Blob stream instead reached 94 MiB (+48 of garbage chunks).
    expect(out.peak, figures).toBeLessThanOrEqual(64 * 2 ** 20);
    // The growth too, so a machine whose bare Node is larger still catches a per-chunk allocation coming back.
    expect(out.peak - out.base, figures).toBeLessThanOrEqual(24 * 2 ** 20);
    if (b3sum) expect(out.hash).toBe(`blake3:${execFileSync('b3sum', ['--no-names', file], { encoding: 'utf8' }).trim()}`);
  });
});
