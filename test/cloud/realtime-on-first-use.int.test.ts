// Realtime (the socket, frame and message routing, the follower, run.ts) loads on first use (issue 34): a client that
// only makes REST calls never loads it, in Node and in a browser app's start chunk; run() loads it once.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

/** How many times run.ts (the realtime module, which re-exports the socket) was evaluated. */
const loads = vi.hoisted(() => ({ run: 0 }));
vi.mock('../../src/cloud/run.ts', async (importOriginal) => {
  loads.run++;
  return importOriginal();
});

const { CloudClient, NotFoundError } = await import('../../src/index.ts');
const { startEmulator, makePng } = await import('../../src/emulator/index.ts');
type Emulator = Awaited<ReturnType<typeof startEmulator>>;

describe('realtime loads on first use, in Node', () => {
  let emu: Emulator;
  beforeAll(async () => void (emu = await startEmulator({ personality: 'local', cloud: { stepMs: 0, progressSteps: 1 }, logLevel: 'off' })));
  afterAll(async () => emu?.close());

  it('getJob, listJobs and uploadImage never load it; run() does, once', async () => {
    const cloud = new CloudClient({ baseUrl: emu.url, logLevel: 'off' });
    const { name } = await cloud.uploadImage(makePng(8, 8, 1), { filename: 'rest.png' });
    await cloud.listJobs({ limit: 5 });
    await expect(cloud.getJob('00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(NotFoundError);
    expect(loads.run, 'REST calls loaded the realtime module').toBe(0);
    const workflow = {
      '1': { class_type: 'LoadImage', inputs: { image: name } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'first-use' } },
    };
    const result = await cloud.run(workflow);
    expect(result.files.length).toBeGreaterThan(0);
    await cloud.run(workflow);
    expect(loads.run).toBe(1);
    cloud.close();
  });
});

describe('realtime loads on first use, in a browser app', () => {
  const dist = fileURLToPath(new URL('../../dist/', import.meta.url));

  it("import { CloudClient }: the start chunk has no socket code; run.browser.js has it and is imported on first use", async () => {
    if (!existsSync(`${dist}index.browser.js`)) throw new Error('needs a build: npm run build');
    const out = await esbuild.build({
      stdin: { contents: `import { CloudClient } from ${JSON.stringify(`${dist}index.browser.js`)}; export { CloudClient };`, resolveDir: dist, loader: 'js' },
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'browser',
      outdir: '/virtual',
      write: false,
      metafile: true,
      external: ['./run.browser.js', './v2.browser.js', './editor.browser.js'],
      logLevel: 'silent',
    });
    const start = out.outputFiles.map((f) => f.text).join('\n');
    // The socket's own words: the feature flags it announces first, and its reconnect log.
    expect(start).not.toContain('supports_preview_metadata');
    expect(start).not.toContain('socket connecting to');
    expect(start).toContain('./run.browser.js');
    const lazy = readFileSync(`${dist}run.browser.js`, 'utf8');
    expect(lazy).toContain('supports_preview_metadata');
    expect(lazy).toContain('socket connecting to');
  });
});
