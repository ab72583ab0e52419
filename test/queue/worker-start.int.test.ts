// Issue 32, item 10: a QueueWorker starts when it is constructed, as BullMQ's Worker does (a user who forgets
// ready() still gets a worker that takes jobs); a worker that cannot start (no bullmq) closes what it opened,
// so the process exits by itself, saying why once.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { QueueWorker } from '../../src/queue/index.ts';
import { closeAll, emulator, invert, open, queue } from './helpers.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

let redis: TestRedis;
beforeAll(async () => void (redis = await startRedis()));
afterAll(() => redis.stop());
afterEach(closeAll);

describe('a worker nobody awaits', () => {
  it('takes jobs all the same', async () => {
    const emu = await emulator();
    open.push(new QueueWorker({ connection: redis.url, name: 'unawaited', servers: [{ baseUrl: emu.url, id: 's0' }], logLevel: 'off' }));
    const job = await queue(redis.url, 'unawaited').add(invert('unawaited'), { waitForWorker: 10_000 });
    expect((await job.result()).files).toHaveLength(1);
  });
});

describe('without bullmq, in a process of its own', () => {
  const ROOT = fileURLToPath(new URL('../..', import.meta.url));
  // Bundled outside the repository: bullmq and ioredis (external) cannot be found from there.
  const dir = mkdtempSync(join(tmpdir(), 'pui-nodeps-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = async (awaited: boolean) => {
    // A server that answers: the pool's first look at it says nothing.
    const emu = await emulator();
    const file = join(dir, `worker-${awaited}.ts`);
    await esbuild.build({
      stdin: {
        contents: `import { QueueWorker } from ${JSON.stringify(join(ROOT, 'src/queue/index.ts'))};
const w = new QueueWorker({ connection: 'redis://127.0.0.1:1', servers: [{ baseUrl: ${JSON.stringify(emu.url)} }] });
${awaited ? "w.ready().catch((err) => console.log('ready() rejected: ' + err.message));" : ''}`,
        resolveDir: ROOT, loader: 'ts',
      },
      bundle: true, platform: 'node', format: 'esm', target: 'node22', logLevel: 'silent',
      external: ['bullmq', 'ioredis'], alias: { '@platformui/sdk': join(ROOT, 'src/index.ts') },
      outfile: file.replace(/\.ts$/, '.mjs'),
    });
    return spawnSync(process.execPath, [file.replace(/\.ts$/, '.mjs')], { cwd: dir, encoding: 'utf8', timeout: 20_000, env: { ...process.env, NO_COLOR: '1' } });
  };

  it('ready() rejects with the one line naming the install, and the process exits by itself', async () => {
    const r = await run(true);
    expect(r.signal).toBeNull(); // not killed by the timeout: it exited
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('ready() rejected: @platformui/sdk/queue needs bullmq and ioredis: npm install bullmq ioredis\n');
    expect(r.stderr).toBe('');
  });

  it('unawaited, the failed start is logged once, and the process exits by itself', async () => {
    const r = await run(false);
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('[platformui queue] the worker did not start: @platformui/sdk/queue needs bullmq and ioredis: npm install bullmq ioredis\n');
  });
});
