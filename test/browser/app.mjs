// Browser test of the example app (npm run test:browser-app, after npm run build).
//
// 1. Builds examples/browser/ with Vite (production) into a temp dir: the page
//    imports @platformui/sdk by its name, resolved to dist/ through "exports".
// 2. Starts the emulator (local personality, slow-ish steps) and, on another
//    port (another origin: CORS is exercised), a tiny static server for the build.
// 3. Drives the page in Debian's Chromium via playwright-core (as run.mjs):
//    search and load more; a run with previews and an output image (and a
//    screenshot of it); a second run,
//    cancelled (state `cancelled`, the job gone from the server's queue and
//    never completed); invalid JSON, a workflow the client finds invalid and
//    one the server rejects (state `failed`, the reason shown); then: no
//    console error, no page error, no object URL left unrevoked beyond those
//    displayed (none after `pagehide`).
// 4. The same page through examples/browser/relay.ts to the emulator's `cloud`
//    personality: a run and a cancel, the key never in the page. Then what the
//    relay refuses, checked in the emulator's request log: a page of another
//    origin (a third loopback port) fails to POST (simple or JSON) or open the
//    socket; the page's own origin gets 415 for a text/plain POST; dot-segment
//    paths sent raw (`/api/./interrupt`, `/api/%2e%2e/x`…) get 404.
//
// Env: CHROMIUM=/path/to/chromium (default /usr/bin/chromium), HEADFUL=1,
//      UPDATE_SCREENSHOT=1 to replace examples/browser/screenshot.png (default: .tmp/browser-app.png).
import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, dirname, normalize, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'vite';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const appDir = join(root, 'examples', 'browser');
const failures = [];
const fail = (msg) => { failures.push(msg); console.log(`FAIL  ${msg}`); };
const pass = (msg) => console.log(`PASS  ${msg}`);

for (const f of ['dist/index.browser.js', 'dist/emulator.js']) {
  if (!existsSync(join(root, f))) { console.error(`${f} is missing: run \`npm run build\` first.`); process.exit(1); }
}

// ---------------------------------------------------------------- 1. build
const tmp = mkdtempSync(join(tmpdir(), 'platformui-app-'));
const outDir = join(tmp, 'dist');
const built = await build({ configFile: join(appDir, 'vite.config.ts'), build: { outDir }, logLevel: 'warn' });
const chunks = (Array.isArray(built) ? built : [built]).flatMap((b) => b.output).filter((o) => o.type === 'chunk');
const modules = chunks.flatMap((c) => Object.keys(c.modules)).map((id) => id.startsWith(root) ? id.slice(root.length + 1) : id);
if (!modules.includes('dist/index.browser.js')) fail(`the app bundle does not include dist/index.browser.js (modules: ${modules.join(', ')})`);
else if (modules.some((m) => m.startsWith('src/'))) fail('the app bundle includes src/ files: it should use the built package');
else pass(`vite build: ${chunks.length} chunk(s), the SDK from dist/index.browser.js (the "browser" export condition)`);

