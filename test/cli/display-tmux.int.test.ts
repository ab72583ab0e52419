// The live display in a real terminal: a driver bundled from src/cli/display.ts
// (esbuild) runs in a tmux pane; `capture-pane` shows the live block mid-run
// (cursor hidden) and, after the run, only the lines that were printed plus
// the final summary: no leftover block, cursor visible. Skips without tmux.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

const hasTmux = spawnSync('which', ['tmux']).status === 0;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

// The run: info, submission, two cached nodes, a 20-step sampler paused halfway
// (until the test has looked at the block), then the rest and the summary.
const DRIVER = `
import { existsSync, writeFileSync } from 'node:fs';
import { createDisplay } from './src/cli/display.ts';
import { parseMessage } from './src/cloud/messages.ts';
const [paused, resume] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const nodes = { 1: { classType: 'CheckpointLoaderSimple' }, 2: { classType: 'CLIPTextEncode' }, 3: { classType: 'KSampler', title: 'Main sampler' }, 4: { classType: 'VAEDecode' }, 9: { classType: 'SaveImage' } };
const d = createDisplay({ mode: 'tty', out: process.stdout, color: true, nodes });
const ev = (type, data) => d.event(parseMessage(JSON.stringify({ type, data: { prompt_id: 'p1', ...data } })));
d.info('Uploaded photo.png as photo_1.png');
d.submitted('p1');
ev('execution_start', {});
ev('execution_cached', { nodes: ['1', '2'] });
ev('executing', { node: '3' });
for (let i = 1; i <= 10; i++) { ev('progress', { value: i, max: 20, node: '3' }); await sleep(15); }
d.info('a line above the block');
await sleep(200); // the throttled redraw lands
writeFileSync(paused, '');
while (!existsSync(resume)) await sleep(20);
for (let i = 11; i <= 20; i++) { ev('progress', { value: i, max: 20, node: '3' }); await sleep(5); }
ev('executing', { node: '4' });
ev('executing', { node: '9' });
ev('executed', { node: '9', output: { images: [{ filename: 'ComfyUI_00001_.png', subfolder: '', type: 'output' }] } });
ev('execution_success', {});
ev('executing', { node: null });
d.finish({ promptId: 'p1', files: [{ path: 'out/ComfyUI_00001_.png', bytes: 1234567 }] });
d.close();
`;

// Skipped, one test says why: in the results, not on the console (`npm test` prints only results).
if (!hasTmux) it('the live display in tmux: skipped', ({ skip }) => skip('tmux is not on PATH'));
describe.skipIf(!hasTmux)('the live display in tmux', () => {
  let dir: string | undefined;
  // A private tmux server: the user's sessions are never touched.
  const socket = `platformui-display-${process.pid}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
  const capture = () => tmux('capture-pane', '-p', '-t', 't').split('\n').map((l) => l.trimEnd()).filter(Boolean);
  const cursorVisible = () => tmux('display-message', '-p', '-t', 't', '#{cursor_flag}').trim() === '1';
  const waitFor = async (what: string, ok: () => boolean) => {
    for (const end = Date.now() + 15_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (ok()) return;
    throw new Error(`timed out waiting for ${what}; screen:\n${capture().join('\n')}`);
  };

  afterAll(() => {
    spawnSync('tmux', ['-L', socket, 'kill-server']);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('redraws one block in place and leaves only the summary, cursor shown', async () => {
    dir = mkdtempSync(join(tmpdir(), 'platformui-display-'));
    const script = join(dir, 'driver.mjs');
    await esbuild.build({
      stdin: { contents: DRIVER, resolveDir: ROOT, loader: 'ts', sourcefile: 'driver.ts' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      outfile: script,
      logLevel: 'silent',
    });
    const paused = join(dir, 'paused');
    const resume = join(dir, 'resume');
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    // The pane outlives the driver (sleep), so the screen can be read after it exits; -u: UTF-8 whatever the locale.
    tmux('-u', 'new-session', '-d', '-s', 't', '-x', '80', '-y', '24', `${q(process.execPath)} ${q(script)} ${q(paused)} ${q(resume)}; echo __END__; sleep 60`);

    await waitFor('the run to pause', () => existsSync(paused));
    const live = capture();
    expect(live.slice(0, 3)).toEqual(['Uploaded photo.png as photo_1.png', 'Submitted job p1', 'a line above the block']);
    expect(live.slice(3)).toEqual(['▶ KSampler "Main sampler" (#3)', `  ${'█'.repeat(15)}${'░'.repeat(15)} 10/20`, expect.stringMatching(/^ {2}2\/5 nodes · 2 cached · 0 previews · \ds$/)]);
    expect(cursorVisible()).toBe(false);

    writeFileSync(resume, '');
    await waitFor('the driver to exit', () => capture().includes('__END__'));
    expect(capture()).toEqual([
      'Uploaded photo.png as photo_1.png',
      'Submitted job p1',
      'a line above the block',
      expect.stringMatching(/^✓ Done in \d+\.\ds · 5\/5 nodes, 2 cached, 0 previews$/),
      '  1.2 MiB  out/ComfyUI_00001_.png',
      '__END__',
    ]);
    expect(cursorVisible()).toBe(true);
  });
});
