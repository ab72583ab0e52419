// How long after a job ends does run() settle, when the socket cannot tell it?
// Against the emulator's live-cloud personality with every socket upgrade refused
// (run() is on polling alone), for each terminal state the status endpoint answers,
// and for a `lost` job with the socket open (the socket never says anything: only the
// confirming poll, every 20 intervals, can end it). The figure is the lag from the
// job's end in the emulator to the settlement, as a ratio of the poll interval in the
// same run. Target: one interval (plus the poll's own round trips, and the live cloud's
// late outputs for `success`); 20 intervals for the open-socket `lost` case.
// Needs a build (dist/). Erasable TS only: run by `node --experimental-strip-types`.
import { fileURLToPath } from 'node:url';
import { median } from './registry.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const POLL_MS = 100;
const RUNS = 5;


export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'run() ends within a poll interval of any terminal state (socket refused)';
  const { CloudClient } = (await import(`${root}dist/index.js`)) as typeof import('../src/index.ts');
  const { startEmulator, EMULATOR_API_KEY } = (await import(`${root}dist/emulator.js`)) as typeof import('../src/emulator/index.ts');
  const emu = await startEmulator({ personality: 'cloud', cloud: { stepMs: 5, progressSteps: 1 }, apiKeys: { [EMULATOR_API_KEY]: { parallel: 4 } } });
  const lines: string[] = [];
  let ok = true;
  try {
    const setup = new CloudClient({ baseUrl: emu.url, apiKey: EMULATOR_API_KEY });
    const { name: image } = await setup.uploadImage(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1]), { filename: 'in.png' });
    const workflow = (prefix: string) => ({
      '1': { class_type: 'LoadImage', inputs: { image } },
      '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
    });

    /** Lag (ms) from the job's end to run()'s settlement. */
    async function lag(kind: string, refuse: boolean, poll: number): Promise<number> {
      emu.cloud.resetSocketFaults();
      if (refuse) emu.cloud.rejectSocketUpgrades(1_000_000);
      const c = new CloudClient({ baseUrl: emu.url, apiKey: EMULATOR_API_KEY });
      c.connect({ reconnect: { baseDelay: 1000, maxDelay: 1000 } });
      if (kind !== 'success' && kind !== 'cancelled') emu.cloud.failNextWith(EMULATOR_API_KEY, 'OOMError', { rawStatus: kind as 'error' });
      let id: string | undefined;
      const unsubscribe = emu.cloud.subscribe((e) => {
        if (e.kind === 'json' && e.message.type === 'execution_start') id ??= String(e.message.data.prompt_id);
      });
      const started = c.run(workflow(`endings_${kind}`), { pollInterval: poll }).catch(() => undefined);
      if (kind === 'cancelled') {
        while (!id) await new Promise((r) => setTimeout(r, 1));
        await setup.cancel(id);
      }
      await started;
      const settledAt = Date.now();
      unsubscribe();
      c.close();
      const job = emu.cloud.engine.jobs.get(id!)!;
      return settledAt - job.ended!;
    }

    // Budgets in poll intervals: one interval, plus 10 % for the poll's own round trips; success also
    // waits for the live cloud's late outputs (persisted 150 ms after the end, read back 250 ms after
    // a first empty read); the open-socket `lost` case waits for the confirming poll (20 intervals).
    const late = (emu.cloud.outputsDelayMs + 250) / POLL_MS;
    const cases: Array<[string, boolean, number, number]> = [
      ['success', true, POLL_MS, 1.1 + late],
      ['error', true, POLL_MS, 1.1],
      ['non_retryable_error', true, POLL_MS, 1.1],
      ['lost', true, POLL_MS, 1.1],
      ['cancelled', true, POLL_MS, 1.1],
      ['lost', false, 20, 20.1],
    ];
    lines.push(`live-cloud emulator, ${RUNS} runs each, median lag from the job's end to run()'s settlement, in poll intervals`);
    for (const [kind, refuse, poll, budget] of cases) {
      const lags: number[] = [];
      for (let i = 0; i < RUNS; i++) lags.push(await lag(kind, refuse, poll));
      const m = median(lags);
      const ratio = m / poll;
      const pass = ratio <= budget;
      ok &&= pass;
      lines.push(
        `${kind.padEnd(20)} socket ${refuse ? 'refused' : 'open   '}, poll ${String(poll).padStart(3)} ms: lag ${String(m).padStart(3)} ms = ${ratio.toFixed(2)} intervals (target ≤ ${budget.toFixed(1)}): ${pass ? 'PASS' : 'FAIL'}`,
      );
    }
    setup.close();
  } finally {
    await emu.close();
  }
  return { name, ok, lines };
}
