// What the queue's process tests share: the child scripts bundled once per file (src/ uses TypeScript
// that --experimental-strip-types rejects), children spawned and killed for real, emulators of the
// local personality as the servers (each a process of its own, asked over IPC), and what those servers
// saw, counted per job.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll } from 'vitest';
import { JobQueue, type QueueWorkerOptions } from '../../../src/queue/index.ts';
import { startRedis, type TestRedis } from '../../helpers/redis.ts';
import type { ServerConfig, ServerJob, ServerReply, ServerRequest } from './server.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SCRIPTS = ['worker', 'producer', 'client', 'server'] as const;
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
  readonly #pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  #nextId = 0;

  /** With `ipc`, the child gets a Node IPC channel, for {@link Child.ask}. */
  constructor(dir: string, script: Script, config: unknown, { ipc = false } = {}) {
    this.#proc = spawn(process.execPath, [join(dir, `${script}.mjs`)], {
      env: { ...process.env, QUEUE_PROC: JSON.stringify(config), NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? ['ipc' as const] : [])],
    });
    this.#proc.stdout!.setEncoding('utf8').on('data', (c: string) => (this.stdout += c));
    this.#proc.stderr!.setEncoding('utf8').on('data', (c: string) => (this.stderr += c));
    this.#proc.on('message', (m: ServerReply) => {
      const waiting = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      if ('error' in m) waiting?.reject(new Error(m.error));
      else waiting?.resolve(m.value);
    });
    // 'close', not 'exit': only then has all of its output arrived (a reader's last lines can come after its exit).
    this.exited = new Promise((resolve) => this.#proc.on('close', (code, signal) => {
      // A question it will never answer fails rather than hangs.
      for (const { reject } of this.#pending.values()) reject(new Error(`child exited (${code ?? signal}) before answering:\n${this.stderr}`));
      this.#pending.clear();
      resolve(code);
    }));
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

  /** Asks a child spawned with `ipc` (see server.ts for what it answers). */
  ask(op: ServerRequest['op']): Promise<unknown> {
    if (this.#proc.exitCode !== null || this.#proc.signalCode !== null) return Promise.reject(new Error(`child exited (${this.#proc.exitCode ?? this.#proc.signalCode}): cannot ask ${op}`));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#proc.send({ id, op } satisfies ServerRequest, (err) => {
        if (err) {
          this.#pending.delete(id);
          reject(err);
        }
      });
    });
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

/** A server process (see server.ts) as the tests use it; killed with the other children (killChildren). */
export interface LocalServer {
  /** Its base URL, without a trailing slash. */
  readonly url: string;
  /** The jobs it holds now. */
  jobs(): Promise<ServerJob[]>;
  /**
   * Every POST /api/prompt it received since it started, per the `prompt_id` it carried, accepted or not
   * (a second POST of one id counts even if the server refused it): counted in the server's own handler.
   */
  posts(): Promise<Map<string, number>>;
  /** How many uploads it received (stored, their answers sent or, with `holdUploads`, held). */
  uploads(): Promise<number>;
  /** Sends the upload answers it holds (`holdUploads`) and holds none from then on. */
  release(): Promise<void>;
  /** Closes the emulator and waits for the process to exit (nothing to do once it has). */
  close(): Promise<void>;
}

/**
 * Starts an emulator of the local personality (one job at a time, like a real local server) holding in.png, in a
 * process of its own. With `holdUploads`, each upload's answer waits for {@link LocalServer.release}.
 */
export async function localServer(dir: string, stepMs: number, progressSteps: number, { holdUploads = false } = {}): Promise<LocalServer> {
  const child = new Child(dir, 'server', { stepMs, progressSteps, holdUploads } satisfies ServerConfig, { ipc: true });
  const url = (await child.waitFor(/^url /)).slice('url '.length);
  return {
    url,
    jobs: async () => (await child.ask('jobs')) as ServerJob[],
    posts: async () => new Map((await child.ask('posts')) as Array<[string, number]>),
    uploads: async () => (await child.ask('uploads')) as number,
    release: async () => void (await child.ask('release')),
    close: async () => {
      // Rejects when it has exited already (killChildren) or exits before its answer arrives: either way, gone.
      await child.ask('close').catch(() => undefined);
      await child.exited;
    },
  };
}

/** The server as a worker lists it. */
export const serverOf = (server: LocalServer, id: string) => ({ id, baseUrl: server.url, retry: { limit: 0 }, logLevel: 'off' as const });

/** The SaveImage prefix of a job of the tests' workflow (see workflows.ts): each job's own. */
export const prefixOf = (job: ServerJob): unknown => job.prompt['3']?.inputs.filename_prefix;

/** Every job the servers hold now, with the server each is on (one question per server). */
export async function jobsOn(servers: Record<string, LocalServer>): Promise<Array<{ server: string; job: ServerJob }>> {
  const held = await Promise.all(Object.entries(servers).map(async ([server, s]) => (await s.jobs()).map((job) => ({ server, job }))));
  return held.flat();
}

/** The jobs the servers hold now whose SaveImage prefix is `prefix`, with the server each is on. */
export async function runsOf(servers: Record<string, LocalServer>, prefix: string): Promise<Array<{ server: string; job: ServerJob }>> {
  return (await jobsOn(servers)).filter((r) => prefixOf(r.job) === prefix);
}

/**
 * Every POST /api/prompt the servers received, per `prompt_id`, summed over the servers (one id POSTed to
 * two servers counts 2): see {@link LocalServer.posts}.
 */
export async function postsOf(...servers: LocalServer[]): Promise<Map<string, number>> {
  const sum = new Map<string, number>();
  for (const counts of await Promise.all(servers.map((s) => s.posts()))) {
    for (const [id, n] of counts) sum.set(id, (sum.get(id) ?? 0) + n);
  }
  return sum;
}

/** Resolves once `check()` holds, polling; throws after `ms` naming `what`. */
export async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what} not met in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The real parts of one process-test file, started before its tests and stopped after them: a redis-server,
 * the child scripts bundled, and `servers` (id → `[stepMs, progressSteps, { holdUploads }?]`), each server in its own process.
 * `queue(name)` opens a JobQueue on that Redis, closed after the tests.
 *
 * @example
 * ```ts
 * const f = processFixture({ a: [100, 20], b: [100, 20] });
 * it('…', async () => { await startWorker(f.children.dir, { connection: f.redis.url, servers: [serverOf(f.servers.a!, 'a')] }); });
 * ```
 */
export function processFixture(servers: Record<string, [stepMs: number, progressSteps: number, options?: { holdUploads?: boolean }]>) {
  const queues: JobQueue[] = [];
  const f = {
    redis: undefined as unknown as TestRedis,
    children: undefined as unknown as Awaited<ReturnType<typeof bundleChildren>>,
    servers: {} as Record<string, LocalServer>,
    queue(name: string): JobQueue {
      const q = new JobQueue({ connection: f.redis.url, name });
      queues.push(q);
      return q;
    },
  };
  beforeAll(async () => {
    [f.redis, f.children] = await Promise.all([startRedis(), bundleChildren()]);
    const started = await Promise.all(Object.values(servers).map(([stepMs, steps, options]) => localServer(f.children.dir, stepMs, steps, options)));
    f.servers = Object.fromEntries(Object.keys(servers).map((id, i) => [id, started[i]!]));
  }, 60_000);
  afterAll(async () => {
    await killChildren(); // the servers' processes too
    for (const q of queues.splice(0)) await q.close();
    await f.redis?.stop();
    f.children?.cleanup();
  });
  return f;
}
