// CloudPool over three emulator instances (the local personality: one shared queue, one
// job at a time, like a real local server), over real loopback sockets. Each emulator can
// be stopped mid-run and restarted on the same port. Covers issue 17's list: spread by
// load and weight, maxConcurrent, priority, placement by class and combo value, inputs
// uploaded once per server and content, dead / stopped / restarted servers, add/remove
// at run time, abort in each stage, close(), two pools over the same servers, and
// 10,000 queued jobs.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { APIConnectionError, APIUserAbortError, CloudClient, InvalidArgumentError, PlacementError, PoolClosedError, ServerLostError, type PoolJob, type PoolJobResult } from '../../../src/index.ts';
import { makePng } from '../../../src/emulator/index.ts';
import { until } from '../../helpers/emulator-runs.ts';
import { recordFiredTimers } from '../../helpers/timers-fired.ts';
// Placement's work is counted, not timed: every server a placement considers is one call of `choose`'s predicate.
const placement = vi.hoisted(() => ({ considered: 0 }));
vi.mock('../../../src/cloud/pool/placement.ts', async (load) => {
  const real = await load<typeof import('../../../src/cloud/pool/placement.ts')>();
  return { ...real, choose: (servers: Parameters<typeof real.choose>[0], canRun: Parameters<typeof real.choose>[1], turn: number) => real.choose(servers, (s) => (placement.considered++, canRun(s)), turn) };
});
import { allUp, blurWorkflow, closeAll, countBy, delay, dropChoice, dropClass, foreign, IDS, jobsOf, live, open, outcome, poolOf, posts, scaleWorkflow, server, submissions, three, uploads, workflow, type Wf } from './helpers.ts';

afterEach(closeAll);

// ------------------------------------------------------------------ placement by load and weight

describe('spread by load and weight', () => {
  it('spreads jobs over three equal servers: ties go round-robin, each takes a share', async () => {
    const emus = await three();
    const pool = poolOf(emus);
    await allUp(pool);
    // In one tick: the ties rotate, one each.
    const first = [0, 1, 2].map((i) => pool.submit(workflow(`rr-${i}`)));
    expect(first.map((j) => j.server)).toEqual(['a', 'b', 'c']);
    expect(pool.servers.map((s) => s.active)).toEqual([1, 1, 1]);
    expect(pool.servers.map((s) => s.load)).toEqual([1, 1, 1]);
    const rest = Array.from({ length: 12 }, (_, i) => pool.run(workflow(`spread-${i}`)));
    const results = await Promise.all([...first.map((j) => j.result), ...rest]);
    const by = countBy(results);
    for (const id of ['a', 'b', 'c']) expect(by[id]).toBeGreaterThanOrEqual(3);
    // Each ran where the result says, once.
    for (const [k, r] of results.entries()) {
      const prefix = k < 3 ? `rr-${k}` : `spread-${k - 3}`;
      const on = emus.map((e) => jobsOf(e, prefix).length);
      expect(on.reduce((x, y) => x + y)).toBe(1);
      expect(on[IDS.indexOf(r.server)]).toBe(1);
      expect(r.files).toHaveLength(1);
    }
  });

  it('passes run() options and events through: onSubmitted, onProgress, onPreview, onEvent; the result says where', async () => {
    const emus = await three({ stepMs: 10 });
    const pool = poolOf(emus);
    await allUp(pool);
    const seen = { submitted: '', progress: 0, previews: 0, events: 0 };
    const job = pool.submit(workflow('events'), {
      onSubmitted: (id) => void (seen.submitted = id),
      onProgress: () => void seen.progress++,
      onPreview: () => void seen.previews++,
      onEvent: () => void seen.events++,
    });
    const r = await job;
    expect(r.promptId).toBe(seen.submitted);
    expect(job.promptId).toBe(r.promptId);
    expect(job.state).toBe('settled');
    expect(r.server).toBe(job.server);
    expect(seen.progress).toBeGreaterThan(0);
    expect(seen.previews).toBeGreaterThan(0);
    expect(seen.events).toBeGreaterThan(0);
    expect(jobsOf(emus[IDS.indexOf(r.server)]!, 'events')[0]!.prompt_id).toBe(r.promptId);
  });

  it('a server busy with another client’s jobs gets fewer of the pool’s', async () => {
    const emus = await three({ stepMs: 20 });
    const pool = poolOf(emus);
    await allUp(pool);
    await foreign(emus[0]!, 6, 'other');
    // The pool sees them through a's queue (status events' queue_remaining).
    await until(() => pool.servers[0]!.load >= 5, 3000, 'a shows its queue');
    expect(pool.servers[0]!.active).toBe(0);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => pool.run(workflow(`busy-${i}`))));
    const by = countBy(results);
    expect(by.a ?? 0).toBeLessThan(by.b ?? 0);
    expect(by.a ?? 0).toBeLessThan(by.c ?? 0);
    expect(by.a ?? 0).toBeLessThanOrEqual(2); // at most maxConcurrent while its own queue is long
  });

  it('weight: with load from other clients, a weight-3 server takes more (least load / weight, ties round-robin)', async () => {
    const emus = await three({ stepMs: 200 });
    const pool = poolOf(emus, {}, (i) => ({ weight: i === 0 ? 3 : 1, maxConcurrent: 20 }));
    await allUp(pool);
    for (const [i, e] of emus.entries()) await foreign(e, 2, `other-${i}`);
    await until(() => pool.servers.every((s) => s.load === 2), 3000, 'loads of 2');
    // Scores 2/3, 2, 2: a takes jobs until 6/3 = 2, then ties rotate; all in one tick.
    const jobs = Array.from({ length: 8 }, (_, i) => pool.submit(workflow(`w-${i}`)));
    const active = Object.fromEntries(pool.servers.map((s) => [s.id, s.active]));
    expect(active).toEqual({ a: 6, b: 1, c: 1 });
    expect(pool.servers.map((s) => s.load)).toEqual([8, 3, 3]);
    expect(pool.servers.map((s) => s.weight)).toEqual([3, 1, 1]);
    expect(jobs.map((j) => j.server)).toEqual(['a', 'a', 'a', 'a', 'b', 'c', 'a', 'a']);
    await pool.close({ cancel: true });
  });

  it('without other load, weight decides the first placements too', async () => {
    const emus = await three({ stepMs: 200 });
    const pool = poolOf(emus, {}, (i) => ({ weight: i === 0 ? 3 : 1, maxConcurrent: 20 }));
    await allUp(pool);
    Array.from({ length: 10 }, (_, i) => pool.submit(workflow(`w0-${i}`)));
    const active = pool.servers.map((s) => s.active);
    // load/weight stays level: a ≈ 3× b and c.
    expect(active[0]).toBeGreaterThanOrEqual(5);
    expect(active[0]).toBeGreaterThan(2 * active[1]!);
    expect(active[0]).toBeGreaterThan(2 * active[2]!);
    await pool.close({ cancel: true });
  });

  it('maxConcurrent: never more of the pool’s jobs on a server than its limit; the rest wait in the pool', async () => {
    const emus = await three({ stepMs: 10 });
    const limits = [1, 2, 3];
    const pool = poolOf(emus, {}, (i) => ({ maxConcurrent: limits[i] }));
    await allUp(pool);
    const runs = Array.from({ length: 18 }, (_, i) => pool.run(workflow(`mc-${i}`)));
    expect(pool.servers.map((s) => s.active)).toEqual(limits);
    expect(pool.waiting).toBe(18 - 6);
    const peak = [0, 0, 0];
    let maxWaiting = 0;
    const sample = setInterval(() => {
      for (const [i, e] of emus.entries()) {
        peak[i] = Math.max(peak[i]!, live(e), pool.servers[i]!.active);
      }
      maxWaiting = Math.max(maxWaiting, pool.waiting);
    }, 1);
    const results = await Promise.all(runs).finally(() => clearInterval(sample));
    expect(results).toHaveLength(18);
    for (const [i, p] of peak.entries()) expect(p).toBeLessThanOrEqual(limits[i]!);
    expect(peak[2]).toBeGreaterThanOrEqual(2); // the limit was reached, not just respected by idling
    expect(maxWaiting).toBe(12);
    expect(pool.waiting).toBe(0);
    expect(pool.servers.map((s) => s.active)).toEqual([0, 0, 0]);
  });

  it('priority: a higher-priority job queued later starts before earlier lower ones; equals in order', async () => {
    const [emu] = await Promise.all([server({ stepMs: 10 })]);
    const pool = poolOf([emu!], {}, () => ({ maxConcurrent: 1 }));
    await allUp(pool);
    const order: string[] = [];
    const go = (name: string, priority?: number) => pool.run(workflow(`prio-${name}`), { ...(priority !== undefined ? { priority } : {}), onSubmitted: () => void order.push(name) });
    const runs = [go('filler'), go('low1'), go('low2'), go('low3', 0), go('high', 5), go('mid', 1), go('neg', -1), go('high2', 5)];
    expect(pool.waiting).toBe(7);
    await Promise.all(runs);
    expect(order).toEqual(['filler', 'high', 'high2', 'mid', 'low1', 'low2', 'low3', 'neg']);
  });
});

