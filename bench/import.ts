// Cold import of the package in Node, over a bare `node` start (issue 9): RUNS
// interleaved runs each of `node -e "import('@platformui/sdk')"` and a bare
// `node -e ""` (the order within a round alternates), for ESM and for CJS
// (`require`); medians and their difference. Target: ≤ 30 ms over bare node.
// The package is resolved as a consumer resolves it: by name, from a temp app
// holding the packed tarball (bench/packed.ts), through its "exports".
// Needs a build (dist/). Erasable TS only: run by `node --experimental-strip-types`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { packedApp, root } from './packed.ts';
import { median } from './registry.ts';

const RUNS = 21;
const TARGET_MS = 30;

function wall(script: string, cwd: string): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, ['-e', script], { cwd, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`node -e ${JSON.stringify(script)} exited with ${r.status}: ${r.stderr.trim().split('\n').slice(0, 5).join(' | ')}`);
  return ms;
}

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'cold import in Node over a bare node start';
  if (!existsSync(join(root, 'dist', 'index.js'))) return { name, ok: false, lines: ['dist/ is missing: run `npm run build` first'] };
  const { dir } = packedApp();
  const lines = [`${RUNS} interleaved runs each, median wall time of the whole process, ${process.version}, package resolved by name from the packed tarball`];
  let ok = true;
  for (const [kind, sdk] of [
    ['ESM', `import('@platformui/sdk')`],
    ['CJS', `require('@platformui/sdk')`],
  ] as const) {
    const bare = '';
    wall(sdk, dir);
    wall(bare, dir); // warm the file cache
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      if (i % 2) a.push(wall(sdk, dir)), b.push(wall(bare, dir));
      else b.push(wall(bare, dir)), a.push(wall(sdk, dir));
    }
    const over = median(a) - median(b);
    const pass = over <= TARGET_MS;
    ok &&= pass;
    lines.push(
      `${kind}  node -e "${sdk}" ${median(a).toFixed(1)} ms, node -e "" ${median(b).toFixed(1)} ms: ${over >= 0 ? '+' : ''}${over.toFixed(1)} ms (target ≤ ${TARGET_MS}): ${pass ? 'PASS' : 'FAIL'}`,
    );
  }
  return { name, lines, ok };
}
