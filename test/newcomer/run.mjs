// The newcomer run (npm run test:newcomer; a CI step of its own): plays a new
// user on a fresh machine, from the README alone.
//
//  1. A fresh clone of HEAD, on the machine's own Node (20 in CI: what a new
//     user has), with nothing of this shell's environment: the README's Set-up
//     commands exactly as its Set-up block writes them; each must exit 0, and
//     no SDK log line may reach their stderr (tests capture what they provoke).
//  2. The packed tarball (npm pack) installed with this repo's TypeScript into
//     a new ESM app and a new CommonJS app (Node >= 22, as the README asks of
//     users): every entry imported / required, and a consumer compiled with
//     `declaration: true` (test/packaging/declarations.mjs).
//  3. Every ```ts / ```js block of README.md run as a script in the ESM app
//     against fresh emulators (snippets.mjs, prelude.mjs), and every ```sh
//     block's lines run in a shell (commands.mjs), except the blocks README.md
//     marks `<!-- newcomer: not run — why -->` (readme.mjs has the convention).
//  4. The command line's help examples: `platformui --help`, each command's
//     --help and each alias bin's, every example line run from the installed
//     package against the default emulator.
//
// One line per step (its time), a summary, logs in .tmp/newcomer/; exits 1
// naming each failed step with its log's tail.
//
//   node test/newcomer/run.mjs [--quick] [--keep]
//     --quick  skip the clone, the Set-up commands and npm test: pack this
//              checkout (`npm pack`, which builds dist/) and run 2-4 from it
//     --keep   keep the temp directory (the clone and the apps)
//
// NEWCOMER_NODE names the new user's node (default: /usr/bin/node or
// /usr/local/bin/node, else the first `node` on PATH); .ci/run exports it before
// it puts Node 22 first on PATH. This script itself runs on Node >= 22 (it is
// an npm script), which also runs the apps.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ShellSession, helpCommands, helpExamples, packageBins, runJob } from './commands.mjs';
import { exec, expectSuccess, mapLimit, scrubbedEnv, StepFailure, Steps, StepSkipped } from './lib.mjs';
import { blockName, readmeBlocks, shellCommands } from './readme.mjs';
import { emulatorsFor, withEmulators } from './servers.mjs';
import { runScriptBlock, sdkLogLines } from './snippets.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const quick = process.argv.includes('--quick');
const keep = process.argv.includes('--keep');
const started = Date.now();