// ------------------------------------------------------------------ placement by capability

describe('a job goes only where it can run', () => {
  it('a server without a class never gets that workflow', async () => {
    const emus = await three();
    // The emulator has no option for its catalogue: drop ImageBlur from a's own object_info,
    // which its submissions are validated against too (a real difference, not a client trick).
    const a = emus[0]!;
    dropClass(a, 'ImageBlur');
    const pool = poolOf(emus);
    await allUp(pool);
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => pool.run(blurWorkflow(`blur-${i}`))));
    expect(results.every((r) => r.server !== 'a')).toBe(true);
    expect(submissions(a)).toBe(0);
    // a still takes what it can run.
    const plain = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.run(workflow(`plain-${i}`))));
    expect(plain.some((r) => r.server === 'a')).toBe(true);
  });

  it('a server without a model (a combo value) never gets that workflow', async () => {
    const emus = await three();
    dropChoice(emus[0]!, 'ImageScale', 'upscale_method', 'lanczos');
    dropChoice(emus[2]!, 'ImageScale', 'upscale_method', 'lanczos');
    const pool = poolOf(emus);
    await allUp(pool);
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.run(scaleWorkflow(`model-${i}`))));
    expect(results.every((r) => r.server === 'b')).toBe(true);
    expect(submissions(emus[0]!) + submissions(emus[2]!)).toBe(0);
    // Others go anywhere.
    const anywhere = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.run(scaleWorkflow(`bilinear-${i}`, 'bilinear'))));
    expect(Object.keys(countBy(anywhere)).sort()).toEqual(['a', 'b', 'c']);
  });

  it('a server-side input file (LoadImage’s list) only one server has: the job goes there', async () => {
    const emus = await three();
    emus[1]!.cloud.addFile('only-b.png', makePng(8, 8, 3)); // in b's LoadImage list only
    const pool = poolOf(emus);
    await allUp(pool);
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => outcome(pool.run(workflow(`file-${i}`, 'only-b.png')))));
    // validateWorkflow() makes a file missing from LoadImage's list only a warning ("may have been
    // uploaded since"); placement counts it as a miss, so the job goes to b, the one server listing it.
    expect(results.map((r) => (r instanceof Error ? r.message : r.server))).toEqual(Array(6).fill('b'));
  });

  it('a workflow no server can run rejects at once with PlacementError naming every server, before any upload or submission', async () => {
    const emus = await three();
    const pool = poolOf(emus);
    await allUp(pool);
    const before = emus.map(posts);
    const bad: Wf = { ...workflow('nowhere'), '2': { class_type: 'NoSuchNode', inputs: { image: ['1', 0] } } };
    const asked = emus.map((e) => e.requests.length);
    const timers = recordFiredTimers('cloud/pool/');
    const err = await outcome(pool.run(bad, { inputs: { '1.inputs.image': makePng(4, 4, 9) } })).finally(timers.restore);
    // At once: judged from what the pool knew, not left waiting for a server that could take it (seconds), told by
    // what happened rather than a clock: no server asked anything, no timer of the pool's fired.
    expect(emus.map((e) => e.requests.length)).toEqual(asked);
    expect(timers.fired).toEqual([]);
    expect(err).toBeInstanceOf(PlacementError);
    const reasons = (err as PlacementError).reasons;
    expect(Object.keys(reasons).sort()).toEqual(['a', 'b', 'c']);
    for (const r of Object.values(reasons)) expect(r.join(' ')).toMatch(/NoSuchNode/);
    expect((err as Error).message).toMatch(/^No server can run this workflow: a: /);
    // A combo value no server has, likewise.
    const err2 = await outcome(pool.run(scaleWorkflow('nowhere2', 'no-such-method')));
    expect(err2).toBeInstanceOf(PlacementError);
    expect(Object.keys((err2 as PlacementError).reasons).sort()).toEqual(['a', 'b', 'c']);
    expect(emus.map(posts)).toEqual(before);
    expect(pool.waiting).toBe(0);
  });

  it('submitted before the servers are known: rejects as soon as all are, still without any upload or submission', async () => {
    const emus = await three();
    const pool = poolOf(emus);
    const bad: Wf = { ...workflow('early'), '2': { class_type: 'NoSuchNode', inputs: { image: ['1', 0] } } };
    const err = await outcome(pool.run(bad, { inputs: { '1.inputs.image': makePng(4, 4, 9) } }));
    expect(err).toBeInstanceOf(PlacementError);
    expect(Object.keys((err as PlacementError).reasons).sort()).toEqual(['a', 'b', 'c']);
    expect(emus.map(posts)).toEqual([0, 0, 0]);
  });
});

// ------------------------------------------------------------------ inputs

