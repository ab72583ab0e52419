// Bundle-size benchmark: what `RegistryClient` alone costs a browser app,
// min+gz, against a 15 KB budget. For scale it also measures ky alone and
// zod/mini alone (one object schema), and splits the minified bytes of our
// bundle by origin, so the share of our own code is visible.
// Needs a build (dist/). Erasable TS only: run by
// `node --experimental-strip-types` (see bench/index.ts).
import { gzipSync } from 'node:zlib';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import * as esbuild from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const BUDGET_KB = 15;

interface Size {
  min: number;
  gz: number;
  /** Minified bytes in the output per origin: "ky", "zod", "@platformui/sdk", ... */
  byOrigin: Map<string, number>;
}

/** Bundles `contents` like a browser app would (esbuild, esm, minified) and gzips it at level 9. */
async function measure(contents: string): Promise<Size> {
  const result = await esbuild.build({
    stdin: { contents, resolveDir: root, loader: 'js' },
    absWorkingDir: root, // metafile paths relative to the repo
    // Ignore the repo's tsconfig.json: its `paths` map @platformui/sdk to src/ for
    // the type-checker; a user's app resolves the package through its exports.
    tsconfigRaw: {},
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    metafile: true,
    outfile: 'out.js',
    logLevel: 'error',
  });
  const out = result.outputFiles[0]!.contents;
  const byOrigin = new Map<string, number>();
  for (const output of Object.values(result.metafile.outputs)) {
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
      if (path === '<stdin>') continue; // the one-line entry itself
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? (path.startsWith('dist/') ? `@platformui/sdk (${path})` : path);
      byOrigin.set(pkg, (byOrigin.get(pkg) ?? 0) + bytesInOutput);
    }
  }
  return { min: out.length, gz: gzipSync(out, { level: 9 }).length, byOrigin };
}

const kb = (n: number): string => `${(n / 1024).toFixed(1)} KB`;

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'bundle size: RegistryClient (browser, min+gz)';
  if (!existsSync(join(root, 'dist', 'index.js'))) return { name, ok: false, lines: ['dist/ is missing: run `npm run build` first'] };

  // By package name, as an app imports it: esbuild (platform browser) follows
  // package.json "exports" to the entry a browser app really gets (the
  // "browser" condition: dist/index.browser.js); the origin split names it.
  const ours = await measure(`import { RegistryClient } from '@platformui/sdk'; export { RegistryClient };`);
  const ky = await measure(`import ky from 'ky'; export { ky };`);
  const zod = await measure(`import * as z from 'zod/mini'; export const S = z.object({ id: z.string(), n: z.number() });`);
  const ok = ours.gz <= BUDGET_KB * 1024;

  const total = [...ours.byOrigin.values()].reduce((a, b) => a + b, 0) || 1;
  const split = [...ours.byOrigin].sort((a, b) => b[1] - a[1])
    .map(([origin, bytes]) => `${origin} ${Math.round((bytes / total) * 100)}%`).join(', ');
  return {
    name,
    ok,
    lines: [
      `RegistryClient alone: ${kb(ours.gz)} min+gz (${kb(ours.min)} min), budget ${BUDGET_KB} KB: ${ok ? 'PASS' : 'FAIL'}`,
      `  minified bytes by origin: ${split}`,
      `  for reference: ky alone ${kb(ky.gz)} min+gz; zod/mini alone (one object schema) ${kb(zod.gz)} min+gz`,
    ],
  };
}
