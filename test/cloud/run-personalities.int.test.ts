// run(), waitForJob(), cancellation and socket faults against the emulator's three
// personalities, over real loopback HTTP and WebSocket: 'spec' (the seed documents),
// 'cloud' (the live cloud: raw states, late outputs, cached runs without `executed`)
// and 'local' (a self-hosted server: no key, no status endpoint, /history, interrupt
// by prompt_id, events only to the submitting socket). Every job must settle exactly
// once, with every file, and none may hang.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { APIUserAbortError, CloudClient, ExecutionError, JobCancelledError, type JobResult } from '../../src/index.ts';
import { EMULATOR_API_KEY, LOCAL_LANE, startEmulator, type Emulator, type PersonalityName } from '../../src/emulator/index.ts';
import { invertWorkflow as workflow, onlySocketWarnings, requestsAfterEnd, until } from '../helpers/emulator-runs.ts';
import { recorder } from '../helpers/log-recorder.ts';

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 7]);

for (const personality of ['spec', 'cloud', 'local'] as PersonalityName[]) {
  describe(`the ${personality} personality`, () => {
    let emu: Emulator;
    let image: string;
    const clients: CloudClient[] = [];
    const lane = personality === 'local' ? LOCAL_LANE : EMULATOR_API_KEY;
    const client = (o: Partial<ConstructorParameters<typeof CloudClient>[0]> = {}) => {
      const c = new CloudClient({ baseUrl: emu.url, ...(personality === 'local' ? {} : { apiKey: EMULATOR_API_KEY }), ...o });
      clients.push(c);
      return c;
    };
    const job = (id: string) => emu.cloud.engine.jobs.get(id)!;
    let ends: ReturnType<typeof requestsAfterEnd>;
    // The job's status as its follower polls it: a local server has no status route, and its record is the status.
    const statusPath = (id: string) => (personality === 'local' ? `/api/jobs/${id}` : `/api/job/${id}/status`);
    const statusPollsAfterEnd = (id: string) => ends.after(id).filter((r) => r.method === 'GET' && r.path === statusPath(id));

    beforeAll(async () => {
      emu = await startEmulator({ personality, cloud: { stepMs: 5, progressSteps: 2 }, apiKeys: { [EMULATOR_API_KEY]: { parallel: 4 } } });
      ends = requestsAfterEnd(emu);
      image = (await client().uploadImage(PNG, { filename: 'in.png' })).name;
    });
    afterAll(() => {
      ends.close();
      emu.close();
    });
    afterEach(() => {
      for (const c of clients.splice(0)) c.close();
      emu.cloud.resetSocketFaults();
      emu.cloud.stepMs = 5;
    });

    async function expectFiles(c: CloudClient, result: JobResult, prefix: string) {
      expect(result.status).toBe('completed');
      expect(result.files.map((f) => f.filename)).toEqual([expect.stringMatching(new RegExp(`^${prefix}_\\d{5}_\\.png$`))]);
      const bytes = new Uint8Array(await (await c.download(result.files[0]!)).arrayBuffer());
      expect([...bytes.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    }

    it(`chooses the ${personality === 'local' ? 'local' : 'cloud'} server kind`, () => {
      expect(client().server).toBe(personality === 'local' ? 'local' : 'cloud');
    });

    it('runs a job to its files; waitForJob reads the same record', async () => {
      const c = client();
      const result = await c.run(workflow(image, `${personality}_run`), { timeout: 10_000 });
      await expectFiles(c, result, `${personality}_run`);
      const record = await c.waitForJob(result.promptId, { pollInterval: 20 });
      expect(record.phase).toBe('completed');
      expect(record.outputs).toEqual(result.outputs);
    });

    it('resolves a fully cached rerun with its files', async () => {
      const c = client();
      const first = await c.run(workflow(image, `${personality}_cached`));
      const events: string[] = [];
      const again = await c.run(workflow(image, `${personality}_cached`), { onEvent: (e) => void events.push(e.type) });
      expect(events).toContain('execution_cached');
      // The live cloud sends no `executed` for cached nodes: the files come from the job record.
      expect(events.includes('executed')).toBe(personality !== 'cloud');
      expect(again.files).toEqual(first.files);
      await expectFiles(c, again, `${personality}_cached`);
    });

    it('survives the socket dropped mid-job, with every file', async () => {
      const c = client();
      const socket = c.connect({ reconnect: { baseDelay: 5, maxDelay: 20 } });
      await socket.ready();
      emu.cloud.stepMs = 20;
      let drops = 0;
      socket.on('reconnecting', () => void drops++);
      const running = c.run(workflow(image, `${personality}_drop`), { pollInterval: 20, timeout: 10_000 });
      emu.cloud.dropSockets({ afterMessages: 4, times: 1 });
      const result = await running;
      expect(drops).toBe(1);
      await expectFiles(c, result, `${personality}_drop`);
    });

    it('runs on polling alone when every socket upgrade is refused, and ends within a poll interval', async () => {
      emu.cloud.rejectSocketUpgrades(1000);
      const log = recorder();
      const c = client({ logger: log.logger, logLevel: 'debug' });
      c.connect({ reconnect: { baseDelay: 50, maxDelay: 50 } });
      const result = await c.run(workflow(image, `${personality}_poll`), { pollInterval: 100, timeout: 10_000 });
      // Taken before the files are read back: the run's own polls.
      const polls = statusPollsAfterEnd(result.promptId);
      await expectFiles(c, result, `${personality}_poll`);
      onlySocketWarnings({ ...log, lines: log.lines.filter((l) => l.level === 'warn' || l.level === 'error') });
      // Within a poll interval, without a clock: the socket down, it polled at most a poll interval apart…
      const gaps = log.of('debug').filter((l) => l.details?.promptId === result.promptId && typeof l.details.intervalMs === 'number');
      expect(gaps.length).toBeGreaterThan(0);
      for (const gap of gaps) expect(gap.details!.intervalMs).toBeLessThanOrEqual(100);
      // …and the first poll that could see the end ended the run (the live cloud's record read-back aside).
      expect(polls).toHaveLength(1);
    });

    it('follows a job submitted earlier, and one that has already ended, to their files', async () => {
      emu.cloud.stepMs = 20;
      const c = client();
      const { prompt_id: running } = await c.submit(workflow(image, `${personality}_followed`));
      const events: string[] = [];
      const result = await c.follow(running, { pollInterval: 20, onEvent: (e) => void events.push(e.type) });
      expect(result.promptId).toBe(running);
      await expectFiles(c, result, `${personality}_followed`);
      // Already over: the first poll finds it, and the record gives its files.
      const again = await client().follow(running, { pollInterval: 20 });
      expect(again.files).toEqual(result.files);
    });

    it('follows a job another client submitted, within a poll interval of its end', async () => {
      emu.cloud.stepMs = 20;
      const submitter = client();
      submitter.connect();
      const { prompt_id } = await submitter.submit(workflow(image, `${personality}_theirs`), { clientId: submitter.connect().clientId });
      const watcher = client();
      await watcher.connect().ready();
      // On a local server this socket hears nothing of the job: it must poll, not wait 20 intervals.
      const result = await watcher.follow(prompt_id, { pollInterval: 50, timeout: 5000 });
      const polls = statusPollsAfterEnd(prompt_id);
      await expectFiles(watcher, result, `${personality}_theirs`);
      // Within a poll interval of its end, without a clock: it ended on the first poll that could see the end (the
      // poll every interval, not every 20, is follower.test.ts's, on a fake clock). Where the socket hears the job,
      // its ending may come first and no poll after it is needed; a local server's socket hears nothing of it.
      if (personality === 'local') expect(polls).toHaveLength(1);
      else expect(polls.length).toBeLessThanOrEqual(1);
    });

    it('aborting follow() stops following but not the job', async () => {
      emu.cloud.stepMs = 30;
      const c = client();
      const { prompt_id } = await c.submit(workflow(image, `${personality}_watched`));
      const controller = new AbortController();
      const following = c.follow(prompt_id, { signal: controller.signal, pollInterval: 20 });
      await until(() => job(prompt_id).status === 'in_progress');
      controller.abort();
      await expect(following).rejects.toBeInstanceOf(APIUserAbortError);
      expect((await c.waitForJob(prompt_id, { pollInterval: 20 })).phase).toBe('completed');
    });

    it('rejects a failed job with ExecutionError, from run() and waitForJob()', async () => {
      const c = client();
      const err = await c.run(workflow(image, 'x', { fail_with: 'OOMError', fail_message: 'out of memory' })).catch((e) => e);
      expect(err).toBeInstanceOf(ExecutionError);
      expect(err.exceptionType).toBe('OOMError');
      const waited = await c.waitForJob(err.promptId, { pollInterval: 20 }).catch((e) => e);
      expect(waited).toBeInstanceOf(ExecutionError);
      expect(waited.exceptionMessage).toBe('out of memory');
    });

    it('aborting run() stops the running job only', async () => {
      emu.cloud.stepMs = 50;
      const c = client();
      const other = client();
      const controller = new AbortController();
      let id: string | undefined;
      const running = c.run(workflow(image, `${personality}_abort`), {
        signal: controller.signal,
        onEvent: (e) => void (id ??= (e as { data?: { prompt_id?: string } }).data?.prompt_id),
      });
      await until(() => id !== undefined && job(id).status === 'in_progress');
      // A second job of the same account, queued behind it on a one-at-a-time local server.
      const { prompt_id: bystander } = await other.submit(workflow(image, `${personality}_bystander`));
      controller.abort();
      await expect(running).rejects.toBeInstanceOf(APIUserAbortError);
      const stopped = await c.waitForJob(id!, { pollInterval: 20 }).catch((e) => e);
      expect(stopped).toBeInstanceOf(JobCancelledError);
      expect((await other.waitForJob(bystander, { pollInterval: 20 })).phase).toBe('completed');
    });

    it('aborting run() of a pending job removes it', async () => {
      emu.cloud.stepMs = 50;
      const c = client();
      // Fill every slot so the next job waits.
      const blockers = await Promise.all(Array.from({ length: personality === 'local' ? 1 : 4 }, (_, i) => c.submit(workflow(image, `${personality}_block${i}`))));
      const controller = new AbortController();
      const before = new Set(emu.cloud.engine.jobs.keys());
      const pending = c.run(workflow(image, `${personality}_pending`), { signal: controller.signal });
      await until(() => [...emu.cloud.engine.jobs.keys()].some((k) => !before.has(k)));
      const id = [...emu.cloud.engine.jobs.keys()].find((k) => !before.has(k))!;
      expect(job(id).status).toBe('pending');
      controller.abort();
      await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
      await until(() => !emu.cloud.engine.jobs.get(id) || emu.cloud.engine.jobs.get(id)!.status === 'cancelled');
      for (const b of blockers) expect((await c.waitForJob(b.prompt_id, { pollInterval: 20 })).phase).toBe('completed');
    });

    it('settles 40 runs exactly once each, with their own files, while sockets drop at random', async () => {
      const log = recorder();
      const c = client({ logger: log.logger });
      const socket = c.connect({ reconnect: { baseDelay: 5, maxDelay: 30 } });
      await socket.ready();
      const listeners = socket.listenerCount;
      emu.cloud.dropSockets({ probability: 0.05 });
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => c.run(workflow(image, `${personality}_chaos${i}`), { pollInterval: 20, timeout: 20_000 })));
      emu.cloud.dropSockets(null);
      results.forEach((r, i) => expect(r.files.map((f) => f.filename)).toEqual([expect.stringMatching(new RegExp(`^${personality}_chaos${i}_\\d{5}_\\.png$`))]));
      // Every run let go of everything it held on the shared socket.
      expect(socket.listenerCount).toBe(listeners);
      onlySocketWarnings(log);
    }, 60_000);

    if (personality === 'cloud') {
      it.each(['error', 'non_retryable_error', 'lost'] as const)('ends on %s with ExecutionError, the socket open or refused', async (rawStatus) => {
        const c = client();
        emu.cloud.failNextWith(lane, 'OOMError', { rawStatus, message: 'worker failed' });
        const open = await c.run(workflow(image, `lost_open_${rawStatus}`), { pollInterval: 10 }).catch((e) => e);
        expect(open).toBeInstanceOf(ExecutionError);
        emu.cloud.rejectSocketUpgrades(1000);
        emu.cloud.failNextWith(lane, 'OOMError', { rawStatus, message: 'worker failed' });
        const log = recorder();
        const c2 = client({ logger: log.logger });
        c2.connect({ reconnect: { baseDelay: 50, maxDelay: 50 } });
        const refused = await c2.run(workflow(image, `lost_refused_${rawStatus}`), { pollInterval: 50 }).catch((e) => e);
        expect(refused).toBeInstanceOf(ExecutionError);
        onlySocketWarnings(log);
        const status = await c.getJobStatus(refused.promptId);
        expect([status.status, status.phase]).toEqual([rawStatus, 'failed']);
      });

      it('keeps the raw states on the status endpoint, through to success', async () => {
        emu.cloud.stepMs = 30;
        const c = client();
        const { prompt_id } = await c.submit(workflow(image, 'raw'));
        const seen = new Set<string>();
        for (;;) {
          const s = await c.getJobStatus(prompt_id);
          seen.add(s.status);
          if (s.phase === 'completed') break;
          await new Promise((r) => setTimeout(r, 5));
        }
        expect(seen.has('success')).toBe(true);
        expect(seen.has('executing')).toBe(true);
        expect([...seen].every((s) => ['submitted', 'queued_limited', 'preparing', 'executing', 'success'].includes(s))).toBe(true);
        // The status carries no outputs; the record does, once persisted.
        expect(await c.getJobStatus(prompt_id)).not.toHaveProperty('outputs');
        const record = await c.waitForJob(prompt_id, { pollInterval: 10 });
        expect(Object.keys(record.outputs ?? {})).toEqual(['3']);
      });

      it('lists the jobs it ran', async () => {
        const c = client();
        await Promise.all(Array.from({ length: 6 }, (_, i) => c.run(workflow(image, `listed${i}`))));
        await c.run(workflow(image, 'listed_failed', { fail_with: 'OOMError' })).catch(() => undefined);
        const page = await c.listJobs({ limit: 3, status: 'completed' });
        expect(page.jobs.length).toBe(3);
        expect(page.pagination.has_more).toBe(true);
        let n = 0;
        for await (const j of c.listJobs({ limit: 5, status: ['completed', 'failed'] })) {
          expect(['completed', 'failed']).toContain(j.status);
          n++;
        }
        expect(n).toBeGreaterThanOrEqual(7);
      });
    }

    if (personality === 'local') {
      it('lists jobs without a limit (the local server answers limit: null)', async () => {
        const c = client();
        await c.run(workflow(image, 'local_listed'));
        const page = await c.listJobs();
        expect(page.pagination.limit ?? null).toBeNull();
        expect(page.jobs.some((j) => j.status === 'completed')).toBe(true);
      });
    }
  });
}