describe('inputs', () => {
  it('uploads each content once per server, puts the upload’s name into the workflow, and another content again', async () => {
    const emus = await three();
    const pool = poolOf(emus, {}, () => ({ maxConcurrent: 3 }));
    await allUp(pool);
    const png1 = makePng(8, 8, 5);
    // 9 at once: three per server, their uploads of the same bytes shared.
    const r1 = await Promise.all(Array.from({ length: 9 }, (_, i) => pool.run(workflow(`in1-${i}`, 'placeholder.png'), { inputs: { '1.inputs.image': png1 } })));
    expect(countBy(r1)).toEqual({ a: 3, b: 3, c: 3 });
    expect(emus.map(uploads)).toEqual([1, 1, 1]);
    // Again, later, as a Blob and as an ArrayBuffer of the same bytes: no upload.
    const again = await Promise.all([
      pool.run(workflow('in1-blob', 'placeholder.png'), { inputs: { '1.inputs.image': new Blob([new Uint8Array(png1)]) } }),
      pool.run(workflow('in1-ab', 'placeholder.png'), { inputs: { '1.inputs.image': new Uint8Array(png1).buffer } }),
      pool.run(workflow('in1-u8', 'placeholder.png'), { inputs: { '1.inputs.image': png1 } }),
    ]);
    expect(again).toHaveLength(3);
    expect(emus.map(uploads)).toEqual([1, 1, 1]);
    // The workflow each server ran names the file it holds.
    const names = new Set<string>();
    for (const e of emus) {
      for (const j of jobsOf(e).filter((j) => String(j.prompt['3']!.inputs.filename_prefix).startsWith('in1-'))) {
        const name = j.prompt['1']!.inputs.image as string;
        expect(name).not.toBe('placeholder.png');
        expect(e.cloud.hasInputFile(name)).toBe(true);
        names.add(name);
      }
    }
    expect(names.size).toBe(1); // same content, same name everywhere
    // Different bytes: one more upload on each server that runs them.
    const png2 = makePng(8, 8, 6);
    const r2 = await Promise.all(Array.from({ length: 3 }, (_, i) => pool.run(workflow(`in2-${i}`, 'placeholder.png'), { inputs: { '1.inputs.image': png2 } })));
    const by2 = countBy(r2);
    expect(emus.map(uploads)).toEqual(IDS.slice(0, 3).map((id) => 1 + (by2[id] ? 1 : 0)));
    const name2 = jobsOf(emus[IDS.indexOf(r2[0]!.server)]!, 'in2-0')[0]!.prompt['1']!.inputs.image;
    expect(name2).not.toBe([...names][0]);
    // The job given to the pool is not changed by the pool.
    const wf = workflow('in3', 'placeholder.png');
    await pool.run(wf, { inputs: { '1.inputs.image': png2 } });
    expect(wf['1']!.inputs.image).toBe('placeholder.png');
  });

  it('a bad input path or a stream is an InvalidArgumentError before any request', async () => {
    const emus = await three();
    const pool = poolOf(emus);
    await allUp(pool);
    const before = emus.map((e) => e.requests.length);
    const wf = workflow('bad-inputs', 'placeholder.png');
    const cases: unknown[] = [
      { '99.inputs.image': makePng(4, 4, 1) },
      { x: makePng(4, 4, 1) },
      { '1.inputs.': makePng(4, 4, 1) },
      { '.inputs.image': makePng(4, 4, 1) },
      { '1.inputs.image': new ReadableStream() },
      { '1.inputs.image': 42 },
      'not an object',
    ];
    for (const inputs of cases) {
      expect(() => pool.submit(wf, { inputs } as never)).toThrow(InvalidArgumentError);
      const err = await outcome(pool.run(wf, { inputs } as never));
      expect(err).toBeInstanceOf(InvalidArgumentError);
    }
    expect(pool.waiting).toBe(0);
    await delay(50);
    expect(emus.map((e) => e.requests.length)).toEqual(before);
  });
});

// ------------------------------------------------------------------ faults

