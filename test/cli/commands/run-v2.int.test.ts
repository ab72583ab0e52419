// The `platformui` command line against a Comfy API v2 server (issue 33): `--server-kind v2` and
// PLATFORMUI_SERVER_KIND=v2, the v2 emulator over real loopback sockets, the CLI in the test's process
// (test/helpers/cli.ts) and, for Ctrl-C and the emulator command, bundled once and run as a child process. run (outputs written), a bad kind (a usage error naming the kinds),
// job / jobs / queue (what v2 has, and a clear line where it has none), and `platformui emulator --personality v2`.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMULATOR_API_KEY, startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { baseEnv, runCli, type CliResult as Result } from '../../helpers/cli.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const INVERT = join(ROOT, 'examples', 'workflows', 'invert.json');
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir: string;
let cliBundle: string;
let photo: string;
let keyFile: string;
let emu: Emulator;
let counter = 0;
const unique = (what: string) => `${what}_${++counter}`;

beforeAll(async () => {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  dir = mkdtempSync(join(ROOT, '.tmp', 'cli-v2-test-'));
  cliBundle = join(dir, 'cli.js');
  await esbuild.build({ bundle: true, platform: 'node', format: 'esm', target: 'node22', external: ['ws', 'form-data', 'zod'], logLevel: 'silent', entryPoints: [join(ROOT, 'src', 'cli', 'bin.ts')], outfile: cliBundle });
  photo = join(dir, 'photo.png');
  writeFileSync(photo, PNG);
  keyFile = join(dir, 'key.txt');
  writeFileSync(keyFile, `${EMULATOR_API_KEY}\n`);
  emu = await startEmulator({ personality: 'v2', logLevel: 'off', cloud: { stepMs: 5 } });
}, 60_000);
afterAll(async () => {
  await emu?.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [cliBundle, ...args], { cwd: dir, env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const done = new Promise<Result>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, out: () => stdout, done };
}
const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: dir, env: { ...baseEnv(), ...env } });
const on = () => ['--server', emu.url, '--api-key-file', keyFile];
const outDir = () => mkdtempSync(join(dir, 'out-'));
const submittedId = (stdout: string) => /Submitted job (\S+)/.exec(stdout)?.[1];
async function waitFor<T>(what: string, read: () => T | undefined | null | false, ms = 10_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(10)) {
    const v = read();
    if (v) return v;
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('platformui run --server-kind v2', () => {
  it('uploads the input as an asset, runs, writes the outputs, exits 0; the job id printed is the v2 job', async () => {
    const out = outDir();
    const prefix = unique('v2ok');
    const r = await cli(['run', INVERT, '--server-kind', 'v2', '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${prefix}"`, '--out', out, ...on()]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const files = readdirSync(out);
    expect(files).toEqual([expect.stringMatching(new RegExp(`^${prefix}_\\d+_\\.png$`))]);
    expect(readFileSync(join(out, files[0]!)).subarray(1, 4).toString()).toBe('PNG');
    const id = submittedId(r.stdout)!;
    expect(emu.v2!.jobs.has(id)).toBe(true);
    expect(r.stdout).toContain(join(out, files[0]!));
  });

  it('PLATFORMUI_SERVER_KIND=v2 does the same', async () => {
    const out = outDir();
    const before = emu.v2!.counters.jobsCreated;
    const r = await cli(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('v2env')}"`, '--out', out, ...on()], { PLATFORMUI_SERVER_KIND: 'v2' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readdirSync(out)).toHaveLength(1);
    expect(emu.v2!.counters.jobsCreated).toBe(before + 1);
  });

  it('a bad kind is a usage error (exit 2) naming the kinds, before any request; from the environment too', async () => {
    const requests = emu.requests.length;
    const r = await cli(['run', INVERT, '--server-kind', 'v3', ...on()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--server-kind: "v3" is not a kind of server: auto, cloud, local, v2/);
    const env = await cli(['run', INVERT, ...on()], { PLATFORMUI_SERVER_KIND: 'comfy-v2' });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/PLATFORMUI_SERVER_KIND: "comfy-v2" is not a kind of server: auto, cloud, local, v2/);
    expect(emu.requests.length).toBe(requests);
  });

  it('Ctrl-C cancels this job on the v2 server (one cancel), then exits 130', async () => {
    emu.cloud.stepMs = 200;
    try {
      const cancels = emu.v2!.counters.cancels;
      const run = start(['run', INVERT, '--server-kind', 'v2', '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('v2int')}"`, '--out', outDir(), ...on()]);
      const id = await waitFor('the submission', () => submittedId(run.out()));
      await waitFor('the job to run', () => emu.v2!.jobs.get(id)?.job.status === 'in_progress');
      run.child.kill('SIGINT');
      const r = await run.done;
      expect(r.code).toBe(130);
      expect(emu.v2!.counters.cancels).toBe(cancels + 1);
      await waitFor('the job cancelled', () => emu.v2!.jobs.get(id)?.job.status !== 'in_progress');
    } finally {
      emu.cloud.stepMs = 5;
    }
  });
});

describe('job, jobs, queue on a v2 server', () => {
  let done: string;
  beforeAll(async () => {
    const r = await cli(['run', INVERT, '--server-kind', 'v2', '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('rec')}"`, '--out', outDir(), ...on()]);
    expect(r.code).toBe(0);
    done = submittedId(r.stdout)!;
  });

  it('job <id>: its state and files; --out downloads them; --json', async () => {
    const r = await cli(['job', done, '--server-kind', 'v2', ...on()]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^job ${done}  completed`));
    const out = outDir();
    const saved = await cli(['job', done, '--out', out, '--server-kind', 'v2', ...on()]);
    expect(saved.code).toBe(0);
    expect(readdirSync(out)).toHaveLength(1);
    const json = await cli(['job', done, '--json', '--server-kind', 'v2', ...on()]);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: done, phase: 'completed' });
  });

  it('job <unknown id>: says so', async () => {
    const r = await cli(['job', '00000000-0000-0000-0000-00000000abcd', '--server-kind', 'v2', ...on()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no job 00000000-0000-0000-0000-00000000abcd/);
  });

  it('jobs: the list, its states as `platformui job` names them, with their creation time; --status in those names', async () => {
    const r = await cli(['jobs', '--limit', '5', '--server-kind', 'v2', ...on()]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${done}\\s+completed\\s+\\d{4}-\\d\\d-\\d\\dT`, 'm'));
    const completed = await cli(['jobs', '--status', 'completed', '--quiet', '--server-kind', 'v2', ...on()]);
    expect(completed.stderr).toBe('');
    expect(completed.stdout.split('\n')).toContain(done);
    const failed = await cli(['jobs', '--status', 'failed,cancelled', '--quiet', '--server-kind', 'v2', ...on()]);
    expect(failed.code).toBe(0);
    expect(failed.stdout.split('\n')).not.toContain(done);
  });

  it('queue: v2 has no queue listing: one clear line naming the kind, exit non-zero, no request', async () => {
    const requests = emu.requests.length;
    const r = await cli(['queue', '--server-kind', 'v2', ...on()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('platformui queue: a Comfy API v2 server has no queue listing: see where a job waits with `platformui job <id>` (its queue position), or the recent jobs with `platformui jobs`\n');
    expect(emu.requests.length).toBe(requests);
  });

  it('object-info: says where to find the nodes (v2 serves none through the SDK)', async () => {
    const r = await cli(['object-info', '--server-kind', 'v2', ...on()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^platformui object-info: a Comfy API v2 server serves no object_info: ask the server behind it/);
    // The emulator's own object_info (what a ComfyUI behind a proxy serves), read as a local server's.
    const local = await cli(['object-info', 'ImageInvert', '--server', emu.url, '--server-kind', 'local']);
    expect(local.code).toBe(0);
  });
});

describe('platformui emulator --personality v2', () => {
  it('starts, names its personality and key, and a run against it with --server-kind v2 succeeds', async () => {
    const run = start(['emulator', '--personality', 'v2', '--port', '0']);
    try {
      const banner = await waitFor('the banner', () => (/Cloud API key[^\n]*\n/.test(run.out()) && run.out().endsWith('\n') ? run.out() : undefined));
      expect(banner).toMatch(/Cloud personality: v2\n/);
      expect(banner).toMatch(/Authorization: Bearer/);
      const url = /listening on (http:\/\/\S+)/.exec(banner)![1]!;
      const out = outDir();
      const r = await cli(['run', INVERT, '--server-kind', 'v2', '--server', url, '--api-key-file', keyFile, '--input', `image=${photo}`, '--out', out]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(readdirSync(out)).toHaveLength(1);
    } finally {
      run.child.kill('SIGINT');
      expect((await run.done).code).toBe(0);
    }
  });
});
