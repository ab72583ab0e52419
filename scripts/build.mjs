// `npm run build`: the validation rules regenerated from the zod schemas, a clean
// dist/, tsup, then the type-only marks on the .d.ts.
// Cleaning here, once, because tsup runs its configs in parallel: a `clean` in one
// of them could delete what another has just written.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
rmSync(join(root, 'dist'), { recursive: true, force: true });
const tsup = createRequire(import.meta.url).resolve('tsup/package.json').replace(/package\.json$/, 'dist/cli-default.js');
const steps = [
  ['--experimental-strip-types', '--no-warnings', join(root, 'scripts', 'gen-rules.ts')],
  [tsup],
  [join(root, 'scripts', 'dts-type-only.mjs')],
];
for (const args of steps) {
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
