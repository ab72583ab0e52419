// Issue 26, "a producer that exits right after add()": the job runs, and another process reads its
// result by id. Producer, worker and reader are each a process of their own; the server is an emulator
// (local personality) over loopback; Redis is real.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueueJobResult } from '../../src/queue/index.ts';
import { Child, bundleChildren, killChildren, localServer, postsOf, runsOf, serverOf, startWorker, type LocalServer } from './proc/harness.ts';
import { startRedis, type TestRedis } from './redis.ts';

describe('a producer process that exits right after add()', () => {
  let redis: TestRedis;
  let children: Awaited<ReturnType<typeof bundleChildren>>;
  let emu: LocalServer;
  beforeAll(async () => {
    [redis, children] = await Promise.all([startRedis(), bundleChildren()]);
    emu = await localServer(children.dir, 5, 2);
  }, 60_000);
  afterAll(async () => {
    await killChildren(); // the server's process too
    await redis?.stop();
    children?.cleanup();
  });

  it('its job runs once, and a third process reads the result by id', async () => {
    const connection = redis.url;
    const name = 'exit-after-add';
    await startWorker(children.dir, { connection, name, servers: [serverOf(emu, 'a')] });
    const producer = new Child(children.dir, 'producer', { connection, name, jobs: [{ jobId: 'job-a1', prefix: 'exit-after-add' }] });
    expect(await producer.done(), producer.stderr).toBe(0);
    expect(producer.lines()).toEqual(['added job-a1']);

    const reader = new Child(children.dir, 'client', { connection, name, op: 'result', ids: ['job-a1'] });
    expect(await reader.done(60_000), reader.stderr).toBe(0);
    const [line] = reader.lines().map((l) => JSON.parse(l) as { id: string; result?: QueueJobResult; error?: unknown });
    expect(line?.error).toBeUndefined();
    const result = line!.result!;
    const runs = await runsOf({ a: emu }, 'exit-after-add');
    expect(runs).toHaveLength(1);
    expect(runs[0]!.job.status).toBe('completed');
    expect(result).toMatchObject({ promptId: runs[0]!.job.prompt_id, server: 'a', baseUrl: `${emu.url}/` });
    expect(result.files.map((f) => f.filename)).toEqual([expect.stringMatching(/^exit-after-add/)]);
    expect([...(await postsOf(emu))]).toEqual([[result.promptId, 1]]);
  }, 120_000);
});
