// Helper (no `run()`, so bench/index.ts skips it): the package as a consumer
// installs it. `npm pack` of the current dist/ (without scripts: the bench has
// just built) into a temp dir, extracted as node_modules/@platformui/sdk of a
// temp app; the package's dependencies (zod, ws, form-data) are symlinks
// to the repo's node_modules, so they resolve with no network (bundlers and
// Node follow a symlink to its real path, where their own dependencies are).
// One app per process, removed at exit.
// Erasable TS only: run by `node --experimental-strip-types`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));

export interface PackedApp {
  /** The consumer app's directory: resolve `@platformui/sdk` from here. */
  dir: string;
  /** The installed package: `<dir>/node_modules/@platformui/sdk`. */
  pkgDir: string;
  /** The tarball's file name and size in bytes. */
  tarball: string;
  tarballBytes: number;
}

let packed: PackedApp | undefined;

/** Packs dist/ once per process and installs the tarball into a temp app. */
export function packedApp(): PackedApp {
  if (packed) return packed;
  const dir = mkdtempSync(join(tmpdir(), 'sdk-bench-app-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const packDir = join(dir, '.pack');
  mkdirSync(packDir);
  // --ignore-scripts: no `prepare` rebuild; what was built is what is packed.
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const info = (JSON.parse(out) as { filename: string; size: number }[])[0]!;
  const scope = join(dir, 'node_modules', '@platformui');
  mkdirSync(scope, { recursive: true });
  execFileSync('tar', ['-xzf', join(packDir, info.filename), '-C', scope]);
  const pkgDir = join(scope, 'sdk');
  renameSync(join(scope, 'package'), pkgDir);
  const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  for (const dep of Object.keys(manifest.dependencies ?? {})) {
    const to = join(dir, 'node_modules', dep);
    mkdirSync(join(to, '..'), { recursive: true });
    symlinkSync(join(root, 'node_modules', dep), to, 'dir');
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'bench-consumer', private: true, type: 'module' }));
  packed = { dir, pkgDir, tarball: info.filename, tarballBytes: info.size };
  return packed;
}
