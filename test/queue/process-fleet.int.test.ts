// Issue 26, "two producers and three workers over three servers, 300 jobs": each ran exactly once
// (POSTs per job id counted on the servers), every result right, none stuck. Every producer, worker and
// the reader are processes of their own.
import { describe, expect, it } from 'vitest';
import type { QueueJobResult } from '../../src/queue/index.ts';
import { Child, jobsOn, postsOf, prefixOf, processFixture, serverOf, startWorker } from './proc/harness.ts';

const PER_PRODUCER = 150;

describe('two producers, three workers, three servers, 300 jobs', () => {
  const real = processFixture({ a: [1, 1], b: [1, 1], c: [1, 1] });

  it('each job ran exactly once, every result is its own, none is stuck', async () => {
    const connection = real.redis.url;
    const name = 'fleet';
    // Each worker next to its own server, as on three GPU machines.
    await Promise.all(Object.entries(real.servers).map(([id, emu]) => startWorker(real.children.dir, { connection, name, servers: [serverOf(emu, id)] })));
    const jobs = [0, 1].map((p) => Array.from({ length: PER_PRODUCER }, (_, i) => ({ jobId: `job-e${p}-${i}`, prefix: `fleet-${p}-${i}` })));
    const producers = jobs.map((list) => new Child(real.children.dir, 'producer', { connection, name, jobs: list }));
    for (const p of producers) expect(await p.done(120_000), p.stderr).toBe(0);
    const all = jobs.flat();

    const reader = new Child(real.children.dir, 'client', { connection, name, op: 'result', ids: all.map((j) => j.jobId) });
    expect(await reader.done(180_000), reader.stderr).toBe(0);
    const lines = new Map(reader.lines().map((l) => JSON.parse(l) as { id: string; result?: QueueJobResult; error?: unknown }).map((l) => [l.id, l]));
    expect(lines.size).toBe(all.length);

    const posts = await postsOf(...Object.values(real.servers));
    // What the servers hold, read once (every job has ended): 300 questions per server would carry it 300 times.
    const held = await jobsOn(real.servers);
    const wrong: string[] = [];
    for (const { jobId, prefix } of all) {
      const line = lines.get(jobId);
      const runs = held.filter((r) => prefixOf(r.job) === prefix);
      const result = line?.result;
      if (!result) wrong.push(`${jobId}: ${JSON.stringify(line?.error)}`);
      else if (runs.length !== 1) wrong.push(`${jobId}: ${runs.length} runs on the real.servers`);
      else if (runs[0]!.job.status !== 'completed' || runs[0]!.job.prompt_id !== result.promptId || runs[0]!.server !== result.server) wrong.push(`${jobId}: result ${result.promptId} on ${result.server}, the server has ${runs[0]!.job.prompt_id} on ${runs[0]!.server} (${runs[0]!.job.status})`);
      else if (result.files.length !== 1 || !result.files[0]!.filename.startsWith(prefix)) wrong.push(`${jobId}: files ${result.files.map((f) => f.filename).join(', ')}`);
      else if (posts.get(result.promptId) !== 1) wrong.push(`${jobId}: ${posts.get(result.promptId)} POSTs`);
    }
    expect(wrong).toEqual([]);
    expect([...posts.values()].reduce((a, b) => a + b, 0)).toBe(all.length);

    const states = new Child(real.children.dir, 'client', { connection, name, op: 'state', ids: all.map((j) => j.jobId) });
    expect(await states.done(), states.stderr).toBe(0);
    expect(new Set(states.lines().map((l) => (JSON.parse(l) as { state: string }).state))).toEqual(new Set(['completed']));
  }, 300_000);
});
