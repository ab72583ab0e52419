// Pack-and-install test (npm run test:pack).
//
// Proves that what `npm publish` would upload works for a consumer, not just
// the repo's own sources. The tarball is packed from a clean clone (no dist/,
// no node_modules: `npm ci --ignore-scripts`, then `npm pack`, whose prepack
// script must build), so a package that only works because the working tree
// happens to hold a build fails here. The tarball is then installed into a
// fresh project (its install printing no warning), imported (ESM) and required (CJS) under Node 22 and Node 24,
// type-checked by a consumer under the module resolutions people use (with
// this repo's TypeScript, the newest (7, what `npm install -D typescript` gives) and
// the oldest one the README promises), by a consumer of every entry with nothing
// configured but `module` (no `types`: @types/node merely installed), and
// linted by publint and attw; `npm install git+file://<clone>` must install
// a built package too. A consumer compiled with `declaration: true` (ESM and
// CommonJS) must be able to name every type it reaches through the package
// (declarations.mjs), and the package must stay under its size ceiling, each browser bundle under its budget. The CJS runs below check the CJS build on its own
// (the root entry imports no package at load time; `/schemas` requires zod). The queue's optional peers (bullmq,
// ioredis) are not installed for those runs, and no file the root or browser build loads names them; they are
// installed before the queue entry is loaded and before the type checks (issue 26).
//
// The clone is of HEAD plus the working tree's uncommitted changes (tracked
// and untracked files that git does not ignore), committed in the clone, so
// a run before a commit tests what that commit will hold; in CI (a fresh
// clone) that is HEAD alone.
//
// Env: NODE22_BIN / NODE24_BIN point at node binaries; otherwise
// scripts/with-node.cjs --print <major> finds or fetches them (the current
// node when its major matches, else node-<os>-<arch>@<major> from npm, cached
// in ~/.cache/node-bin/<major>, like .ci/run). PLATFORMUI_TSC_MIN names the
// package dir of TypeScript 5.7 (as .ci/run sets it); otherwise it is installed
// in the temp dir, as TypeScript 7 always is. KEEP_TMP=1 keeps the temp dir.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { checkDeclarations } from './declarations.mjs';
import { NODE_ONLY } from '../../scripts/dts-node-types.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
// The oldest TypeScript whose consumers compile our .d.ts without skipLibCheck
// (5.7: generic typed arrays, `Uint8Array<ArrayBuffer>`). The README states it.
const MIN_TYPESCRIPT = '5.7';
// The newest major, what `npm install -D typescript` gives a new project (issue 32): a native compiler
// (its `bin/tsc` runs like the others' but it has no JavaScript compiler API, so declarations.mjs skips it).
const NEW_TYPESCRIPT = '7';
// What the package may unpack to. It was 7.0 MB, over half of it source maps
// (issue 24); now it is the bundles, their declarations and the README. Raise it
// only for something users need, and say what in the commit. Issue 25 (the editor-format converter in
// each bundle, its own browser chunk, named inputs: +0.3 MB) and issue 26 (the queue entry: +0.2 MB): 3.0 → 3.4 MB.
// Issue 33 (Comfy API v2: its client code in the root's Node bundles and its own browser file, the follower's browser
// file, the emulator's v2 personalities in the emulator bundles and the bins' chunk, the README section: +0.66 MB,
// 3.26 → 3.92 MB): 4.0 MB. Issue 34 (what loads at start: the validator, the registry's pack finder, publishing and
// filter hint in browser files of their own, the socket moved into the realtime file; each lazily loaded browser file
// carries the modules it shares with the root's bundle, since it must not import the root: +0.18 MB, 3.92 → 4.10 MB,
// for start bundles 3 to 11 KB min+gz smaller): 4.2 MB.
const MAX_UNPACKED_BYTES = 4_200_000;
const results = []; // { name, ok, detail }

