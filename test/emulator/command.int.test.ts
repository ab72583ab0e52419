// `platformui-emulator` (and `platformui emulator`, the same function) as a user starts it: the
// source bundled once (esbuild, dependencies external), run as a child process with no option. It
// imitates the live cloud by default and prints a line of environment variables that, pasted into
// a shell, points the command line and the SDK's clients at it; the command line then runs the
// README's examples (jobs, a registry search) against it over real loopback sockets.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir: string;
let emulatorBundle: string;
let cliBundle: string;
beforeAll(async () => {
  // Under the repo (.tmp/ is ignored), so the bundles' external packages resolve from node_modules.
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  dir = mkdtempSync(join(ROOT, '.tmp', 'emulator-command-'));
  emulatorBundle = join(dir, 'emulator-cli.mjs');
  cliBundle = join(dir, 'cli.mjs');
  const common: esbuild.BuildOptions = { bundle: true, platform: 'node', format: 'esm', target: 'node22', external: ['ws', 'form-data', 'zod'], logLevel: 'silent' };
  await Promise.all([
    esbuild.build({ ...common, entryPoints: [join(ROOT, 'src', 'emulator', 'cli.ts')], outfile: emulatorBundle }),
    esbuild.build({ ...common, entryPoints: [join(ROOT, 'src', 'cli', 'bin.ts')], outfile: cliBundle }),
  ]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The test's environment without anything that would configure the SDK or the command line. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('PLATFORMUI_') || k === 'NO_COLOR' || k === 'FORCE_COLOR') delete env[k];
  return env;
}

/** Starts the emulator command with `args`; resolves with what it printed once it listens, and a stop. */
async function startCommand(args: string[]) {
  const child = spawn(process.execPath, [emulatorBundle, '--port', '0', ...args], { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  // The banner is one write (under a pipe's atomic size): it arrives whole.
  for (const end = Date.now() + 10_000; !(out.includes('Cloud API key') && out.endsWith('\n')); await sleep(10)) {
    if (Date.now() > end || child.exitCode !== null) throw new Error(`the emulator printed no banner: ${out}${err}`);
  }
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  return {
    out,
    url,
    stop: async () => {
      child.kill('SIGINT');
      expect(await closed).toBe(0);
    },
  };
}

/** `export A=1 B=2` → `{ A: '1', B: '2' }`. */
function exported(out: string): Record<string, string> | undefined {
  const line = /^ {2}export (.+)$/m.exec(out)?.[1];
  return line === undefined ? undefined : Object.fromEntries(line.split(' ').map((pair) => pair.split('=') as [string, string]));
}

function cli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [cliBundle, ...args], { cwd: dir, env: { ...cleanEnv(), ...env }, encoding: 'utf8', timeout: 30_000 });
}

describe('the emulator command, started with no option', () => {
  it('imitates the live cloud and prints the variables that point the command line and the SDK at it', async () => {
    const emu = await startCommand([]);
    try {
      expect(emu.out).toContain('Cloud personality: cloud\nCloud API key (X-API-Key): emulator-key\n');
      expect(emu.out).toContain(
        `In another shell (this one runs the emulator until Ctrl-C), for the command line and the SDK:\n  export PLATFORMUI_CLOUD_URL=${emu.url} PLATFORMUI_API_KEY=emulator-key PLATFORMUI_BASE_URL=${emu.url} PLATFORMUI_TOKEN=emulator-token\n`,
      );
      const env = exported(emu.out)!;

      // Pasted: the README's command-line examples reach the cloud (with its jobs list) and the registry.
      const jobs = cli(['jobs', '--json'], env);
      expect([jobs.status, jobs.stderr]).toEqual([0, '']);
      const search = cli(['nodes', 'search', 'upscale', '--os', 'POSIX :: Linux', '--json'], env);
      expect(search.status).toBe(0);
      expect(search.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['acme-esrgan-upscale', 'acme-hires-fix']);
      const mine = cli(['nodes', 'search', '--os', 'Linux', '--json'], env);
      expect([mine.status, mine.stdout]).toEqual([0, '']);
    } finally {
      await emu.stop();
    }
  });

  it('prints the line for the spec personality too, and none for a local server (no key to give)', async () => {
    const spec = await startCommand(['--personality', 'spec']);
    const local = await startCommand(['--personality', 'local']);
    try {
      expect(exported(spec.out)).toEqual({ PLATFORMUI_CLOUD_URL: spec.url, PLATFORMUI_API_KEY: 'emulator-key', PLATFORMUI_BASE_URL: spec.url, PLATFORMUI_TOKEN: 'emulator-token' });
      expect(local.out).toContain('Cloud personality: local\n');
      expect(local.out).not.toContain('export ');
      expect(local.out).not.toContain('PLATFORMUI_');
    } finally {
      await Promise.all([spec.stop(), local.stop()]);
    }
  });
});