const logDir = join(root, '.tmp', 'newcomer');
rmSync(logDir, { recursive: true, force: true });
mkdirSync(logDir, { recursive: true });
const tmp = mkdtempSync(join(tmpdir(), 'platformui-newcomer-'));
const steps = new Steps(logDir);
const stripAnsi = (s) => s.replace(/\x1b\[[0-9;]*m/g, '');
const tail = (file, n) => stripAnsi(readFileSync(file, 'utf8')).trimEnd().split('\n').slice(-n).join('\n');

// ---------------------------------------------------------------- the two nodes
function newcomerNode() {
  if (process.env.NEWCOMER_NODE) return process.env.NEWCOMER_NODE;
  for (const p of ['/usr/bin/node', '/usr/local/bin/node']) if (existsSync(p)) return p;
  return execFileSync('bash', ['-c', 'command -v node'], { encoding: 'utf8' }).trim();
}
const userNode = newcomerNode();
const userNodeVersion = execFileSync(userNode, ['-v'], { encoding: 'utf8' }).trim();
const systemPath = ['/usr/local/bin', '/usr/bin', '/bin'];
// The new user's shell: their node first, nothing of this run's environment.
const userEnv = scrubbedEnv([dirname(userNode), ...systemPath]);
// The apps' shell: Node >= 22 (this one) first, as the README asks of users.
const appEnv = scrubbedEnv([dirname(process.execPath), ...systemPath]);
console.log(`newcomer run${quick ? ' (--quick)' : ''}: the user's node ${userNodeVersion} (${userNode}); apps on node ${process.version}; logs in ${logDir}`);

// ---------------------------------------------------------------- 1. fresh clone and Set-up
let source = root; // the checkout whose README, tarball and tests the run uses
let setUpTail = Promise.resolve();
if (!quick) {
  source = join(tmp, 'clone');
  const head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  const cloned = await steps.run(`fresh clone of HEAD ${head}`, async (log) => {
    expectSuccess(await exec('git', ['clone', '--quiet', '--no-hardlinks', root, source], { log }), 'git clone');
    // (node_modules is a symlink in a git worktree, which `node_modules/` in .gitignore does not match.)
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' }).split('\n').filter((l) => l.trim() && l !== '?? node_modules').length;
    if (dirty) console.log(`     (${dirty} uncommitted change(s) of ${root} are not in the clone: commit them to test them)`);
    return true;
  });
  if (!cloned) await finish();
  const setUp = readmeBlocks(join(source, 'README.md')).find((b) => b.mode === 'set-up');
  const commands = setUp ? shellCommands(setUp.source) : [];
  if (!commands.length) {
    await steps.run('README Set-up block', () => { throw new StepFailure('README.md has no block marked <!-- newcomer: set-up --> with commands'); });
    await finish();
  }
  // The first command installs and builds: everything else needs it. The others
  // (npm test) run while the tarball's steps go on: they share only the clone's
  // dist/, which npm pack --ignore-scripts below reads and does not rebuild.
  // `npm test` must also keep its stderr free of what the tests provoke: vitest's
  // "stderr | test > name" blocks and SDK log lines mean a test did not capture them.
  const runSetUp = (command) => steps.run(`Set-up (node ${userNodeVersion}): ${command}`, async (log) => {
    const r = await exec('bash', ['-c', command], { cwd: source, env: userEnv, log, timeout: 900_000 });
    expectSuccess(r, command);
    if (!/\bnpm (test|t)\b/.test(command)) return true;
    const stderr = stripAnsi(r.stderr);
    const logged = sdkLogLines(stderr);
    const blocks = stderr.split('\n').filter((l) => /^stderr \| /.test(l));
    if (logged.length || blocks.length) {
      const tests = [...new Set(blocks.map((l) => l.replace(/^stderr \| /, '').trim()))];
      throw new StepFailure(`its stderr has ${blocks.length} captured-output block(s) and ${logged.length} SDK log line(s): tests must capture what they provoke.\n` +
        (tests.length ? `Printed by:\n${tests.map((t) => `  ${t}`).join('\n')}` : `First: ${logged[0].trim()}`));
    }
    return true;
  }, { tailLines: 40 });
  if (!(await runSetUp(commands[0]))) await finish();
  setUpTail = (async () => { for (const c of commands.slice(1)) await runSetUp(c); })();
}

// ---------------------------------------------------------------- 2. the tarball in two new apps
const packDir = join(tmp, 'pack');
mkdirSync(packDir);
const tarball = await steps.run(quick ? 'npm pack (this checkout; builds dist/)' : 'npm pack --ignore-scripts (the clone, built by npm ci)', async (log) => {
  const args = ['pack', '--pack-destination', packDir, ...(quick ? [] : ['--ignore-scripts'])];
  expectSuccess(await exec('npm', args, { cwd: source, env: quick ? appEnv : userEnv, log, timeout: 300_000 }), 'npm pack');
  const tgz = readdirSync(packDir).filter((f) => f.endsWith('.tgz'));
  if (tgz.length !== 1) throw new StepFailure(`npm pack made ${tgz.length} tarballs`);
  return join(packDir, tgz[0]);
});
if (!tarball) await finish();

const devDeps = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')).devDependencies;
const tsVersion = JSON.parse(readFileSync(join(source, 'node_modules', 'typescript', 'package.json'), 'utf8')).version;
const apps = {
  esm: { dir: join(tmp, 'app-esm'), type: 'module', extra: ['pino@10'] }, // pino: README's logger example imports it
  cjs: { dir: join(tmp, 'app-cjs'), type: 'commonjs', extra: [] },
};
const installed = await Promise.all(Object.entries(apps).map(([format, app]) =>
  steps.run(`${format.toUpperCase()} app: npm install <tarball> typescript@${tsVersion}`, async (log) => {
    mkdirSync(app.dir);
    writeFileSync(join(app.dir, 'package.json'), `${JSON.stringify({ name: `newcomer-${format}`, private: true, version: '0.0.0', type: app.type }, null, 2)}\n`);
    const pkgs = [tarball, `typescript@${tsVersion}`, `@types/node@${devDeps['@types/node']}`, ...app.extra];
    expectSuccess(await exec('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...pkgs], { cwd: app.dir, env: appEnv, log, timeout: 300_000 }), 'npm install');
    return true;
  })));
if (installed.some((ok) => !ok)) await finish();

const entries = Object.keys(JSON.parse(readFileSync(join(apps.esm.dir, 'node_modules', '@platformui', 'sdk', 'package.json'), 'utf8')).exports)
  .filter((e) => e !== './package.json')
  .map((e) => `@platformui/sdk${e.slice(1)}`);
const appChecks = Object.entries(apps).flatMap(([format, app]) => [
  steps.run(`${format.toUpperCase()} app: ${format === 'esm' ? 'import' : 'require'} every entry (${entries.length})`, async (log) => {
    const load = format === 'esm'
      ? `for (const e of ${JSON.stringify(entries)}) { const m = await import(e); console.log(e, Object.keys(m).length, 'exports'); }`
      : `for (const e of ${JSON.stringify(entries)}) { const m = require(e); console.log(e, Object.keys(m).length, 'exports'); }`;
    const file = join(app.dir, format === 'esm' ? 'entries.mjs' : 'entries.cjs');
    writeFileSync(file, `${load}\n`);
    expectSuccess(await exec('node', [file], { cwd: app.dir, env: appEnv, log }), `node ${file}`);
  }),
  steps.run(`${format.toUpperCase()} app: a consumer with declaration: true`, async (log) => {
    const module = join(source, 'test', 'packaging', 'declarations.mjs');
    if (!existsSync(module)) throw new StepSkipped('test/packaging/declarations.mjs: not yet available');
    // In a process of its own: the compiler is synchronous work that would stall every other step.
    const options = { appDir: app.dir, format, typescript: join(app.dir, 'node_modules', 'typescript') };
    const script = `const { checkDeclarations } = await import(${JSON.stringify(pathToFileURL(module).href)});
      console.log(JSON.stringify(await checkDeclarations(${JSON.stringify(options)})));`;
    const r = await exec(process.execPath, ['--input-type=module', '-e', script], { cwd: app.dir, env: appEnv, log, timeout: 300_000 });
    if (r.code !== 0) {
      const said = r.stderr.split('\n').find((l) => /^\s*Error\b/.test(l)) ?? `exit ${r.code}`;
      throw new StepFailure(`the consumer does not compile: ${said.trim().replace(/^Error:\s*/, '')}`);
    }
  }, { tailLines: 40 }),
]);

// ---------------------------------------------------------------- 3 and 4: README blocks and help examples
const esm = { dir: apps.esm.dir, env: appEnv };
copyFileSync(join(here, 'prelude.mjs'), join(esm.dir, 'newcomer-prelude.mjs'));
{
  // The documented emulator credentials (EMULATOR_TOKEN, EMULATOR_API_KEY), used where the emulator prints no PLATFORMUI_* lines.
  const r = await exec('node', ['--input-type=module', '-e', "const e = await import('@platformui/sdk/emulator'); console.log(JSON.stringify({ token: e.EMULATOR_TOKEN, apiKey: e.EMULATOR_API_KEY }))"], { cwd: esm.dir, env: appEnv });
  esm.credentials = JSON.parse(r.stdout);
}
const blocks = readmeBlocks(join(source, 'README.md'));
for (const b of blocks.filter((b) => b.mode === 'not run')) console.log(`not run     ${blockName(b)}: ${b.reason}`);

const scripts = blocks.filter((b) => b.kind === 'script' && b.mode === 'run');
const relightJson = join(source, 'examples', 'workflows', 'relight-api.json');
const scriptRuns = mapLimit(scripts, 4, (block) =>
  steps.run(blockName(block), (log) => runScriptBlock(block, { app: esm, relightJson, log }), { tailLines: 80 }));

/** Runs command lines one after another in one session against fresh emulators; a step per line. */
async function session(name, lines, label) {
  const dir = join(esm.dir, 'sessions', name);
  const extra = emulatorsFor(lines.join('\n'));
  const log = (text) => writeFileSync(join(logDir, `session-${name}.log`), `${text}\n`, { flag: 'a' });
  try {
    await withEmulators({ appDir: esm.dir, env: appEnv, credentials: esm.credentials, log, extra }, async ({ urls, env }) => {
      const jobId = await runJob({ appDir: esm.dir, env: { ...appEnv, ...env }, log });
      const shell = new ShellSession({ appDir: esm.dir, dir, env: { ...appEnv, ...env }, urls, jobId, bins: packageBins(esm.dir) });
      for (const line of lines) await steps.run(label(line), (stepLog) => shell.run(line, stepLog));
    });
  } catch (err) {
    await steps.run(`${name}: emulators`, () => { throw err; });
  }
}

const shellRuns = blocks.filter((b) => b.kind === 'shell' && b.mode === 'run')
  .map((b) => session(`readme-L${b.line}`, shellCommands(b.source), (line) => `${blockName(b)}: ${line}`));

const helpRun = (async () => {
  const bins = packageBins(esm.dir);
  const shellEnv = { ...appEnv, PATH: `${join(esm.dir, 'node_modules', '.bin')}:${appEnv.PATH}` };
  const examples = await steps.run(`help: ${bins.join(', ')} --help and each command's`, async (log) => {
    const found = [];
    const help = async (args) => {
      const r = await exec(args[0], [...args.slice(1), '--help'], { cwd: esm.dir, env: shellEnv, log });
      expectSuccess(r, `${args.join(' ')} --help`);
      const lines = helpExamples(r.stdout, bins);
      if (!lines.length) throw new StepFailure(`${args.join(' ')} --help shows no example`);
      found.push(...lines);
      return r.stdout;
    };
    for (const bin of bins) {
      const text = await help([bin]);
      for (const command of helpCommands(text)) await help([bin, ...command.split(' ')]);
    }
    // A user runs what the help says to run first (`platformui example …`, which writes files the others use) first.
    const unique = [...new Set(found)];
    return [...unique.filter((l) => /^platformui example\b/.test(l)), ...unique.filter((l) => !/^platformui example\b/.test(l))];
  });
  if (examples) await session('help', examples, (line) => `help example: ${line}`);
})();

await Promise.all([...appChecks, scriptRuns, ...shellRuns, helpRun]);
await finish();

/** Prints the summary and exits, once the Set-up commands still running (npm test) have ended. */
async function finish() {
  await setUpTail;
  const ok = steps.summary(Date.now() - started, tail);
  if (keep) console.log(`kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
  process.exit(ok ? 0 : 1);
}
