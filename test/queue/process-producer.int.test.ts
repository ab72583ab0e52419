// Issue 26, "a producer that exits right after add()": the job runs, and another process reads its
// result by id. Producer, worker and reader are each a process of their own; the server is an emulator
// (local personality) over loopback; Redis is real.
import { describe, expect, it } from 'vitest';
import type { QueueJobResult } from '../../src/queue/index.ts';
import { Child, postsOf, processFixture, runsOf, serverOf, startWorker } from './proc/harness.ts';

describe('a producer process that exits right after add()', () => {
  const real = processFixture({ a: [5, 2] });

  it('its job runs once, and a third process reads the result by id', async () => {
    const connection = real.redis.url;
    const name = 'exit-after-add';
    await startWorker(real.children.dir, { connection, name, servers: [serverOf(real.servers.a!, 'a')] });
    const producer = new Child(real.children.dir, 'producer', { connection, name, jobs: [{ jobId: 'job-a1', prefix: 'exit-after-add' }] });
    expect(await producer.done(), producer.stderr).toBe(0);
    expect(producer.lines()).toEqual(['added job-a1']);

    const reader = new Child(real.children.dir, 'client', { connection, name, op: 'result', ids: ['job-a1'] });
    expect(await reader.done(60_000), reader.stderr).toBe(0);
    const [line] = reader.lines().map((l) => JSON.parse(l) as { id: string; result?: QueueJobResult; error?: unknown });
    expect(line?.error).toBeUndefined();
    const result = line!.result!;
    const runs = await runsOf({ a: real.servers.a! }, 'exit-after-add');
    expect(runs).toHaveLength(1);
    expect(runs[0]!.job.status).toBe('completed');
    expect(result).toMatchObject({ promptId: runs[0]!.job.prompt_id, server: 'a', baseUrl: `${real.servers.a!.url}/` });
    expect(result.files.map((f) => f.filename)).toEqual([expect.stringMatching(/^exit-after-add/)]);
    expect([...(await postsOf(real.servers.a!))]).toEqual([[result.promptId, 1]]);
  }, 120_000);
});