describe('servers that die, come back, or never answer', () => {
  it('a server stopped mid-run: its accepted jobs reject with ServerLostError, waiting jobs go elsewhere, every run settles once', async () => {
    const emus = await three({ stepMs: 60, progressSteps: 2 });
    const pool = poolOf(emus, { serverLostAfter: 800 });
    const downs: Array<{ server: string; reason: string }> = [];
    pool.on('serverDown', (e) => downs.push(e));
    await allUp(pool);
    const settlements = new Map<number, number>();
    const jobs = Array.from({ length: 12 }, (_, i) => pool.submit(workflow(`lost-${i}`), { pollInterval: 50 }));
    const outcomes = jobs.map((j, i) =>
      j.result.then(
        (r) => (settlements.set(i, (settlements.get(i) ?? 0) + 1), r),
        (e: unknown) => (settlements.set(i, (settlements.get(i) ?? 0) + 1), e as Error),
      ),
    );
    const a = emus[0]!;
    await until(() => jobsOf(a).some((j) => j.status === 'in_progress') && jobsOf(a).some((j) => j.status === 'pending') && jobs.filter((j) => j.server === 'a' && j.promptId).length === 2, 3000, 'a busy');
    const onA = jobs.filter((j) => j.server === 'a' && j.promptId !== undefined);
    expect(onA.length).toBe(2);
    expect(pool.waiting).toBeGreaterThan(0);
    const lostIds = onA.map((j) => j.promptId);
    await a.close();
    const done = await Promise.all(outcomes);
    const lost = done.filter((r): r is ServerLostError => r instanceof ServerLostError);
    expect(lost.map((e) => e.promptId).sort()).toEqual([...lostIds].sort());
    for (const e of lost) {
      expect(e.reason).toBe('unreachable');
      // It names the server by the pool's id for it.
      expect(e.server).toBe('a');
      expect(e.message).toMatch(new RegExp(`^Lost job ${e.promptId} on a: no answer for \\d+ s$`));
      // Not before the bound, on the follower's own measure of the silence rather than the test's clock.
      expect(e.silentMs).toBeGreaterThanOrEqual(800);
    }
    // Every other job completed on b or c, once.
    const ok = done.filter((r): r is PoolJobResult => !(r instanceof Error));
    expect(ok).toHaveLength(10);
    expect(ok.every((r) => r.server !== 'a' && r.resubmittedFrom === undefined)).toBe(true);
    // Nothing ran twice: the lost ones not again on b or c (a's emulator forgot its jobs on close).
    for (const [i, j] of jobs.entries()) {
      const runs = jobsOf(emus[1]!, `lost-${i}`).length + jobsOf(emus[2]!, `lost-${i}`).length;
      expect(runs).toBe(lostIds.includes(j.promptId) ? 0 : 1);
    }
    expect([...settlements.values()].every((n) => n === 1) && settlements.size === 12).toBe(true);
    expect(downs.filter((d) => d.server === 'a').length).toBeGreaterThanOrEqual(1);
    expect(downs[0]!.reason).toBeTruthy();
    expect(pool.servers[0]!.state).toBe('down');
    expect(pool.servers[0]!.active).toBe(0);
  });

  it('with resubmitOnServerLoss, the lost jobs run once more elsewhere and say so', async () => {
    const emus = await three({ stepMs: 60, progressSteps: 2 });
    const pool = poolOf(emus, { serverLostAfter: 800, resubmitOnServerLoss: true });
    await allUp(pool);
    const jobs = Array.from({ length: 9 }, (_, i) => pool.submit(workflow(`resub-${i}`), { pollInterval: 50 }));
    const outcomes = jobs.map((j) => outcome(j));
    const a = emus[0]!;
    await until(() => jobsOf(a).some((j) => j.status === 'in_progress') && jobsOf(a).some((j) => j.status === 'pending') && jobs.filter((j) => j.server === 'a' && j.promptId).length === 2, 3000, 'a busy');
    const onA = new Map(jobs.flatMap((j, i) => (j.server === 'a' && j.promptId ? [[i, j.promptId] as const] : [])));
    expect(onA.size).toBe(2);
    await a.close();
    const done = await Promise.all(outcomes);
    expect(done.every((r) => !(r instanceof Error))).toBe(true);
    const results = done as PoolJobResult[];
    for (const [i, r] of results.entries()) {
      expect(r.server).not.toBe('a');
      expect(r.files).toHaveLength(1);
      if (onA.has(i)) expect(r.resubmittedFrom).toEqual({ server: 'a', promptId: onA.get(i) });
      else expect(r.resubmittedFrom).toBeUndefined();
      // b and c ran each job once.
      expect(jobsOf(emus[1]!, `resub-${i}`).length + jobsOf(emus[2]!, `resub-${i}`).length).toBe(1);
    }
  });

  it('a server brought back fires serverUp and gets jobs again', async () => {
    const emus = await three({ stepMs: 10 });
    const pool = poolOf(emus, { serverLostAfter: 800 });
    const events: string[] = [];
    pool.on('serverDown', (e) => events.push(`down ${e.server}`));
    pool.on('serverUp', (e) => events.push(`up ${e.server}: ${e.reason}`));
    await allUp(pool);
    const a = emus[0]!;
    const port = a.port;
    await a.close();
    await until(() => pool.servers[0]!.state === 'down', 3000, 'a down');
    const meanwhile = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.run(workflow(`gone-${i}`))));
    expect(meanwhile.every((r) => r.server !== 'a')).toBe(true);
    const back = await server({ port, stepMs: 10 });
    await until(() => pool.servers[0]!.state === 'up', 8000, 'a up again');
    expect(events[0]).toBe('down a');
    expect(events.some((e) => e.startsWith('up a: '))).toBe(true);
    const after = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.run(workflow(`back-${i}`))));
    expect(after.filter((r) => r.server === 'a').length).toBeGreaterThanOrEqual(1);
    expect(jobsOf(back).length).toBeGreaterThanOrEqual(1);
  });

  it('a server brought back (restarted, its input files gone) takes jobs whose inputs it had before', async () => {
    const emus = await three({ stepMs: 10 });
    const pool = poolOf(emus, { serverLostAfter: 800 });
    await allUp(pool);
    const png = makePng(8, 8, 7);
    const first = await Promise.all(Array.from({ length: 3 }, (_, i) => pool.run(workflow(`up1-${i}`, 'placeholder.png'), { inputs: { '1.inputs.image': png } })));
    expect(countBy(first)).toEqual({ a: 1, b: 1, c: 1 });
    const a = emus[0]!;
    const port = a.port;
    await a.close();
    await until(() => pool.servers[0]!.state === 'down', 3000, 'a down');
    const back = await server({ port, stepMs: 10 }); // a fresh server: no uploaded files
    await until(() => pool.servers[0]!.state === 'up', 8000, 'a up again');
    const after = await Promise.all(Array.from({ length: 3 }, (_, i) => outcome(pool.run(workflow(`up2-${i}`, 'placeholder.png'), { inputs: { '1.inputs.image': png } }))));
    // The pool's upload cache (per server, by content hash) must not outlive the server's
    // restart: the file is uploaded again, not named where the server no longer has it.
    expect(after.filter((r) => r instanceof Error).map((e) => (e as Error).message)).toEqual([]);
    expect(uploads(back)).toBe(1);
  });

  it('a server restarted within serverLostAfter forgot its jobs: ServerLostError (forgotten), or run again with resubmitOnServerLoss', async () => {
    for (const resubmit of [false, true]) {
      const emus = await three({ stepMs: 80, progressSteps: 2 });
      const pool = poolOf(emus, { serverLostAfter: 60_000, resubmitOnServerLoss: resubmit }, () => ({ maxConcurrent: 1 }));
      await allUp(pool);
      const jobs = Array.from({ length: 3 }, (_, i) => pool.submit(workflow(`forgot-${resubmit}-${i}`), { pollInterval: 50 }));
      const a = emus[0]!;
      await until(() => jobsOf(a).some((j) => j.status === 'in_progress') && jobs[0]!.promptId !== undefined, 3000, 'a running');
      const lostId = jobs[0]!.promptId;
      await a.close();
      const back = await server({ port: a.port, stepMs: 10 });
      // Not serverLostAfter (60 s), told by what the pool did rather than a clock: the restarted server's first
      // answers about the job decided it. One that went on asking (waiting the bound out) ends this wait, and fails.
      const askedAbout = () => back.requests.filter((r) => r.path.includes(lostId!)).map((r) => `${r.method} ${r.path.replace(lostId!, ':id')}`);
      let settled = false;
      const all = Promise.all(jobs.map((j) => outcome(j))).finally(() => void (settled = true));
      await until(() => settled || askedAbout().length > 10, 60_000, 'the runs to settle');
      // Its first question about the job (one more already on its way at most), not one every poll interval.
      expect(askedAbout().length).toBeGreaterThan(0);
      expect(askedAbout().length).toBeLessThanOrEqual(2);
      const done = await all;
      if (!resubmit) {
        expect(done[0]).toBeInstanceOf(ServerLostError);
        expect(done[0]).toMatchObject({ reason: 'forgotten', promptId: lostId, server: 'a' });
        expect(jobsOf(back)).toHaveLength(0); // nothing re-sent
      } else {
        expect((done[0] as PoolJobResult).resubmittedFrom).toEqual({ server: 'a', promptId: lostId });
        expect((done[0] as PoolJobResult).server).not.toBe('a'); // elsewhere, though a is back and idle
        expect((done[0] as PoolJobResult).files).toHaveLength(1);
      }
      for (const r of done.slice(1)) expect((r as PoolJobResult).files).toHaveLength(1);
      await pool.close();
    }
  });

  it('a job only a down server can run waits for it, and fails with PlacementError once it has been silent for serverLostAfter', async () => {
    const emus = await three({ stepMs: 10 });
    dropChoice(emus[1]!, 'ImageScale', 'upscale_method', 'lanczos');
    dropChoice(emus[2]!, 'ImageScale', 'upscale_method', 'lanczos');
    const pool = poolOf(emus, { serverLostAfter: 800 });
    await allUp(pool);
    const a = emus[0]!;
    const port = a.port;
    // How long a server has been down is read on a clock the test moves: Date only (timers, sockets and probes stay
    // real), standing still until the test moves it, so a loaded machine cannot make the bound pass early.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    let err: unknown;
    try {
      await a.close();
      await until(() => pool.servers[0]!.state === 'down', 3000, 'a down');
      // Back in time: it runs there.
      const soon = pool.run(scaleWorkflow('wait-a-0'));
      await delay(200);
      expect(pool.waiting).toBe(1);
      await server({ port, stepMs: 10 });
      expect((await soon).server).toBe('a');
      // Not back: PlacementError once silent for serverLostAfter, the reason per server. Not before: it waits while
      // the clock stands still.
      await open.at(-1)!.close();
      await until(() => pool.servers[0]!.state === 'down', 3000, 'a down again');
      const failing = outcome(pool.run(scaleWorkflow('wait-a-1')));
      await delay(200);
      expect(pool.waiting).toBe(1);
      vi.setSystemTime(Date.now() + 800);
      err = await failing;
    } finally {
      vi.useRealTimers();
    }
    expect(err).toBeInstanceOf(PlacementError);
    const reasons = (err as PlacementError).reasons;
    expect(reasons.a!.join(' ')).toMatch(/down for \d+ s/);
    expect(reasons.b!.join(' ')).toMatch(/lanczos/);
    expect(Object.keys(reasons).sort()).toEqual(['a', 'b', 'c']);
  });

  it('a server whose port refuses from the start: marked down, nothing placed there, nothing lost', async () => {
    const emus = await three({ stepMs: 10 });
    const dead = emus[0]!;
    await dead.close();
    const pool = poolOf(emus, { serverLostAfter: 800 });
    const downs: Array<{ server: string; reason: string }> = [];
    pool.on('serverDown', (e) => downs.push(e));
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => pool.run(workflow(`refused-${i}`))));
    expect(results.every((r) => r.server === 'b' || r.server === 'c')).toBe(true);
    expect(downs.map((d) => d.server)).toEqual(['a']);
    expect(downs[0]!.reason).toMatch(/ECONNREFUSED|refused|connect/i);
    expect(pool.servers.map((s) => s.state)).toEqual(['down', 'up', 'up']);
  });

  it('a submission refused by its server (ECONNREFUSED: it never arrived) runs elsewhere at once, once', async () => {
    const emus = await three({ stepMs: 10 });
    // What a fetch to a closed port throws in Node (undici): the code proves nothing was sent.
    let refusals = 0;
    const refusing: typeof fetch = async (input, init) => {
      if (init?.method === 'POST' && /\/prompt$/.test(new URL(String(input)).pathname) && refusals++ === 0) {
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) });
      }
      return fetch(input, init);
    };
    const pool = poolOf(emus, { serverLostAfter: 800 }, (i) => (i === 0 ? { fetch: refusing } : {}));
    await allUp(pool);
    const a = emus[0]!;
    const jobs = Array.from({ length: 3 }, (_, i) => pool.submit(workflow(`never-${i}`)));
    expect(jobs[0]!.server).toBe('a');
    const results = await Promise.all(jobs.map((j) => j.result));
    expect(results[0]!.server).not.toBe('a');
    expect(results[0]!.resubmittedFrom).toBeUndefined();
    expect(refusals).toBeGreaterThanOrEqual(1);
    expect(jobsOf(a, 'never-0')).toHaveLength(0);
    for (let i = 0; i < 3; i++) expect(emus.map((e) => jobsOf(e, `never-${i}`).length).reduce((x, y) => x + y)).toBe(1);
    // a answers again: it comes back and takes jobs.
    await until(() => pool.servers[0]!.state === 'up', 5000, 'a up again');
    const more = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.run(workflow(`never-more-${i}`))));
    expect(more.some((r) => r.server === 'a')).toBe(true);
  });

  it('a connection lost after the submission was sent is not run again unasked; with resubmitOnServerLoss it runs once elsewhere', async () => {
    for (const resubmitOnServerLoss of [false, true]) {
      const emus = await three({ stepMs: 10 });
      const pool = poolOf(emus, { serverLostAfter: 800, resubmitOnServerLoss });
      await allUp(pool);
      const a = emus[0]!;
      a.faults.dropNext({ method: 'POST', path: '/api/prompt' });
      const job = pool.submit(workflow(`dropped-${resubmitOnServerLoss}`));
      expect(job.server).toBe('a');
      const r = await outcome(job);
      expect(submissions(a)).toBe(1); // the one dropped: the pool cannot know whether a took it
      const ran = emus.map((e) => jobsOf(e, `dropped-${resubmitOnServerLoss}`).length).reduce((x, y) => x + y);
      if (resubmitOnServerLoss) {
        // The id it was sent with on a: the job may exist there, and can be named.
        expect(r).toMatchObject({ resubmittedFrom: { server: 'a', promptId: expect.any(String) } });
        expect(ran).toBe(1);
      } else {
        expect(r).toBeInstanceOf(APIConnectionError);
        expect(ran).toBe(0);
      }
    }
  });

  it('a submission that reached its server but whose answer came after the client’s timeout is not run twice', async () => {
    const emus = await three({ stepMs: 10 });
    // The emulator drops a request whose client went away before handling it, so it cannot
    // play a server that took the job and answered too late (a busy server, a lost answer).
    // a's client does, over the real socket: the submission reaches a (the job exists), and
    // its answer is held past the client's 300 ms timeout.
    const late: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method === 'POST' && /\/prompt$/.test(new URL(String(input)).pathname)) {
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(resolve, 600);
          init.signal?.addEventListener('abort', () => (clearTimeout(t), reject(init.signal!.reason as Error)), { once: true });
        });
      }
      return res;
    };
    const pool = poolOf(emus, { serverLostAfter: 5000 }, (i) => (i === 0 ? { timeout: 300, fetch: late } : {}));
    await allUp(pool);
    const job = pool.submit(workflow('timeout-0'));
    expect(job.server).toBe('a');
    const r = await outcome(job);
    await delay(200);
    const runs = emus.map((e) => jobsOf(e, 'timeout-0').length);
    expect(runs[0]).toBe(1); // a has the job (and runs it)
    // A timeout after the request was sent is not "never reached": a has the job, so moving it
    // would run it twice. Without resubmitOnServerLoss the run rejects; it runs once.
    expect({ runs: runs.reduce((x, y) => x + y), result: r instanceof Error ? r.name : r.server }).toEqual({ runs: 1, result: expect.any(String) });
  });

  it('a server whose socket cannot connect (HTTP fine): its load returns to 0 once its jobs are done', async () => {
    const emus = await three({ stepMs: 10 });
    const pool = poolOf(emus, {}, () => ({ maxConcurrent: 1 }));
    await allUp(pool);
    const a = emus[0]!;
    a.cloud.rejectSocketUpgrades(1_000_000);
    a.cloud.dropAllSockets();
    await until(() => a.sockets.count() === 0, 3000, 'a socket gone');
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => pool.run(workflow(`nosock-${i}`), { pollInterval: 20 })));
    expect(results.filter((r) => r.server === 'a').length).toBeGreaterThanOrEqual(1);
    expect(live(a)).toBe(0);
    await delay(300);
    // Without the socket's status events, the load must still come back down (the pool reads
    // the queue when a job ends), or the server would look ever busier and get fewer jobs.
    expect(pool.servers[0]!.load).toBe(0);
  });
});

