// Outputs of every kind (issue 25) over real loopback sockets: the emulator's SaveAnimatedPNG
// (an image and `animated: [true]`), VHS_VideoCombine (a GIF under `gifs`, with a video pack's
// extra members) and PreviewAny (text, no file) beside a SaveImage, through cloud.run(),
// follow(), getJob(), a CloudPool, and the command line (`run`, `job`; main() in the test's process).
// Each file downloads with only filename, subfolder and type on /api/view.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudClient, CloudPool, filesOf, type JobResult } from '../../src/index.ts';
import { EMULATOR_API_KEY, startEmulator, type Emulator, type PersonalityName } from '../../src/emulator/index.ts';
import { runCli } from '../helpers/cli.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PNG = [0x89, 0x50, 0x4e, 0x47];
const GIF = [...Buffer.from('GIF89a')];
let counter = 0;
/** A fresh prefix: the emulator serves a workflow it has run before from its cache. */
const unique = (what: string) => `${what}_${Date.now() % 100000}_${++counter}`;

/** EmptyImage feeding a SaveImage, a SaveAnimatedPNG, a VHS_VideoCombine, and two PreviewAny (a literal, a link). */
function everyKind(prefix: string) {
  return {
    '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 2, color: 0x123456 } },
    '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: `${prefix}_still` } },
    '3': { class_type: 'SaveAnimatedPNG', inputs: { images: ['1', 0], filename_prefix: `${prefix}_apng`, fps: 6, compress_level: 4 } },
    '4': { class_type: 'VHS_VideoCombine', inputs: { images: ['1', 0], frame_rate: 12, loop_count: 0, filename_prefix: `${prefix}_gif`, format: 'image/gif', pingpong: false, save_output: true } },
    '5': { class_type: 'PreviewAny', inputs: { source: `hello ${prefix}` } },
    '6': { class_type: 'PreviewAny', inputs: { source: ['1', 0] } },
  };
}

/** What the run of {@link everyKind} must give. */
function expectEveryKind(result: Pick<JobResult, 'files' | 'outputs'>, prefix: string) {
  expect(result.files.map((f) => [f.nodeId, f.mediaType, f.filename, f.type])).toEqual([
    ['2', 'images', `${prefix}_still_00001_.png`, 'output'],
    ['3', 'images', `${prefix}_apng_00001_.png`, 'output'],
    ['4', 'gifs', `${prefix}_gif_00001_.gif`, 'output'],
  ]);
  const out = result.outputs as Record<string, Record<string, unknown>>;
  expect(out['3']!.animated).toEqual([true]);
  expect(out['4']!.gifs).toEqual([{ filename: `${prefix}_gif_00001_.gif`, subfolder: '', type: 'output', format: 'image/gif', frame_rate: 12 }]);
  expect(out['5']).toEqual({ text: [`hello ${prefix}`] });
  expect(out['6']).toEqual({ text: ['output 0 of node 1 (EmptyImage)'] });
}

/** A fetch that records every URL the client asks for. */
function recordingFetch() {
  const urls: URL[] = [];
  const fetch: typeof globalThis.fetch = (input, init) => {
    urls.push(new URL(input instanceof Request ? input.url : String(input)));
    return globalThis.fetch(input, init);
  };
  return { fetch, views: () => urls.filter((u) => u.pathname === '/api/view') };
}

describe.each(['spec', 'cloud', 'local'] as PersonalityName[])('outputs of every kind, %s emulator', (personality) => {
  let emu: Emulator;
  const clients: CloudClient[] = [];
  const client = (fetch?: typeof globalThis.fetch) => {
    const c = new CloudClient({ baseUrl: emu.url, ...(personality === 'local' ? {} : { apiKey: EMULATOR_API_KEY }), ...(fetch ? { fetch } : {}), logLevel: 'off' });
    clients.push(c);
    return c;
  };
  beforeAll(async () => {
    emu = await startEmulator({ personality, cloud: { stepMs: 2, progressSteps: 1 } });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await emu.close();
  });

  it('run(): every file under any key with its node and key, text and flags in outputs; each downloads with only filename, subfolder and type', async () => {
    const rec = recordingFetch();
    const c = client(rec.fetch);
    const prefix = unique('run');
    const result = await c.run(everyKind(prefix), { timeout: 10_000 });
    expectEveryKind(result, prefix);
    for (const f of result.files) {
      const bytes = [...new Uint8Array(await (await c.download(f)).arrayBuffer())];
      expect(bytes.slice(0, f.mediaType === 'gifs' ? 6 : 4)).toEqual(f.mediaType === 'gifs' ? GIF : PNG);
    }
    const views = rec.views();
    expect(views).toHaveLength(3);
    for (const [i, u] of views.entries()) {
      const f = result.files[i]!;
      expect([...u.searchParams]).toEqual([['filename', f.filename], ['subfolder', ''], ['type', 'output']]);
    }
    // What waitForJob reads back (the record, or the spec's status) lists the same files.
    expect(filesOf((await c.waitForJob(result.promptId, { pollInterval: 20 })).outputs)).toEqual(result.files);
  });

  it('a job whose only output is text: no file, its text in outputs, heard whole on the socket (no record read)', async () => {
    const c = client();
    const text = `only text ${unique('t')}`;
    const result = await c.run({ '1': { class_type: 'PreviewAny', inputs: { source: text } } }, { timeout: 10_000 });
    expect(result.files).toEqual([]);
    expect(result.outputs).toEqual({ '1': { text: [text] } });
    expect(result.record).toBeUndefined();
  });

  it('follow(): the same files for a job submitted elsewhere', async () => {
    const c = client();
    const prefix = unique('follow');
    const { prompt_id } = await c.submit(everyKind(prefix));
    expectEveryKind(await c.follow(prompt_id, { timeout: 10_000 }), prefix);
  });

  it('a CloudPool job: the same files', async () => {
    const pool = new CloudPool([{ baseUrl: emu.url, ...(personality === 'local' ? {} : { apiKey: EMULATOR_API_KEY }), logLevel: 'off' }], { logLevel: 'off' });
    try {
      const prefix = unique('pool');
      expectEveryKind(await pool.run(everyKind(prefix), { timeout: 10_000 }), prefix);
    } finally {
      await pool.close();
    }
  });
});

