// The `platformui` command line as a user runs it, against emulators of every personality over real
// loopback sockets: most commands in the test's process (main(), test/helpers/cli.ts: the exit code and
// the two outputs a child process gives), and what only a process shows in child processes of the source
// bundled once (esbuild, dependencies external so they load from node_modules): Ctrl-C stopping exactly
// its own job, a closed standard output, the other bins, lines typed in a shell, a pseudo-terminal.
// Checks exit codes, files on disk, what is printed (plain, --json, a terminal), a socket drop, and that
// no secret is ever printed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudClient, RegistryClient } from '../../src/index.ts';
import { EMULATOR_API_KEY, startEmulator, type Emulator, type PersonalityName } from '../../src/emulator/index.ts';
import { baseEnv, cliOnPath, runCli, startCli, type CliResult as Result } from '../helpers/cli.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const INVERT = join(ROOT, 'examples', 'workflows', 'invert.json');
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const BAD_KEY = 'not-the-key-5f3a9c';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir: string;
let cliBundle: string;
let emulatorBundle: string;
let codegenBundle: string;
let photo: string;
let keyFile: string;
let badKeyFile: string;
let failing: string;
let counter = 0;
/** A fresh name: the emulator serves a workflow it has run before from its cache, without progress. */
const unique = (what: string) => `${what}_${++counter}`;

beforeAll(async () => {
  // Under the repo (.tmp/ is ignored), so the bundle's external packages resolve from node_modules.
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  dir = mkdtempSync(join(ROOT, '.tmp', 'cli-test-'));
  // Named as in dist/: the platformui-codegen bin loads the cli.js beside it.
  cliBundle = join(dir, 'cli.js');
  emulatorBundle = join(dir, 'emulator-cli.js');
  codegenBundle = join(dir, 'codegen-cli.js');
  const common: esbuild.BuildOptions = { bundle: true, platform: 'node', format: 'esm', target: 'node22', external: ['ws', 'form-data', 'zod'], logLevel: 'silent' };
  await Promise.all([
    esbuild.build({ ...common, entryPoints: [join(ROOT, 'src', 'cli', 'bin.ts')], outfile: cliBundle }),
    esbuild.build({ ...common, entryPoints: [join(ROOT, 'src', 'emulator', 'cli.ts')], outfile: emulatorBundle }),
    esbuild.build({ ...common, entryPoints: [join(ROOT, 'src', 'workflow', 'codegen-cli.ts')], outfile: codegenBundle }),
  ]);
  photo = join(dir, 'photo.png');
  writeFileSync(photo, PNG);
  keyFile = join(dir, 'key.txt');
  writeFileSync(keyFile, `${EMULATOR_API_KEY}\n`);
  badKeyFile = join(dir, 'bad-key.txt');
  writeFileSync(badKeyFile, BAD_KEY);
  // The emulator's nodes fail on demand: `fail_with` names the exception type.
  failing = join(dir, 'failing.json');
  const wf = JSON.parse(readFileSync(INVERT, 'utf8'));
  wf['1'].inputs.fail_with = 'OOMError';
  wf['1'].inputs.fail_message = 'out of memory on the test GPU';
  writeFileSync(failing, JSON.stringify(wf));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));



/** Starts the CLI in a child process; `out()` is its standard output so far. */
function start(args: string[], env: Record<string, string> = {}, bundle = cliBundle): { child: ChildProcess; out: () => string; done: Promise<Result> } {
  const child = spawn(process.execPath, [bundle, ...args], { cwd: dir, env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const done = new Promise<Result>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, out: () => stdout, done };
}

/** Runs a command in the test's process, as `start()` would in a child: same folder, same environment. */
const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: dir, env: { ...baseEnv(), ...env } });