// ------------------------------------------------------------------ add / remove

describe('servers added and removed at run time', () => {
  it('addServer while jobs wait: the new server takes some', async () => {
    const emus = await three({ stepMs: 15 });
    const pool = poolOf([emus[0]!], {}, () => ({ maxConcurrent: 1 }));
    await allUp(pool);
    const runs = Array.from({ length: 12 }, (_, i) => pool.run(workflow(`add-${i}`)));
    expect(pool.waiting).toBe(11);
    expect(pool.addServer({ baseUrl: emus[1]!.url, id: 'b', maxConcurrent: 1, logLevel: 'off' })).toBe('b');
    expect(pool.addServer({ client: new CloudClient({ baseUrl: emus[2]!.url, logLevel: 'off' }), id: 'c', maxConcurrent: 1 })).toBe('c');
    expect(() => pool.addServer({ baseUrl: emus[2]!.url, id: 'c' })).toThrow(InvalidArgumentError);
    const by = countBy(await Promise.all(runs));
    expect(by.b).toBeGreaterThanOrEqual(2);
    expect(by.c).toBeGreaterThanOrEqual(2);
  });

  it('removeServer: it gets no new jobs, and its running job still finishes', async () => {
    const emus = await three({ stepMs: 40 });
    const pool = poolOf(emus, {}, () => ({ maxConcurrent: 1 }));
    await allUp(pool);
    const jobs = Array.from({ length: 9 }, (_, i) => pool.submit(workflow(`rm-${i}`)));
    const a = emus[0]!;
    await until(() => jobsOf(a).some((j) => j.status === 'in_progress'), 3000, 'a running');
    const onA = jobs.find((j) => j.server === 'a')!;
    expect(pool.removeServer('a')).toBe(true);
    expect(pool.removeServer('a')).toBe(false);
    expect(pool.servers.map((s) => s.id)).toEqual(['b', 'c']);
    const results = await Promise.all(jobs.map((j) => j.result));
    expect((await onA).server).toBe('a');
    expect(results.filter((r) => r.server === 'a')).toHaveLength(1);
    expect(jobsOf(a)).toHaveLength(1);
    await until(() => a.sockets.count() === 0, 3000, 'a socket closed after its last job');
  });

  it('removing the only server able to run the waiting jobs rejects them with PlacementError', async () => {
    const emus = await three({ stepMs: 40 });
    dropChoice(emus[1]!, 'ImageScale', 'upscale_method', 'lanczos');
    dropChoice(emus[2]!, 'ImageScale', 'upscale_method', 'lanczos');
    const pool = poolOf(emus, {}, () => ({ maxConcurrent: 1 }));
    await allUp(pool);
    const runs = Array.from({ length: 3 }, (_, i) => outcome(pool.run(scaleWorkflow(`only-a-${i}`))));
    expect(pool.waiting).toBe(2);
    pool.removeServer('a');
    const done = await Promise.all(runs);
    expect(done[0]).not.toBeInstanceOf(Error);
    expect(done[1]).toBeInstanceOf(PlacementError);
    expect(done[2]).toBeInstanceOf(PlacementError);
    expect(Object.keys((done[1] as PlacementError).reasons).sort()).toEqual(['b', 'c']);
  });
});

