// Cold import of the package in Node, over a bare `node` start: 15 interleaved runs
// each of `node <file importing dist>` and `node <empty file>`, ESM and CJS; medians
// and their difference. Target: ≤ 30 ms over bare node (issue 9).
// Needs a build (dist/). Erasable TS only: run by `node --experimental-strip-types`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './registry.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const RUNS = 15;
const TARGET_MS = 30;

function wall(file: string): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, [file], { stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${file} exited with ${r.status}`);
  return performance.now() - t;
}

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-import-'));
  const lines = [`${RUNS} interleaved runs each, median wall time of the whole process`];
  let ok = true;
  try {
    for (const [kind, ext, body] of [
      ['ESM import()', 'mjs', `await import(${JSON.stringify(join(root, 'dist/index.js'))});`],
      ['CJS require()', 'cjs', `require(${JSON.stringify(join(root, 'dist/index.cjs'))});`],
    ] as const) {
      const sdk = join(dir, `sdk.${ext}`);
      const bare = join(dir, `bare.${ext}`);
      writeFileSync(sdk, body);
      writeFileSync(bare, '');
      wall(sdk);
      wall(bare); // warm the file cache
      const a: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        a.push(wall(sdk));
        b.push(wall(bare));
      }
      const over = median(a) - median(b);
      const pass = over <= TARGET_MS;
      ok &&= pass;
      lines.push(`${kind.padEnd(14)} SDK ${median(a).toFixed(1)} ms, bare node ${median(b).toFixed(1)} ms: +${over.toFixed(1)} ms (target ≤ ${TARGET_MS}): ${pass ? 'PASS' : 'FAIL'}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { name: 'cold import in Node over a bare node start', lines, ok };
}
