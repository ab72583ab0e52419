// The progress display's end is the follower's decision (src/cli/display.ts, `endsFrom: 'follower'`):
// with the socket refused, a job's end is found by polling, and `run` (one server or a pool) and
// `job --follow` still print its line, as for an end heard on the socket. The command line (main(), in
// the test's process) against emulators over real loopback sockets that refuse every upgrade.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudClient } from '../../../src/index.ts';
import { makePng } from '../../../src/emulator/cloud-files.ts';
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { baseEnv, runCli, type CliResult as Result } from '../../helpers/cli.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const INVERT = join(ROOT, 'examples', 'workflows', 'invert.json');

let dir: string;
let photo: string;
let failing: string;
let counter = 0;
/** A fresh name: the emulator serves a workflow it has run before from its cache. */
const unique = (what: string) => `${what}_${++counter}`;
const outDir = () => mkdtempSync(join(dir, 'out-'));
const cli = (args: string[]): Promise<Result> => runCli(args, { cwd: dir, env: baseEnv() });
/**
 * Standard error's lines but the socket's warning that it retries: whether it is said depends on whether the job's end
 * is polled before the socket's first retry begins (the machine's speed), so it is neither required nor refused.
 */
const problems = (stderr: string): string[] => stderr.split('\n').filter((l) => l !== '' && !/^\[platformui\] socket could not connect to ws:\/\/127\.0\.0\.1:\d+\/ws\?clientId=[\w-]+: .*; retrying/.test(l));

let a: Emulator;
let b: Emulator;
beforeAll(async () => {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  dir = mkdtempSync(join(ROOT, '.tmp', 'cli-polled-'));
  photo = join(dir, 'photo.png');
  writeFileSync(photo, makePng(8, 8, 0x808080));
  // The emulator's nodes fail on demand: `fail_with` names the exception type.
  const wf = JSON.parse(readFileSync(INVERT, 'utf8'));
  wf['1'].inputs.fail_with = 'OOMError';
  failing = join(dir, 'failing.json');
  writeFileSync(failing, JSON.stringify(wf));
  [a, b] = await Promise.all([startEmulator({ personality: 'local', cloud: { stepMs: 5 } }), startEmulator({ personality: 'local', cloud: { stepMs: 5 } })]);
  // Every socket refused: the follower finds each job's end by polling its status.
  for (const e of [a, b]) e.cloud.rejectSocketUpgrades(1_000_000);
});
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('an ending found by polling (the socket refused) is shown as one heard', () => {
  it('run: "Job completed in …" before the summary, and the outputs', async () => {
    const out = outDir();
    const r = await cli(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('polled')}"`, '--out', out, '--server', a.url]);
    expect(problems(r.stderr)).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Job completed in \d+\.\ds\nDone in \d+\.\ds: /m);
    expect(readdirSync(out)).toHaveLength(1);
    // No event reached the display: the follower's word alone ended it.
    expect(r.stdout).not.toMatch(/^Running /m);
  });

  it('run: a failure found by polling says the job failed, then where and when', async () => {
    const r = await cli(['run', failing, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('polledfail')}"`, '--out', outDir(), '--server', a.url]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^Job failed\nStopped after \d+\.\ds · 0\/3 nodes\n$/m);
    expect(r.stderr).toMatch(/OOMError/);
  });

  it('run over several --server (a pool): the same line', async () => {
    const r = await cli(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.filename_prefix="${unique('polledpool')}"`, '--out', outDir(), '--server', a.url, '--server', b.url]);
    expect(problems(r.stderr)).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Placed on /m);
    expect(r.stdout).toMatch(/^Job completed in \d+\.\ds\nDone in /m);
  });

  it('job --follow of a job that has ended: its ending line, then the summary', async () => {
    const c = new CloudClient({ baseUrl: a.url });
    try {
      const { name } = await c.uploadImage(makePng(8, 8, 0x404040), { filename: 'follow.png' });
      const result = await c.run({
        '1': { class_type: 'LoadImage', inputs: { image: name } },
        '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: unique('followed') } },
      });
      const r = await cli(['job', result.promptId, '--follow', '--out', outDir(), '--server', a.url]);
      expect(problems(r.stderr)).toEqual([]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Following job ${result.promptId}\\nJob completed in \\d+\\.\\ds\\nDone in `, 'm'));
    } finally {
      c.close();
    }
  });
});