// ------------------------------------------------------------------ abort

describe('abort in each stage', () => {
  it('while waiting in the pool’s queue: rejects, never submitted anywhere', async () => {
    const emus = await three({ stepMs: 100 });
    const pool = poolOf(emus, {}, () => ({ maxConcurrent: 1 }));
    await allUp(pool);
    const fillers = Array.from({ length: 3 }, (_, i) => pool.run(workflow(`fill-${i}`)));
    const ac = new AbortController();
    const waiting = pool.submit(workflow('wait-abort'), { signal: ac.signal });
    const waiting2 = pool.submit(workflow('wait-cancel'));
    expect(waiting.state).toBe('queued');
    expect(pool.waiting).toBe(2);
    ac.abort();
    waiting2.cancel();
    const [e1, e2] = await Promise.all([outcome(waiting), outcome(waiting2)]);
    expect(e1).toBeInstanceOf(APIUserAbortError);
    expect(e2).toBeInstanceOf(APIUserAbortError);
    expect(waiting.state).toBe('settled');
    expect(pool.waiting).toBe(0);
    await Promise.all(fillers);
    for (const e of emus) expect(jobsOf(e, 'wait-abort').length + jobsOf(e, 'wait-cancel').length).toBe(0);
    // An already-aborted signal: rejects, nothing queued.
    const gone = await outcome(pool.run(workflow('pre-aborted'), { signal: AbortSignal.abort() }));
    expect(gone).toBeInstanceOf(APIUserAbortError);
  });

  it('while uploading: rejects, the job is never submitted', async () => {
    const emus = await three({ stepMs: 50 });
    const pool = poolOf(emus);
    await allUp(pool);
    // Each answer 1 s late: the abort must end the job before the upload's answer.
    for (const e of emus) e.faults.latencyMs = 1000;
    const answers: ServerResponse[] = [];
    const onRequest = (req: IncomingMessage, res: ServerResponse) => void (/\/upload\/image$/.test(req.url ?? '') && answers.push(res));
    for (const e of emus) e.server.on('request', onRequest);
    const t0 = Date.now();
    const ac = new AbortController();
    const job = pool.submit(workflow('up-abort', 'placeholder.png'), { signal: ac.signal, inputs: { '1.inputs.image': makePng(8, 8, 8) } });
    expect(job.state).toBe('placed');
    await until(() => emus.some((e) => e.requests.some((r) => r.time >= t0 && /\/upload\/image$/.test(r.path))), 3000, 'upload sent');
    ac.abort();
    const err = await outcome(job);
    expect(err).toBeInstanceOf(APIUserAbortError);
    // Not after the upload's answer: ordered, not timed.
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.filter((res) => res.writableEnded)).toHaveLength(0);
    for (const e of emus) e.server.off('request', onRequest);
    await delay(1400);
    for (const e of emus) expect(jobsOf(e, 'up-abort')).toHaveLength(0);
    expect(emus.map(submissions)).toEqual([0, 0, 0]);
  });

  it('aborting one job while it uploads does not fail another job sharing that upload', async () => {
    const emus = await three({ stepMs: 10 });
    const pool = poolOf(emus);
    await allUp(pool);
    for (const e of emus) e.faults.latencyMs = 300;
    const png = makePng(8, 8, 12);
    const t0 = Date.now();
    // Round-robin in one tick: 0 and 3 on a, the same bytes: one upload, shared.
    const jobs = Array.from({ length: 4 }, (_, i) => pool.submit(workflow(`shared-${i}`, 'placeholder.png'), { inputs: { '1.inputs.image': png } }));
    expect(jobs.map((j) => j.server)).toEqual(['a', 'b', 'c', 'a']);
    await until(() => emus[0]!.requests.some((r) => r.time >= t0 && /\/upload\/image$/.test(r.path)), 3000, 'upload sent');
    jobs[0]!.cancel();
    const done = await Promise.all(jobs.map((j) => outcome(j)));
    for (const e of emus) e.faults.latencyMs = 0;
    expect(done[0]).toBeInstanceOf(APIUserAbortError);
    // The upload is shared by every job with that content on that server: cancelling the
    // first job must not abort it for the others.
    expect(done.slice(1).map((r) => (r instanceof Error ? `${r.name}: ${r.message}` : r.server))).toEqual(['b', 'c', 'a']);
  });

  it('while submitting: the job the server creates anyway is stopped, and the run rejects', async () => {
    const emus = await three({ stepMs: 200 });
    const pool = poolOf(emus);
    await allUp(pool);
    for (const e of emus) e.faults.latencyMs = 300;
    const t0 = Date.now();
    const job = pool.submit(workflow('sub-abort'));
    const emu = emus[IDS.indexOf(job.server!)]!;
    await until(() => emu.requests.some((r) => r.time >= t0 && /\/prompt$/.test(r.path)), 3000, 'submission sent');
    job.cancel();
    const err = await outcome(job);
    expect(err).toBeInstanceOf(APIUserAbortError);
    // The job appeared and was stopped: cancelled, or deleted from the queue (a local server forgets it).
    await until(() => {
      const j = jobsOf(emu, 'sub-abort');
      return submissions(emu) === 1 && (j.length === 0 || j[0]!.status === 'cancelled') && emu.requests.some((r) => r.time >= t0 && /\/(interrupt|queue|jobs\/[^/]+\/cancel)$/.test(r.path) && r.method === 'POST');
    }, 4000, 'job stopped on its server');
    for (const e of emus) e.faults.latencyMs = 0;
    expect(jobsOf(emu, 'sub-abort').every((j) => j.status !== 'completed')).toBe(true);
  });

  it('while running, and while pending on its server: only that job is stopped, the other on the same server completes', async () => {
    const emus = await three({ stepMs: 60, progressSteps: 3 });
    const pool = poolOf(emus);
    await allUp(pool);
    const acs = Array.from({ length: 6 }, () => new AbortController());
    // Round-robin in one tick: 0,3 on a; 1,4 on b; 2,5 on c.
    const jobs = Array.from({ length: 6 }, (_, i) => pool.submit(workflow(`run-abort-${i}`), { signal: acs[i]!.signal }));
    expect(jobs.map((j) => j.server)).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
    const [a, b] = [emus[0]!, emus[1]!];
    // Which of a server's two jobs it runs first is the order their submissions arrived in: not fixed.
    const indexOf = (emu: (typeof emus)[number], status: string) => {
      const j = jobsOf(emu).find((x) => x.status === status);
      return j ? Number(String(j.prompt['3']!.inputs.filename_prefix).slice('run-abort-'.length)) : undefined;
    };
    let running: number | undefined;
    let pending: number | undefined;
    await until(() => {
      running = indexOf(a, 'in_progress');
      pending = indexOf(b, 'pending');
      return running !== undefined && pending !== undefined && jobs[pending]!.promptId !== undefined;
    }, 3000, 'running on a and pending on b');
    const [stopped, removed] = [running!, pending!];
    acs[stopped]!.abort(); // a's running job
    jobs[removed]!.cancel(); // b's pending job
    const done = await Promise.all(jobs.map((j) => outcome(j)));
    expect(done[stopped]).toBeInstanceOf(APIUserAbortError);
    expect(done[removed]).toBeInstanceOf(APIUserAbortError);
    for (const i of [0, 1, 2, 3, 4, 5].filter((i) => i !== stopped && i !== removed)) expect((done[i] as PoolJobResult).files).toHaveLength(1);
    expect(jobsOf(a, `run-abort-${stopped}`)[0]!.status).toBe('cancelled');
    expect(jobsOf(a, `run-abort-${stopped === 0 ? 3 : 0}`)[0]!.status).toBe('completed');
    await until(() => jobsOf(b, `run-abort-${removed}`).every((j) => j.status === 'cancelled'), 2000, 'b pending job removed');
    expect(jobsOf(b, `run-abort-${removed === 1 ? 4 : 1}`)[0]!.status).toBe('completed');
    // Only those two: nothing else was cancelled anywhere.
    const cancelled = emus.flatMap((e) => jobsOf(e).filter((j) => j.status === 'cancelled'));
    expect(cancelled.length).toBeLessThanOrEqual(2);
  });

  it('with stopOnAbort: false an abort stops following but leaves the job running', async () => {
    const emus = await three({ stepMs: 40 });
    const pool = poolOf(emus);
    await allUp(pool);
    const job = pool.submit(workflow('keep-running'), { stopOnAbort: false });
    const emu = emus[IDS.indexOf(job.server!)]!;
    await until(() => jobsOf(emu, 'keep-running')[0]?.status === 'in_progress', 3000, 'running');
    job.cancel();
    expect(await outcome(job)).toBeInstanceOf(APIUserAbortError);
    await until(() => jobsOf(emu, 'keep-running')[0]?.status === 'completed', 3000, 'completed anyway');
  });
});

