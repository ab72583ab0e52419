// What loads at start in a browser app, and what on first use (issue 34): the built browser bundle
// (dist/index.browser.js, the package's `browser` export) bundled as an app would (esbuild --splitting, as
// bench/bundle-size.ts measures it, unminified here so that functions keep their names). A client's start must not
// hold the workflow validator, the editor-format converter, the submission, uploads and downloads, or the registry's
// finder and publishing, the requests about a job, a pool's health requests, a proxy task's polling: they are files of their own (dist/<name>.browser.js), imported on first use. Needs a build
// (npm run build).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { describe, expect, it } from 'vitest';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));

/** The app's start (its entry and the chunks that imports statically): its text and the files it takes code from. */
async function startOf(name: string): Promise<{ text: string; inputs: string[]; lazy: string[] }> {
  const result = await esbuild.build({
    stdin: { contents: `export { ${name} } from ${JSON.stringify(join(dist, 'index.browser.js'))};`, resolveDir: dist, loader: 'js' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    metafile: true,
    outdir: join(dist, '.lazy-test-out'),
    logLevel: 'silent',
  });
  const outputs = result.metafile.outputs;
  const start = new Set<string>();
  const visit = (path: string) => {
    if (start.has(path)) return;
    start.add(path);
    for (const i of outputs[path]!.imports) if (i.kind === 'import-statement' && outputs[i.path]) visit(i.path);
  };
  visit(Object.keys(outputs).find((p) => outputs[p]!.entryPoint === '<stdin>')!);
  const text = result.outputFiles.filter((f) => [...start].some((p) => f.path.endsWith(p))).map((f) => f.text).join('\n');
  const inputs = [...new Set([...start].flatMap((p) => Object.keys(outputs[p]!.inputs)))];
  const lazy = [...new Set(Object.keys(outputs).filter((p) => !start.has(p) && p.endsWith('.js')).flatMap((p) => Object.keys(outputs[p]!.inputs)))];
  return { text, inputs, lazy };
}

const VALIDATOR = { file: 'validate.browser.js', code: 'function findCycle(' };
const CONVERTER = { file: 'editor.browser.js', code: 'function convertEditorWorkflow(' };
const FINDER = { file: 'missing-packs.browser.js', code: 'function findMissingPacks(' };
const PUBLISHING = { file: 'publish.browser.js', code: 'function publishNodeVersion(' };
const SUBMISSION = { file: 'submit.browser.js', code: 'function submitWithId(' };
const POOL_UPLOADS = { file: 'pool-uploads.browser.js', code: 'function readInputs(' };
const UPLOADS = { file: 'uploads.browser.js', code: 'function uploadForm(' };
const DOWNLOADS = { file: 'downloads.browser.js', code: 'function downloadView(' };
const ROUTES = { file: 'routes.browser.js', code: 'function orderedStop(' };
const POOL_HEALTH = { file: 'pool-health.browser.js', code: 'function readNodes(' };
const TASK_POLL = { file: 'task-poll.browser.js', code: 'function pollTask(' };

describe.runIf(existsSync(join(dist, 'index.browser.js')))('the browser build: what loads on first use stays out of the start', () => {
  it.each([
    ['CloudClient', [VALIDATOR, CONVERTER, SUBMISSION, UPLOADS, DOWNLOADS, ROUTES]],
    ['CloudPool', [VALIDATOR, CONVERTER, SUBMISSION, POOL_UPLOADS, UPLOADS, DOWNLOADS, ROUTES, POOL_HEALTH]],
    ['ProxyClient', [TASK_POLL]],
    ['Workflow', [CONVERTER]],
    ['RegistryClient', [FINDER, PUBLISHING]],
  ] as const)('import { %s }: its start holds neither the code nor the file of what it loads later', async (name, later) => {
    const { text, inputs, lazy } = await startOf(name);
    for (const { file, code } of later) {
      expect(inputs.some((i) => i.endsWith(`dist/${file}`)), `${file} at start`).toBe(false);
      expect(text.includes(code), `${code} at start`).toBe(false);
      // ...and the app can still load it: the file is one of its lazily loaded chunks.
      expect(lazy.some((i) => i.endsWith(`dist/${file}`)), `${file} among the lazily loaded`).toBe(true);
    }
  });

  it("a v2 client's first upload loads hash-wasm's BLAKE3, not the whole library (a dynamic import's namespace is not tree-shaken)", async () => {
    const { lazy } = await startOf('CloudClient');
    expect(lazy.some((i) => i.endsWith('dist/blake3.browser.js')), 'blake3.browser.js among the lazily loaded').toBe(true);
    const hashWasm = lazy.filter((i) => i.includes('node_modules/hash-wasm/'));
    expect(hashWasm.length).toBeGreaterThan(0);
    // Only BLAKE3's part of hash-wasm: no other algorithm's WebAssembly.
    const chunk = await esbuild.build({
      stdin: { contents: `export * from ${JSON.stringify(join(dist, 'blake3.browser.js'))};`, resolveDir: dist, loader: 'js' },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      write: false,
      logLevel: 'silent',
    });
    const text = chunk.outputFiles[0]!.text;
    expect(text).toContain('createBLAKE3');
    for (const other of ['createSHA256', 'createArgon2', 'createXXHash64', 'createMD5']) expect(text.includes(other), other).toBe(false);
  });

  it('the lazily loaded files import nothing of the root (an app would load the root twice)', async () => {
    const { lazy } = await startOf('CloudClient');
    expect(lazy.filter((i) => i.endsWith('index.browser.js'))).toEqual([]);
  });
});

it('dist/ is built (npm run build): the checks above run on it', () => {
  expect(existsSync(join(dist, 'index.browser.js'))).toBe(true);
});
