// What the queue's process tests share: the child scripts bundled once per file (src/ uses TypeScript
// that --experimental-strip-types rejects), children spawned and killed for real, emulators of the
// local personality as the servers, and what those servers saw, counted per job.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { makePng, startEmulator, type Emulator, type Job } from '../../../src/emulator/index.ts';
import type { QueueWorkerOptions } from '../../../src/queue/index.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SCRIPTS = ['worker', 'producer', 'client'] as const;
export type Script = (typeof SCRIPTS)[number];

/** Bundles the child scripts into a temp directory under the repo (so `bullmq` resolves from its node_modules). */
export async function bundleChildren(): Promise<{ dir: string; cleanup(): void }> {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.tmp', 'queue-proc-'));
  await esbuild.build({
    bundle: true, platform: 'node', format: 'esm', target: 'node22', logLevel: 'silent',
    // What a queue user installs stays a package; the SDK's own source is bundled.
    external: ['bullmq', 'ioredis', 'ws', 'form-data', 'zod'],
    entryPoints: Object.fromEntries(SCRIPTS.map((s) => [s, join(ROOT, 'test', 'queue', 'proc', `${s}.ts`)])),
    outdir: dir, outExtension: { '.js': '.mjs' },
  });
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A child process of the tests, its output kept. */
export class Child {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  readonly #proc: ChildProcess;

  constructor(dir: string, script: Script, config: unknown) {
    this.#proc = spawn(process.execPath, [join(dir, `${script}.mjs`)], {
      env: { ...process.env, QUEUE_PROC: JSON.stringify(config), NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#proc.stdout!.setEncoding('utf8').on('data', (c: string) => (this.stdout += c));
    this.#proc.stderr!.setEncoding('utf8').on('data', (c: string) => (this.stderr += c));
    this.exited = new Promise((resolve) => this.#proc.on('exit', (code) => resolve(code)));
    running.add(this);
    void this.exited.then(() => running.delete(this));
  }

  get pid(): number {
    return this.#proc.pid!;
  }

  /** The lines it printed so far. */
  lines(): string[] {
    return this.stdout.split('\n').filter(Boolean);
  }

  /** Resolves once it printed a line matching `pattern`; rejects when it exits first or after `ms`. */
  async waitFor(pattern: RegExp, ms = 20_000): Promise<string> {
    const end = Date.now() + ms;
    for (;;) {
      const line = this.lines().find((l) => pattern.test(l));
      if (line) return line;
      if (this.#proc.exitCode !== null || this.#proc.signalCode !== null) throw new Error(`child exited (${this.#proc.exitCode ?? this.#proc.signalCode}) before printing ${pattern}:\n${this.stdout}\n${this.stderr}`);
      if (Date.now() > end) throw new Error(`child printed no ${pattern} in ${ms} ms:\n${this.stdout}\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Resolves with its exit code; rejects after `ms`. */
  async done(ms = 60_000): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`child still running after ${ms} ms:\n${this.stdout}\n${this.stderr}`)), ms)));
    try {
      return await Promise.race([this.exited, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  kill(signal: NodeJS.Signals): void {
    this.#proc.kill(signal);
  }
}

const running = new Set<Child>();
/** SIGKILLs every child still running (each file's afterAll), and waits for them to go. */
export async function killChildren(): Promise<void> {
  const left = [...running];
  for (const c of left) c.kill('SIGKILL');
  await Promise.all(left.map((c) => c.exited));
}

/** Starts a worker process and waits for its `ready`. */
export async function startWorker(dir: string, options: QueueWorkerOptions): Promise<Child> {
  const child = new Child(dir, 'worker', options);
  await child.waitFor(/^ready$/);
  return child;
}

/** An emulator of the local personality (one job at a time, like a real local server) holding in.png. */
export async function localServer(stepMs: number, progressSteps: number): Promise<Emulator> {
  const emu = await startEmulator({ personality: 'local', cloud: { stepMs, progressSteps }, logLevel: 'off' });
  emu.cloud.addFile('in.png', makePng(8, 8, 26));
  postsOf(emu); // counting from the start
  return emu;
}

/** The server as a worker lists it. */
export const serverOf = (emu: Emulator, id: string) => ({ id, baseUrl: emu.url, retry: { limit: 0 }, logLevel: 'off' as const });

/** The jobs the servers hold whose SaveImage prefix is `prefix`, with the server each is on. */
export function runsOf(servers: Record<string, Emulator>, prefix: string): Array<{ server: string; job: Job }> {
  return Object.entries(servers).flatMap(([server, emu]) => [...emu.cloud.engine.jobs.values()].filter((j) => j.prompt['3']?.inputs.filename_prefix === prefix).map((job) => ({ server, job })));
}

const posts = new WeakMap<Emulator, Map<string, number>>();
/**
 * Every POST /api/prompt the server received, per the `prompt_id` it carried, accepted or not (a second
 * POST of one id would count here even if the server refused it): counted from the server's own handler.
 */
export function postsOf(emu: Emulator): Map<string, number> {
  let seen = posts.get(emu);
  if (!seen) {
    const counts = new Map<string, number>();
    seen = counts;
    posts.set(emu, counts);
    const submit = emu.cloud.submit.bind(emu.cloud);
    emu.cloud.submit = (key, body) => {
      const id = (body as { prompt_id?: unknown } | undefined)?.prompt_id;
      const k = typeof id === 'string' ? id : '(no prompt_id)';
      counts.set(k, (counts.get(k) ?? 0) + 1);
      return submit(key, body);
    };
  }
  return seen;
}

/** Resolves once `check()` holds, polling; throws after `ms` naming `what`. */
export async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what} not met in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
