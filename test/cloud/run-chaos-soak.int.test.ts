// Issue 23's chaos soak: 200 runs against the emulator with random answer
// losses, socket drops, server-side delays and aborts (seeded, bounded). Every
// run settles once, the server takes each prompt id at most once, and no job is
// stopped but the aborted ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APIConnectionError, APIUserAbortError, CloudClient, type JobResult } from '../../src/index.ts';
import { EMULATOR_API_KEY, makePng, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { invertWorkflow } from '../helpers/emulator-runs.ts';
import { recorder } from '../helpers/log-recorder.ts';

const RUNS = 200;
const AT_ONCE = 8;

/** mulberry32: the same faults in the same order on every run of the test. */
function seeded(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe.each(['cloud', 'local'] as const)('chaos soak (%s)', (personality) => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ personality, cloud: { stepMs: 3, parallel: 4 }, logLevel: 'off' });
  });
  afterAll(() => emu.close());

  it(`${RUNS} runs under lost answers, socket drops, delays and aborts: each settles once, nothing runs twice, only aborted jobs stop`, async () => {
    const random = seeded(personality === 'cloud' ? 23 : 24);
    const log = recorder();
    const client = new CloudClient({ baseUrl: emu.url, ...(personality === 'cloud' ? { apiKey: EMULATOR_API_KEY } : {}), logger: log.logger, logLevel: 'warn' });
    const { name: image } = await client.uploadImage(makePng(8, 8, 1), { filename: 'soak.png' });
    emu.cloud.dropSockets({ probability: 0.02 });
    const aborted = new Set<string>();
    const outcomes: Array<'completed' | 'aborted' | 'unconfirmed'> = [];
    let settledTwice = 0;

    const one = async (i: number) => {
      const r = random();
      if (r < 0.15) emu.faults.loseAnswerNext({ method: 'POST', path: '/api/prompt', ...(random() < 0.5 ? { status: 502 } : {}) });
      else if (r < 0.2) emu.faults.dropNext({ method: 'POST', path: '/api/prompt' });
      const ac = new AbortController();
      const abortAfter = random() < 0.15 ? Math.floor(random() * 60) : undefined;
      let id: string | undefined;
      let settles = 0;
      const run = client.run(invertWorkflow(image, `soak-${personality}-${i}`), {
        signal: ac.signal,
        confirmWithin: 400,
        pollInterval: 50,
        onSubmitted: (promptId) => {
          id = promptId;
          if (abortAfter !== undefined) setTimeout(() => (aborted.add(promptId), ac.abort()), abortAfter);
        },
      });
      emu.faults.latencyMs = random() < 0.1 ? Math.floor(random() * 30) : 0;
      await run.then(
        (result: JobResult) => {
          settles++;
          outcomes.push('completed');
          expect(result.files).toHaveLength(1);
        },
        (err: unknown) => {
          settles++;
          if (err instanceof APIUserAbortError) outcomes.push('aborted');
          else if (err instanceof APIConnectionError && err.sent === 'maybe' && err.promptId) outcomes.push('unconfirmed');
          else throw err;
        },
      );
      // A second settle would show here: give late events a moment.
      await new Promise((r) => setTimeout(r, 1));
      if (settles !== 1) settledTwice++;
      return id;
    };

    let next = 0;
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        while (next < RUNS) await one(next++);
      }),
    );
    client.close();
    emu.cloud.dropSockets(null);
    emu.faults.reset();

    expect(outcomes).toHaveLength(RUNS);
    expect(settledTwice).toBe(0);
    // Each prompt id was taken at most once.
    expect([...emu.cloud.engine.submissions.values()].filter((n) => n > 1)).toEqual([]);
    // No job was cancelled that this test did not abort.
    const cancelled = [...emu.cloud.engine.jobs.values()].filter((j) => j.status === 'cancelled').map((j) => j.prompt_id);
    expect(cancelled.filter((id) => !aborted.has(id))).toEqual([]);
    // Every fault kind happened, and most runs still completed.
    expect(outcomes.filter((o) => o === 'completed').length).toBeGreaterThan(RUNS / 2);
    expect(outcomes).toContain('aborted');
    expect(outcomes).toContain('unconfirmed');
    // What was logged at warn is about unconfirmed submissions and the socket only.
    for (const l of log.of('warn')) expect(l.message).toMatch(/its submission's answer was lost|socket/);
    expect(log.of('error')).toEqual([]);
  }, 120_000);
});