/** Runs a shell line in `cwd` (`platformui` on the PATH is the CLI): how a user types a help example. */
function shell(line: string, cwd: string, env: Record<string, string>): Promise<Result> {
  const child = spawn('sh', ['-c', line], { cwd, env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** A folder with a `platformui` command in it (the bundle), for the PATH. */
function binWithPlatformui(): string {
  const bin = mkdtempSync(join(dir, 'bin-'));
  writeFileSync(join(bin, 'platformui'), `#!/bin/sh\nexec '${process.execPath}' '${cliBundle}' "$@"\n`, { mode: 0o755 });
  return bin;
}

/** A server that accepts connections and never answers; `close()` drops them. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((socket) => void sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `read` until it gives something truthy. */
async function waitFor<T>(what: string, read: () => T | undefined | null | false, ms = 10_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(10)) {
    const v = read();
    if (v) return v;
  }
  throw new Error(`timed out waiting for ${what}`);
}

const submittedId = (stdout: string) => /Submitted job (\S+)/.exec(stdout)?.[1];
const outDir = () => mkdtempSync(join(dir, 'out-'));

describe.each(['spec', 'cloud', 'local'] as PersonalityName[])('platformui run against the %s emulator', (personality) => {
  let emu: Emulator;
  // A local server needs no key; the others get it from a file (a loopback --server never gets PLATFORMUI_API_KEY: the SDK's key rule).
  const auth = () => (personality === 'local' ? [] : ['--api-key-file', keyFile]);
  const server = () => ['--server', emu.url, ...auth()];
  const client = () => new CloudClient({ baseUrl: emu.url, ...(personality === 'local' ? {} : { apiKey: EMULATOR_API_KEY }) });

  beforeAll(async () => {
    emu = await startEmulator({ personality, cloud: { stepMs: 5 } });
  });
  afterAll(() => emu.close());

  it('uploads the input, runs, downloads the outputs, prints their paths, exits 0', async () => {
    const out = outDir();
    const prefix = unique('ok');
    const r = await cli(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${prefix}"`, '--out', out, ...server()]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const files = readdirSync(out);
    expect(files).toEqual([`${prefix}_00001_.png`]);
    const written = readFileSync(join(out, files[0]!));
    expect(written.subarray(1, 4).toString()).toBe('PNG');
    expect(r.stdout).toContain(join(out, files[0]!));
    expect(r.stdout).toMatch(/^Uploaded .*photo\.png as \S+ for #1 LoadImage "Load Photo"\.image$/m);
    expect(r.stdout).toMatch(/^Submitted job \S+$/m);
    expect(r.stdout).toMatch(/^Done in \d+\.\ds: 3\/3 nodes, 0 cached, \d+ previews$/m);
    // Plain mode: no ANSI codes at all.
    expect(r.stdout).not.toContain('\x1b');
  });

  it('keeps existing files: a second download of the same name gets a suffix', async () => {
    const out = outDir();
    const prefix = unique('twice');
    const args = ['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${prefix}"`, '--out', out, ...server()];
    expect((await cli(args)).code).toBe(0);
    // The rerun is served from the cache under the same name: it must not overwrite the first.
    expect((await cli(args)).code).toBe(0);
    expect(readdirSync(out).sort()).toEqual([`${prefix}_00001_-1.png`, `${prefix}_00001_.png`]);
  });

  it('a failed job: exit 1 and one line naming the node and the error, said once (on stderr)', async () => {
    const r = await cli(['run', failing, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('fail')}"`, '--out', outDir(), ...server()]);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^platformui run: Job \S+ failed in LoadImage #1: OOMError: out of memory on the test GPU$/);
    // Standard output tells where and when, not the error again.
    expect(r.stdout).toMatch(/^Job failed at LoadImage "Load Photo" \(#1\)\nStopped after \d+\.\ds · 0\/3 nodes · at LoadImage "Load Photo" \(#1\)\n$/m);
    expect((r.stdout + r.stderr).match(/out of memory/g)).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack without --verbose
  });

  it('Ctrl-C stops this job on the server, and only it, then exits 130', async () => {
    emu.cloud.stepMs = 150;
    const other = client();
    try {
      const out = outDir();
      const run = start(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('sigint')}"`, '--out', out, ...server()]);
      const id = await waitFor('the submission', () => submittedId(run.out()));
      await waitFor('the job to run', () => emu.cloud.engine.jobs.get(id)?.status === 'in_progress');
      // Another client's job, running beside it (or, on the one-at-a-time local server, waiting behind it).
      const { name } = await other.uploadImage(PNG, { filename: 'other.png' });
      let otherId: string | undefined;
      const otherRun = other.run(
        {
          '1': { class_type: 'LoadImage', inputs: { image: name } },
          '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
          '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: unique('other') } },
        },
        { onSubmitted: (i) => void (otherId = i) },
      );
      await waitFor('the other job', () => otherId !== undefined && emu.cloud.engine.jobs.has(otherId));
      emu.requests.length = 0;
      run.child.kill('SIGINT');
      const r = await run.done;
      expect(r.code).toBe(130);
      expect(r.stderr).toBe(`platformui run: interrupted: job ${id} was stopped\n`);
      expect(emu.cloud.engine.jobs.get(id)?.status).toBe('cancelled');
      expect(readdirSync(out)).toEqual([]);
      // The other job was left alone: it runs to its end.
      expect((await otherRun).status).toBe('completed');
      // No interrupt at all: the atomic cancel stops this job wherever it is (the cloud's interrupt stops every running job of the account).
      expect(emu.requests.filter((q) => q.path.endsWith('/interrupt'))).toEqual([]);
      expect(emu.requests.filter((q) => q.method === 'POST' && q.path.endsWith(`/jobs/${id}/cancel`)).length).toBeGreaterThan(0);
    } finally {
      other.close();
      emu.cloud.stepMs = 5;
    }
  });

  it('survives the socket dropping mid-run', async () => {
    emu.cloud.stepMs = 60;
    try {
      const out = outDir();
      const run = startCli(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('drop')}"`, '--out', out, ...server()], { cwd: dir, env: baseEnv() });
      const id = await waitFor('the submission', () => submittedId(run.out()));
      await waitFor('the job to run', () => emu.cloud.engine.jobs.get(id)?.status === 'in_progress');
      emu.cloud.dropAllSockets();
      const r = await run.done;
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(readdirSync(out)).toHaveLength(1);
    } finally {
      emu.cloud.stepMs = 5;
    }
  });

  it('--json: every line is a JSON object, events first, the result last', async () => {
    const out = outDir();
    const r = await cli(['run', INVERT, '--json', '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('json')}"`, '--out', out, ...server()]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
    expect(lines[0]).toMatchObject({ type: 'info' });
    expect(lines[1]).toMatchObject({ type: 'submitted', promptId: expect.any(String) });
    expect(lines.slice(2, -1).every((l) => l.type === 'event')).toBe(true);
    expect(lines.slice(2, -1).map((l) => (l.event as { type: string }).type)).toContain('execution_success');
    const result = lines.at(-1)!;
    expect(result).toMatchObject({ type: 'result', promptId: lines[1]!.promptId, files: [{ path: expect.any(String), bytes: expect.any(Number) }] });
    const [file] = result.files as Array<{ path: string; bytes: number }>;
    expect(readFileSync(file!.path).length).toBe(file!.bytes);
  });

  it('--json on a failure: the last line is the error', async () => {
    const r = await cli(['run', failing, '--json', '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('jsonfail')}"`, ...server()]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; promptId?: string });
    const last = lines.at(-1)!;
    expect(lines.filter((l) => l.type === 'error')).toHaveLength(1);
    expect(last).toEqual({ type: 'error', class: 'ExecutionError', code: 1, message: expect.stringMatching(/failed in LoadImage #1: OOMError/), promptId: lines.find((l) => l.type === 'submitted')!.promptId });
  });
});

describe('errors and exit codes (spec emulator)', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ personality: 'spec', cloud: { stepMs: 5 } });
  });
  afterAll(() => emu.close());
  const server = () => ['--server', emu.url, '--api-key-file', keyFile];

  it('exit 2 for usage errors, with what is wrong, before any request', async () => {
    emu.requests.length = 0;
    const cases: Array<[string[], RegExp]> = [
      [['run'], /missing argument: platformui run <workflow\.json>/],
      [['run', INVERT, '--bogus'], /Unknown option '--bogus'/],
      [['run', join(dir, 'missing.json')], /cannot read .*missing\.json \(ENOENT\)/],
      [['run', INVERT, '--input', `image=${join(dir, 'nope.png')}`], /--input image: cannot read .*nope\.png \(ENOENT\)/],
      [['run', INVERT, '--set', '9.inputs.text=x'], /--set 9\.inputs\.text: no such input; the workflow's inputs: "Load Photo\.image", "Save Inverted\.filename_prefix"/],
      [['run', INVERT, '--set', 'Invert.image=x', '--input', `image=${photo}`], /--input: 2 nodes have an input "image".*--input "Load Photo"\.image=…/],
      [['run', INVERT, '--timeout', 'soon'], /--timeout must be a duration like 90s/],
      [['frobnicate'], /unknown command "frobnicate"/],
      [['run', INVERT, '--api-key', 'abc'], /--api-key: a secret on the command line shows in `ps`/],
      // --out is made ready before the first request: a job whose outputs cannot be saved costs nothing.
      [['run', INVERT, '--input', `image=${photo}`, '--out', photo], /^platformui run: --out: .*photo\.png is a file, not a folder$/m],
      [['run', INVERT, '--input', `image=${photo}`, '--out', join(photo, 'sub')], /^platformui run: --out: cannot create .*photo\.png\/sub/m],
      [['job', 'some-id', '--follow', '--out', photo], /^platformui job: --out: .*photo\.png is a file, not a folder$/m],
      [['jobs', '--status', 'failed,bogus'], /^platformui jobs: --status: unknown status "bogus"; the statuses are pending, in_progress, completed, failed, cancelled$/m],
      // A command's own option errors name it and its help.
      [['run', INVERT, '--bogus'], /^platformui run: Unknown option '--bogus'\n\(see platformui run --help\)\n$/],
      [['job', 'a', 'b'], /^platformui job: unexpected argument "b": platformui job <prompt_id>.*\n\(see platformui job --help\)\n$/],
    ];
    for (const [args, message] of cases) {
      const r = await cli([...args, ...server()]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stdout).toBe('');
    }
    expect(emu.requests).toEqual([]);
  });

  it('exit 3 for a refused key, never printing it (not even with --verbose)', async () => {
    const r = await cli(['run', INVERT, '--input', `image=${photo}`, '--server', emu.url, '--api-key-file', badKeyFile, '--verbose']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^platformui run: the server refused the API key \(401\): check PLATFORMUI_API_KEY or --api-key-file$/m);
    expect(r.stdout + r.stderr).not.toContain(BAD_KEY);
  });

  it('job --follow with a refused key: exit 3 at once, plain and --json', async () => {
    const id = (await cli(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('badfollow')}"`, ...server()])).stdout.match(/Submitted job (\S+)/)![1]!;
    for (const json of [[], ['--json']]) {
      for (let i = 0; i < 3; i++) {
        const last = emu.requests.at(-1)!;
        const r = await cli(['job', id, '--follow', ...json], { PLATFORMUI_CLOUD_URL: emu.url, PLATFORMUI_API_KEY: BAD_KEY });
        expect(r.code, json.join(' ')).toBe(3);
        expect(r.stderr).toBe('platformui job: the server refused the API key (401): check PLATFORMUI_API_KEY or --api-key-file\n');
        // At once, counted rather than timed: each request it made (the job's record, its status) refused once, none tried again.
        const made = emu.requests.slice(emu.requests.lastIndexOf(last) + 1).filter((q) => q.headers['x-api-key'] === BAD_KEY).map((q) => `${q.method} ${q.path}`);
        expect(made.length).toBeGreaterThan(0);
        expect(made).toEqual([...new Set(made)]);
      }
    }
  });

  it('standard output closed during run (| head -2): the job is stopped, exit 141', async () => {
    emu.cloud.stepMs = 150;
    try {
      const run = start(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('epipe')}"`, '--out', outDir(), ...server()]);
      const id = await waitFor('the submission', () => submittedId(run.out()));
      await waitFor('the job to run', () => emu.cloud.engine.jobs.get(id)?.status === 'in_progress');
      run.child.stdout!.destroy();
      const r = await run.done;
      expect(r.code).toBe(141);
      expect(r.stderr).toBe(`platformui run: standard output was closed: job ${id} was stopped\n`);
      expect(emu.cloud.engine.jobs.get(id)?.status).toBe('cancelled');
    } finally {
      emu.cloud.stepMs = 5;
    }
  });

  it('exit 3 without a key for the cloud, before any request', async () => {
    const r = await cli(['queue'], { PLATFORMUI_CLOUD_URL: 'https://cloud.invalid' });
    expect(r.code).toBe(3);
    expect(r.stderr).toBe('platformui queue: no API key: set PLATFORMUI_API_KEY or pass --api-key-file FILE\n');
  });

  it("the key rule: PLATFORMUI_API_KEY goes with PLATFORMUI_CLOUD_URL, not to another loopback --server (exit 3 says what to do)", async () => {
    const env = { PLATFORMUI_API_KEY: EMULATOR_API_KEY };
    const refused = await cli(['queue', '--server', emu.url], env);
    expect(refused).toEqual({
      code: 3,
      stdout: '',
      stderr: `platformui queue: ${emu.url} wants an API key (401: Missing X-API-Key header), and none was sent: PLATFORMUI_API_KEY goes only to the server PLATFORMUI_CLOUD_URL names, not to another loopback --server (it may be your cloud key): set PLATFORMUI_CLOUD_URL=${emu.url}, or pass --api-key-file FILE\n`,
    });
    const ok = await cli(['queue'], { ...env, PLATFORMUI_CLOUD_URL: emu.url });
    expect(ok).toEqual({ code: 0, stdout: '0 running, 0 pending\n', stderr: '' });
    // A --server that is PLATFORMUI_CLOUD_URL's server gets its key.
    expect(await cli(['queue', '--server', `${emu.url}/`], { ...env, PLATFORMUI_CLOUD_URL: emu.url })).toEqual(ok);
  });

  it('exit 3 for credits and subscription, with what to do', async () => {
    for (const [mode, message] of [
      ['insufficient_credits', 'not enough credits (402): add credits to the account, then run again'],
      ['inactive', 'the subscription is not active (429): renew it, then run again'],
    ] as const) {
      emu.cloud.setKeyMode(EMULATOR_API_KEY, mode);
      try {
        const r = await cli(['run', INVERT, '--input', `image=${photo}`, ...server()]);
        expect(r.code).toBe(3);
        expect(r.stderr).toBe(`platformui run: ${message}\n`);
      } finally {
        emu.cloud.setKeyMode(EMULATOR_API_KEY, 'ok');
      }
    }
  });

  it('exit 4 when the server cannot be reached', async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const url = `http://127.0.0.1:${port}`;
    for (const args of [['queue'], ['run', INVERT, '--input', `image=${photo}`]]) {
      const r = await cli([...args, '--server', url]);
      expect(r.code, args[0]).toBe(4);
      expect(r.stderr).toMatch(new RegExp(`^platformui ${args[0]}: could not reach ${url} \\(.+\\): is the server running\\? \\(--server or PLATFORMUI_CLOUD_URL\\)$`, 'm'));
    }
  });

  it('--validate: the workflow\'s errors, one line each, exit 1, nothing uploaded or submitted', async () => {
    emu.requests.length = 0;
    const jobs = emu.cloud.engine.jobs.size;
    const args = ['run', INVERT, '--validate', '--input', `1.image=${photo}`, '--set', '2.inputs.image=5', '--set', '3.inputs.filename_prefix=7', ...server()];
    const r = await cli(args);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('platformui run: invalid workflow: #2 ImageInvert "Invert": image: takes IMAGE, which only a link to another node\'s output can provide ([nodeId, outputIndex]), got 5\n');
    // The warning is shown (the upload's placeholder is not judged); the error only on stderr.
    expect(r.stdout).toMatch(/^Warning: #3 SaveImage "Save Inverted": filename_prefix: is 7.*\n$/);
    expect(r.stdout).not.toContain('example.png');
    // Two errors: a line each, and the display ends on their count.
    const two = await cli(['run', INVERT, '--validate', '--input', `1.image=${photo}`, '--set', '2.inputs.image=["1", 5]', '--set', '3.inputs.images=["2", 3]', ...server()]);
    expect(two.code).toBe(1);
    expect(two.stderr.trimEnd().split('\n')).toEqual([
      'platformui run: invalid workflow: #2 ImageInvert "Invert": image: links to output 5 of #1 LoadImage, which has outputs 0 to 1',
      'platformui run: invalid workflow: #3 SaveImage "Save Inverted": images: links to output 3 of #2 ImageInvert, which has only output 0',
    ]);
    expect(two.stdout).toBe('');
    expect(emu.requests.filter((q) => q.method === 'POST')).toEqual([]);
    expect(emu.cloud.engine.jobs.size).toBe(jobs);
  });

  it('without --validate the server refuses it: exit 1 naming the node', async () => {
    const r = await cli(['run', INVERT, '--input', `1.image=${photo}`, '--set', '2.inputs.image=5', ...server()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^platformui run: the server refused the workflow: Submission rejected \(400\): .*ImageInvert #2: image/);
  });

  it('a second Ctrl-C exits at once, saying the job may still run', async () => {
    emu.cloud.stepMs = 150;
    // The answers of the requests that stop the job (every POST after the first Ctrl-C).
    const stops: Array<{ request: string; res: ServerResponse }> = [];
    const onRequest = (req: IncomingMessage, res: ServerResponse) => void (req.method === 'POST' && stops.push({ request: `POST ${req.url}`, res }));
    try {
      const run = start(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('twice')}"`, ...server()]);
      const id = await waitFor('the submission', () => submittedId(run.out()));
      await waitFor('the job to run', () => emu.cloud.engine.jobs.get(id)?.status === 'in_progress');
      // The server is slow to answer now: the stop request hangs for 5 s (the stop's own confirmation gives up after 10).
      emu.faults.latencyMs = 5000;
      emu.server.on('request', onRequest);
      run.child.kill('SIGINT');
      await waitFor('the stop to begin', () => run.out().includes(`Stopping job ${id} (Ctrl-C again to quit without waiting)`));
      await waitFor('the stop to reach the server', () => stops.length > 0);
      run.child.kill('SIGINT');
      const r = await run.done;
      expect(r.code).toBe(130);
      // At once, as an order rather than a time: it exited before the server answered its stop.
      expect(stops.filter((s) => s.res.writableEnded).map((s) => s.request)).toEqual([]);
      expect(r.stderr).toBe(`platformui: interrupted twice: job ${id} may still be running (see platformui job ${id})\n`);
    } finally {
      emu.server.off('request', onRequest);
      emu.faults.latencyMs = 0;
      emu.cloud.stepMs = 5;
    }
  });

  it('--timeout: a job that goes silent is stopped, exit 1', async () => {
    emu.cloud.stepMs = 1500;
    try {
      const r = await cli(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('slow')}"`, '--timeout', '400ms', ...server()]);
      expect(r.code).toBe(1);
      const id = submittedId(r.stdout)!;
      expect(r.stderr).toBe(`platformui run: Job ${id} sent nothing for 400 ms: stopped it; allow more with --timeout\n`);
      expect(emu.cloud.engine.jobs.get(id)?.status).toBe('cancelled');
    } finally {
      emu.cloud.stepMs = 5;
    }
  });
});

// What a new user still tripped on (issue 32): a --set typo run anyway, failures a script could
// not read in --json, an empty queue that printed nothing in --json.
describe('a --set typo, failures in --json, an empty queue (spec emulator)', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ personality: 'spec', cloud: { stepMs: 5 } });
  });
  afterAll(() => emu.close());
  const server = () => ['--server', emu.url, '--api-key-file', keyFile];
  const writes = () => emu.requests.filter((r) => r.method !== 'GET');
  /** Standard output of a --json failure before any job: exactly one line, the error object. */
  const onlyError = (stdout: string) => {
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    return JSON.parse(lines[0]!) as Record<string, unknown>;
  };

  it('run refuses a --set naming an input its node does not have, as --list-inputs does: exit 2, did you mean, nothing sent', async () => {
    const said = 'platformui run: --set Save Inverted.filename_prefx: #3 SaveImage "Save Inverted": filename_prefx: SaveImage has no such input, so the server ignores it (did you mean "filename_prefix"?)\n(see platformui run --help)\n';
    emu.requests.length = 0;
    for (const extra of [[], ['--validate'], ['--list-inputs']]) {
      const r = await cli(['run', INVERT, '--input', `image=${photo}`, '--set', 'Save Inverted.filename_prefx=night', '--out', outDir(), ...extra, ...server()]);
      expect(r.code, extra.join(' ')).toBe(2);
      expect(r.stderr, extra.join(' ')).toBe(said);
      expect(r.stdout, extra.join(' ')).toBe('');
    }
    expect(writes()).toEqual([]);
    // An input the file holds needs no object_info: no request before the job.
    emu.requests.length = 0;
    const ok = await cli(['run', INVERT, '--input', `image=${photo}`, '--set', `Save Inverted.filename_prefix=${unique('typo')}`, '--out', outDir(), ...server()]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(emu.requests.some((r) => r.path.endsWith('/object_info'))).toBe(false);
  });

  it('--json: a failure before the job is one JSON line on standard output (usage, a refused key, a server down), the human line on standard error', async () => {
    const usage = await cli(['run', INVERT, '--bogus', '--json', ...server()]);
    expect(usage.code).toBe(2);
    expect(onlyError(usage.stdout)).toEqual({ type: 'error', class: 'UsageError', code: 2, message: "Unknown option '--bogus'" });
    expect(usage.stderr).toBe("platformui run: Unknown option '--bogus'\n(see platformui run --help)\n");

    const typo = await cli(['run', INVERT, '--json', '--set', 'Save Inverted.filename_prefx=night', ...server()]);
    expect(typo.code).toBe(2);
    expect(onlyError(typo.stdout)).toMatchObject({ type: 'error', class: 'UsageError', code: 2, message: expect.stringMatching(/did you mean "filename_prefix"/) });

    const refused = await cli(['run', INVERT, '--json', '--input', `image=${photo}`, '--server', emu.url, '--api-key-file', badKeyFile]);
    expect(refused.code).toBe(3);
    expect(onlyError(refused.stdout)).toEqual({ type: 'error', class: 'AuthenticationError', code: 3, status: 401, message: 'the server refused the API key (401): check PLATFORMUI_API_KEY or --api-key-file' });
    expect(refused.stdout + refused.stderr).not.toContain(BAD_KEY);

    const dead = await startEmulator({ personality: 'local' });
    const deadUrl = dead.url;
    await dead.close();
    const down = await cli(['queue', '--json', '--server', deadUrl]);
    expect(down.code).toBe(4);
    expect(onlyError(down.stdout)).toMatchObject({ type: 'error', class: 'APIConnectionError', code: 4, message: expect.stringMatching(/^could not reach http:\/\/127\.0\.0\.1:\d+ /) });
    expect(down.stderr).toMatch(/^platformui queue: could not reach /m);
  });

  it('a global option a command does not take is refused, not ignored: platformui emulator --json', async () => {
    const r = await cli(['emulator', '--json', '--port', '0']);
    expect(r).toEqual({
      code: 2,
      stdout: '{"type":"error","class":"UsageError","code":2,"message":"--json: platformui emulator does not take it"}\n',
      stderr: 'platformui emulator: --json: platformui emulator does not take it\n(see platformui emulator --help)\n',
    });
  });

  it('queue --json prints its counts first, also when the queue is empty', async () => {
    const r = await cli(['queue', '--json', ...server()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('{"running":0,"pending":0}\n');
  });
});

describe('job, jobs, queue, object-info', () => {
  let cloud: Emulator;
  let spec: Emulator;
  let done: string;
  let failed: string;
  beforeAll(async () => {
    [cloud, spec] = await Promise.all([startEmulator({ personality: 'cloud', cloud: { stepMs: 5 } }), startEmulator({ personality: 'spec', cloud: { stepMs: 5 } })]);
    const ok = await cli(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('rec')}"`, '--out', outDir(), '--server', cloud.url, '--api-key-file', keyFile]);
    done = submittedId(ok.stdout)!;
    const bad = await cli(['run', failing, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('recfail')}"`, '--server', cloud.url, '--api-key-file', keyFile]);
    failed = submittedId(bad.stdout)!;
    // The cloud persists a job's outputs in its record a moment after its end (outputsDelayMs); a child process
    // took longer than that to start, a command in this process does not: the record is read once they are in.
    await waitFor('the outputs in the job record', () => {
      const ended = cloud.cloud.engine.jobs.get(done)?.ended;
      return ended !== undefined && Date.now() >= ended + cloud.cloud.outputsDelayMs;
    });
  });
  afterAll(() => Promise.all([cloud.close(), spec.close()]));
  const on = (emu: Emulator) => ['--server', emu.url, '--api-key-file', keyFile];

  it('job: its state and files; --out downloads them; --json for scripts', async () => {
    const r = await cli(['job', done, ...on(cloud)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^job ${done}  completed`));
    expect(r.stdout).toMatch(/^ {2}output {4}rec_\d+_00001_\.png$/m);
    const out = outDir();
    const saved = await cli(['job', done, '--out', out, ...on(cloud)]);
    expect(saved.code).toBe(0);
    expect(readdirSync(out)).toHaveLength(1);
    const json = await cli(['job', done, '--json', ...on(cloud)]);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: done, phase: 'completed', files: [{ filename: expect.stringMatching(/^rec_/) }] });
  });

  it('job: a failed one exits 1 with its error; an unknown one says so', async () => {
    const r = await cli(['job', failed, ...on(cloud)]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^ {2}error {5}LoadImage #1: OOMError: out of memory on the test GPU$/m);
    const unknown = await cli(['job', 'no-such-job', ...on(cloud)]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('platformui job: this server has no job no-such-job (404): `platformui jobs` lists the recent ones\n');
  });

  it('job --follow: progress until the end, then the outputs', async () => {
    // Long enough that the job is still running when the command line (a new process) starts following it.
    spec.cloud.stepMs = 300;
    const c = new CloudClient({ baseUrl: spec.url, apiKey: EMULATOR_API_KEY });
    try {
      const { name } = await c.uploadImage(PNG, { filename: 'follow.png' });
      const { prompt_id } = await c.submit({
        '1': { class_type: 'LoadImage', inputs: { image: name } },
        '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: unique('follow') } },
      });
      const out = outDir();
      const r = await cli(['job', prompt_id, '--follow', '--out', out, ...on(spec)]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Following job ${prompt_id}$`, 'm'));
      expect(r.stdout).toMatch(/^Done in /m);
      expect(readdirSync(out)).toHaveLength(1);
    } finally {
      c.close();
      spec.cloud.stepMs = 5;
    }
  });

  it('jobs: the list where the server has one; one clear line where not', async () => {
    const r = await cli(['jobs', '--limit', '5', ...on(cloud)]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^ID\s+STATUS\s+CREATED\s+OUTPUTS\s+ERROR$/);
    expect(r.stdout).toMatch(new RegExp(`^${done}\\s+completed\\s`, 'm'));
    expect(r.stdout).toMatch(new RegExp(`^${failed}\\s+failed\\s.*OOMError$`, 'm'));
    const onlyFailed = await cli(['jobs', '--status', 'failed', '--json', ...on(cloud)]);
    const rows = onlyFailed.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { id: string; status: string });
    expect(rows.map((j) => j.status)).toEqual(rows.map(() => 'failed'));
    expect(rows.map((j) => j.id)).toContain(failed);
    const both = await cli(['jobs', '--quiet', '--json', ...on(cloud)]);
    // With --json, the usage error too is the JSON line (issue 32).
    expect(both).toMatchObject({ code: 2, stdout: '{"type":"error","class":"UsageError","code":2,"message":"--quiet prints bare ids, --json objects: give one"}\n' });
    expect(both.stderr).toMatch(/^platformui jobs: --quiet prints bare ids, --json objects: give one\n/);
    // A status this kind of server lacks (a local server has no `cancelled`) is a usage error about --status, before any request.
    const local = await startEmulator({ personality: 'local' });
    try {
      const lacking = await cli(['jobs', '--status', 'cancelled', '--server', local.url]);
      expect(lacking.code).toBe(2);
      expect(lacking.stderr).toMatch(/^platformui jobs: --status: this server's jobs list has no such status: .*got "cancelled"/);
      expect(local.requests).toEqual([]);
    } finally {
      await local.close();
    }
    const none = await cli(['jobs', ...on(spec)]);
    expect(none.code).toBe(1);
    // The server's own words go with it: they may say where the route is.
    expect(none.stderr).toMatch(/^platformui jobs: this server has no jobs list \(GET \/api\/jobs: 404: .*the 'cloud' and 'local' personalities do: .*platformui emulator --personality cloud\): see one job with `platformui job <id>`, or what runs with `platformui queue`\n$/);
  });

  it('queue: the running and pending jobs', async () => {
    // Steps of a minute: the jobs are still where they were put when the command reads the queue, however slow
    // the machine (a job of 500 ms steps had ended, and the pending one started, on a loaded 2-core runner).
    spec.cloud.stepMs = 60_000;
    const c = new CloudClient({ baseUrl: spec.url, apiKey: EMULATOR_API_KEY });
    try {
      const { name } = await c.uploadImage(PNG, { filename: 'queue.png' });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const wf = { '1': { class_type: 'LoadImage', inputs: { image: name } }, '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: unique('q') } } };
        ids.push((await c.submit(wf)).prompt_id);
      }
      const r = await cli(['queue', '--json', ...on(spec)]);
      expect(r.code).toBe(0);
      const [counts, ...entries] = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { state: string; promptId: string });
      expect(counts).toEqual({ running: 2, pending: 1 });
      // Two run at once for this key; the third waits.
      expect(entries.map((e) => [e.state, e.promptId])).toEqual([['running', ids[0]], ['running', ids[1]], ['pending', ids[2]]]);
      const plain = await cli(['queue', ...on(spec)]);
      expect(plain.stdout).toMatch(/^2 running, 1 pending\n#\s+STATE\s+ID/);
      await c.cancel(ids);
      // Gone, running ones too: the tests after this one have the key's two slots.
      expect((await c.getQueue()).queue_running).toEqual([]);
    } finally {
      c.close();
      spec.cloud.stepMs = 5;
    }
  });

  it('object-info: the class count and names; one class readable; --json as the server sent it', async () => {
    const classes = Object.keys(spec.cloud.objectInfo());
    const all = await cli(['object-info', ...on(spec)]);
    expect(all.code).toBe(0);
    expect(all.stdout.split('\n')[0]).toBe(`${classes.length} node classes`);
    for (const name of classes) expect(all.stdout).toMatch(new RegExp(`^ {2}${name}\\b`, 'm'));
    const blur = await cli(['object-info', 'ImageBlur', ...on(spec)]);
    expect(blur.stdout).toMatch(/^ImageBlur \(Image Blur\) {2}image\/postprocessing$/m);
    expect(blur.stdout).toMatch(/^ {2}blur_radius +INT +default 1, 1\.\.31$/m);
    expect(blur.stdout).toMatch(/^Outputs:\n {2}0 {2}IMAGE {2}IMAGE$/m);
    const json = await cli(['object-info', '--json', ...on(spec)]);
    expect(Object.keys(JSON.parse(json.stdout))).toEqual(classes);
    const typo = await cli(['object-info', 'ImageBlr', ...on(spec)]);
    expect(typo).toEqual({ code: 1, stdout: '', stderr: 'platformui object-info: no node class "ImageBlr" on this server (did you mean ImageBlur?)\n' });
    const none = await cli(['object-info', 'Teleporter', ...on(spec)]);
    expect(none.stderr).toBe('platformui object-info: no node class "Teleporter" on this server (platformui object-info lists them)\n');
  });
});

describe('the registry, the emulator and codegen commands', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ personality: 'spec' });
  });
  afterAll(() => emu.close());

  it('nodes search: one page, or every page with --all', async () => {
    const registry = new RegistryClient({ baseUrl: emu.url });
    const page = await registry.searchNodes({ limit: 2 });
    const r = await cli(['nodes', 'search', '--limit', '2', '--server', emu.url]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+VERSION\s+PUBLISHER\s+DOWNLOADS$/);
    expect(lines.slice(1, 3).map((l) => l.split(' ')[0])).toEqual(page.nodes.map((n) => n.id));
    expect(lines[3]).toBe(`page 1 of ${page.totalPages}: 2 of ${page.total} nodes; --all for every one, or --page 2`);
    const cuda: string[] = [];
    for await (const n of registry.searchNodes({ supported_accelerator: 'CUDA', limit: 3 })) cuda.push(n.id!);
    const all = await cli(['nodes', 'search', '--accelerator', 'CUDA', '--limit', '3', '--all', '--json', '--server', emu.url]);
    expect(all.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(cuda);
    expect(cuda.length).toBeGreaterThan(3);
  });

  it('nodes search: nothing found reads "no nodes" (not "page 1 of 0")', async () => {
    for (const args of [[], ['--all']]) {
      const r = await cli(['nodes', 'search', 'no-such-node-anywhere', ...args, '--server', emu.url]);
      expect(r).toEqual({ code: 0, stdout: 'no nodes\n', stderr: '' });
    }
  });

  it("the SDK's warnings reach standard error (a retried request here), the answer standard output", async () => {
    emu.faults.next(503, { path: '/nodes/search' });
    const r = await cli(['nodes', 'search', '--limit', '1', '--server', emu.url]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`^\\[platformui\\] GET ${emu.url.replace(/[.]/g, '\\.')}/nodes/search\\?[^ ]*: HTTP 503; retrying in \\d+ ms \\(attempt 2 of 3\\)\n$`));
    expect(r.stdout).toMatch(/^page 1 of \d+: 1 of \d+ nodes/m);
    // PLATFORMUI_LOG=error keeps them out.
    emu.faults.next(503, { path: '/nodes/search' });
    expect((await cli(['nodes', 'search', '--limit', '1', '--server', emu.url], { PLATFORMUI_LOG: 'error' })).stderr).toBe('');
  });

  it('a reader that stops early (| head -1) ends it quietly with exit 0', async () => {
    const child = spawn(process.execPath, [cliBundle, 'nodes', 'search', '--all', '--json', '--limit', '1', '--server', emu.url], { cwd: dir, env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('publishers: every one', async () => {
    const list = await new RegistryClient({ baseUrl: emu.url }).listPublishers();
    const r = await cli(['publishers', '--json', '--server', emu.url]);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(list.map((p) => p.id));
    const plain = await cli(['publishers', '--server', emu.url]);
    expect(plain.stdout.trimEnd().split('\n').at(-1)).toBe(`${list.length} publishers`);
  });

  it('codegen: from the server, and from the JSON object-info prints', async () => {
    const fromServer = join(dir, 'nodes.generated.ts');
    const r = await cli(['codegen', '--server', emu.url, '--api-key-file', keyFile, '--out', fromServer]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Wrote .*nodes\.generated\.ts: \d+ node classes/);
    const info = join(dir, 'object_info.json');
    writeFileSync(info, (await cli(['object-info', '--json', '--server', emu.url, '--api-key-file', keyFile])).stdout);
    const fromFile = join(dir, 'nodes-from-file.generated.ts');
    expect((await cli(['codegen', '--file', info, '--out', fromFile])).code).toBe(0);
    expect(readFileSync(fromFile, 'utf8')).toBe(readFileSync(fromServer, 'utf8'));
  });

  it("codegen: the CLI's exit codes and lines for an unreachable server, a refused key, an empty key file", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const down = await cli(['codegen', '--server', `http://127.0.0.1:${port}`, '--api-key-file', keyFile]);
    expect(down.code).toBe(4);
    // After the SDK's warnings of its retries: the connection is refused each time.
    expect(down.stderr).toMatch(new RegExp(`^\\[platformui\\] GET http://127\\.0\\.0\\.1:${port}/api/object_info: .*; retrying in \\d+ ms \\(attempt 2 of 3\\)\n`));
    expect(down.stderr).toMatch(new RegExp(`\nplatformui codegen: could not reach http://127\\.0\\.0\\.1:${port} \\(.+\\): is the server running\\? \\(--server or PLATFORMUI_CLOUD_URL\\)\n$`));
    const refused = await cli(['codegen', '--server', emu.url, '--api-key-file', badKeyFile]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toBe('platformui codegen: the server refused the API key (401): check PLATFORMUI_API_KEY or --api-key-file\n');
    const rule = await cli(['codegen', '--server', emu.url], { PLATFORMUI_API_KEY: EMULATOR_API_KEY });
    expect(rule.code).toBe(3);
    expect(rule.stderr).toContain('PLATFORMUI_API_KEY goes only to the server PLATFORMUI_CLOUD_URL names, not to another loopback --server');
    const empty = join(dir, 'empty-key.txt');
    writeFileSync(empty, '\n');
    const r = await cli(['codegen', '--server', emu.url, '--api-key-file', empty]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`platformui codegen: --api-key-file: ${empty} is empty\n(see platformui codegen --help)\n`);
    expect(r.stdout + refused.stdout + refused.stderr).not.toContain(BAD_KEY);
  });

  // `platformui emulator` and the `platformui-emulator` alias run the same function.
  for (const [what, bundle, args] of [
    ['platformui emulator', () => cliBundle, ['emulator']],
    ['platformui-emulator', () => emulatorBundle, []],
  ] as const) {
    it(`${what}: starts, serves, stops on Ctrl-C with exit 0`, async () => {
      const child = start([...args, '--port', '0', '--personality', 'local'], {}, bundle());
      const url = await waitFor('the emulator to listen', () => /listening on (http:\/\/\S+)/.exec(child.out())?.[1]);
      expect(child.out()).toContain('Cloud personality: local');
      expect((await fetch(`${url}/api/queue`)).status).toBe(200);
      child.child.kill('SIGINT');
      const r = await child.done;
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('SIGINT: stopping');
      const help = await start([...args, '--help'], {}, bundle()).done;
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: ${what} \\[options\\][\\s\\S]*Examples:\\n  ${what} --port 8787\\n  ${what} --port 8188 --personality local\\n`));
      // Ctrl-C says what stopped; the help has the shape of every other command's.
      expect(r.stdout).toMatch(/SIGINT: stopping\nEmulator stopped: http:\/\/\S+ no longer answers\n$/);
      expect(help.stdout).toMatch(/\n\nOptions:\n {2}--port N {2,}\S[\s\S]*\n\nGlobal options:\n {2}-V, --version {2,}\S.*\n {2}-h, --help {2,}show this help\n\nExamples:\n/);
      const headings = (text: string) => text.split('\n').filter((l) => /^(Usage|[A-Z][a-z ]+:$)/.test(l)).map((l) => l.replace(/^Usage: .*/, 'Usage:'));
      expect(headings(help.stdout)).toEqual(headings((await cli(['run', '--help'])).stdout));
      expect(help.stdout).not.toMatch(/--server|--json/);
    });
  }
});

// The first hour against the default emulator's personality (cloud: every route wants X-API-Key).
describe('a loopback server that wants a key, the codegen alias, the examples', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ personality: 'cloud', cloud: { stepMs: 5 } });
  });
  afterAll(() => emu.close());
  const withKey = () => ({ PLATFORMUI_CLOUD_URL: emu.url, PLATFORMUI_API_KEY: EMULATOR_API_KEY, PLATFORMUI_BASE_URL: emu.url });

  it('every command says the server wants an API key and how to give it, not a bare 401', async () => {
    const said = `${emu.url} wants an API key (401: Missing X-API-Key header), and none was sent`;
    const how = `set PLATFORMUI_CLOUD_URL=${emu.url} PLATFORMUI_API_KEY=… (a loopback --server gets the environment's key only when PLATFORMUI_CLOUD_URL names it), or pass --api-key-file FILE`;
    for (const args of [['queue'], ['jobs'], ['job', 'some-id'], ['job', 'some-id', '--follow'], ['object-info'], ['codegen'], ['run', INVERT, '--input', `image=${photo}`], ['run', INVERT, '--input', `image=${photo}`, '--json']]) {
      const r = await cli([...args, '--server', emu.url]);
      expect(r.code, args.join(' ')).toBe(3);
      expect(r.stderr, args.join(' ')).toBe(`platformui ${args[0]}: ${said}: ${how}\n`);
    }
    // The server from the environment, no key anywhere.
    const fromEnv = await cli(['queue'], { PLATFORMUI_CLOUD_URL: emu.url });
    expect(fromEnv).toEqual({ code: 3, stdout: '', stderr: `platformui queue: ${said}: set PLATFORMUI_API_KEY=…, or pass --api-key-file FILE\n` });
  });

  it('platformui-codegen is platformui codegen: the same help, --url or --server, messages and exit codes', async () => {
    const alias = (args: string[], env: Record<string, string> = {}) => start(args, env, codegenBundle).done;
    const help = await cli(['codegen', '--help']);
    expect(await alias(['--help'])).toEqual(help);
    expect(help.stdout).toMatch(/^ {2}--url URL +the same as --server/m);
    for (const option of ['--url', '--server']) {
      const refused = await alias([option, emu.url]);
      expect(refused).toEqual(await cli(['codegen', option, emu.url]));
      expect(refused.code).toBe(3);
      expect(refused.stderr).toMatch(/^platformui codegen: http:\/\/127\.0\.0\.1:\d+ wants an API key \(401: .*\), and none was sent: set PLATFORMUI_CLOUD_URL=/);
    }
    // The README's line, with the environment the emulator prints: the key goes to the server PLATFORMUI_CLOUD_URL names.
    const out = join(mkdtempSync(join(dir, 'codegen-')), 'src', 'nodes.generated.ts');
    const ok = await alias(['--url', emu.url, '--out', out], withKey());
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^Wrote .*src\/nodes\.generated\.ts: 11 node classes/);
    expect((await cli(['codegen', '--url', emu.url, '--out', out], withKey())).stdout).toMatch(/nodes\.generated\.ts is up to date/);
  });

  it('platformui example writes a workflow and its input, and the command it prints runs them; nothing is overwritten', async () => {
    const here = mkdtempSync(join(dir, 'example-'));
    const bin = binWithPlatformui();
    const env = { ...withKey(), PATH: `${bin}:${process.env.PATH}` };
    const first = await shell('platformui example', here, env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(
      [
        'Wrote  invert.json  a workflow: LoadImage → ImageInvert → SaveImage',
        'Wrote  photo.png    its input, a 64×64 PNG',
        'Run it (on the server of PLATFORMUI_CLOUD_URL, with PLATFORMUI_API_KEY; or --server URL):',
        '  platformui run invert.json --input image=photo.png --out outputs',
        '',
      ].join('\n'),
    );
    expect(JSON.parse(readFileSync(join(here, 'invert.json'), 'utf8'))).toEqual(JSON.parse(readFileSync(INVERT, 'utf8')));
    expect(readFileSync(join(here, 'photo.png')).subarray(1, 4).toString()).toBe('PNG');
    const next = first.stdout.trimEnd().split('\n').at(-1)!.trim();
    const ran = await shell(next, here, env);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    expect(readdirSync(join(here, 'outputs'))).toEqual(['inverted_00001_.png']);
    // Again: the same files are kept. Another file of that name stops it, and is left as it was.
    expect((await shell('platformui example', here, env)).stdout).toMatch(/^Kept {2}invert\.json {2}.*\(there already\)\nKept {2}photo\.png/);
    writeFileSync(join(here, 'photo.png'), 'my own photo');
    const clash = await shell('platformui example', here, env);
    expect(clash).toEqual({ code: 2, stdout: '', stderr: 'platformui example: photo.png exists and is not this example\'s: it was left alone; write the example elsewhere with --out DIR\n(see platformui example --help)\n' });
    expect(readFileSync(join(here, 'photo.png'), 'utf8')).toBe('my own photo');
    const elsewhere = await shell("platformui example invert --out 'my demo'", here, env);
    expect(elsewhere.stdout).toContain("  platformui run 'my demo/invert.json' --input image='my demo/photo.png' --out 'my demo/outputs'\n");
    expect((await shell(elsewhere.stdout.trimEnd().split('\n').at(-1)!.trim(), here, env)).code).toBe(0);
  });

  it('every example of the help runs as written, in order, in a fresh folder', async () => {
    const here = mkdtempSync(join(dir, 'help-examples-'));
    // A real shell (the examples use `$(…)` and `>`), whose `platformui` runs the command line in this process
    // (test/helpers/cli.ts): the examples are the point here, not the process (the tests above start it).
    const onPath = await cliOnPath(dir);
    try {
      const env = { ...withKey(), PATH: `${onPath.bin}:${process.env.PATH}` };
      /** The lines of a help's Example(s): section. */
      const examplesOf = (help: string) => /\nExamples?:\n((?: {2}.*\n)+)/.exec(help)![1]!.trimEnd().split('\n').map((l) => l.trim());
      const top = (await cli(['--help'])).stdout;
      const commands = /\nCommands:\n((?: {2}.*\n)+)/.exec(top)![1]!.trimEnd().split('\n').map((l) => /^ {2}(\S+(?: \S+)?) {2,}/.exec(l)![1]!);
      const lines = examplesOf(top);
      // The emulator runs until Ctrl-C (its own tests start it), and its help is its own.
      for (const name of commands.filter((c) => c !== 'emulator')) lines.push(...examplesOf((await cli([...name.split(' '), '--help'])).stdout));
      expect(lines.length).toBeGreaterThan(commands.length);
      for (const line of lines) {
        expect(line).toMatch(/^platformui /);
        // The queue's examples need a Redis and a worker (test/cli/commands/queue-redis.int.test.ts runs those commands against real ones).
        if (/# needs Redis/.test(line)) continue;
        const r = await shell(line, here, env);
        expect(r.code, `${line}\n${r.stderr}`).toBe(0);
      }
    } finally {
      await onPath.close();
    }
    // Some thirty commands one after another: the bound is for a hang, not for the machine's speed.
  }, 300_000);
});

describe('a server that accepts connections and never answers', () => {
  let silent: Awaited<ReturnType<typeof silentServer>>;
  beforeAll(async () => {
    silent = await silentServer();
  });
  afterAll(() => silent.close());

  it('every command takes --timeout, and says no answer came in that time: exit 4', async () => {
    for (const args of [['queue'], ['jobs'], ['job', 'some-id'], ['object-info'], ['codegen'], ['run', INVERT, '--input', `image=${photo}`], ['nodes', 'search'], ['publishers']]) {
      const name = args[0] === 'nodes' ? 'nodes search' : args[0]!;
      const variable = ['nodes search', 'publishers'].includes(name) ? 'PLATFORMUI_BASE_URL' : 'PLATFORMUI_CLOUD_URL';
      const r = await cli([...args, '--server', silent.url, '--timeout', '300ms']);
      // Not a terminal: no "waiting for" line, only the error.
      expect(r, name).toEqual({ code: 4, stdout: '', stderr: `platformui ${name}: no answer from ${silent.url} in 300 ms: is the server up? (--server or ${variable}; --timeout to wait longer)\n` });
    }
  });
});

describe('--version', () => {
  it("prints the package's version", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(await cli(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(await cli(['-V'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});

describe('help', () => {
  it('platformui --help lists every command; each command has --help with an example', async () => {
    const top = await cli(['--help']);
    expect(top.code).toBe(0);
    const names = ['example', 'run', 'job', 'jobs', 'queue', 'object-info', 'nodes search', 'publishers', 'emulator', 'codegen'];
    for (const name of names) expect(top.stdout).toMatch(new RegExp(`^ {2}${name} +\\S`, 'm'));
    for (const name of names.filter((n) => n !== 'emulator')) {
      const r = await cli([...name.split(' '), '--help']);
      expect(r.code, name).toBe(0);
      expect(r.stdout, name).toMatch(new RegExp(`^Usage: platformui ${name}\\b`));
      expect(r.stdout, name).toMatch(new RegExp(`\nExamples?:\n {2}platformui ${name}\\b`));
    }
  });

  it('bare platformui is a usage error that prints the help', async () => {
    const r = await cli([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^Usage: platformui <command>/);
  });
});

const hasScript = spawnSync('script', ['--version']).status === 0;
describe.skipIf(!hasScript)('on a terminal (script(1) gives a pseudo-terminal)', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ personality: 'spec', cloud: { stepMs: 5 } });
  });
  afterAll(() => emu.close());
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  /**
   * Runs the CLI under `script`; its output is the terminal's (CR LF line ends).
   * Asynchronously: the emulator answering it lives in this process.
   */
  const onTerminal = (args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> => {
    const child = spawn('script', ['-q', '-e', '-c', [process.execPath, cliBundle, ...args].map(q).join(' '), '/dev/null'], { cwd: dir, env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    return new Promise((resolve) => child.on('close', (code) => resolve({ code, out: out.replace(/\r\n/g, '\n') })));
  };

  it('draws the live block in colour, ends with the summary and the cursor shown', async () => {
    const out = outDir();
    const r = await onTerminal(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('tty')}"`, '--out', out, '--server', emu.url, '--api-key-file', keyFile]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('\x1b[?25l'); // cursor hidden while the block is live
    expect(r.out).toMatch(/\x1b\[32m✓ Done\x1b\[39m in \d+\.\ds/);
    expect(r.out.endsWith('\x1b[?25h')).toBe(true);
    expect(existsSync(join(out, readdirSync(out)[0]!))).toBe(true);
  });

  it('NO_COLOR and --no-color: the block without colours', async () => {
    for (const [args, env] of [[['--no-color'], {}], [[], { NO_COLOR: '1' }]] as const) {
      const r = await onTerminal(['run', INVERT, ...args, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('nocolor')}"`, '--out', outDir(), '--server', emu.url, '--api-key-file', keyFile], env);
      expect(r.code).toBe(0);
      expect(r.out).toContain('✓ Done in');
      // eslint-disable-next-line no-control-regex
      expect(r.out).not.toMatch(/\x1b\[\d+m/);
    }
  });

  it('a server that never answers: after a second, what it waits for; erased before the error; none with --json', async () => {
    const silent = await silentServer();
    try {
      const r = await onTerminal(['queue', '--server', silent.url, '--timeout', '1500ms', '--no-color']);
      expect(r.code).toBe(4);
      const error = `platformui queue: no answer from ${silent.url} in 1.5 s: is the server up? (--server or PLATFORMUI_CLOUD_URL; --timeout to wait longer)\n`;
      expect(r.out).toBe(`\r\x1b[Kwaiting for ${silent.url} (GET /api/queue)… 1s\r\x1b[K${error}`);
      const json = await onTerminal(['queue', '--server', silent.url, '--timeout', '1500ms', '--json']);
      // --json: no waiting line; the error as one JSON line on standard output, and the human line on standard error.
      const message = error.slice('platformui queue: '.length, -1);
      expect(json).toEqual({ code: 4, out: `${JSON.stringify({ type: 'error', class: 'APITimeoutError', code: 4, message })}\n${error}` });
    } finally {
      await silent.close();
    }
  });

  it('an error on a terminal is shown once, by the display', async () => {
    const r = await onTerminal(['run', failing, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('ttyfail')}"`, '--server', emu.url, '--api-key-file', keyFile, '--no-color']);
    expect(r.code).toBe(1);
    expect(r.out.match(/OOMError: out of memory on the test GPU/g)?.length).toBeGreaterThanOrEqual(1);
    expect(r.out).toMatch(/✗ Job \S+ failed in LoadImage #1: OOMError: out of memory on the test GPU\n/);
    expect(r.out).not.toContain('platformui run:');
  });
});

// Several --server: run goes through a CloudPool. The job lands on a live server with the
// least work, its input is uploaded there (not everywhere), and a dead server is skipped.
describe('platformui run over several --server (a pool)', () => {
  let a: Emulator;
  let b: Emulator;
  beforeAll(async () => {
    [a, b] = await Promise.all([startEmulator({ personality: 'local', cloud: { stepMs: 5 } }), startEmulator({ personality: 'local', cloud: { stepMs: 5 } })]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
  });
  const uploadsTo = (e: Emulator) => e.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/upload/image')).length;

  it('runs the job on one of them, uploads the input only there, downloads its outputs', async () => {
    a.requests.length = 0;
    b.requests.length = 0;
    const out = outDir();
    const prefix = unique('pool');
    const r = await cli(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${prefix}"`, '--out', out, '--server', a.url, '--server', b.url]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readdirSync(out)).toEqual([`${prefix}_00001_.png`]);
    const on = /^Placed on (\S+)$/m.exec(r.stdout)?.[1];
    expect([a.url, b.url]).toContain(on);
    const [ran, idle] = on === a.url ? [a, b] : [b, a];
    expect(uploadsTo(ran)).toBe(1);
    expect(uploadsTo(idle)).toBe(0);
    expect([...ran.cloud.engine.jobs.values()].some((j) => j.status === 'completed')).toBe(true);
  });

  it('skips a server that does not answer', async () => {
    const dead = await startEmulator({ personality: 'local' });
    const deadUrl = dead.url;
    await dead.close();
    const out = outDir();
    const r = await cli(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('pooldead')}"`, '--out', out, '--server', deadUrl, '--server', a.url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Placed on ${a.url.replace(/[.:/]/g, '\\$&')}$`, 'm'));
    expect(readdirSync(out)).toHaveLength(1);
  });

  it('refuses several --server for a command other than run and worker', async () => {
    const r = await cli(['queue', '--server', a.url, '--server', b.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--server: only run and worker take several servers');
  });
});
