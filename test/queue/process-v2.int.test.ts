// Issue 33, "Pool and queue": a worker process killed with SIGKILL mid-submission to a Comfy API v2 server.
// The v2 server is an emulator in this (the test's) process, so it runs on when the worker dies, and the
// test kills the worker from inside the server's handling of the submission: exactly when it wants, no timing.
// Another worker process takes the job over: it finds the job by its Idempotency-Key (recorded as the job's
// promptId before the POST) or, when the POST made no job, submits it once under that key. Never two jobs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMULATOR_API_KEY, makePng, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { V2Error } from '../../src/emulator/v2/errors.ts';
import { JobQueue } from '../../src/queue/index.ts';
import { bundleChildren, killChildren, startWorker, type Child } from './proc/harness.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { jobWorkflow } from './proc/workflows.ts';

let redis: TestRedis;
let children: Awaited<ReturnType<typeof bundleChildren>>;
const open: Array<{ close(): unknown }> = [];
beforeAll(async () => {
  [redis, children] = await Promise.all([startRedis(), bundleChildren()]);
}, 60_000);
afterAll(async () => {
  await killChildren();
  for (const o of open.splice(0).reverse()) await o.close();
  await redis?.stop();
  children?.cleanup();
});

async function v2emulator(stepMs: number): Promise<Emulator> {
  const emu = await startEmulator({ personality: 'v2', logLevel: 'off', cloud: { stepMs, progressSteps: 2 } });
  open.push(emu);
  emu.cloud.addFile('in.png', makePng(8, 8, 1));
  return emu;
}
const workerOf = (emu: Emulator, name: string) =>
  startWorker(children.dir, {
    connection: redis.url,
    name,
    servers: [{ id: 'v2a', baseUrl: emu.url, apiKey: EMULATOR_API_KEY, server: 'v2', retry: { limit: 0 }, logLevel: 'off' }],
    // A dead worker's job is taken over once its lock lapses.
    lockDuration: 1000,
    stalledInterval: 500,
  });
function queueOf(name: string): JobQueue {
  const q = new JobQueue({ connection: redis.url, name });
  open.push(q);
  return q;
}
const jobsOf = (emu: Emulator, prefix: string) => [...emu.v2!.jobs.values()].filter((j) => (j.submitted['3'] as { inputs?: { filename_prefix?: unknown } } | undefined)?.inputs?.filename_prefix === prefix);

/** Runs `during` inside the server's handling of the next submission (then lets it go on, unless it throws). */
function onNextSubmission(emu: Emulator, during: () => void, at: 'arrival' | 'created'): void {
  const v2 = emu.v2!;
  if (at === 'arrival') {
    const claim = v2.claimKey.bind(v2);
    v2.claimKey = (...args) => {
      v2.claimKey = claim;
      during();
      return claim(...args);
    };
  } else {
    const track = v2.track.bind(v2);
    v2.track = (...args) => {
      v2.track = track;
      const r = track(...args);
      during();
      return r;
    };
  }
}

describe('a worker process killed with SIGKILL mid-submission to a v2 server', () => {
  it('after the job was made and its answer lost: the next worker finds it by its key; one job, the queue job completes', async () => {
    const name = 'v2-kill-after-create';
    const emu = await v2emulator(20);
    const first: Child = await workerOf(emu, name);
    // The job is made, the worker dies, and the answer is lost (the connection cut).
    emu.v2!.faults.loseSubmitAnswers = 1;
    onNextSubmission(emu, () => first.kill('SIGKILL'), 'created');
    const q = queueOf(name);
    const job = await q.add(jobWorkflow('killed-after-create'));
    await first.exited;
    expect(emu.v2!.counters.jobsCreated).toBe(1);
    const second = await workerOf(emu, name);
    const r = await job.result();
    expect(r.server).toBe('v2a');
    expect(r.files).toHaveLength(1);
    expect(emu.v2!.counters.jobsCreated).toBe(1);
    expect(emu.v2!.counters.jobPosts).toBe(1);
    expect(jobsOf(emu, 'killed-after-create').map((j) => j.id)).toEqual([r.promptId]);
    second.kill('SIGKILL');
    await second.exited;
  }, 60_000);

  it('as the POST arrived, before any job was made: the next worker submits it once under the same key', async () => {
    const name = 'v2-kill-on-arrival';
    const emu = await v2emulator(20);
    const first = await workerOf(emu, name);
    // The POST arrives; the worker dies there, and the server makes no job of it (nor keeps its key).
    const v2 = emu.v2!;
    const claim = v2.claimKey.bind(v2);
    const keys: string[] = [];
    let refuse = true;
    v2.claimKey = (lane, k, scope) => {
      if ((scope ?? 'jobs') === 'jobs') {
        keys.push(k);
        if (refuse) {
          refuse = false;
          first.kill('SIGKILL');
          throw new V2Error(503, 'internal_error', 'the test refused this submission');
        }
      }
      return claim(lane, k, scope);
    };
    const q = queueOf(name);
    const job = await q.add(jobWorkflow('killed-on-arrival'));
    await first.exited;
    expect(emu.v2!.counters.jobsCreated).toBe(0);
    const second = await workerOf(emu, name);
    const r = await job.result();
    expect(r.files).toHaveLength(1);
    expect(emu.v2!.counters.jobsCreated).toBe(1);
    expect(jobsOf(emu, 'killed-on-arrival').map((j) => j.id)).toEqual([r.promptId]);
    const key = jobsOf(emu, 'killed-on-arrival')[0]!.idempotencyKey;
    expect(key).toBeDefined();
    expect(keys).toEqual([key, key]);
    second.kill('SIGKILL');
    await second.exited;
  }, 60_000);

  it('while its job runs: the next worker follows it (found by its key); one job', async () => {
    const name = 'v2-kill-running';
    const emu = await v2emulator(200);
    const first = await workerOf(emu, name);
    const q = queueOf(name);
    const job = await q.add(jobWorkflow('killed-running'));
    // Killed once the server runs it (a node started): from the server's own engine.
    await new Promise<void>((resolve) => {
      const off = emu.cloud.subscribe((e) => {
        if (e.kind === 'json' && (e.message.type === 'executing' || e.message.type === 'execution_start')) {
          off();
          first.kill('SIGKILL');
          resolve();
        }
      });
    });
    await first.exited;
    const second = await workerOf(emu, name);
    const r = await job.result();
    expect(r.files).toHaveLength(1);
    expect(emu.v2!.counters.jobsCreated).toBe(1);
    expect(jobsOf(emu, 'killed-running').map((j) => j.id)).toEqual([r.promptId]);
    second.kill('SIGKILL');
    await second.exited;
  }, 60_000);
});
