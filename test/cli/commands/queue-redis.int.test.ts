// The command line of the Redis queue as a user runs it: `platformui worker`, `platformui run --queue`
// and `platformui queue --redis`, each a child process (the source bundled once, as test/cli/main.int.test.ts does),
// against a real redis-server on a free port and an emulator over loopback. The checks of the command
// line itself (what is refused before Redis is touched) run always; the rest where redis-server is
// installed (.ci/run installs it).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { startRedis } from '../../helpers/redis.ts';
import type { CliResult as Result } from '../../helpers/cli.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const INVERT = join(ROOT, 'examples', 'workflows', 'invert.json');
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

const hasRedis = spawnSync('redis-server', ['--version']).status === 0;

// ---------------------------------------------------------------- the CLI as a child process
let dir: string;
let cliBundle: string;
let photo: string;
beforeAll(async () => {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  dir = mkdtempSync(join(ROOT, '.tmp', 'cli-queue-test-'));
  cliBundle = join(dir, 'cli.js');
  await esbuild.build({ entryPoints: [join(ROOT, 'src', 'cli', 'bin.ts')], outfile: cliBundle, bundle: true, platform: 'node', format: 'esm', target: 'node22', external: ['ws', 'form-data', 'zod', 'bullmq', 'ioredis'], logLevel: 'silent' });
  photo = join(dir, 'photo.png');
  writeFileSync(photo, PNG);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function baseEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('PLATFORMUI_') || k === 'NO_COLOR' || k === 'FORCE_COLOR') delete env[k];
  return env;
}

