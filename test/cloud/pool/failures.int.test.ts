// CloudPool (issue 23) over emulators and small servers of the test's own, over real loopback
// sockets: when a job may move to another server (its inputs' upload failed, or its
// submission provably never left), when it must not (a submission that may have reached
// its server), and a fresh pool's first burst spread over every server that answers
// within the start window.
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { APIConnectionError, APIError, type PoolJobResult } from '../../../src/index.ts';
import { makePng } from '../../../src/emulator/index.ts';
import { recorder } from '../../helpers/log-recorder.ts';
import { allUp, closeAll, countBy, jobsOf, open, outcome, poolOf, server, submissions, three, uploads, workflow } from './helpers.ts';

afterEach(closeAll);

/** A port that accepts connections and never answers (a hung server): its client stays `starting`. */
async function silentServer(): Promise<string> {
  const held = new Set<Socket>();
  const s = createServer((c) => void held.add(c.on('close', () => held.delete(c))));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  open.push({
    close: () => {
      for (const c of held) c.destroy();
      return new Promise((r) => s.close(r));
    },
  });
  return `http://127.0.0.1:${(s.address() as { port: number }).port}`;
}

const ranOnce = (emus: Parameters<typeof jobsOf>[0][], prefix: string) => emus.map((e) => jobsOf(e, prefix).length).reduce((x, y) => x + y) === 1;

describe('a job whose inputs’ upload fails moves to another server (an upload never creates a job)', () => {
  it('its server refuses the upload’s connection (the port closed): the job runs elsewhere, once, never counted as a submission', async () => {
    const emus = await three({ stepMs: 10 });
    const log = recorder();
    const pool = poolOf(emus, { serverLostAfter: 800, logLevel: 'info', logger: log.logger });
    await allUp(pool);
    const a = emus[0]!;
    // close() stops a's listener at once: in this tick the pool still has a up, and places the job there.
    const closed = a.close();
    const job = pool.submit(workflow('up-refused', 'placeholder.png'), { inputs: { '1.inputs.image': makePng(8, 8, 21) } });
    expect(job.server).toBe('a');
    await closed;
    const r = await outcome(job);
    expect(r instanceof Error ? `${r.name}: ${r.message}` : r.server).toMatch(/^[bc]$/);
    expect((r as PoolJobResult).resubmittedFrom).toBeUndefined();
    expect(uploads(a) + submissions(a)).toBe(0);
    expect(ranOnce(emus.slice(1), 'up-refused')).toBe(true);
    expect(log.lines.some((l) => l.level === 'info' && /^\[platformui pool\] job moves off a: .*upload/i.test(l.message))).toBe(true);
  });

  it('its server answers the upload 503: the job runs elsewhere, and that server stays up for other jobs', async () => {
    const emus = await three({ stepMs: 10 });
    const log = recorder();
    const pool = poolOf(emus, { logLevel: 'info', logger: log.logger });
    const downs: string[] = [];
    pool.on('serverDown', (e) => void downs.push(e.server));
    await allUp(pool);
    const a = emus[0]!;
    a.faults.next(503, { method: 'POST', path: '/api/upload/image' });
    const job = pool.submit(workflow('up-503', 'placeholder.png'), { inputs: { '1.inputs.image': makePng(8, 8, 22) } });
    expect(job.server).toBe('a');
    const r = await outcome(job);
    expect(r instanceof Error ? `${r.name}: ${r.message}` : r.server).toMatch(/^[bc]$/);
    expect(uploads(a)).toBe(1);
    expect(submissions(a)).toBe(0);
    expect(ranOnce(emus, 'up-503')).toBe(true);
    expect(downs).toEqual([]);
    expect(pool.servers[0]!.state).toBe('up');
    expect(log.lines.some((l) => /^\[platformui pool\] job moves off a: .*503/.test(l.message))).toBe(true);
    // a still takes jobs, uploads included.
    const more = await Promise.all(Array.from({ length: 3 }, (_, i) => pool.run(workflow(`up-503-after-${i}`, 'placeholder.png'), { inputs: { '1.inputs.image': makePng(8, 8, 23) } })));
    expect(countBy(more).a).toBe(1);
  });

  it('moves are bounded: uploads that fail on every server end in the last failure, each server tried once', async () => {
    const emus = await three({ stepMs: 10 });
    const pool = poolOf(emus);
    await allUp(pool);
    for (const e of emus) e.faults.next(503, { method: 'POST', path: '/api/upload/image' });
    const err = await outcome(pool.run(workflow('up-503-all', 'placeholder.png'), { inputs: { '1.inputs.image': makePng(8, 8, 24) } }));
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(503);
    expect(emus.map(uploads)).toEqual([1, 1, 1]);
    expect(emus.map(submissions)).toEqual([0, 0, 0]);
  });

  it('one server, its upload answers 503: the run rejects with that error (there is nowhere to move)', async () => {
    const emu = await server({ stepMs: 10 });
    const pool = poolOf([emu]);
    await allUp(pool);
    emu.faults.next(503, { method: 'POST', path: '/api/upload/image' });
    const err = await outcome(pool.run(workflow('up-503-one', 'placeholder.png'), { inputs: { '1.inputs.image': makePng(8, 8, 25) } }));
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(503);
    expect(submissions(emu)).toBe(0);
  });
});

