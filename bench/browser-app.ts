// What the example page (examples/browser/, issue 16) costs a browser, and the
// SDK's share of it. Three Vite production builds in this run, same config and
// minifier, written nowhere:
//   1. the app as shipped: what it loads at start (its entry chunk and what that imports statically: raw and gzip -9),
//      the chunks it loads on first use (`import()`) reported apart;
//   2. the app with `@platformui/sdk` replaced by a stub exporting empty
//      classes of the same names: the page's own code (and Vite's runtime);
//   3. the SDK alone: an entry using just what the page imports.
// The SDK's share is (1) − (2); (3) shows how close tree-shaking inside the
// app comes to the SDK bundled on its own.
// Erasable TS only: run by `node --experimental-strip-types` (see bench/index.ts).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Plugin, type Rolldown } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
const appDir = join(root, 'examples', 'browser');
const configFile = join(appDir, 'vite.config.ts');
/** The page's budget, min+gz (informational: bench/index.ts never fails the run). */
const BUDGET_GZ = 40 * 1024;

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(0)} %`;

interface Size {
  /** What the page loads at start: its entry chunk and the chunks that imports statically. */
  raw: number;
  gz: number;
  chunks: number;
  /** The chunks it loads on first use (`import()`: realtime, the validator, the converter, …), min+gz. */
  lazyGz: number;
  lazyChunks: number;
}

/** The names the page imports from the SDK as values (type-only imports cost nothing). */
function importedNames(): string[] {
  const src = readFileSync(join(appDir, 'main.ts'), 'utf8');
  const m = /import\s*\{([^}]*)\}\s*from\s*'@platformui\/sdk'/.exec(src);
  if (!m) throw new Error("examples/browser/main.ts has no `import { … } from '@platformui/sdk'`");
  return m[1]!.split(',').map((s) => s.trim()).filter((s) => s && !s.startsWith('type '));
}

/** Builds with the app's config; `plugins` and `input` change what is built. Sizes the JS chunks. */
async function measure(extra: { plugins?: Plugin[]; input?: string } = {}): Promise<Size> {
  const result = await build({
    configFile,
    logLevel: 'silent',
    plugins: extra.plugins ?? [],
    build: { write: false, ...(extra.input ? { rollupOptions: { input: extra.input } } : {}) },
  });
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[];
  const chunks = outputs.flatMap((o) => o.output).filter((o): o is Rolldown.OutputChunk => o.type === 'chunk');
  // At start: the entry and what it imports statically, transitively (issue 34: what loads on first use is apart).
  const byName = new Map(chunks.map((c) => [c.fileName, c]));
  const start = new Set<string>();
  const visit = (c: Rolldown.OutputChunk | undefined) => {
    if (!c || start.has(c.fileName)) return;
    start.add(c.fileName);
    for (const i of c.imports) visit(byName.get(i));
  };
  for (const c of chunks) if (c.isEntry) visit(c);
  const size: Size = { raw: 0, gz: 0, chunks: start.size, lazyGz: 0, lazyChunks: chunks.length - start.size };
  for (const c of chunks) {
    const gz = gzipSync(c.code, { level: 9 }).length;
    if (!start.has(c.fileName)) size.lazyGz += gz;
    else {
      size.raw += Buffer.byteLength(c.code);
      size.gz += gz;
    }
  }
  return size;
}

/** `@platformui/sdk` → a module of empty classes with the same names. */
function stubSdk(names: string[]): Plugin {
  return {
    name: 'stub-sdk',
    enforce: 'pre',
    resolveId: (id) => (id === '@platformui/sdk' ? '\0sdk-stub' : undefined),
    load: (id) => (id === '\0sdk-stub' ? names.map((n) => `export class ${n} {}`).join('\n') : undefined),
  };
}

/** An entry using `…names` of '@platformui/sdk', resolved as the page resolves it. */
function sdkOnly(names: string[]): Plugin {
  const mainTs = join(appDir, 'main.ts');
  return {
    name: 'sdk-only',
    enforce: 'pre',
    async resolveId(id, importer) {
      if (id === '\0sdk-only') return id;
      // Resolved from the page's own file: the same package, exports map and "browser" condition.
      if (id === '@platformui/sdk' && importer === '\0sdk-only') return this.resolve(id, mainTs, { skipSelf: true });
      return undefined;
    },
    // Used, not re-exported: an app build drops an entry's exports (and all they pull in).
    load: (id) => (id === '\0sdk-only' ? `import { ${names.join(', ')} } from '@platformui/sdk';\nconsole.log(${names.join(', ')});` : undefined),
  };
}

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'example browser app (Vite production build, min+gz)';
  if (!existsSync(join(root, 'dist', 'index.browser.js'))) return { name, ok: false, lines: ['dist/ is missing: run `npm run build` first'] };
  const names = importedNames();
  const app = await measure();
  const own = await measure({ plugins: [stubSdk(names)] });
  const sdk = await measure({ plugins: [sdkOnly(names)], input: '\0sdk-only' });
  const share = { raw: app.raw - own.raw, gz: app.gz - own.gz };
  return {
    name,
    ok: app.gz <= BUDGET_GZ,
    lines: [
      `examples/browser/ built by Vite (its minifier), JS only, gzip -9; budget ${kb(BUDGET_GZ)} gz`,
      `the app at start:             ${kb(app.raw).padStart(9)} min  ${kb(app.gz).padStart(8)} gz  (${app.chunks} chunk${app.chunks === 1 ? '' : 's'}; loaded on first use: ${app.lazyChunks} chunks, ${kb(app.lazyGz)} gz)`,
      `the app with the SDK stubbed: ${kb(own.raw).padStart(9)} min  ${kb(own.gz).padStart(8)} gz  (the page's own code)`,
      `the SDK's share of the app:   ${kb(share.raw).padStart(9)} min  ${kb(share.gz).padStart(8)} gz  = ${pct(share.gz, app.gz)} of the app's gz`,
      `the SDK alone (${names.join(', ')}): ${kb(sdk.raw)} min, ${kb(sdk.gz)} gz; the app is ${(app.gz / sdk.gz).toFixed(2)}× that`,
    ],
  };
}

// Run directly (after a build): print the lines.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = await run();
  for (const line of r.lines) console.log(line);
  process.exitCode = r.ok ? 0 : 1;
}