const children = new Set<ChildProcess>();
function start(args: string[], env: Record<string, string> = {}): { child: ChildProcess; out: () => string; err: () => string; done: Promise<Result> } {
  const child = spawn(process.execPath, [cliBundle, ...args], { cwd: dir, env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const done = new Promise<Result>((resolve) => child.on('close', (code) => (children.delete(child), resolve({ code, stdout, stderr }))));
  return { child, out: () => stdout, err: () => stderr, done };
}
const cli = (args: string[], env: Record<string, string> = {}) => start(args, env).done;
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

async function waitFor<T>(what: string, read: () => T | undefined | null | false, ms = 20_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
    const v = read();
    if (v) return v;
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the Redis options, checked before Redis is touched', () => {
  it('worker: --redis is required, and a server', async () => {
    const none = await cli(['worker', '--server', 'http://127.0.0.1:1']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--redis URL is required');
    const noServer = await cli(['worker', '--redis', 'redis://127.0.0.1:1']);
    expect(noServer.code).toBe(2);
    expect(noServer.stderr).toContain('no server: pass --server URL');
  });

  it('refuses a password on the command line, without repeating it', async () => {
    const r = await cli(['worker', '--redis', 'redis://:hunter2-secret@127.0.0.1:1', '--server', 'http://127.0.0.1:1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('set PLATFORMUI_REDIS_PASSWORD instead');
    expect(r.stderr).not.toContain('hunter2');
  });

  it('run: --queue takes a Redis URL, not with --validate; --queue-name only with --queue', async () => {
    const http = await cli(['run', INVERT, '--queue', 'http://127.0.0.1:6379']);
    expect(http.code).toBe(2);
    expect(http.stderr).toContain('--queue must be a Redis URL like redis://localhost:6379');
    const validate = await cli(['run', INVERT, '--queue', 'redis://127.0.0.1:1', '--validate']);
    expect(validate.code).toBe(2);
    expect(validate.stderr).toContain('--validate: with --queue');
    const name = await cli(['run', INVERT, '--queue-name', 'renders', '--server', 'http://127.0.0.1:1']);
    expect(name.code).toBe(2);
    expect(name.stderr).toContain('--queue-name: the name of a Redis queue, with --queue');
  });

  it('queue: --name only with --redis, and no --server with it; several --server only for run and worker', async () => {
    expect((await cli(['queue', '--name', 'renders', '--server', 'http://127.0.0.1:1'])).stderr).toContain('--name: the name of a Redis queue, with --redis');
    expect((await cli(['queue', '--redis', 'redis://127.0.0.1:1', '--server', 'http://127.0.0.1:1'])).stderr).toContain('--server: with --redis');
    const many = await cli(['queue', '--server', 'http://127.0.0.1:1', '--server', 'http://127.0.0.1:2']);
    expect(many.code).toBe(2);
    expect(many.stderr).toContain('only run and worker take several servers');
  });
});

describe.skipIf(!hasRedis)('worker, run --queue and queue --redis against a real Redis', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  let emu: Emulator;
  let worker: ReturnType<typeof start>;
  const failing = () => {
    const wf = JSON.parse(readFileSync(INVERT, 'utf8'));
    wf['1'].inputs.fail_with = 'OOMError';
    wf['1'].inputs.fail_message = 'out of memory on the test GPU';
    const file = join(dir, 'failing.json');
    writeFileSync(file, JSON.stringify(wf));
    return file;
  };

  beforeAll(async () => {
    [redis, emu] = await Promise.all([startRedis(), startEmulator({ personality: 'local', cloud: { stepMs: 40 }, logLevel: 'off' })]);
    worker = start(['worker', '--redis', redis.url, '--server', emu.url, '--name', 'cli-test', '--id', 'cli-gpu']);
    await waitFor('the worker to be ready', () => /^Worker ready on queue "cli-test"/m.test(worker.out()));
  }, 60_000);
  afterAll(async () => {
    worker?.child.kill('SIGKILL');
    await Promise.all([redis?.stop(), emu?.close()]);
  });

  it('worker: one line once ready, naming its lane and its server by this machine', () => {
    expect(worker.out()).toMatch(/^Worker ready on queue "cli-test" at redis:\/\/127\.0\.0\.1:\d+: lane \S+ for http:\/\/\S+:\d+\. Ctrl-C stops it\.$/m);
    expect(worker.out().split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('worker --id: a second worker with the id of a live one is refused, saying why', async () => {
    const twin = await start(['worker', '--redis', redis.url, '--server', emu.url, '--name', 'cli-test', '--id', 'cli-gpu']).done;
    expect(twin.code).toBe(2);
    expect(twin.stderr).toContain('id: a worker with id "cli-gpu" is running on queue "cli-test" (its heartbeat goes on): give each worker its own id');
    expect(twin.stdout).toBe('');
  });

  it('run --queue: a worker runs it, the command follows it and downloads its outputs from that server', async () => {
    const out = mkdtempSync(join(dir, 'out-'));
    const r = await cli(['run', INVERT, '--input', `image=${photo}`, '--queue', redis.url, '--queue-name', 'cli-test', '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Queued job \S+ on queue "cli-test" at redis:\/\/127\.0\.0\.1:\d+$/m);
    // The worker's node events (issue 32): every node of the three runs, LoadImage and SaveImage too, not only the one with steps.
    expect(r.stdout).toMatch(/^Running LoadImage/m);
    expect(r.stdout).toMatch(/^Running SaveImage/m);
    expect(r.stdout).toMatch(/^Job completed in /m);
    expect(r.stdout).toMatch(/^Done in \S+: 3\/3 nodes/m);
    expect(r.stdout).toMatch(/^Ran as job \S+ on http:\/\/\S+$/m);
    const files = readdirSync(out);
    expect(files).toHaveLength(1);
    expect(readFileSync(join(out, files[0]!)).subarray(1, 4).toString()).toBe('PNG');
  });

  it('run --queue: an execution error is the typed error (exit 1); a workflow no worker can run is refused at once', async () => {
    const failed = await cli(['run', failing(), '--input', `image=${photo}`, '--queue', redis.url, '--queue-name', 'cli-test', '--out', dir]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('out of memory on the test GPU');
    const wf = JSON.parse(readFileSync(INVERT, 'utf8'));
    wf['2'].class_type = 'NoSuchNode';
    writeFileSync(join(dir, 'unknown.json'), JSON.stringify(wf));
    const refused = await cli(['run', join(dir, 'unknown.json'), '--queue', redis.url, '--queue-name', 'cli-test', '--out', dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('NoSuchNode');
    expect(refused.stdout).not.toContain('Queued job');
  });

  it('run --queue: Ctrl-C cancels the queued job and exits 130', async () => {
    emu.cloud.stepMs = 500;
    try {
      // A name of its own: the emulator serves a workflow it ran before from its cache, without progress.
      const run = start(['run', INVERT, '--input', `image=${photo}`, '--set', '3.inputs.filename_prefix="cancelled"', '--queue', redis.url, '--queue-name', 'cli-test', '--out', dir]);
      await waitFor('the job to run', () => /steps/.test(run.out()));
      run.child.kill('SIGINT');
      const r = await run.done;
      expect(r.code).toBe(130);
      expect(r.stderr).toMatch(/interrupted: queued job \S+ was cancelled/);
    } finally {
      emu.cloud.stepMs = 40;
    }
  });

  it('run --queue --wait-for-worker: queued while no worker serves the queue, run once one starts', async () => {
    // Refused at once without it: no worker on this queue yet.
    const refused = await cli(['run', INVERT, '--input', `image=${photo}`, '--queue', redis.url, '--queue-name', 'cli-later', '--out', dir]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).not.toContain('Queued job');
    const out = mkdtempSync(join(dir, 'later-'));
    const run = start(['run', INVERT, '--input', `image=${photo}`, '--set', '3.inputs.filename_prefix="later"', '--queue', redis.url, '--queue-name', 'cli-later', '--wait-for-worker', '30s', '--out', out]);
    await new Promise((r) => setTimeout(r, 500));
    expect(run.child.exitCode).toBe(null);
    const late = start(['worker', '--redis', redis.url, '--server', emu.url, '--name', 'cli-later']);
    try {
      const r = await run.done;
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Queued job \S+ on queue "cli-later"/m);
      expect(readdirSync(out)).toHaveLength(1);
    } finally {
      late.child.kill('SIGTERM');
      await late.done;
    }
  });

  it('queue --redis: counts per state and per worker, as text and as JSON', async () => {
    const text = await cli(['queue', '--redis', redis.url, '--name', 'cli-test']);
    expect(text.code).toBe(0);
    // The cancelled job counts as cancelled, not failed (issue 32), and both are listed with their reasons.
    expect(text.stdout).toMatch(/^Queue "cli-test" at redis:\/\/127\.0\.0\.1:\d+: 1 completed, 1 failed, 1 cancelled; 1 worker\(s\)$/m);
    expect(text.stdout).toMatch(/^WORKER\s+ACTIVE\s+LANES\s+SERVERS$/m);
    expect(text.stdout).toMatch(/^JOB\s+STATE\s+ENDED\s+REASON$/m);
    expect(text.stdout).toMatch(/^\S+\s+cancelled\s+.+Job \S+ was cancelled\s*$/m);
    expect(text.stdout).toMatch(/^\S+\s+failed\s+.+out of memory on the test GPU/m);
    const json = await cli(['queue', '--redis', redis.url, '--name', 'cli-test', '--json']);
    const counts = JSON.parse(json.stdout) as { states: Record<string, number>; workers: Record<string, unknown>; ended: Array<{ id: string; state: string; reason: string }> };
    expect(counts.states.completed).toBe(1);
    expect(counts.states.failed).toBe(1); // the execution error
    expect(counts.states.cancelled).toBe(1);
    expect(Object.keys(counts.workers)).toHaveLength(1);
    expect(counts.ended.map((e) => e.state).sort()).toEqual(['cancelled', 'failed']);
    expect(counts.ended.find((e) => e.state === 'cancelled')!.reason).toMatch(/^Job \S+ was cancelled$/);
  });

  it('worker: SIGTERM closes it gracefully, exit 0', async () => {
    worker.child.kill('SIGTERM');
    const r = await worker.done;
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('SIGTERM: finishing or handing back the jobs held');
    // What stopped, once it has (issue 32).
    expect(r.stdout).toMatch(/\nWorker \S+ stopped: it takes no more jobs from queue "cli-test"\n$/);
  });
});

describe('without bullmq', () => {
  // The command line bundled outside the repository, beside a node_modules of its other packages only: bullmq
  // and ioredis (external, optional peers) cannot be found from there, as for a user who did not install them.
  let bare: string;
  beforeAll(async () => {
    bare = mkdtempSync(join(tmpdir(), 'pui-cli-nobull-'));
    mkdirSync(join(bare, 'node_modules'));
    for (const pkg of ['ws', 'form-data', 'zod']) symlinkSync(join(ROOT, 'node_modules', pkg), join(bare, 'node_modules', pkg));
    await esbuild.build({ entryPoints: [join(ROOT, 'src', 'cli', 'bin.ts')], outfile: join(bare, 'cli.js'), bundle: true, platform: 'node', format: 'esm', target: 'node22', external: ['ws', 'form-data', 'zod', 'bullmq', 'ioredis'], logLevel: 'silent' });
  });
  afterAll(() => {
    rmSync(bare, { recursive: true, force: true });
  });

  it('worker: says what to install in one line, before it asks any server anything (a server down is not reported first)', async () => {
    const r = await new Promise<Result>((resolve) => {
      const child = spawn(process.execPath, [join(bare, 'cli.js'), 'worker', '--redis', 'redis://127.0.0.1:1', '--server', 'http://127.0.0.1:1'], { cwd: bare, env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(r.stderr).toBe('platformui worker: @platformui/sdk/queue needs bullmq and ioredis: npm install bullmq ioredis\n');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
  });
});