describe('a submission moves only when it provably never left', () => {
  it('refused (the port closed): sent is no, so the job runs elsewhere at once, once', async () => {
    const emus = await three({ stepMs: 10 });
    const pool = poolOf(emus, { serverLostAfter: 800 });
    await allUp(pool);
    const a = emus[0]!;
    const closed = a.close();
    const job = pool.submit(workflow('sub-refused'));
    expect(job.server).toBe('a');
    await closed;
    const r = await outcome(job);
    expect(r instanceof Error ? `${r.name}: ${r.message}` : r.server).toMatch(/^[bc]$/);
    expect((r as PoolJobResult).resubmittedFrom).toBeUndefined();
    expect(ranOnce(emus.slice(1), 'sub-refused')).toBe(true);
  });

  it('its connection lost after sending: sent is maybe, the job stays where it may exist, and the error names it', async () => {
    const emus = await three({ stepMs: 10 });
    const pool = poolOf(emus, { serverLostAfter: 800 });
    await allUp(pool);
    const a = emus[0]!;
    a.faults.dropNext({ method: 'POST', path: '/api/prompt' });
    const job = pool.submit(workflow('sub-dropped'));
    expect(job.server).toBe('a');
    const err = await outcome(job);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect((err as APIConnectionError).sent).toBe('maybe');
    // The id the submission was sent with (once run() chooses ids), on the job too: it may exist on a.
    expect(job.promptId).toBe((err as APIConnectionError).promptId);
    expect(job.server).toBe('a');
    expect(emus.map(submissions)).toEqual([1, 0, 0]);
  });
});

describe('a fresh pool’s first burst', () => {
  it('waits for every server’s first answer, then spreads: 6 jobs at once over two idle servers, 3 each', async () => {
    const emus = await Promise.all([server({ stepMs: 10 }), server({ stepMs: 10 })]);
    const pool = poolOf(emus, {}, () => ({ maxConcurrent: 6 }));
    const jobs = Array.from({ length: 6 }, (_, i) => pool.submit(workflow(`burst-${i}`)));
    expect(jobs.every((j) => j.state === 'queued')).toBe(true);
    const results = await Promise.all(jobs.map((j) => j.result));
    expect(countBy(results)).toEqual({ a: 3, b: 3 });
  });

  it('a server that never answers holds the burst for the start window only', async () => {
    const emu = await server({ stepMs: 10 });
    const silent = await silentServer();
    const pool = poolOf([emu], { startWindow: 200 }, () => ({ maxConcurrent: 6 }));
    pool.addServer({ baseUrl: silent, id: 'silent', retry: { limit: 0 }, logLevel: 'off' });
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.run(workflow(`held-${i}`))));
    expect(countBy(results)).toEqual({ a: 6 });
    expect(pool.servers.map((s) => s.state)).toEqual(['up', 'starting']);
  });

  it('startWindow must be a number of milliseconds ≥ 0', () => {
    for (const startWindow of [-1, Number.NaN, '2000', Infinity]) expect(() => poolOf([], { startWindow } as never)).toThrow(/startWindow/);
  });
});
