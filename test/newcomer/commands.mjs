// Command lines as a user types them: the examples of the command line's
// --help texts, and README's ```sh blocks. Each runs with bash in a scratch
// directory of the ESM app (the package's bins on PATH, as `npx` finds them),
// against the emulators, after these substitutions, and only these:
//
// - placeholder hosts → the emulators' URLs (servers.mjs);
// - a job id (`<prompt_id>`, `<id>`, or any UUID) → a job that ran on the default emulator;
// - `PLATFORMUI_X=…` → the value `platformui emulator` printed for it;
// - `--api-key-file F` / `--token-file F`: F is written first with the emulator's key or token;
// - `platformui emulator --port N` gets a free port instead of N, runs until it
//   prints its URL, and must then exit 0 on Ctrl-C (SIGINT).
//
// `export A=B …` sets the variables for the lines after it. A line whose
// other programs (`jq` …) are not installed is skipped, saying so, and so is
// a help example that ends with `# needs Redis…` (the queue's commands: no
// Redis runs here).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { exec, freePort, killGroup, spawnTracked, StepFailure, StepSkipped } from './lib.mjs';
import { stripComment } from './readme.mjs';
import { mapHosts } from './servers.mjs';

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const JOB_PLACEHOLDER = /<(prompt_id|promptId|job_id|id)>/g;
/** A help example for a Redis the run does not start: `platformui worker --redis … # needs Redis`. */
const NEEDS_REDIS = /\s#\s*(needs Redis\b.*)$/;

/** The package's bins (`platformui`, its aliases), from the installed package.json. */
export function packageBins(appDir) {
  return Object.keys(JSON.parse(readFileSync(join(appDir, 'node_modules', '@platformui', 'sdk', 'package.json'), 'utf8')).bin ?? {});
}

/** The commands listed under `Commands:` in a help text (`run`, `nodes search`…). */
export function helpCommands(help) {
  const out = [];
  let inside = false;
  for (const line of help.split('\n')) {
    if (/^Commands:\s*$/.test(line)) inside = true;
    else if (inside && !line.trim()) break;
    else if (inside) out.push(line.trim().split(/\s{2,}/)[0]);
  }
  return out.filter(Boolean);
}

/** The example lines of a help text: after `Example:` / `Examples:`, on the same line or indented below it. */
export function helpExamples(help, bins) {
  const out = [];
  const lines = help.split('\n');
  const isCommand = (l) => new RegExp(`^(\\w+=\\S*\\s+)*(npx\\s+)?(${bins.join('|')})(\\s|$)`).test(l);
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*Examples?:\s*(.*)$/.exec(lines[i]);
    if (!m) continue;
    if (m[1].trim()) out.push(m[1].trim());
    for (i++; i < lines.length && /^\s+\S/.test(lines[i]); i++) out.push(lines[i].trim());
    i--;
  }
  // `# needs Redis` stays on its line: ShellSession.run skips it, saying so.
  return out.map((l) => (NEEDS_REDIS.test(l) ? l.trim() : stripComment(l).trim())).filter((l) => isCommand(stripComment(l).trim()));
}

/** First words of each command of a line (`a | b && c` → a, b, c), env assignments and `npx` skipped. */
function programs(line) {
  return line.split(/\|\|?|&&|;/).map((part) => part.trim().split(/\s+/).filter((w) => !/^\w+=/.test(w) && w !== 'npx')[0]).filter(Boolean);
}

/**
 * A shell session: one scratch directory, one environment, the emulators'
 * URLs. `run(line, log)` runs one command line and throws StepFailure /
 * StepSkipped.
 */
export class ShellSession {
  constructor({ appDir, dir, env, urls, jobId, bins }) {
    this.appDir = appDir;
    this.dir = dir;
    this.bins = bins;
    this.urls = urls;
    this.jobId = jobId;
    mkdirSync(join(dir, 'home'), { recursive: true });
    // HOME in the scratch dir: `~/.platformui-key` lands there, not in the machine's home.
    this.env = { ...env, HOME: join(dir, 'home'), PATH: `${join(appDir, 'node_modules', '.bin')}:${env.PATH}` };
  }