// ------------------------------------------------------------------ close

describe('close()', () => {
  it('rejects waiting runs, stops following running ones (their jobs finish), closes sockets, refuses new runs', async () => {
    const emus = await three({ stepMs: 60 });
    const pool = poolOf(emus, {}, () => ({ maxConcurrent: 1 }));
    await allUp(pool);
    await until(() => emus.every((e) => e.sockets.count() === 1), 3000, 'sockets open');
    const jobs = Array.from({ length: 5 }, (_, i) => pool.submit(workflow(`close-${i}`)));
    await until(() => emus.every((e) => jobsOf(e).some((j) => j.status === 'in_progress')), 3000, 'all running');
    // The jobs that end on their servers, in order: none may have ended before close() was done with them.
    const ended: string[] = [];
    const offs = emus.map((e) => e.cloud.subscribe((ev) => void (ev.kind === 'json' && ev.message.type === 'execution_success' && ended.push(ev.message.data.prompt_id as string))));
    const closing = pool.close();
    const done = await Promise.all(jobs.map((j) => outcome(j)));
    await closing;
    // At once, as an order rather than a time: every run settled and close() resolved before any running job ended.
    expect(ended).toEqual([]);
    for (const off of offs) off();
    expect(done.every((e) => e instanceof PoolClosedError)).toBe(true);
    const running = done.slice(0, 3) as PoolClosedError[];
    expect(running.map((e) => e.promptId)).toEqual(jobs.slice(0, 3).map((j) => j.promptId));
    expect(running.every((e) => e.promptId && /keeps running/.test(e.message))).toBe(true);
    expect((done[3] as PoolClosedError).promptId).toBeUndefined();
    expect((done[4] as PoolClosedError).promptId).toBeUndefined();
    await until(() => emus.every((e) => e.sockets.count() === 0), 3000, 'sockets closed');
    // The jobs keep running on their servers and finish.
    await until(() => emus.every((e) => jobsOf(e).length === 1 && jobsOf(e)[0]!.status === 'completed'), 3000, 'jobs completed on the servers');
    expect(await outcome(pool.run(workflow('after')))).toBeInstanceOf(PoolClosedError);
    const late = pool.submit(workflow('after2'));
    expect(late.state).toBe('settled');
    expect(await outcome(late)).toBeInstanceOf(PoolClosedError);
    expect(() => pool.addServer({ baseUrl: emus[0]!.url })).toThrow(InvalidArgumentError);
    await pool.close(); // again: fine
    await delay(100);
    expect(emus.every((e) => e.sockets.count() === 0)).toBe(true);
  });

  it('close({ cancel: true }) cancels the running jobs on their servers', async () => {
    const emus = await three({ stepMs: 60 });
    const pool = poolOf(emus);
    await allUp(pool);
    const jobs = Array.from({ length: 8 }, (_, i) => pool.submit(workflow(`cclose-${i}`)));
    await until(() => emus.every((e) => jobsOf(e).some((j) => j.status === 'in_progress') && jobsOf(e).some((j) => j.status === 'pending')), 3000, 'all busy');
    const settled = jobs.map((j) => outcome(j));
    await pool.close({ cancel: true });
    const done = await Promise.all(settled);
    expect(done.every((e) => e instanceof PoolClosedError)).toBe(true);
    expect(done.slice(0, 6).every((e) => /was cancelled/.test((e as Error).message))).toBe(true);
    // Running ones cancelled; pending ones deleted from the queue (a local server forgets them).
    await until(() => emus.every((e) => jobsOf(e).every((j) => j.status === 'cancelled')), 3000, 'cancelled on the servers');
    await until(() => emus.every((e) => e.sockets.count() === 0), 3000, 'sockets closed');
  });
});

