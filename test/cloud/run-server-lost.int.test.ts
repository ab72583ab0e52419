// CloudClient.run() never hangs on a server that dies: with the server gone (socket down,
// every poll refused) it rejects with ServerLostError after `serverLostAfter`; with the
// server restarted (it answers, but its queue and history no longer know the job) at
// once. Against the emulator's local personality over real loopback sockets, restarted
// on the same port.
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CloudClient, ServerLostError } from '../../src/index.ts';
import { makePng, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { invertWorkflow as workflow, until } from '../helpers/emulator-runs.ts';
import { recordFiredTimers } from '../helpers/timers-fired.ts';

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});
async function slowLocalServer(port = 0): Promise<Emulator> {
  const emu = await startEmulator({ port, personality: 'local', cloud: { stepMs: 400, progressSteps: 4 } });
  open.push(emu);
  emu.cloud.addFile('in.png', makePng(8, 8, 1));
  return emu;
}

describe('run() on a server that dies', () => {
  it('rejects with ServerLostError (unreachable) once the server has not answered for serverLostAfter', async () => {
    const emu = await slowLocalServer();
    // The silence is measured on a clock the test moves: Date only (timers, sockets and polls stay real), standing
    // still from the start, so no silence counts towards the bound until the test moves it.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    // Every request the client sends (its polls; the socket is no fetch).
    let sent = 0;
    const fetch: typeof globalThis.fetch = (input, init) => (sent++, globalThis.fetch(input, init));
    const cloud = new CloudClient({ baseUrl: emu.url, retry: { limit: 0 }, logLevel: 'off', fetch });
    open.push(cloud);
    let promptId: string | undefined;
    const run = cloud.run(workflow('in.png', 'dies'), { serverLostAfter: 600, pollInterval: 50, onSubmitted: (id) => void (promptId = id) });
    let over = false;
    const settled = run.then(
      () => 'resolved',
      (err: unknown) => err,
    );
    void settled.then(() => void (over = true));
    try {
      await until(() => promptId !== undefined && emu.cloud.engine.jobs.get(promptId)?.status === 'in_progress');
      await emu.close();
      // Not before the bound: polls refused again and again while the clock stands still, and the run goes on.
      const atClose = sent;
      await until(() => sent >= atClose + 3 || over, 10_000, 'three refused polls');
      expect(over).toBe(false);
      // Not long after it: once the bound has passed, the first poll to fail gives the job up (a poll already on
      // its way when the clock moved may be that one).
      const atBound = sent;
      vi.setSystemTime(Date.now() + 600);
      const err = await settled;
      expect(sent - atBound).toBeLessThanOrEqual(1);
      expect(err).toBeInstanceOf(ServerLostError);
      expect(err).toMatchObject({ reason: 'unreachable', promptId, server: cloud.baseUrl });
      expect((err as ServerLostError).silentMs).toBeGreaterThanOrEqual(600);
      expect((err as Error).message).toMatch(new RegExp(`^Lost job ${promptId} on http://127\\.0\\.0\\.1:\\d+/?: no answer for \\d+ s$`));
    } finally {
      vi.useRealTimers();
    }
  });

  it('rejects at once with ServerLostError (forgotten) when the restarted server no longer knows the job', async () => {
    const first = await slowLocalServer();
    const cloud = new CloudClient({ baseUrl: first.url, retry: { limit: 0 }, logLevel: 'off' });
    open.push(cloud);
    let promptId: string | undefined;
    const settled = cloud
      .run(workflow('in.png', 'forgotten'), { serverLostAfter: 60_000, pollInterval: 50, onSubmitted: (id) => void (promptId = id) })
      .then(
        () => 'resolved',
        (err: unknown) => err,
      );
    await until(() => promptId !== undefined && first.cloud.engine.jobs.get(promptId)?.status === 'in_progress');
    await first.close();
    const second = await slowLocalServer(first.port); // the same address, empty queue and history
    const err = await settled;
    expect(err).toBeInstanceOf(ServerLostError);
    expect(err).toMatchObject({ reason: 'forgotten', promptId, server: cloud.baseUrl });
    expect(second.cloud.engine.jobs.size).toBe(0); // nothing was re-sent
  });

  it('is bounded even by a frozen server that accepts connections and never answers (client default retries)', async () => {
    const emu = await slowLocalServer();
    const cloud = new CloudClient({ baseUrl: emu.url, logLevel: 'off' });
    open.push(cloud);
    let promptId: string | undefined;
    const settled = cloud.run(workflow('in.png', 'frozen'), { serverLostAfter: 600, pollInterval: 50, onSubmitted: (id) => void (promptId = id) }).then(
      () => 'resolved',
      (err: unknown) => err,
    );
    await until(() => promptId !== undefined && emu.cloud.engine.jobs.get(promptId)?.status === 'in_progress');
    const port = emu.port;
    await emu.close();
    // The same port now takes connections and never answers a request.
    const held: Socket[] = [];
    const frozen = createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => frozen.listen(port, '127.0.0.1', resolve));
    open.push({ close: () => new Promise<void>((resolve) => (held.forEach((c) => c.destroy()), frozen.close(() => resolve()))) });
    const timers = recordFiredTimers('transport/');
    const err = await settled.finally(timers.restore);
    expect(err).toMatchObject({ name: 'ServerLostError', reason: 'unreachable', promptId });
    // Not the client's 60 s timeout × 3 attempts, by the timeouts it set rather than a clock: what cut the polls the
    // frozen server held was their own timeout, at most the bound.
    expect(timers.fired.length).toBeGreaterThan(0);
    expect(timers.fired.filter((ms) => ms > 600)).toEqual([]);
  });

  it('waits through a short outage: a server back within serverLostAfter finishes the job', async () => {
    const emu = await slowLocalServer();
    const cloud = new CloudClient({ baseUrl: emu.url, retry: { limit: 0 }, logLevel: 'off' });
    open.push(cloud);
    // The socket drops (the server lives): polls keep answering, so the bound never fires,
    // though the job runs for far longer than it.
    const run = cloud.run(workflow('in.png', 'outage'), { serverLostAfter: 300, pollInterval: 50 });
    await until(() => [...emu.cloud.engine.jobs.values()].some((j) => j.status === 'in_progress'));
    emu.cloud.dropSockets({ afterMessages: 0, times: 3 });
    emu.cloud.dropAllSockets();
    const result = await run;
    expect(result.files).toHaveLength(1);
  });
});
