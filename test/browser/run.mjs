// Browser test (npm run test:browser, after npm run build).
//
// 1. Bundles, for the browser with esbuild as a user's bundler would, every
//    export of @platformui/sdk and test/browser/page.ts, and FAILS if either
//    pulls in Node built-ins, `Buffer`, `ws` or `form-data` (DESIGN §1).
// 2. Starts the emulator (dist/emulator.js) and, on another port (so another
//    origin: CORS is exercised), a tiny static server for the page.
// 3. Opens the page in Debian's Chromium via playwright-core, waits for its
//    checks (see page.ts), asserts each passed and what it rendered, and fails
//    on any page error or console error.
//
// Env: CHROMIUM=/path/to/chromium (default /usr/bin/chromium), HEADFUL=1.
import { builtinModules } from 'node:module';
import { createServer } from 'node:http';
import { existsSync } from 'node:fs';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const failures = [];
const fail = (msg) => { failures.push(msg); console.log(`FAIL  ${msg}`); };

for (const f of ['dist/index.js', 'dist/emulator.js']) {
  if (!existsSync(join(root, f))) { console.error(`${f} is missing: run \`npm run build\` first.`); process.exit(1); }
}

// ---------------------------------------------------------------- 1. bundle
// Node built-ins are recorded and left external (instead of esbuild's opaque
// "could not resolve" error), so the report names each one and its importer.
const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

async function bundle(entry) {
  const nodeImports = [];
  const recordBuiltins = {
    name: 'record-node-builtins',
    setup(build) {
      build.onResolve({ filter: /^[a-z_:/]+$/ }, (args) => {
        if (!builtins.has(args.path) && !args.path.startsWith('node:')) return undefined;
        nodeImports.push(`${args.path} (imported by ${args.importer ? relative(root, args.importer) : '?'})`);
        return { path: args.path, external: true };
      });
    },
  };
  const result = await esbuild.build({
    ...entry,
    absWorkingDir: root,
    // Ignore the repo's tsconfig.json: its `paths` map @platformui/sdk to src/ for
    // the type-checker; a user's app resolves the package through its exports.
    tsconfigRaw: {},
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser', // honours "browser" fields: ws/form-data would show up as inputs
    target: 'es2022',
    // As an app bundler does for production: what the SDK imports on first use becomes a chunk of its own.
    splitting: true,
    outdir: 'browser-out',
    write: false,
    metafile: true,
    logLevel: 'warning',
    plugins: [recordBuiltins],
  });
  // The entry first, then the chunks it loads on first use (served beside it by their own names).
  const files = result.outputFiles.map((f) => ({ name: f.path.split('/').pop(), text: f.text }));
  // The entry: the output of the entry point given here (the files loaded on first use are entry points too, the
  // package's dist/*.browser.js, some of them with no import() left once the page's unused code is shaken off).
  const outputs = Object.entries(result.metafile.outputs);
  const entryName = outputs.find(([, o]) => o.entryPoint && !o.entryPoint.startsWith('dist/'))[0].split('/').pop();
  files.sort((a, b) => (a.name === entryName ? -1 : b.name === entryName ? 1 : 0));
  return { text: files.map((f) => f.text).join('\n'), files, inputs: Object.keys(result.metafile.inputs), nodeImports };
}