// ---------------------------------------------------------------- 2. servers
const { makePng: png, startEmulator } = await import(pathToFileURL(join(root, 'dist', 'emulator.js')).href);
const emulator = await startEmulator({ personality: 'local', cloud: { stepMs: 200, progressSteps: 3 } });
emulator.cloud.addFile('example.png', png(64, 64, 0));
const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css', '.json': 'application/json' };
const pageServer = createServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/blank') return res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>blank</title>');
  const file = normalize(join(outDir, path === '/' ? 'index.html' : path));
  if (!file.startsWith(outDir) || !existsSync(file) || !statSync(file).isFile()) return res.writeHead(404).end();
  res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
});
await new Promise((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
const pageOrigin = `http://127.0.0.1:${pageServer.address().port}`;
console.log(`emulator ${emulator.url} (local personality), page ${pageOrigin} (cross-origin)`);

// Two different input images (an identical rerun would be served from the cache, instantly).
const imageA = join(tmp, 'a.png');
const imageB = join(tmp, 'b.png');
writeFileSync(imageA, png(48, 48, 1));
writeFileSync(imageB, png(48, 48, 2));

// ---------------------------------------------------------------- 3. browser
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: !process.env.HEADFUL,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const pageErrors = [];
/** Console errors the current step expects (e.g. Chromium logs a 400 the page asked for). */
let expectedConsole = [];
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (err) => pageErrors.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const where = msg.location()?.url ?? '';
    if (expectedConsole.some((e) => e.text.test(msg.text()) && e.url.test(where))) return console.log(`      (expected console line: ${msg.text()} ${where})`);
    pageErrors.push(`console error: ${msg.text()} ${where}`);
  });
  page.on('requestfailed', (req) => {
    // A fetch aborted on purpose (Cancel, a search replaced by another) is no failure.
    if (req.failure()?.errorText === 'net::ERR_ABORTED') return;
    pageErrors.push(`request failed: ${req.method()} ${req.url()} ${req.failure()?.errorText ?? ''}`);
  });
  // Counts object URLs: created, revoked, and so those still alive.
  await page.addInitScript(() => {
    const live = new Set();
    const counts = { created: 0, revoked: 0 };
    const create = URL.createObjectURL.bind(URL);
    const revoke = URL.revokeObjectURL.bind(URL);
    URL.createObjectURL = (obj) => { const u = create(obj); counts.created++; live.add(u); return u; };
    URL.revokeObjectURL = (u) => { if (live.delete(u)) counts.revoked++; revoke(u); };
    window.__objectUrls = () => ({ ...counts, live: [...live] });
  });
  const tid = (id) => page.locator(`[data-testid="${id}"]`);
  const state = () => page.locator('body').getAttribute('data-state');
  const waitState = async (want, timeout = 20_000) => {
    await page.waitForFunction((s) => ['done', 'failed', 'cancelled'].includes(document.body.dataset.state ?? '') || document.body.dataset.state === s, want, { timeout }).catch(() => undefined);
    const got = await state();
    return got === want ? undefined : `state is ${got}, expected ${want}${got === 'failed' ? ` (${await tid('error').textContent()})` : ''}`;
  };
  /** Object URLs alive beyond the ones shown (the preview and the outputs). */
  const leakedUrls = async () => page.evaluate(() => {
    const shown = new Set([...document.querySelectorAll('[data-testid="preview"], [data-testid="outputs"] img')].map((i) => i.getAttribute('src')).filter(Boolean));
    const { live, created, revoked } = window.__objectUrls();
    return { leaked: live.filter((u) => !shown.has(u)), live: live.length, shown: shown.size, created, revoked };
  });
  const checkUrls = async (when) => {
    const u = await leakedUrls();
    if (u.leaked.length) fail(`${when}: ${u.leaked.length} object URL(s) alive but not displayed (created ${u.created}, revoked ${u.revoked})`);
    else pass(`${when}: object URLs created ${u.created}, revoked ${u.revoked}, alive ${u.live} (all displayed)`);
  };
  const step = async (name, f) => {
    try {
      const problem = await f();
      if (problem) fail(`${name}: ${problem}`);
      else if (problem !== null) pass(name);
    } catch (err) {
      fail(`${name}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
  };

  await page.goto(`${pageOrigin}/?server=${encodeURIComponent(emulator.url)}`);

  // -- registry: the first list, then load more, against the emulator's own answers.
  const rows = tid('search-results').locator('tr');
  await step('search: Enter shows the first page', async () => {
    await tid('search-input').fill('');
    await tid('search-input').press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="search-results"] tr').length > 0);
    const raw = await (await fetch(`${emulator.url}/nodes/search?limit=10&page=1`)).json();
    const names = (await rows.locator('td:first-child').allTextContents());
    const expected = raw.nodes.map((n) => n.name ?? n.id);
    if (JSON.stringify(names) !== JSON.stringify(expected)) return `rows ${JSON.stringify(names)}, the emulator says ${JSON.stringify(expected)}`;
    if (raw.totalPages < 2) return `the emulator has only ${raw.total} nodes: load more cannot be tested`;
    console.log(`      ${names.length} rows of ${raw.total}`);
  });
  await step('load more appends the next page', async () => {
    const before = await rows.count();
    await tid('load-more').click();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="search-results"] tr').length > n, before);
    const after = await rows.count();
    const raw = await (await fetch(`${emulator.url}/nodes/search?limit=10&page=2`)).json();
    const tail = (await rows.locator('td:first-child').allTextContents()).slice(before);
    if (JSON.stringify(tail) !== JSON.stringify(raw.nodes.map((n) => n.name ?? n.id))) return `appended ${JSON.stringify(tail)}, page 2 is ${JSON.stringify(raw.nodes.map((n) => n.name ?? n.id))}`;
    console.log(`      rows ${before} → ${after}`);
  });
  await step('search with the OS and accelerator filters', async () => {
    await tid('search-input').fill('');
    await page.selectOption('#accelerator', 'CUDA');
    await page.waitForFunction(() => /of \d+$/.test(document.getElementById('search-count')?.textContent ?? '') && document.querySelector('[data-testid="search-results"] tr'));
    const raw = await (await fetch(`${emulator.url}/nodes/search?limit=10&page=1&supported_accelerator=CUDA`)).json();
    await page.waitForFunction((t) => document.getElementById('search-count')?.textContent?.endsWith(`of ${t}`), raw.total);
    await page.selectOption('#accelerator', '');
    console.log(`      CUDA: ${raw.total} nodes`);
  });

  // -- a run: previews as they arrive, then the output.
  await step('run invert.json with an uploaded image: previews, then the output', async () => {
    await tid('workflow-select').selectOption({ index: 0 });
    await tid('image-input').setInputFiles(imageA);
    const previews = new Set();
    const watch = setInterval(() => void tid('preview').getAttribute('src').then((s) => s && previews.add(s), () => undefined), 50);
    await tid('run-button').click();
    await page.waitForFunction(() => { const i = document.querySelector('[data-testid="preview"]'); return i?.getAttribute('src') && i.complete && i.naturalWidth > 0; }, undefined, { timeout: 20_000 })
      .catch(() => undefined);
    const previewShown = await tid('preview').evaluate((i) => i.naturalWidth > 0);
    const problem = await waitState('done');
    clearInterval(watch);
    if (problem) return problem;
    if (!previewShown) return 'no preview was displayed while it ran';
    const outs = await tid('outputs').locator('img').evaluateAll((imgs) => Promise.all(imgs.map((i) => i.decode().then(() => i.naturalWidth, () => 0))));
    if (outs.length === 0 || outs.some((w) => w < 1)) return `output images not rendered: ${JSON.stringify(outs)}`;
    const progress = await tid('progress').evaluate((p) => `${p.value}/${p.max}`);
    const done = await tid('nodes-done').textContent();
    const id = await page.locator('body').getAttribute('data-prompt-id');
    const history = await (await fetch(`${emulator.url}/history/${id}`)).json();
    if (history[id]?.status?.status_str !== 'success') return `the emulator's history says ${JSON.stringify(history[id]?.status)}`;
    console.log(`      ${previews.size} preview(s) seen, ${outs.length} output(s), progress ${progress}, ${done}`);
    // Saved each run under .tmp/; UPDATE_SCREENSHOT=1 replaces the committed one (shown in the README).
    const shot = process.env.UPDATE_SCREENSHOT === '1' ? join(appDir, 'screenshot.png') : join(root, '.tmp', 'browser-app.png');
    mkdirSync(dirname(shot), { recursive: true });
    await page.screenshot({ path: shot });
    const kb = statSync(shot).size / 1024;
    console.log(`      screenshot: ${relative(root, shot)} (${kb.toFixed(1)} KB)`);
    if (kb > 150) return `the screenshot is ${kb.toFixed(0)} KB (keep it under 150 KB)`;
  });
  await checkUrls('after the run');

  // -- a second run, cancelled: this job only, gone from the queue, never completed.
  await step('a second run, cancelled: state cancelled, the job left the queue', async () => {
    await tid('image-input').setInputFiles(imageB); // not the cache: another image
    await tid('run-button').click();
    await page.waitForSelector('body[data-prompt-id]');
    await page.waitForFunction(() => document.querySelector('[data-testid="preview"]')?.getAttribute('src'), undefined, { timeout: 10_000 });
    const id = await page.locator('body').getAttribute('data-prompt-id');
    const queued = async () => {
      const q = await (await fetch(`${emulator.url}/queue`)).json();
      return [...q.queue_running, ...q.queue_pending].some((entry) => entry[1] === id);
    };
    if (!(await queued())) return `job ${id} is not in the queue before Cancel (did it end already?)`;
    await tid('cancel-button').click();
    const problem = await waitState('cancelled', 5_000);
    if (problem) return problem;
    // The stop is sent when run() gives up; it reaches the server a moment later.
    const deadline = Date.now() + 3_000;
    while (await queued()) {
      if (Date.now() > deadline) return `job ${id} is still in the emulator's queue 3 s after Cancel`;
      await new Promise((r) => setTimeout(r, 100));
    }
    const history = await (await fetch(`${emulator.url}/history/${id}`)).json();
    const msgs = (history[id]?.status?.messages ?? []).map((m) => m[0]);
    if (!msgs.includes('execution_interrupted')) return `the emulator's history of ${id} has ${JSON.stringify(msgs)}, no execution_interrupted`;
    console.log(`      job ${id}: interrupted, not in /queue any more`);
  });
  await checkUrls('after the cancelled run');

  // -- bad workflows end in `failed` with the reason shown.
  await tid('image-input').setInputFiles([]);
  const failsWith = (name, setup, pattern, expected = []) => step(name, async () => {
    await setup();
    expectedConsole = expected;
    await tid('run-button').click();
    const problem = await waitState('failed', 10_000);
    expectedConsole = [];
    if (problem) return problem;
    const text = (await tid('error').textContent()) ?? '';
    if (!pattern.test(text)) return `the error shown is ${JSON.stringify(text)}, expected ${pattern}`;
    console.log(`      shown: ${text.split('\n').slice(0, 3).join(' | ')}`);
  });
  await failsWith('invalid JSON: failed, the reason shown', () => tid('workflow-json').fill('{ "1": { "class_type": '), /Invalid workflow JSON/);
  const badBlur = { ...JSON.parse(readFileSync(join(root, 'examples/workflows/invert.json'), 'utf8')), 4: { class_type: 'ImageBlur', inputs: { image: ['1', 0], blur_radius: 99, sigma: 1 } } };
  badBlur['3'].inputs.images = ['4', 0];
  await failsWith('validation issues: failed, listed per node', () => tid('workflow-json').fill(JSON.stringify(badBlur, null, 2)), /blur_radius/);
  // The server answers 400 (the partner node needs the account key); Chromium logs that 400 itself.
  await failsWith('a workflow the server rejects: failed, the reason shown', () => tid('workflow-select').selectOption({ index: 1 }), /rejected.*partner|partner.*rejected|api_key_platform_org/is,
    [{ text: /status of 400/, url: /\/api\/prompt$/ }]);
  await checkUrls('after the failed runs');

  await step('pagehide revokes every object URL', async () => {
    await page.evaluate(() => dispatchEvent(new PageTransitionEvent('pagehide')));
    const u = await leakedUrls();
    if (u.live) return `${u.live} object URL(s) still alive after pagehide`;
    console.log(`      created ${u.created}, revoked ${u.revoked}`);
  });
  // -- the relay (examples/browser/relay.ts) to the emulator's `cloud` personality (key required,
  //    /api/view a redirect to a signed URL): a run and a cancel, the key never in the page.
  const cloudEmulator = await startEmulator({ personality: 'cloud', cloud: { stepMs: 150, progressSteps: 3 } });
  cloudEmulator.cloud.addFile('example.png', png(64, 64, 3));
  const relayPort = await freePort();
  const relay = spawn(process.execPath, ['--experimental-strip-types', '--no-warnings', join(appDir, 'relay.ts')], {
    env: { ...process.env, PLATFORMUI_API_KEY: 'emulator-key', PLATFORMUI_CLOUD_URL: cloudEmulator.url, PAGE_ORIGIN: pageOrigin, PORT: String(relayPort) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise((resolve, reject) => {
      relay.stdout.on('data', (d) => String(d).includes('relay for') && resolve());
      relay.on('exit', (code) => reject(new Error(`relay.ts exited (${code})`)));
    });
    const keySeen = [];
    page.on('request', (req) => { if (JSON.stringify(req.headers()).includes('emulator-key') || req.url().includes('emulator-key')) keySeen.push(req.url()); });
    await page.goto(`${pageOrigin}/?server=http://127.0.0.1:${relayPort}&relay&registry=${encodeURIComponent(cloudEmulator.url)}`);
    await step('through the relay (cloud personality): a run and its output', async () => {
      await tid('workflow-select').selectOption({ index: 0 });
      await tid('image-input').setInputFiles(imageA);
      await tid('run-button').click();
      const problem = await waitState('done');
      if (problem) return problem;
      const outs = await tid('outputs').locator('img').evaluateAll((imgs) => Promise.all(imgs.map((i) => i.decode().then(() => i.naturalWidth, () => 0))));
      if (outs.length === 0 || outs.some((w) => w < 1)) return `output images not rendered: ${JSON.stringify(outs)}`;
      const signed = cloudEmulator.requests.filter((r) => r.path.startsWith('/signed/'));
      if (signed.length === 0) return 'no signed URL was fetched (/api/view should have answered a redirect)';
      if (signed.some((r) => r.headers['x-api-key'] || r.headers.authorization)) return 'a signed URL was fetched with the key';
      console.log(`      ${outs.length} output(s), fetched by the relay from the signed URL (${signed.length} signed request(s))`);
    });
    await step('through the relay: Cancel stops the job (POST /api/queue { delete })', async () => {
      await tid('image-input').setInputFiles(imageB);
      await tid('run-button').click();
      await page.waitForSelector('body[data-prompt-id]');
      await page.waitForFunction(() => document.querySelector('[data-testid="preview"]')?.getAttribute('src'), undefined, { timeout: 10_000 });
      const id = await page.locator('body').getAttribute('data-prompt-id');
      await tid('cancel-button').click();
      const problem = await waitState('cancelled', 5_000);
      if (problem) return problem;
      const deadline = Date.now() + 3_000;
      for (;;) {
        const s = await (await fetch(`${cloudEmulator.url}/api/job/${id}/status`, { headers: { 'x-api-key': 'emulator-key' } })).json();
        if (s.status === 'cancelled') break;
        if (Date.now() > deadline) return `job ${id} is ${s.status} 3 s after Cancel`;
        await new Promise((r) => setTimeout(r, 100));
      }
      console.log(`      job ${id}: cancelled on the server`);
    });
    await step('the API key never reached the page', async () => (keySeen.length ? `sent by the page: ${keySeen.join(', ')}` : undefined));
    await checkUrls('after the relay runs');

    // -- what the relay refuses (issue 23, item 13), checked against what reached the cloud emulator.
    const relayUrl = `http://127.0.0.1:${relayPort}`;
    const prompt = JSON.stringify({ prompt: JSON.parse(readFileSync(join(root, 'examples/workflows/invert.json'), 'utf8')) });
    const prompts = () => cloudEmulator.requests.filter((r) => r.path.endsWith('/prompt')).length;
    let upgrades = 0;
    cloudEmulator.server.on('upgrade', () => void upgrades++);
    // A page's tries at the relay: fetches (answered status or failure) and a socket (opened or refused).
    const tryRelay = (on) => on.evaluate(async ({ relay, body }) => {
      const tryFetch = (type) => fetch(`${relay}/api/prompt`, { method: 'POST', headers: { 'content-type': type }, body })
        .then((r) => `answered ${r.status}`, (e) => `failed (${e.message})`);
      const socket = await new Promise((resolve) => {
        const ws = new WebSocket(`${relay.replace('http:', 'ws:')}/ws?clientId=other`);
        ws.onopen = () => { ws.close(); resolve('opened'); };
        ws.onclose = () => resolve('refused');
      });
      return { simple: await tryFetch('text/plain'), json: await tryFetch('application/json'), socket };
    }, { relay: relayUrl, body: prompt });
    // Another site the relay's user visits: a second origin (another loopback port), in its own tab.
    const otherSite = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>another site</title>'));
    await new Promise((resolve) => otherSite.listen(0, '127.0.0.1', resolve));
    const other = await browser.newPage();
    try {
      await step('a page of another origin: a simple POST, a JSON POST and a WebSocket to the relay all fail, none reaches the cloud', async () => {
        await other.goto(`http://127.0.0.1:${otherSite.address().port}/`);
        const [before, upgradesBefore] = [prompts(), upgrades];
        const got = await tryRelay(other);
        if (prompts() !== before) return `${prompts() - before} submission(s) of another origin reached the cloud`;
        if (upgrades !== upgradesBefore) return `the socket of another origin reached the cloud (${got.socket})`;
        if (!got.simple.startsWith('failed') || !got.json.startsWith('failed')) return `the relay answered another origin: ${JSON.stringify(got)}`;
        if (got.socket !== 'refused') return `the socket of another origin ${got.socket}`;
        console.log(`      ${JSON.stringify(got)}`);
      });
      await step("the page's own origin: a text/plain POST is refused (415), never sent", async () => {
        await other.goto(`${pageOrigin}/blank`); // the page's origin, without the app
        const before = prompts();
        const got = await tryRelay(other);
        if (got.simple !== 'answered 415') return `a text/plain submission got ${got.simple}`;
        if (got.json !== 'answered 200') return `the JSON submission got ${got.json}`;
        if (got.socket !== 'opened') return `the socket of the page's origin was ${got.socket}`;
        if (prompts() !== before + 1) return `${prompts() - before} submission(s) reached the cloud, expected the JSON one only`;
      });
      // fetch() and browsers normalize these paths before sending: sent raw, as any other client may.
      for (const path of ['/api/./interrupt', '/api/../api/interrupt', '/api/%2e%2e/x', '/api/../anything']) {
        await step(`${path} never reaches the cloud: 404`, async () => {
          const seen = cloudEmulator.requests.length;
          const status = await rawRequest(relayUrl, 'POST', path, { origin: pageOrigin, 'content-type': 'application/json' }, '{}');
          // What the cloud would make of them: its interrupt, or any path of it.
          const reached = cloudEmulator.requests.slice(seen).filter((r) => /interrupt|anything|^\/x$/.test(r.path)).map((r) => `${r.method} ${r.path}`);
          if (reached.length) return `the cloud received ${reached.join(', ')}`;
          if (status !== 404) return `the relay answered ${status}`;
        });
      }
    } finally {
      await other.close();
      otherSite.close();
    }
  } finally {
    relay.kill();
    await cloudEmulator.close();
  }

  if (pageErrors.length) pageErrors.forEach((e) => fail(e));
  else pass('no console error, no page error (unhandled rejection), no failed request');
} finally {
  await browser.close();
  await emulator.close();
  pageServer.close();
  rmSync(tmp, { recursive: true, force: true });
}

console.log(failures.length ? `\nbrowser app: FAILED (${failures.length} problem(s))` : '\nbrowser app: all checks passed');
process.exitCode = failures.length ? 1 : 0;

/** Sends `path` as the exact request target (fetch() would normalize it); resolves with the status. */
function rawRequest(base, method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request(base, { method, path, headers }, (res) => { res.resume(); resolve(res.statusCode); });
    req.on('error', reject).end(body);
  });
}

/** A free loopback port (for relay.ts, which takes PORT). */
async function freePort() {
  const s = createServer();
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address();
  await new Promise((resolve) => s.close(resolve));
  return port;
}