describe('the command line downloads every file', () => {
  let emu: Emulator;
  let dir: string;
  let keyFile: string;
  beforeAll(async () => {
    mkdirSync(join(ROOT, '.tmp'), { recursive: true });
    dir = mkdtempSync(join(ROOT, '.tmp', 'outputs-test-'));
    keyFile = join(dir, 'key.txt');
    writeFileSync(keyFile, EMULATOR_API_KEY);
    emu = await startEmulator({ personality: 'spec', cloud: { stepMs: 2, progressSteps: 1 } });
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // In the test's process (test/helpers/cli.ts), with the environment a child process had.
  const run = (args: string[]) => {
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('PLATFORMUI_') || k === 'FORCE_COLOR') delete env[k];
    return runCli([...args, '--server', emu.url, '--api-key-file', keyFile], { cwd: dir, env: { ...env, NO_COLOR: '1' } });
  };
  const workflowFile = (prefix: string) => {
    const path = join(dir, `${prefix}.json`);
    writeFileSync(path, JSON.stringify(everyKind(prefix)));
    return path;
  };
  const names = (prefix: string) => [`${prefix}_apng_00001_.png`, `${prefix}_gif_00001_.gif`, `${prefix}_still_00001_.png`];

  it('platformui run: every file into --out, the key beside a file not under images', async () => {
    const prefix = unique('cli');
    const out = join(dir, 'run-out');
    const r = await run(['run', workflowFile(prefix), '--out', out]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(readdirSync(out).sort()).toEqual(names(prefix));
    expect([...readFileSync(join(out, `${prefix}_gif_00001_.gif`)).subarray(0, 6)]).toEqual(GIF);
    expect(r.stdout).toContain(`${join(out, `${prefix}_gif_00001_.gif`)} (gifs)`);
    expect(r.stdout).toMatch(new RegExp(`${prefix}_still_00001_\\.png$`, 'm'));
  });

  it('platformui run --json: each file with its node and key', async () => {
    const prefix = unique('json');
    const r = await run(['run', workflowFile(prefix), '--out', join(dir, 'json-out'), '--json']);
    expect(r.code).toBe(0);
    const result = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l)).find((l) => l.type === 'result');
    expect(result.files.map((f: { nodeId: string; mediaType: string }) => [f.nodeId, f.mediaType])).toEqual([['2', 'images'], ['3', 'images'], ['4', 'gifs']]);
  });

  it('platformui job: lists and downloads every file, says the key, shows the text outputs; --follow the same', async () => {
    const prefix = unique('job');
    const c = new CloudClient({ baseUrl: emu.url, apiKey: EMULATOR_API_KEY, logLevel: 'off' });
    let id: string;
    try {
      id = (await c.run(everyKind(prefix), { timeout: 10_000 })).promptId;
    } finally {
      c.close();
    }
    const out = join(dir, 'job-out');
    const r = await run(['job', id, '--out', out]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(readdirSync(out).sort()).toEqual(names(prefix));
    expect(r.stdout.split('\n').filter((l) => /^ {2}(output|text) /.test(l))).toEqual([
      `  output    ${prefix}_still_00001_.png`,
      `  output    ${prefix}_apng_00001_.png`,
      `  output    ${prefix}_gif_00001_.gif (gifs)`,
      `  text      #5: hello ${prefix}`,
      '  text      #6: output 0 of node 1 (EmptyImage)',
    ]);
    const followed = join(dir, 'follow-out');
    const f = await run(['job', id, '--follow', '--out', followed]);
    expect([f.code, f.stderr]).toEqual([0, '']);
    expect(readdirSync(followed).sort()).toEqual(names(prefix));
    // Named by id: the spec's server keeps no job record, so no workflow to name it from.
    expect(f.stdout).toContain(`  node #5: hello ${prefix}\n`);
    expect(f.stdout).toContain(`${join(followed, `${prefix}_gif_00001_.gif`)} (gifs)`);
  });
});
