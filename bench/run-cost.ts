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

const FIRST_LOAD_TARGET_MS = 2;
const PROCESSES = 15;

/**
 * What the first run() of a process pays for loading realtime (issue 34: the socket, routing, follower and run.ts
 * load on first use; in dist/index.js a module evaluated on first use): in fresh processes, the time from the first
 * connect() to the socket's first call of its WebSocket constructor (a stand-in: nothing of the network in it), this
 * build against the baseline, whose socket was there at start. Both pay the first-time costs of the socket's code
 * (about 20 ms on this machine, the same before and after); the difference is the load. Median over PROCESSES
 * processes each side, interleaved; target ≤ 2 ms.
 */
async function firstLoad(baseline: string): Promise<{ line: string; ok: boolean }> {
  const { execFileSync } = await import('node:child_process');
  const script = (dist: string) => `
    const { CloudClient } = await import(${JSON.stringify(pathToFileURL(join(dist, 'index.js')).href)});
    let at = 0, reach;
    const reached = new Promise((r) => (reach = r));
    class Stand { constructor() { at = performance.now(); reach(); throw new Error('stand-in'); } }
    const c = new CloudClient({ baseUrl: 'http://127.0.0.1:9', logLevel: 'off' });
    const t0 = performance.now();
    c.connect({ WebSocket: Stand, reconnect: { maxAttempts: 1 } });
    await reached;
    c.close();
    process.stdout.write(String(at - t0));`;
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < PROCESSES; i++) {
    for (const side of i % 2 ? [1, 0] : [0, 1]) {
      const dist = side ? join(root, 'dist') : baseline;
      times[side]!.push(Number(execFileSync(process.execPath, ['--input-type=module', '-e', script(dist)], { encoding: 'utf8' })));
    }
  }
  const [b, n] = [median(times[0]), median(times[1])];
  const cost = n - b;
  return {
    line: `first connect() of a process to its socket's first attempt: baseline ${b.toFixed(2)} ms, this build ${n.toFixed(2)} ms: the realtime load costs ${cost.toFixed(2)} ms (target ≤ ${FIRST_LOAD_TARGET_MS} ms): ${cost <= FIRST_LOAD_TARGET_MS ? 'PASS' : 'FAIL'}`,
    ok: cost <= FIRST_LOAD_TARGET_MS,
  };
}

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'run() per job vs a baseline build (BASELINE_DIST), and the first run()\'s load of realtime';
  const baseline = process.env.BASELINE_DIST;
  if (!baseline) return { name, lines: ['skipped: set BASELINE_DIST to the dist/ of another build to compare run() and the first connect() with it'], ok: true };
  const first = await firstLoad(baseline);
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
        first.line,
      ],
      ok: ratio <= TARGET && first.ok,
    };
  } finally {
    for (const c of clients) c.close();
    await emu.close();
  }
}