  /** The line after the substitutions described at the top of this file. */
  async substitute(line) {
    let out = mapHosts(line, this.urls);
    out = out.replace(JOB_PLACEHOLDER, this.jobId).replace(UUID, this.jobId);
    out = out.replace(/\b(PLATFORMUI_[A-Z_]+)=…/g, (all, name) => (this.env[name] ? `${name}=${this.env[name]}` : all));
    if (this.isEmulator(out)) {
      const port = await freePort();
      out = out.replace(/--port[ =]\d+/, `--port ${port}`);
    }
    return out;
  }

  /** `platformui emulator …`, `platformui-emulator …`: runs until Ctrl-C. */
  isEmulator(line) {
    return /(^|\s)(platformui\s+emulator|platformui-emulator)(\s|$)/.test(line);
  }

  async run(original, log) {
    const needs = NEEDS_REDIS.exec(original);
    if (needs) throw new StepSkipped(`${needs[1]}, not started here`);
    const line = await this.substitute(original);
    log(`line as written: ${original}\nline as run:     ${line}`);
    const exported = /^export\s+(.*)$/.exec(line);
    if (exported) {
      for (const [, k, v] of exported[1].matchAll(/(\w+)=(\S*)/g)) this.env[k] = v;
      log(`exported: ${[...exported[1].matchAll(/(\w+)=/g)].map((m) => m[1]).join(', ')}`);
      return;
    }
    const missing = [];
    for (const p of new Set(programs(line))) {
      const r = await exec('bash', ['-c', `command -v ${JSON.stringify(p)}`], { cwd: this.dir, env: this.env });
      if (r.code !== 0) missing.push(p);
    }
    if (missing.length) throw new StepSkipped(`needs ${missing.join(', ')}, not installed here`);
    for (const m of line.matchAll(/--(api-key|token)-file[ =](\S+)/g)) {
      const path = resolve(this.dir, m[2].replace(/^~(?=\/)/, this.env.HOME));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, `${m[1] === 'api-key' ? this.env.PLATFORMUI_API_KEY : this.env.PLATFORMUI_TOKEN}\n`, { mode: 0o600 });
      log(`wrote ${path} (the emulator's ${m[1] === 'api-key' ? 'API key' : 'token'})`);
    }
    if (this.isEmulator(line)) return this.#runUntilUrl(line, log);
    const r = await exec('bash', ['-o', 'pipefail', '-c', line], { cwd: this.dir, env: this.env, log, timeout: 90_000 });
    if (r.timedOut) throw new StepFailure('did not end within 90s');
    if (r.code !== 0) {
      const said = r.stderr.split('\n').filter((l) => l.trim() && !/^npm (notice|warn)/.test(l)).at(-1) ?? '';
      throw new StepFailure(`exited with ${r.code}: ${said.trim()}`);
    }
  }

  /** Starts a long-running command, waits for its URL, stops it with SIGINT: it must exit 0. */
  async #runUntilUrl(line, log) {
    log(`$ ${line}   (until it prints its URL, then Ctrl-C)`);
    const child = spawnTracked('bash', ['-c', line], { cwd: this.dir, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise((res) => child.on('close', (code, signal) => res(code ?? signal)));
    const listening = await Promise.race([
      new Promise((res) => child.stdout.on('data', () => /listening on http/.test(out) && res(true))),
      exited.then(() => false),
      new Promise((res) => setTimeout(() => res(false), 30_000)),
    ]);
    if (listening) await new Promise((res) => setTimeout(res, 100));
    killGroup(child, 'SIGINT');
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 10_000);
    const code = await exited;
    clearTimeout(timer);
    log(`${out}[exit ${code}]`);
    if (!listening) throw new StepFailure(`printed no URL: ${out.trim().split('\n').at(-1) ?? ''}`);
    if (code !== 0) throw new StepFailure(`exited with ${code} on Ctrl-C`);
  }
}

/**
 * The id of a job run on the default emulator (by prelude.mjs, in its own
 * directory so that its photo.png stays out of the session's).
 */
export async function runJob({ appDir, env, log }) {
  const dir = join(appDir, 'job');
  mkdirSync(dir, { recursive: true });
  const prelude = pathToFileURL(join(appDir, 'newcomer-prelude.mjs')).href;
  const r = await exec('node', ['--import', prelude, '--input-type=module', '-e', 'console.log(globalThis.promptId)'], { cwd: dir, env, log, timeout: 60_000 });
  if (r.code !== 0) throw new StepFailure('could not run a job on the emulator to have a job id');
  return r.stdout.trim().split('\n').at(-1);
}
