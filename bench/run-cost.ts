// The cost of issue 23 on run(): a job id chosen before the request, the protocol
// seam and the follower's states, against another build of the SDK in the same
// process (a release, or this repository at an earlier commit, built into its own
// dist/). Both clients run the same jobs on one emulator of the local personality
// (jobs that take no time: stepMs 0), one at a time, interleaved, after a warm-up;
// the ratio of the medians per job. Target: ≤ 1.02× (no measurable change). Against the
// release before issue 23 (c466a96), six runs gave 0.993–1.027×, median 1.017× (about
// +0.1 ms on a 7 ms job): at the edge of the noise of this loopback measurement.
//
// The baseline is named by BASELINE_DIST (a dist/ folder: e.g. `git worktree add
// /tmp/base c466a96 && cd /tmp/base && npm run build`, then BASELINE_DIST=/tmp/base/dist);
// without it, this bench says so in one line and passes.
// Needs a build (dist/). Erasable TS only: run by `node --experimental-strip-types`.
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { median } from './registry.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const JOBS = 300;
const WARMUP = 40;
const TARGET = 1.02;

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'run() per job vs a baseline build (BASELINE_DIST)';
  const baseline = process.env.BASELINE_DIST;
  if (!baseline) return { name, lines: ['skipped: set BASELINE_DIST to the dist/ of another build to compare run() with it'], ok: true };
  type Sdk = typeof import('../src/index.ts');
  const now = (await import(`${root}dist/index.js`)) as Sdk;
  const base = (await import(pathToFileURL(join(baseline, 'index.js')).href)) as Sdk;
  const { startEmulator, makePng } = (await import(`${root}dist/emulator.js`)) as typeof import('../src/emulator/index.ts');
  const emu = await startEmulator({ personality: 'local', cloud: { stepMs: 0, progressSteps: 1 }, logLevel: 'off' });
  const clients = [new base.CloudClient({ baseUrl: emu.url, logLevel: 'off' }), new now.CloudClient({ baseUrl: emu.url, logLevel: 'off' })] as const;
  try {
    const { name: image } = await clients[1].uploadImage(makePng(8, 8, 1), { filename: 'bench.png' });
    const workflow = (prefix: string) => ({
      '1': { class_type: 'LoadImage', inputs: { image } },
      '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
    });
    const times: [number[], number[]] = [[], []];
    for (let i = 0; i < WARMUP + JOBS; i++) {
      // Alternate which side goes first, so neither always follows the other's work.
      for (const side of i % 2 ? [1, 0] : [0, 1]) {
        const t0 = performance.now();
        await clients[side]!.run(workflow(`cost-${side}-${i}`));
        if (i >= WARMUP) times[side]!.push(performance.now() - t0);
      }
    }
    const [b, n] = [median(times[0]), median(times[1])];
    const ratio = n / b;
    return {
      name,
      lines: [
        `${JOBS} jobs each side, one at a time, interleaved (after ${WARMUP} warm-up rounds), local personality, stepMs 0`,
        `baseline ${baseline}: median ${b.toFixed(3)} ms/job; this build: ${n.toFixed(3)} ms/job`,
        `ratio ${ratio.toFixed(3)}× (target ≤ ${TARGET}×): ${ratio <= TARGET ? 'PASS' : 'FAIL'}`,
      ],
      ok: ratio <= TARGET,
    };
  } finally {
    for (const c of clients) c.close();
    await emu.close();
  }
}