/** Runs a command, captures output; never throws. */
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, timeout: 300_000, ...opts });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`.trim() };
}

/** Records one check; prints its output only when it failed (or when asked). */
function check(name, { ok, out }, { show = false } = {}) {
  results.push({ name, ok });
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${name}`);
  if ((!ok || show) && out) console.log(out.replace(/^/gm, '      '));
}

/** A node binary of exactly `major`, from the script every npm script runs through. */
function nodeBin(major) {
  return execFileSync(process.execPath, [join(root, 'scripts', 'with-node.cjs'), '--print', String(major)], {
    encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

/** File → size, from a .tgz: the 512-byte ustar headers (name at 0, size in octal at 124, type at 156). */
function tarSizes(tgz) {
  const tar = gunzipSync(tgz);
  const sizes = new Map();
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0; ) {
    const field = (from, len) => tar.subarray(at + from, at + from + len).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    const name = [field(345, 155), field(0, 100)].filter(Boolean).join('/').replace(/^package\//, '');
    if (type === '0' || type === '') sizes.set(name, size);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return sizes;
}

/** Bytes as KB or MB, for the messages. */
function kb(bytes) {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1e3).toFixed(1)} KB`;
}

const tmp = mkdtempSync(join(tmpdir(), 'platformui-pack-'));
process.on('exit', () => (process.env.KEEP_TMP ? console.log(`kept ${tmp}`) : rmSync(tmp, { recursive: true, force: true })));

// ---------------------------------------------------------------- clean clone
const git = (args, cwd = root) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const clone = join(tmp, 'clone');
const head = git(['rev-parse', '--short=12', 'HEAD']).trim();
git(['clone', '--quiet', root, clone], tmp);
// Overlay what is not committed yet (a deleted file is deleted in the clone too).
const changed = [...new Set([
  ...git(['diff', '--name-only', '-z', 'HEAD']).split('\0'),
  ...git(['ls-files', '-z', '--others', '--exclude-standard']).split('\0'),
].filter(Boolean))];
for (const f of changed) {
  const from = join(root, f);
  const to = join(clone, f);
  if (existsSync(from) && statSync(from).isFile()) {
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(from, to);
  } else {
    rmSync(to, { force: true });
  }
}
// (A worktree's node_modules symlink shows as untracked yet copies as nothing: commit only real changes.)
if (changed.length && git(['status', '--porcelain'], clone).trim()) {
  git(['add', '-A'], clone);
  git(['-c', 'user.name=pack test', '-c', 'user.email=pack-test@localhost', 'commit', '--quiet', '--no-verify', '-m', 'uncommitted changes'], clone);
}
console.log(`clean clone of HEAD ${head}${changed.length ? ` + ${changed.length} uncommitted file(s): ${changed.slice(0, 8).join(', ')}${changed.length > 8 ? ', …' : ''}` : ''}`);

// ---------------------------------------------------------------- pack
// Dependencies without lifecycle scripts, so the build below is npm pack's own.
const ci = run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: clone });
check('npm ci --ignore-scripts in the clone', ci);
if (!ci.ok) process.exit(1);
const packDir = join(tmp, 'pack');
mkdirSync(packDir);
// Without --ignore-scripts: npm pack runs the prepack script, which must build dist/ and take `prepare` out of
// the packed package.json (scripts/published-manifest.mjs), and postpack, which must put the clone's back.
const manifestBefore = readFileSync(join(clone, 'package.json'), 'utf8');
const pack = run('npm', ['pack', '--pack-destination', packDir], { cwd: clone });
const tgz = readdirSync(packDir).filter((f) => f.endsWith('.tgz'));
check('npm pack in the clone (prepack builds dist/)', { ok: pack.ok && tgz.length === 1, out: pack.out });
if (!tgz.length) process.exit(1);
const tarball = join(packDir, tgz[0]);
check('npm pack leaves the clone\'s package.json as it was (postpack)', {
  ok: readFileSync(join(clone, 'package.json'), 'utf8') === manifestBefore && !existsSync(join(clone, '.package.json.unpacked')),
  out: git(['diff', '--', 'package.json'], clone) || 'package.json was restored, but .package.json.unpacked is still there',
});
{
  // npm 11 lists a package with any of these on every install, as scripts allowScripts does not cover, though
  // it runs `prepare` only for a git or directory install: the published package.json must have none.
  const { scripts = {} } = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }));
  const install = ['preinstall', 'install', 'postinstall', 'prepare'].filter((s) => s in scripts);
  check('the packed package.json has no install-time script (no allowScripts notice for its users)', { ok: !install.length, out: `scripts: ${install.join(', ')}` });
}
const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
console.log(`packed ${tgz[0]}: ${files.length} files, ${(statSync(tarball).size / 1024).toFixed(1)} KB`);
// Nothing from src/test/tooling leaks in, and every export target is shipped.
const wanted = ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts', 'dist/schemas.js', 'dist/schemas.cjs',
  'dist/schemas.d.ts', 'dist/schemas.d.cts', 'dist/emulator.js',
  'dist/emulator.cjs', 'dist/emulator.d.ts', 'dist/emulator.d.cts', 'dist/emulator-cli.js', 'dist/index.browser.js',
  'dist/codegen.js', 'dist/codegen.cjs', 'dist/codegen.d.ts', 'dist/codegen.d.cts', 'dist/codegen-cli.js', 'dist/cli.js',
  'dist/queue.js', 'dist/queue.cjs', 'dist/queue.d.ts', 'dist/queue.d.cts'];
{
  const stray = files.filter((f) => !/^(dist\/|README\.md$|CHANGELOG\.md$|LICENSE|package\.json$)/.test(f));
  const missing = wanted.filter((f) => !files.includes(f));
  // A map would point at src/, which is not shipped, or carry a second copy of it.
  const maps = files.filter((f) => f.endsWith('.map'));
  check('tarball contents', { ok: !stray.length && !missing.length && !maps.length, out: [
    stray.length && `unexpected files: ${stray.join(', ')}`, missing.length && `missing: ${missing.join(', ')}`,
    maps.length && `source maps (not shipped: the bundles are unminified, and src/ is not in the package): ${maps.join(', ')}`].filter(Boolean).join('\n') });
}
{
  const sizes = tarSizes(readFileSync(tarball));
  const unpacked = [...sizes.values()].reduce((a, b) => a + b, 0);
  const largest = [...sizes].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([f, n]) => `  ${kb(n)}  ${f}`).join('\n');
  console.log(`unpacked: ${kb(unpacked)} in ${sizes.size} files (ceiling ${kb(MAX_UNPACKED_BYTES)})`);
  check(`unpacked size under ${kb(MAX_UNPACKED_BYTES)}`, {
    ok: unpacked <= MAX_UNPACKED_BYTES,
    out: `the package unpacks to ${kb(unpacked)}, over its ceiling of ${kb(MAX_UNPACKED_BYTES)} (MAX_UNPACKED_BYTES in test/packaging/pack.mjs). What grew? Largest files:\n${largest}\nKeep out what users do not need (source maps, copies of a bundle); raise the ceiling only for what they do.`,
  });
}

// ---------------------------------------------------------------- install
const app = join(tmp, 'consumer');
mkdirSync(app);
writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, version: '0.0.0' }, null, 2));
// @types/node: a Node consumer has it; the emulator's types refer to node:http.
const typesNode = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies['@types/node'];
// At npm's default log level: what a user sees must hold no warning (the install-scripts notice, issue 32).
const inst = run('npm', ['install', '--no-audit', '--no-fund', tarball, `@types/node@${typesNode}`], { cwd: app });
check('npm install <tarball> in a fresh project', inst);
if (!inst.ok) process.exit(1);
{
  const warnings = inst.out.split('\n').filter((l) => /\bnpm (warn|WARN)\b/.test(l));
  check('npm install <tarball> prints no warning', { ok: !warnings.length, out: warnings.join('\n') });
}

// ---------------------------------------------------------------- the queue's peers stay out of the rest
// bullmq and ioredis are optional peers (issue 26): npm does not install them, and nothing but the
// queue entry may load them. Every built file the root (ESM, CJS) and the browser build load, chunks they
// import included, must name neither; the queue's files name them only as imports (never a bundled copy),
// and take the root's classes from the root entry (a second copy would break `instanceof`).
const installed = join(app, 'node_modules', '@platformui', 'sdk');
const PEERS = ['bullmq', 'ioredis'];
/** The module specifiers a built file imports, statically or not. */
const specifiers = (file) => [...readFileSync(file, 'utf8').matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(['"])([^'"\n]+)\1/g)].map((m) => m[2]);
/** `file` and the package's own files it imports (relative specifiers), transitively. */
function closure(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const s of specifiers(file)) if (s.startsWith('.')) closure(join(dirname(file), s), seen);
  return seen;
}
check('the consumer has no bullmq or ioredis installed (optional peers)', {
  ok: PEERS.every((p) => !existsSync(join(app, 'node_modules', p))),
  out: `installed with the package: ${PEERS.filter((p) => existsSync(join(app, 'node_modules', p))).join(', ')}: they must be optional peerDependencies`,
});
{
  const roots = ['index.js', 'index.cjs', 'index.browser.js', 'editor.browser.js', 'emulator.js', 'emulator.cjs'].map((f) => join(installed, 'dist', f));
  const bad = [];
  for (const root of roots) {
    for (const file of closure(root)) {
      const named = specifiers(file).filter((s) => PEERS.some((p) => s === p || s.startsWith(`${p}/`)));
      if (named.length) bad.push(`${file.slice(installed.length + 1)} (loaded by ${root.slice(installed.length + 1)}) imports ${named.join(', ')}`);
    }
  }
  check('the root (ESM, CJS), browser and emulator builds never import bullmq or ioredis', { ok: !bad.length, out: bad.join('\n') });
}
/** Whether built JavaScript declares class `name` (as written, or as esbuild lowers it: `name = class`, `name2 = class`). */
const defines = (text, name) => new RegExp(`\\bclass ${name}\\b|\\b${name}\\d* = class\\b`).test(text);
{
  const problems = [];
  const rootClasses = Object.entries(await import(pathToFileURL(join(installed, 'dist', 'index.js')).href))
    .filter(([, v]) => typeof v === 'function' && /^class\b/.test(Function.prototype.toString.call(v))).map(([k]) => k);
  for (const f of ['queue.js', 'queue.cjs']) {
    const file = join(installed, 'dist', f);
    const text = readFileSync(file, 'utf8');
    const own = specifiers(file).filter((s) => s.startsWith('.'));
    if (own.length) problems.push(`dist/${f} imports files of its own (${own.join(', ')}): it must be one bundle`);
    // A bundled bullmq would carry its classes; ioredis its client.
    const bundled = ['QueueBase', 'RedisConnection', 'Cluster'].filter((c) => defines(text, c));
    if (bundled.length) problems.push(`dist/${f} bundles bullmq or ioredis (${bundled.join(', ')}): they must stay external`);
    const copies = rootClasses.filter((c) => defines(text, c));
    if (copies.length) problems.push(`dist/${f} holds its own copy of ${copies.join(', ')}: import them from '@platformui/sdk' (src/index.ts), not from deeper modules, so instanceof holds across the entries`);
  }
  check('dist/queue.{js,cjs}: bullmq and ioredis external, the root\'s classes taken from the root entry', { ok: !problems.length, out: problems.join('\n') });
}

// ---------------------------------------------------------------- runtime: ESM and CJS, Node 22 and 24
// The same smoke body for both module systems; `load` differs.
const smoke = (load) => `
const assert = (c, m) => { if (!c) throw new Error(m); };
const sdk = ${load('@platformui/sdk')};
const emu = ${load('@platformui/sdk/emulator')};
const schemas = ${load('@platformui/sdk/schemas')};
assert(Array.isArray(schemas.RELIGHT_STYLES) && typeof schemas.Node === 'object', 'the schemas entry lacks its schemas');
assert(!('Node' in sdk), 'the root exports a runtime Node');
assert(typeof sdk.RegistryClient === 'function' && /^class\\b/.test(Function.prototype.toString.call(sdk.RegistryClient)),
  'RegistryClient is not a class');
assert(typeof emu.startEmulator === 'function', 'startEmulator is not a function');
const server = await emu.startEmulator({ port: 0 });
try {
  const page = await new sdk.RegistryClient({ baseUrl: server.url }).searchNodes({ limit: 2 });
  assert(Array.isArray(page.nodes) && page.nodes.length >= 1 && page.nodes.length <= 2,
    'searchNodes({ limit: 2 }) returned ' + JSON.stringify(page).slice(0, 200));
  console.log('nodes: ' + page.nodes.map((n) => n.name).join(', ') + ' (total ' + page.total + ')');
} finally {
  await server.close();
}`;
writeFileSync(join(app, 'smoke.mjs'), smoke((s) => `await import('${s}')`));
writeFileSync(join(app, 'smoke.cjs'), `(async () => {${smoke((s) => `require('${s}')`)}
})().catch((e) => { console.error(e); process.exit(1); });`);

for (const major of [22, 24]) {
  const node = nodeBin(major);
  const version = run(node, ['-v']).out;
  for (const file of ['smoke.mjs', 'smoke.cjs']) {
    const kind = file.endsWith('.mjs') ? 'ESM import()' : 'CJS require()';
    // --trace-uncaught: an error inside a require(esm) chain stays readable.
    check(`Node ${version} ${kind}: RegistryClient + emulator smoke`, run(node, ['--trace-uncaught', file], { cwd: app, timeout: 60_000 }), { show: true });
  }
}

// ---------------------------------------------------------------- the queue entry, its peers installed
// As a queue user does: the peers at the versions the package asks for, then the entry in both module
// systems. (The type checks below then compile the queue's declarations against bullmq's.)
{
  const peers = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).peerDependencies;
  const inst = run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...PEERS.map((p) => `${p}@${peers[p]}`)], { cwd: app });
  check(`npm install ${PEERS.join(' ')} (the queue's optional peers) in the consumer`, inst);
  const queueSmoke = (load) => `
const assert = (c, m) => { if (!c) throw new Error(m); };
const queue = ${load('@platformui/sdk/queue')};
const isClass = (v) => typeof v === 'function' && /^class\\b/.test(Function.prototype.toString.call(v));
assert(isClass(queue.JobQueue) && isClass(queue.QueueWorker), 'JobQueue and QueueWorker are not classes');
console.log('queue exports: ' + Object.keys(queue).join(', '));`;
  writeFileSync(join(app, 'queue.mjs'), queueSmoke((s) => `await import('${s}')`));
  writeFileSync(join(app, 'queue.cjs'), `${queueSmoke((s) => `require('${s}')`)}\n`);
  for (const major of [22, 24]) {
    const node = nodeBin(major);
    const version = run(node, ['-v']).out;
    check(`Node ${version} ESM import(): @platformui/sdk/queue`, run(node, ['--trace-uncaught', 'queue.mjs'], { cwd: app, timeout: 60_000 }), { show: true });
    check(`Node ${version} CJS require(): @platformui/sdk/queue`, run(node, ['--trace-uncaught', 'queue.cjs'], { cwd: app, timeout: 60_000 }), { show: true });
  }
}

// ---------------------------------------------------------------- types: consumer type-check
// The @ts-expect-error line proves the types are real: if the package resolved
// to `any`, the directive would be unused and tsc would fail.
const consumerTs = (topLevel) => `
import { RegistryClient, Page, CloudSocket, RELIGHT_STYLES, type Node } from '@platformui/sdk';
import { RELIGHT_STYLES as STYLES, Node as NodeSchema } from '@platformui/sdk/schemas';
import { startEmulator, CloudState } from '@platformui/sdk/emulator';
${topLevel ? '' : 'export async function main(): Promise<void> {'}
// The root exports models, schemas' names and internal classes as types only (the JavaScript has no such values).
// @ts-expect-error RELIGHT_STYLES is a value only in @platformui/sdk/schemas
void RELIGHT_STYLES;
// @ts-expect-error Page has no public constructor
void ((x: unknown) => x instanceof Page);
// @ts-expect-error CloudSocket has no public constructor
void ((x: unknown) => x instanceof CloudSocket);
// @ts-expect-error CloudState is the type of emulator.cloud, not a value
void CloudState;
const firstStyle: string = STYLES[0];
const nodeSchemaKind: string = typeof NodeSchema;
const typed = (n: Node): string | undefined => n.name;
void firstStyle; void nodeSchemaKind; void typed;
const server = await startEmulator({ port: 0 });
const url: string = server.url;
const client = new RegistryClient({ baseUrl: url });
const page = await client.searchNodes({ limit: 2 });
const total: number | undefined = page.total;
const names = page.nodes.map((n) => n.name);
// @ts-expect-error limit is a number
void client.searchNodes({ limit: 'two' });
console.log(total, names);
await server.close();
${topLevel ? 'export {};' : '}'}
`;
mkdirSync(join(app, 'ts'));
writeFileSync(join(app, 'ts', 'bundler.ts'), consumerTs(true));
writeFileSync(join(app, 'ts', 'esm.mts'), consumerTs(true));
writeFileSync(join(app, 'ts', 'cjs.cts'), consumerTs(false));
// skipLibCheck off: our emitted .d.ts/.d.cts must themselves compile for the
// consumer. TS 6 defaults `types` to [], hence the explicit ["node"].
const base = { strict: true, noEmit: true, skipLibCheck: false, target: 'es2022', types: ['node'] };
const configs = {
  // Bundler users (Vite, esbuild, webpack): browser libs, import conditions.
  'bundler (module esnext)': { files: ['ts/bundler.ts'], compilerOptions: { ...base, module: 'esnext', moduleResolution: 'bundler', lib: ['es2023', 'dom'] } },
  // Plain Node users: no DOM lib, so the types must not lean on DOM-only names.
  'node16 (module node16)': { files: ['ts/esm.mts', 'ts/cjs.cts'], compilerOptions: { ...base, module: 'node16', moduleResolution: 'node16', lib: ['es2023'] } },
};
// With this repo's TypeScript, the newest, and the oldest one the README promises.
const typescriptAt = (dir) => ({ dir, version: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version, tsc: join(dir, 'bin', 'tsc') });
/** `typescript@<spec>` installed in a directory of its own under tmp, or undefined (the failure recorded). */
function installTypescript(spec, why) {
  const dir = join(tmp, `typescript-${spec}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), '{ "private": true }');
  const inst = run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `typescript@${spec}`], { cwd: dir });
  check(`npm install typescript@${spec} (${why})`, inst);
  return inst.ok ? typescriptAt(join(dir, 'node_modules', 'typescript')) : undefined;
}
const compilers = [typescriptAt(join(root, 'node_modules', 'typescript'))];
{
  const newest = installTypescript(NEW_TYPESCRIPT, 'what a new project installs');
  if (newest) compilers.push(newest);
}
if (process.env.PLATFORMUI_TSC_MIN) {
  const min = typescriptAt(process.env.PLATFORMUI_TSC_MIN);
  check(`PLATFORMUI_TSC_MIN is TypeScript ${MIN_TYPESCRIPT} (the minimum the README states)`, {
    ok: min.version.startsWith(`${MIN_TYPESCRIPT}.`), out: `${process.env.PLATFORMUI_TSC_MIN} is TypeScript ${min.version}`,
  });
  compilers.push({ ...min, min: true });
} else {
  const min = installTypescript(MIN_TYPESCRIPT, 'the minimum the README states');
  if (min) compilers.push({ ...min, min: true });
}
for (const { version, tsc: bin, min } of compilers) {
  for (const [name, cfg] of Object.entries(configs)) {
    const file = join(app, `tsconfig.${name.split(' ')[0]}.json`);
    writeFileSync(file, JSON.stringify(cfg, null, 2));
    const r = run('node', [bin, '-p', file], { cwd: app });
    // TS1479 in our .d.cts = it imports types from an ESM-only dependency:
    // fine under module node20/nodenext (require(esm)), an error under node16.
    if (/\.d\.cts.*TS1479/.test(r.out)) r.out += '\nhint: dist/*.d.cts imports an ESM-only package; keep its types out of the public API (declare our own), or emit `import type ... with { "resolution-mode": "import" }`.';
    if (min && !r.ok) r.out += `\nhint: the published .d.ts now needs a TypeScript newer than ${version}: avoid that syntax in the public types, or raise MIN_TYPESCRIPT here and the minimum the README states.`;
    check(`tsc ${version}${min ? ' (minimum)' : ''} consumer ${name}: ${cfg.files.map((f) => f.split('/')[1]).join(' + ')}`, r);
  }
}

// ---------------------------------------------------------------- types: every entry, nothing configured
// A new Node project (issue 32): @types/node installed, a tsconfig that sets only what a module
// system needs, no `types`. TypeScript 6 and 7 then load no @types package unless a file asks for it,
// so the declarations of the Node-only entries must reference Node's types themselves
// (scripts/dts-node-types.mjs); without that, the emulator's fail with TS2591 on `node:http` and `Buffer`.
// skipLibCheck off (it is on in `tsc --init`'s config, where it would hide exactly these errors).
// The entries the browser can load must not pull Node's types in: they reference none, and compile
// with no types at all and the DOM's lib.
{
  const entries = Object.keys(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).exports)
    .filter((k) => k !== './package.json').map((k) => `@platformui/sdk${k.slice(1)}`);
  const nodeOnly = NODE_ONLY.map((e) => `@platformui/sdk/${e}`);
  const consumer = (list) => `${list.map((e, i) => `import * as e${i} from '${e}';`).join('\n')}\nexport const entries = [${list.map((_, i) => `e${i}`).join(', ')}];\n`;
  writeFileSync(join(app, 'ts', 'every-entry.mts'), consumer(entries));
  writeFileSync(join(app, 'ts', 'every-entry.cts'), consumer(entries));
  writeFileSync(join(app, 'ts', 'browser-entries.ts'), consumer(entries.filter((e) => !nodeOnly.includes(e))));
  const plain = { files: ['ts/every-entry.mts', 'ts/every-entry.cts'], compilerOptions: { module: 'nodenext', strict: true, noEmit: true, skipLibCheck: false } };
  // `types: []` says "none" to TypeScript 5.7 too, which would otherwise load every installed @types package.
  const browser = { files: ['ts/browser-entries.ts'], compilerOptions: { module: 'esnext', moduleResolution: 'bundler', target: 'es2022', lib: ['es2023', 'dom'], types: [], strict: true, noEmit: true, skipLibCheck: false } };
  for (const { version, tsc: bin, min } of compilers) {
    for (const [name, cfg] of [['every entry, no types set (@types/node installed)', plain], [`${entries.filter((e) => !nodeOnly.includes(e)).join(', ')} with no Node types (bundler, DOM)`, browser]]) {
      const file = join(app, `tsconfig.${cfg === plain ? 'plain' : 'browser'}.json`);
      writeFileSync(file, JSON.stringify(cfg, null, 2));
      const r = run('node', [bin, '-p', file], { cwd: app });
      if (!r.ok && /TS2591|TS2580/.test(r.out)) r.out += cfg === plain
        ? '\nhint: a Node-only entry\'s .d.ts uses Node\'s types without `/// <reference types="node" />`: add the entry to scripts/dts-node-types.mjs.'
        : '\nhint: a browser-loadable entry\'s .d.ts now uses Node\'s types: keep them out of its public types.';
      check(`tsc ${version}${min ? ' (minimum)' : ''} ${name}`, r);
    }
  }
  const dist = join(installed, 'dist');
  const referencing = readdirSync(dist).filter((f) => /\.d\.c?ts$/.test(f) && readFileSync(join(dist, f), 'utf8').includes('<reference types="node"'));
  const expected = nodeOnly.flatMap((e) => [`${e.split('/').pop()}.d.ts`, `${e.split('/').pop()}.d.cts`]);
  check('only the Node-only entries\' declarations reference Node\'s types', {
    ok: referencing.sort().join() === expected.sort().join(),
    out: `reference types="node" in: ${referencing.join(', ') || 'none'}; expected in: ${expected.join(', ')}`,
  });
}

// ---------------------------------------------------------------- declaration: true
// A library built on the SDK declares its own types: every type reachable from
// every public export must be nameable from a public entry (issue 24).
for (const { version, dir, min } of compilers) {
  // TypeScript 7 has no JavaScript compiler API (the walk needs its type checker): its consumers are compiled above.
  if (Number(version.split('.')[0]) >= 7) continue;
  for (const format of ['esm', 'cjs']) {
    const name = `tsc ${version}${min ? ' (minimum)' : ''} ${format === 'esm' ? 'ESM' : 'CommonJS'} consumer with declaration: true names every type it reaches`;
    try {
      const r = await checkDeclarations({ appDir: app, format, typescript: dir });
      check(`${name} (${r.types} types from ${r.exports} exports)`, { ok: true, out: '' });
    } catch (err) {
      check(name, { ok: false, out: err.message });
    }
  }
}

// ---------------------------------------------------------------- bundle budgets
// What a browser app loads at start, per entry (bench/bundle-size.ts: the clone's build packed and installed in a
// temp app, esbuild --splitting, min+gz): over any budget fails (issue 34: the budgets do not move).
check('browser bundles within their budgets (bench/bundle-size.ts --ci)', run(process.execPath, ['--experimental-strip-types', '--no-warnings', join(clone, 'bench', 'bundle-size.ts'), '--ci'], { cwd: clone }), { show: true });

// ---------------------------------------------------------------- git install
// `npm install git+…` clones, installs dev dependencies, and runs prepare: the
// package it installs must be built, not three files.
{
  const gitApp = join(tmp, 'git-consumer');
  mkdirSync(gitApp);
  writeFileSync(join(gitApp, 'package.json'), JSON.stringify({ name: 'git-consumer', private: true, version: '0.0.0' }, null, 2));
  const inst = run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `git+${pathToFileURL(clone).href}`], { cwd: gitApp });
  const installed = join(gitApp, 'node_modules', '@platformui', 'sdk');
  const missing = wanted.filter((f) => !existsSync(join(installed, f)));
  check('npm install git+file://<clone> installs a built package', {
    ok: inst.ok && !missing.length,
    out: [inst.out, missing.length && `missing: ${missing.join(', ')}`].filter(Boolean).join('\n'),
  });
}

// ---------------------------------------------------------------- lint: publint, attw
// publint --strict: warnings (wrong extensions, export order, missing files)
// fail too; mere suggestions are printed but do not.
check('publint --strict', run('npx', ['--no-install', 'publint', 'run', '--strict', tarball], { cwd: root }), { show: true });
// attw on the same tarball (equivalent to `attw --pack`, without re-packing).
// --profile node16: skip the node10 resolution mode. TypeScript 6 deprecates
// `moduleResolution: node10`, and engines says Node >= 22, so a node10-only
// failure (e.g. `./emulator` has no legacy fallback) is not a consumer problem.
check('attw --profile node16', run('npx', ['--no-install', 'attw', '--profile', 'node16', '--format', 'table-flipped', '--no-emoji', '--no-color', tarball], { cwd: root }), { show: true });

// ---------------------------------------------------------------- summary
const failed = results.filter((r) => !r.ok);
console.log(`\npackaging: ${results.length - failed.length}/${results.length} checks passed${failed.length ? `; FAILED: ${failed.map((r) => r.name).join('; ')}` : ''}`);
process.exitCode = failed.length ? 1 : 0;
