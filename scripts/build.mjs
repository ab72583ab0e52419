// `npm run build`: the validation rules regenerated from the zod schemas, a clean
// dist/, tsup, then the type-only marks on the .d.ts and the Node-only entries'
// reference to Node's types.
// Cleaning here, once, because tsup runs its configs in parallel: a `clean` in one
// of them could delete what another has just written.
// tsup's .d.ts bundler only warns when an entry's declarations use a type that a
// shared chunk declares and no entry exports; a library built on the SDK then
// cannot declare its own types (TS2742 / TS2883, issue 24). Here that fails the build.
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
  [join(root, 'scripts', 'dts-node-types.mjs')],
];
const fatal = /private shared type exports/;
for (const args of steps) {
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: ['inherit', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 64 << 20 });
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  if (r.status !== 0) process.exit(r.status ?? 1);
  const warning = `${r.stdout}\n${r.stderr}`.split('\n').find((line) => fatal.test(line));
  if (warning) {
    console.error(`\nbuild failed: a public signature uses a type that no entry exports (consumers with declaration: true get TS2742/TS2883).
Export it, under a name of its own, from the entry whose signatures use it (src/index.ts, src/emulator/index.ts, …):
  ${warning.trim()}`);
    process.exit(1);
  }
}