/** Fails for each Node-only thing in a bundle. */
function checkBrowserSafe(label, { text, inputs, nodeImports }) {
  const banned = [
    ...nodeImports.map((m) => `Node built-in ${m}`),
    ...inputs.filter((p) => /node_modules\/(ws|form-data)\//.test(p)).map((p) => `Node-only package file ${p}`),
  ];
  // Text checks catch what the metafile cannot: a global `Buffer`, or an
  // import hidden from the bundler (e.g. a string handed to require/import()).
  // \bBuffer\b does not match ArrayBuffer; a property read (`globalObject.Buffer`,
  // hash-wasm's feature test, undefined in a browser, which then uses TextEncoder)
  // is not the global binding, which throws there. "multipart/form-data" is a legit
  // MIME string, hence only specifier forms for ws/form-data.
  for (const [what, re] of [['`Buffer`', /(?<![.\w$])Buffer\b/], ['a node: specifier', /["'`]node:[a-z_/]+["'`]/],
    ['an import of `ws`/`form-data`', /(\b(require|import)\s*\(\s*|\bfrom\s*)["'`](ws|form-data)["'`]/]]) {
    const m = re.exec(text);
    if (m) banned.push(`${what} in the text: …${text.slice(Math.max(0, m.index - 60), m.index + 60)}…`);
  }
  if (banned.length) banned.forEach((b) => fail(`${label}: ${b}`));
  else console.log(`PASS  ${label}: no Node built-ins, Buffer, ws or form-data (${(text.length / 1024).toFixed(1)} KB min, ${inputs.length} inputs)`);
}

// (a) Everything the default entry exports, so tree-shaking cannot hide a
// Node-only corner the page happens not to use.
checkBrowserSafe('browser bundle of every export of @platformui/sdk',
  await bundle({ stdin: { contents: "export * from '@platformui/sdk';", resolveDir: root, loader: 'js' } }));
// (b) The page itself; it must get the SDK from the built entry via the exports map.
const pageBundle = await bundle({ entryPoints: [join(here, 'page.ts')] });
checkBrowserSafe('browser bundle of test/browser/page.ts', pageBundle);
// Which built file the exports map gave the browser ("browser" condition first).
const sdkEntry = pageBundle.inputs.find((p) => /^dist\/index(\.browser)?\.js$/.test(p));
if (sdkEntry) console.log(`      the page got the SDK from ${sdkEntry}`);
else fail('page bundle does not include dist/index(.browser).js (exports map?)');
if (pageBundle.inputs.some((p) => p.startsWith('src/'))) fail('page bundle includes src/ files: it should test the built entry');

// ---------------------------------------------------------------- 2. servers
const { startEmulator } = await import(pathToFileURL(join(root, 'dist', 'emulator.js')).href);
const emulator = await startEmulator({ port: 0, personality: 'spec' });
const html = `<!doctype html><html><head><meta charset="utf-8"><title>@platformui/sdk browser checks</title>
<link rel="icon" href="data:,"></head><body><h1>@platformui/sdk browser checks</h1>
<script type="module" src="/page.js"></script></body></html>`;
const pageServer = createServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  else if (path === '/page.js') res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(pageBundle.files[0].text);
  else if (pageBundle.files.some((f) => `/${f.name}` === path)) res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(pageBundle.files.find((f) => `/${f.name}` === path).text);
  else res.writeHead(404).end();
});
await new Promise((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
const pageOrigin = `http://127.0.0.1:${pageServer.address().port}`;
if (new URL(emulator.url).origin === pageOrigin) fail('page and emulator share an origin: CORS would not be tested');
console.log(`emulator ${emulator.url}, page ${pageOrigin} (cross-origin)`);

// ---------------------------------------------------------------- 3. browser
// What the runner verifies beyond data-status, per check name, against the
// emulator's own answer fetched here in Node (independent of the SDK).
const expectations = {
  async 'registry.searchNodes'(section) {
    const raw = await (await fetch(new URL('nodes/search?limit=2', `${emulator.url.replace(/\/$/, '')}/`))).json();
    const shown = await section.locator('.out li').allTextContents();
    const total = await section.locator('.out').getAttribute('data-total');
    if (shown.length < 1 || shown.length > 2) return `shows ${shown.length} nodes, expected 1–2`;
    if (String(raw.total) !== total) return `shows total ${total}, emulator says ${raw.total}`;
    const names = raw.nodes.map((n) => n.name ?? n.id);
    if (JSON.stringify(shown) !== JSON.stringify(names)) return `shows ${JSON.stringify(shown)}, emulator says ${JSON.stringify(names)}`;
    return undefined;
  },
  async 'proxy.relightImage'(section) {
    const id = await section.locator('.out').getAttribute('data-task-id');
    const task = emulator.proxy.tasks.get(id);
    if (!task) return `task ${id} is unknown to the emulator`;
    if (typeof task.request?.image !== 'string' || !task.request.image.startsWith('iVBORw0KGgo')) return 'the image did not arrive as base64 PNG';
    return undefined;
  },
  async 'cloud.uploadImage(Blob)'(section) {
    const name = await section.locator('.out').getAttribute('data-name');
    if (!/^[0-9a-f]{64}\.png$/.test(name ?? '')) return `name ${name} is not content-addressed`;
    const res = await fetch(`${emulator.url}/api/view?filename=${name}&type=input`, { headers: { 'x-api-key': 'emulator-key' }, redirect: 'manual' });
    if (res.status !== 302 && res.status !== 200) return `the emulator cannot serve ${name} (${res.status})`;
    return undefined;
  },
  async 'cloud.download in a browser: a DownloadError from its own chunk'(section) {
    // Downloads are in a chunk of their own, not in page.js; the page fetched /api/view, and nothing reached the signed
    // URL (the browser hid the redirect: the SDK neither followed it with the key nor at all).
    const downloads = pageBundle.files.find((f) => f.name.startsWith('downloads.browser'));
    if (!downloads || downloads === pageBundle.files[0]) return `downloads are ${downloads ? 'in page.js' : 'in no chunk'}: they must load on first use`;
    const scripts = ((await section.locator('.out').getAttribute('data-scripts')) ?? '').split(',');
    if (!scripts.includes(`/${downloads.name}`)) return `the page did not fetch ${downloads.name} for download() (it fetched ${scripts.join(', ') || 'nothing'})`;
    const seen = emulator.requests.filter((r) => r.path === '/api/view' || r.path.startsWith('/signed/')).map((r) => r.path);
    if (!seen.includes('/api/view') || seen.some((p) => p.startsWith('/signed/'))) return `the emulator saw ${seen.join(', ') || 'nothing'}: expected /api/view and no signed URL`;
    return undefined;
  },
  async 'Workflow.fromEditor after getObjectInfo()'(section) {
    // The converter is in a chunk of its own, not in page.js, and the page fetched it for getObjectInfo().
    const converter = pageBundle.files.find((f) => f.text.includes('legacy group node'));
    if (!converter || converter === pageBundle.files[0]) return `the editor-format converter is ${converter ? 'in page.js' : 'in no chunk'}: it must load on first use`;
    const scripts = ((await section.locator('.out').getAttribute('data-scripts')) ?? '').split(',');
    if (!scripts.includes(`/${converter.name}`)) return `the page did not fetch ${converter.name} for getObjectInfo() (it fetched ${scripts.join(', ') || 'nothing'})`;
    const classes = await section.locator('.out').getAttribute('data-classes');
    if (classes !== 'LoadImage,ImageInvert,SaveImage') return `converted to ${classes}, expected LoadImage,ImageInvert,SaveImage (no Note)`;
    return undefined;
  },
  async 'cloud.run of a workflow saved in the editor'(section) {
    const promptId = await section.locator('.out').getAttribute('data-prompt-id');
    const job = emulator.cloud.engine.jobs.get(promptId);
    if (!job) return `job ${promptId} is unknown to the emulator`;
    const classes = Object.values(job.prompt).map((n) => n.class_type).join(',');
    if (classes !== 'LoadImage,ImageInvert,SaveImage') return `the emulator ran ${classes}, expected the converted LoadImage,ImageInvert,SaveImage (no Note)`;
    return undefined;
  },
  async 'cloud.run with a preview'(section) {
    const promptId = await section.locator('.out').getAttribute('data-prompt-id');
    const sizes = await section.locator('img.preview').evaluateAll((imgs) => imgs.map((i) => i.naturalWidth));
    if (sizes.length === 0 || sizes.some((w) => w < 1)) return `previews not rendered: ${JSON.stringify(sizes)}`;
    const res = await fetch(`${emulator.url}/api/job/${promptId}/status`, { headers: { 'x-api-key': 'emulator-key' } });
    const status = await res.json();
    if (status.status !== 'completed') return `the emulator says job ${promptId} is ${status.status}`;
    return undefined;
  },
};

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: !process.env.HEADFUL,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage();
  const pageErrors = [];
  page.on('pageerror', (err) => pageErrors.push(`page error: ${err.message}`));
  const firstPageError = new Promise((resolve) => page.once('pageerror', resolve));
  // The browser logs every HTTP error answer as a console error: the refusals checks provoke on purpose (a submission
  // of an unknown class, answered 400; the record of an unknown job, 404) are not problems of the page.
  const provoked = (msg) =>
    (msg.text().includes('status of 400') && msg.location().url.endsWith('/api/prompt')) ||
    (msg.text().includes('status of 404') && msg.location().url.endsWith('/api/jobs/00000000-0000-4000-8000-000000000000'));
  page.on('console', (msg) => { if (msg.type() === 'error' && !provoked(msg)) pageErrors.push(`console error: ${msg.text()}`); });
  // A redirect a fetch with `redirect: 'manual'` does not follow shows as an aborted request for its target: the one the
  // download check provokes on purpose (the server-side check below proves nothing reached the signed URL).
  const unfollowed = (req) => new URL(req.url()).pathname.startsWith('/signed/') && req.failure()?.errorText === 'net::ERR_ABORTED';
  page.on('requestfailed', (req) => { if (!unfollowed(req)) pageErrors.push(`request failed: ${req.method()} ${req.url()} ${req.failure()?.errorText ?? ''}`); });

  await page.goto(`${pageOrigin}/?emulator=${encodeURIComponent(emulator.url)}`);
  // Each check has its own 20 s timeout in the page. An uncaught page error
  // (e.g. page.js failed to load) means "done" may never come: wait 2 s more.
  const done = () => page.waitForSelector('body[data-status="done"]', { timeout: 60_000 });
  const afterPageError = firstPageError.then(() => page.waitForSelector('body[data-status="done"]', { timeout: 2_000 }));
  await Promise.race([done(), afterPageError]).catch(() => fail('the page did not finish (did page.js load?)'));
  const pageError = await page.locator('body').getAttribute('data-error');
  if (pageError) fail(`page: ${pageError}`);

  const sections = page.locator('[data-check]');
  const count = await sections.count();
  if (count === 0) fail('page ran no checks');
  for (let i = 0; i < count; i++) {
    const section = sections.nth(i);
    const name = await section.getAttribute('data-check');
    const status = await section.getAttribute('data-status');
    const detail = (await section.locator('.detail').textContent()) ?? '';
    const problem = status !== 'pass' ? detail : await expectations[name]?.(section);
    if (problem) fail(`${name}: ${problem}`);
    else console.log(`PASS  ${name}: ${detail}`);
  }
  pageErrors.forEach((e) => fail(e));
} finally {
  await browser.close();
  await emulator.close();
  pageServer.close();
}

console.log(failures.length ? `\nbrowser: FAILED (${failures.length} problem(s))` : '\nbrowser: all checks passed');
process.exitCode = failures.length ? 1 : 0;
