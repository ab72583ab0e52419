// The newcomer run's plumbing: steps with a time, a log file and a verdict;
// child processes with their output in that log; a scrubbed environment.
import { spawn } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** A step's failure: `message` is printed in the summary, above the log's tail. */
export class StepFailure extends Error {}
/** A step that could not run here (a module not yet written, a program not installed). */
export class StepSkipped extends Error {}

const seconds = (ms) => `${(ms / 1000).toFixed(1)}s`.padStart(6);

/** The steps of one run: each prints one line when it ends; `summary()` prints the rest. */
export class Steps {
  results = [];
  #logDir;
  #names = new Set();

  constructor(logDir) {
    this.#logDir = logDir;
  }

  /**
   * Runs `fn(log)` as the step `name`. `log(text)` appends to the step's log
   * file. The step fails when `fn` throws (a StepFailure's message is the
   * verdict; any other error's stack is logged too), and is skipped on
   * StepSkipped. Resolves with `fn`'s value, or undefined when it did not pass.
   */
  async run(name, fn, { tailLines = 25 } = {}) {
    let file = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 80);
    while (this.#names.has(file)) file += '_';
    this.#names.add(file);
    const logFile = join(this.#logDir, `${file}.log`);
    writeFileSync(logFile, `# ${name}\n`);
    const log = (text) => appendFileSync(logFile, text.endsWith('\n') ? text : `${text}\n`);
    const started = Date.now();
    const result = { name, logFile, tailLines, status: 'pass', message: '' };
    let value;
    try {
      value = await fn(log);
    } catch (err) {
      result.status = err instanceof StepSkipped ? 'skip' : 'fail';
      result.message = err instanceof StepFailure || err instanceof StepSkipped ? err.message : String(err?.stack ?? err);
      log(`\n${result.status === 'skip' ? 'SKIPPED' : 'FAILED'}: ${result.message}`);
    }
    result.ms = Date.now() - started;
    this.results.push(result);
    const verdict = { pass: 'ok  ', fail: 'FAIL', skip: 'skip' }[result.status];
    console.log(`${verdict} ${seconds(result.ms)}  ${name}${result.status === 'skip' ? ` (${result.message})` : ''}`);
    return result.status === 'pass' ? value : undefined;
  }

  /** Prints the summary and each failure with its log's tail; true when nothing failed. */
  summary(totalMs, tail) {
    const failed = this.results.filter((r) => r.status === 'fail');
    const skipped = this.results.filter((r) => r.status === 'skip');
    for (const r of failed) {
      console.log(`\n---- FAILED: ${r.name}\n${r.message}\n---- last lines of ${r.logFile}:`);
      console.log(tail(r.logFile, r.tailLines).replace(/^/gm, '  '));
    }
    const passed = this.results.length - failed.length - skipped.length;
    console.log(`\nnewcomer: ${passed} passed, ${failed.length} failed, ${skipped.length} skipped in ${(totalMs / 1000).toFixed(0)}s (logs: ${this.#logDir})`);
    for (const r of failed) console.log(`  FAILED  ${r.name}: ${r.message.split('\n')[0]}`);
    return failed.length === 0;
  }
}

/**
 * Runs a command and resolves (never rejects) with `{ code, signal, stdout,
 * stderr, timedOut }`; its command line and output go to `log`. `timeout`
 * kills the process group (SIGKILL) after that many ms.
 */
export function exec(cmd, args, { cwd, env, log, timeout = 120_000, input } = {}) {
  log?.(`\n$ ${[cmd, ...args].join(' ')}${cwd ? `   (in ${cwd})` : ''}`);
  return new Promise((resolve) => {
    const child = spawnTracked(cmd, args, { cwd, env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    if (input !== undefined) child.stdin.end(input);
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child, 'SIGKILL');
    }, timeout);
    const done = (code, signal, error) => {
      clearTimeout(timer);
      if (error) stderr += `\n${error}`;
      if (log) {
        if (stdout) log(stdout);
        if (stderr) log(`[stderr]\n${stderr}`);
        log(`[exit ${timedOut ? `killed after ${timeout / 1000}s` : (code ?? signal)}]`);
      }
      resolve({ code, signal, stdout, stderr, timedOut });
    };
    child.on('error', (err) => done(null, null, err));
    child.on('close', (code, signal) => done(code, signal));
  });
}

/**
 * The process groups this run started and that still run. Children run
 * detached (their own group, so a timeout ends their children too); on Ctrl-C
 * or SIGTERM this run ends them all before it exits.
 */
const live = new Set();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of live) killGroup(child, 'SIGKILL');
    process.exit(130);
  });
}

/** Spawns `cmd` detached (see `live`); it leaves `live` when it exits. */
export function spawnTracked(cmd, args, options) {
  const child = spawn(cmd, args, { ...options, detached: true });
  live.add(child);
  child.on('close', () => live.delete(child));
  child.on('error', () => live.delete(child));
  return child;
}

/** Signals a child started by exec/spawn with `detached: true`, and its children. */
export function killGroup(child, signal = 'SIGTERM') {
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** Throws a StepFailure unless the command exited 0. */
export function expectSuccess(r, what) {
  if (r.code === 0) return r;
  const why = r.timedOut ? 'did not finish in time' : `exited with ${r.code ?? r.signal}`;
  throw new StepFailure(`${what} ${why}`);
}

/**
 * The environment of a new user: nothing of this run's (no npm_*, no
 * PLATFORMUI_*, no CI), only what any shell has and what the machine needs to
 * reach the network, with `path` as PATH.
 */
export function scrubbedEnv(path, extra = {}) {
  const keep = ['HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'TMPDIR', 'NODE_EXTRA_CA_CERTS', 'NODE_CACHE',
    'http_proxy', 'https_proxy', 'no_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY'];
  const env = {};
  for (const k of keep) if (process.env[k] !== undefined) env[k] = process.env[k];
  return { ...env, PATH: [...new Set(path)].join(':'), ...extra };
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Runs `fn` over `items`, at most `n` at a time, in order of start; resolves with the results in order. */
export async function mapLimit(items, n, fn) {
  const out = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}
