// `npm run demo` and `npm run bench` need dist/: this builds it (as `npm run build` does) only
// when it is missing or older than what it is built from, saying why in one line, and otherwise
// says nothing. `npm ci` has just built it on a fresh clone, so the demo starts at once.
//
//   node scripts/with-node.cjs node scripts/ensure-built.mjs
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
// What the build reads: the sources, its scripts and configs (not this file, nor the Node picker).
const INPUTS = ['src', 'scripts', 'tsup.config.ts', 'tsconfig.json', 'package.json'];
const NOT_INPUTS = new Set([join(root, 'scripts', 'ensure-built.mjs'), join(root, 'scripts', 'with-node.cjs')]);

/** Every file under `path` (or `path` itself), with its modification time. */
function* files(path) {
  if (!existsSync(path)) return;
  const stat = statSync(path);
  if (!stat.isDirectory()) {
    yield { path, mtime: stat.mtimeMs };
    return;
  }
  for (const entry of readdirSync(path)) yield* files(join(path, entry));
}

/** Why dist/ must be built, or `undefined` when it is up to date. */
function staleness() {
  const built = [...files(join(root, 'dist'))];
  if (built.length === 0) return 'dist/ is missing';
  // build.mjs empties dist/ first: its oldest file is when the last build began.
  const builtAt = Math.min(...built.map((f) => f.mtime));
  for (const input of INPUTS) {
    for (const f of files(join(root, input))) {
      if (!NOT_INPUTS.has(f.path) && f.mtime > builtAt) return `${relative(root, f.path)} changed since dist/ was built`;
    }
  }
  return undefined;
}

const why = staleness();
if (why !== undefined) {
  console.log(`${why}: building it (npm run build)`);
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