// ------------------------------------------------------------------ two pools

describe('two pools over the same servers (as two processes)', () => {
  it('see each other’s jobs through the servers’ queues: a pool avoids a server another pool loaded', async () => {
    const emus = await three({ stepMs: 50 });
    const first = poolOf([emus[0]!], {}, () => ({ maxConcurrent: 6 }));
    const second = poolOf(emus, {}, () => ({ maxConcurrent: 6 }));
    await allUp(first);
    await allUp(second);
    const firstRuns = Array.from({ length: 6 }, (_, i) => first.run(workflow(`p1-${i}`)));
    await until(() => second.servers[0]!.load >= 5, 3000, 'second sees a’s queue');
    expect(second.servers[0]!.active).toBe(0);
    const secondRuns = Array.from({ length: 6 }, (_, i) => second.submit(workflow(`p2-${i}`)));
    expect(secondRuns.map((j) => j.server)).toEqual(['b', 'c', 'b', 'c', 'b', 'c']);
    await Promise.all([...firstRuns, ...secondRuns.map((j) => j.result)]);
  });

  it('submitting concurrently, they spread the total sensibly and no server idles while another has a queue', async () => {
    const emus = await three({ stepMs: 15 });
    const p1 = poolOf(emus);
    const p2 = poolOf(emus);
    await allUp(p1);
    await allUp(p2);
    let samples = 0;
    let idleWhileQueued = 0;
    let sawOthers = false;
    const sample = setInterval(() => {
      const q = emus.map(live);
      if (p1.waiting + p2.waiting > 4) {
        samples++;
        if (Math.min(...q) === 0 && Math.max(...q) >= 3) idleWhileQueued++;
      }
      // p1's view of a server counts p2's jobs too.
      for (const [i, s] of p1.servers.entries()) if (s.load > s.active && q[i]! > s.active) sawOthers = true;
    }, 2);
    const runs = [...Array.from({ length: 20 }, (_, i) => p1.run(workflow(`c1-${i}`))), ...Array.from({ length: 20 }, (_, i) => p2.run(workflow(`c2-${i}`)))];
    const results = await Promise.all(runs).finally(() => clearInterval(sample));
    const total = countBy(results);
    for (const id of ['a', 'b', 'c']) expect(total[id]).toBeGreaterThanOrEqual(8);
    expect(samples).toBeGreaterThan(10);
    expect(idleWhileQueued / samples).toBeLessThan(0.1);
    expect(sawOthers).toBe(true);
    for (let i = 0; i < 20; i++) for (const p of ['c1', 'c2']) expect(emus.map((e) => jobsOf(e, `${p}-${i}`).length).reduce((x, y) => x + y)).toBe(1);
  });
});

// ------------------------------------------------------------------ scale

describe('10,000 queued jobs', () => {
  // How long submit() and close() take per job, 10,000 waiting against 1,000: bench/pool-queue.ts.
  it('wait in memory, and close() rejects them all without waiting for the three running', async () => {
    // The three placed jobs never end during the test (a minute per step).
    const emus = await three({ stepMs: 60_000 });
    const pool = poolOf(emus, {}, () => ({ maxConcurrent: 1 }));
    await allUp(pool);
    globalThis.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const jobs: PoolJob[] = [];
    for (let i = 0; i < 10_000; i++) jobs.push(pool.submit(workflow(`many-${i}`)));
    expect(pool.waiting).toBe(10_000 - 3);
    expect(pool.servers.map((s) => s.active)).toEqual([1, 1, 1]);
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
    expect(heapGrowth).toBeLessThan(200 * 1024 * 1024);
    const settled = jobs.map((j) => outcome(j));
    // A wait, not a bound: the 10,000 submits before it keep a loaded machine busy for seconds.
    await until(() => emus.every((e) => submissions(e) === 1), 30_000, 'three submitted');
    await pool.close();
    const done = await Promise.all(settled);
    // close() (without cancel) settled every job while the three placed still run on their servers.
    expect(emus.map(live)).toEqual([1, 1, 1]);
    expect(done.every((e) => e instanceof PoolClosedError)).toBe(true);
    expect(pool.waiting).toBe(0);
    // Only the three placed ever reached a server.
    expect(emus.map(submissions)).toEqual([1, 1, 1]);
  }, 60_000);

  it('placement stays O(servers) per job when the jobs at the head of the queue fit only a full server', async () => {
    const emus = await three({ stepMs: 1000 });
    dropChoice(emus[1]!, 'ImageScale', 'upscale_method', 'lanczos');
    dropChoice(emus[2]!, 'ImageScale', 'upscale_method', 'lanczos');
    const pool = poolOf(emus, {}, () => ({ maxConcurrent: 1 }));
    await allUp(pool);
    // 10,000 jobs only a can run (a at its limit after the first), b and c free.
    placement.considered = 0;
    const jobs: PoolJob[] = [];
    for (let i = 0; i < 10_000; i++) jobs.push(pool.submit(scaleWorkflow(`head-${i}`)));
    const considered = placement.considered;
    const settled = jobs.map((j) => outcome(j));
    // Then each other job goes to b or c at once.
    placement.considered = 0;
    const others = Array.from({ length: 200 }, (_, i) => pool.submit(workflow(`free-${i}`)));
    for (const j of others) void outcome(j);
    const considered2 = placement.considered;
    expect(others.slice(0, 2).map((j) => j.server).sort()).toEqual(['b', 'c']);
    await pool.close();
    await Promise.all(settled);
    // A submit tries to place its own job only (O(servers)); the whole queue is walked only
    // when a slot frees or a server comes up: 10,000 submits must not cost O(n²).
    // Three servers: at most 3 considered per submit (a queue walk per submit would be ~50 million).
    expect(considered, `10,000 submits considered ${considered} servers`).toBeLessThanOrEqual(3 * 10_000);
    expect(considered2).toBeLessThanOrEqual(3 * 200);
  }, 120_000);
});
