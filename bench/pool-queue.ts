// CloudPool with a long waiting line (moved here from test/cloud/pool/pool.int.test.ts's "10,000 queued jobs",
// whose `submitMs < 5000` failed once on a loaded machine: a test asserts behaviour, not time):
//
// submit() of BIG jobs into a pool over 3 servers that each run one at a time (maxConcurrent 1, jobs that
// never finish during the bench: 3 placed, the rest wait), and close() rejecting them all, against the same
// with BIG / 10 jobs: the ratio of the time per job (the big line's over the small one's).
// Why this baseline: what the test guarded is that a long line must not make each submit (or its rejection
// at close) dearer, i.e. that the pool stays linear in its line (a submit places its own job only; it never
// walks the line). A line ten times longer shows that directly, measured in the same run on the same machine,
// so a loaded machine slows both sides alike; a plain-Promise baseline would only measure how much real
// work a submit does (validation against each server's object_info, placement), which says nothing about
// scaling. Linear is 1×; a walk of the line per submit (O(n²)) would be ~10×. Target: ≤ 2× (GC of a heap
// ten times larger costs something). Also printed, for information only: µs per job each side.
//
// Fresh emulators and a fresh pool per round (the jobs each round leaves on its servers do not pile up),
// sides interleaved (alternating which goes first) after one warm-up round each; medians per job.
// Needs a build (dist/). Erasable TS only: run by `node --experimental-strip-types`.
import { fileURLToPath } from 'node:url';
import { job } from './pool.ts';
import { median } from './registry.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const BIG = 10_000;
const SMALL = BIG / 10;
const SERVERS = 3;
const ROUNDS = 5;
const TARGET = 2;

type Sdk = typeof import('../src/index.ts');
type Emu = typeof import('../src/emulator/index.ts');

interface Round {
  submitMs: number;
  closeMs: number;
}

/** One pool over fresh servers: the time of `n` submits, then of close() until every job has settled. */
async function round(sdk: Sdk, emulator: Emu, n: number): Promise<Round> {
  // A job never ends during the round (a minute per step): the first three stay placed, the rest wait.
  const emus = await Promise.all(Array.from({ length: SERVERS }, () => emulator.startEmulator({ personality: 'local', cloud: { stepMs: 60_000, progressSteps: 1 }, logLevel: 'off' })));
  const pool = new sdk.CloudPool(
    emus.map((e, i) => ({ baseUrl: e.url, id: `s${i}`, maxConcurrent: 1, retry: { limit: 0 }, logLevel: 'off' as const })),
    { logLevel: 'off' },
  );
  try {
    for (let i = 0; !pool.servers.every((s) => s.state === 'up'); i++) {
      if (i === 400) throw new Error(`pool servers not up after 4 s: ${JSON.stringify(pool.servers)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const workflows = Array.from({ length: n }, () => job('queue'));
    const t0 = performance.now();
    const jobs = workflows.map((w) => pool.submit(w));
    const submitMs = performance.now() - t0;
    if (pool.waiting !== n - SERVERS) throw new Error(`${pool.waiting} waiting of ${n} submitted (expected ${n - SERVERS})`);
    const settled = jobs.map((j) => j.result.then(() => 'ran', () => 'rejected'));
    const t1 = performance.now();
    await pool.close();
    const outcomes = await Promise.all(settled);
    const closeMs = performance.now() - t1;
    if (outcomes.some((o) => o !== 'rejected')) throw new Error('a job ran to its end before close()');
    return { submitMs, closeMs };
  } finally {
    await pool.close();
    await Promise.all(emus.map((e) => e.close()));
  }
}

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = `CloudPool: submit() and close() per job with ${BIG.toLocaleString('en')} waiting vs ${SMALL.toLocaleString('en')} (linear scaling)`;
  const sdk = (await import(`${root}dist/index.js`)) as Sdk;
  const emulator = (await import(`${root}dist/emulator.js`)) as Emu;
  // Warm-up (JIT, the emulators' first answers), not counted.
  await round(sdk, emulator, SMALL);
  await round(sdk, emulator, BIG);
  const sides = [SMALL, BIG] as const;
  const per: Record<'submit' | 'close', [number[], number[]]> = { submit: [[], []], close: [[], []] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const k of r % 2 ? [1, 0] : [0, 1]) {
      const n = sides[k]!;
      const t = await round(sdk, emulator, n);
      per.submit[k]!.push((t.submitMs * 1000) / n);
      per.close[k]!.push((t.closeMs * 1000) / n);
    }
  }
  const lines = [`${ROUNDS} rounds each side, interleaved, after a warm-up round each; ${SERVERS} servers, maxConcurrent 1, ${SERVERS} jobs placed and the rest waiting`];
  let ok = true;
  for (const what of ['submit', 'close'] as const) {
    const [small, big] = [median(per[what][0]), median(per[what][1])];
    const ratio = big / small;
    const pass = ratio <= TARGET;
    ok &&= pass;
    lines.push(
      `${`${what}():`.padEnd(10)} ${SMALL.toLocaleString('en').padStart(6)} jobs ${small.toFixed(2).padStart(7)} µs/job, ${BIG.toLocaleString('en').padStart(6)} jobs ${big.toFixed(2).padStart(7)} µs/job: ${ratio.toFixed(2)}× per job (target ≤ ${TARGET}×; linear is 1×, O(n²) ~10×): ${pass ? 'PASS' : 'FAIL'}`,
    );
  }
  return { name, lines, ok };
}

// Alone: node --experimental-strip-types --no-warnings bench/pool-queue.ts (after a build)
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = await run();
  console.log(r.name);
  for (const line of r.lines) console.log(`  ${line}`);
  process.exit(0);
}
